"""Provider tiers: who sells the GPU time, and so who can buy it.

- hyperscaler: the large general clouds (AWS, GCP, Azure, OCI): contracts, invoicing,
  reserved and committed prices, procurement most companies already have;
- neocloud: GPU clouds that rent whole machines and clusters under a contract (Lambda,
  Nebius, CoreWeave, Fluidstack, Paperspace, RunPod, Cudo, Crusoe, ...);
- marketplace: single hosts listed by third parties (Vast.ai): cheap, but no contract,
  capacity or data-handling terms a company can sign, so not weighed by default;
- custom: a price list the user added (`pricing add-custom`): weighed, since the user
  chose it.

DEFAULT_TIERS is what plans and the Prices page weigh unless told otherwise; naming a
provider (`--provider vast`) weighs it whatever its tier. Checked 2026-11 against each
provider's public site (what is sold, and by whom).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: the CLI's help reads TIERS without pandas
    import numpy as np
    import pandas as pd

TIERS = ("hyperscaler", "neocloud", "marketplace", "custom")
DEFAULT_TIERS = ("hyperscaler", "neocloud", "custom")
PROVIDER_TIERS: dict[str, str] = {
    "aws": "hyperscaler",
    "gcp": "hyperscaler",
    "azure": "hyperscaler",
    "oci": "hyperscaler",
    "lambda": "neocloud",
    "nebius": "neocloud",
    "coreweave": "neocloud",
    "fluidstack": "neocloud",
    "paperspace": "neocloud",
    "runpod": "neocloud",
    "cudo": "neocloud",
    "crusoe": "neocloud",
    "together": "neocloud",
    "vultr": "neocloud",
    "vast": "marketplace",
}


def tier_of(provider: str) -> str:
    """The tier of a provider; 'custom' for one no table lists (a user's own list)."""
    return PROVIDER_TIERS.get(provider.lower(), "custom")


def tiers_of(providers: pd.Series) -> pd.Series:
    """tier_of over a column (vectorized over the distinct providers)."""
    lookup = {p: tier_of(str(p)) for p in providers.dropna().unique()}
    return providers.map(lookup).astype(object)


def check_tiers(tiers: Sequence[str]) -> tuple[str, ...]:
    """The tiers, validated; ValueError naming the closest valid tier."""
    from pricing.gpus import did_you_mean

    for tier in tiers:
        if tier not in TIERS:
            raise ValueError(
                f"unknown tier {tier!r}{did_you_mean(tier, TIERS)} Valid: {', '.join(TIERS)}"
            )
    return tuple(tiers)


def in_tiers(offers: pd.DataFrame, tiers: Sequence[str]) -> np.ndarray:
    """Mask of offers whose provider is in one of `tiers`."""
    return tiers_of(offers["provider"]).isin(list(tiers)).to_numpy()
