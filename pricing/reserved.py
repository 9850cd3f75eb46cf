"""Reserved (1-/3-year) prices: what to say when there are none, and an assumed discount.

The bundled snapshots hold on-demand and spot prices only; refreshed AWS, GCP and Azure
snapshots add 1- and 3-year prices. Until then a user may plan with the discount they
negotiated: with_reserved_discount fills a missing reserved price as on-demand x (1 -
discount) and says so in the offer's `source`, so every row it touches is labelled an
assumption. plan, tco and the app share no_reserved_message, so they say the same.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from edge.format import percent
from pricing.catalog import PRICING_KINDS

RESERVED_KINDS = ("reserved-1y", "reserved-3y")


def check_discount(discount: float) -> float:
    """The discount as a fraction of on-demand, 0 < d < 1; ValueError otherwise."""
    if not (isinstance(discount, int | float) and math.isfinite(discount) and 0 < discount < 1):
        raise ValueError(
            f"reserved discount {discount!r}: it must be a fraction of the on-demand price "
            "between 0 and 1 (0.35 = 35% off)"
        )
    return float(discount)


def has_kind_price(offers: pd.DataFrame, kind: str) -> bool:
    """Whether any offer has a price of `kind`."""
    return bool(offers[PRICING_KINDS[kind]].notna().any())


def no_reserved_message(kind: str, what: str = "the offers chosen") -> str:
    """The one sentence plan, tco and the app say when no offer has a `kind` price."""
    return (
        f"no {kind} price for {what} in the price snapshots in use: the bundled snapshots "
        "hold on-demand and spot prices only. Refresh one that lists reserved prices "
        "(`gpuplan pricing refresh aws-public` or `azure`, no credentials; `aws` or `gcp` "
        "with credentials), or assume your negotiated discount off on-demand "
        "(--reserved-discount 0.35 in the CLI, 'Reserved discount' in the app)"
    )


def with_reserved_discount(offers: pd.DataFrame, kind: str, discount: float) -> pd.DataFrame:
    """Offers whose missing `kind` price is on-demand x (1 - discount), labelled as assumed.

    Listed reserved prices are kept as they are. The touched offers' `source` ends with
    "; <kind> price assumed: on-demand less N%", so the plan rows carry the label.
    """
    if kind not in RESERVED_KINDS:
        return offers
    discount = check_discount(discount)
    column = PRICING_KINDS[kind]
    fill = offers[column].isna() & offers["usd_per_hour"].notna()
    out = offers.copy()
    out.loc[fill, column] = out.loc[fill, "usd_per_hour"] * (1 - discount)
    less = percent(discount, digits=0)
    label = f"; {kind} price assumed: on-demand less {less} (a negotiated discount)"
    out.loc[fill, "source"] = out.loc[fill, "source"].astype(str) + label
    out[column] = out[column].astype(float).where(out[column].notna(), np.nan)
    return out
