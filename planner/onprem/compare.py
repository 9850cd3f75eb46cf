"""The cloud offers to weigh buying against: what a company can buy, priced side by side.

By default the same provider tiers as plans (pricing.tiers.DEFAULT_TIERS: marketplace
listings left out); a reference that names its provider is taken whatever its tier, as
`--provider` does for plans. Each offer carries its price per GPU-hour at the pricing kind
weighed, at every kind side by side (pricing.refs.gpu_hour_prices) and its tier.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from pricing.refs import OfferRefError, cheapest_per_provider, gpu_hour_prices, resolve_offer_ref
from pricing.tiers import DEFAULT_TIERS, check_tiers, in_tiers, tiers_of


def offers_in_tiers(offers: pd.DataFrame, tiers: Sequence[str] | None) -> pd.DataFrame:
    """The offers of providers in `tiers` (None or empty: DEFAULT_TIERS)."""
    chosen = check_tiers(tiers or DEFAULT_TIERS)
    return offers.loc[in_tiers(offers, chosen)].reset_index(drop=True)


def _resolve(
    offers: pd.DataFrame, weighed: pd.DataFrame, ref: str, kind: str, tiers: Sequence[str] | None
) -> pd.DataFrame:
    """One reference: a provider's offer from every offer, a GPU's cheapest from the tiers
    weighed (saying so where only other tiers have it)."""
    if ":" in ref:
        return resolve_offer_ref(offers, ref, kind)
    try:
        return resolve_offer_ref(weighed, ref, kind)
    except OfferRefError:
        resolve_offer_ref(offers, ref, kind)  # raises when no tier has it either
        shown = ", ".join(tiers or DEFAULT_TIERS)
        raise OfferRefError(
            f"{ref!r}: no {kind} offer from the tiers weighed ({shown}); weigh the "
            "marketplace tier too to compare with its listings"
        ) from None


def compared_offers(
    offers: pd.DataFrame,
    gpu_name: str,
    refs: Sequence[str] | None,
    kind: str,
    tiers: Sequence[str] | None = None,
) -> pd.DataFrame:
    """The offers named by `refs` (provider:region:instance_type, provider:instance_type or
    a GPU name, pricing.refs), else the cheapest of `gpu_name` from each provider in the
    tiers, at `kind`; with `tier` and the side-by-side prices. Empty when none is priced."""
    weighed = offers_in_tiers(offers, tiers)
    if refs:
        rows = [_resolve(offers, weighed, ref, kind, tiers) for ref in refs]
        chosen = pd.concat(rows, ignore_index=True)
    else:
        chosen = cheapest_per_provider(weighed, gpu_name, kind)
    if chosen.empty:
        return chosen
    chosen = chosen.assign(tier=tiers_of(chosen["provider"]))
    return pd.concat([chosen, gpu_hour_prices(chosen)], axis=1)
