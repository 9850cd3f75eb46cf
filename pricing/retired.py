"""Retired and unbuyable instance sizes: listed in catalogs, but not for sale.

Catalog extracts and even live price APIs keep listing sizes after a provider stopped
selling them (Azure's K80 "Promo" sizes are the cheapest GPU rows of the bundled Azure
extract). RETIRED is the dated table of such families and sizes, each with its source;
plans and the Prices page leave them out unless asked (`--include-retired`).

Each entry: provider, a regular expression over instance_type (whole name), the date
it stopped being sold (the provider's stated retirement date), why, and the source.
Checked 2026-11.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from edge.distinct import per_distinct


@dataclass(frozen=True)
class RetiredSize:
    """Instance sizes a provider no longer sells."""

    provider: str
    pattern: str
    retired_on: str
    reason: str
    source: str


RETIRED: tuple[RetiredSize, ...] = (
    RetiredSize(
        "azure",
        r"Standard_NC(6|12|24|24r)(_Promo)?",
        "2023-09-06",
        "NC-series (NVIDIA K80), including the _Promo sizes, retired",
        "learn.microsoft.com/azure/virtual-machines/sizes/migration-guides/nc-series-retirement",
    ),
    RetiredSize(
        "azure",
        r"Standard_NV(6|12|24)(_Promo)?",
        "2023-09-06",
        "NV-series (NVIDIA M60), including the _Promo sizes, retired",
        "learn.microsoft.com/azure/virtual-machines/sizes/migration-guides/nv-series-retirement",
    ),
    RetiredSize(
        "azure",
        r"Standard_NC(6|12|24|24r)s_v2",
        "2023-09-06",
        "NCv2-series (NVIDIA P100) retired",
        "learn.microsoft.com/azure/virtual-machines/sizes/migration-guides/ncv2-series-retirement",
    ),
    RetiredSize(
        "azure",
        r"Standard_ND(6|12|24|24r)s",
        "2023-09-06",
        "ND-series (NVIDIA P40) retired",
        "learn.microsoft.com/azure/virtual-machines/sizes/migration-guides/nd-series-retirement",
    ),
    RetiredSize(
        "azure",
        r"Standard_NC(6|12|24)s_v3",
        "2025-09-30",
        "NCv3 sizes NC6s_v3, NC12s_v3, NC24s_v3 (NVIDIA V100) retired",
        "learn.microsoft.com/azure/virtual-machines/ncv3-nc6s-nc12s-nc24s-retirement",
    ),
    RetiredSize(
        "aws",
        r"p2\..+",
        "2023-01-01",
        "P2 (NVIDIA K80): previous generation, no longer offered for new capacity "
        "(date: listed as previous generation by then)",
        "aws.amazon.com/ec2/previous-generation/",
    ),
    RetiredSize(
        "aws",
        r"g3s?\..+",
        "2023-01-01",
        "G3 (NVIDIA M60): previous generation, no longer offered for new capacity "
        "(date: listed as previous generation by then)",
        "aws.amazon.com/ec2/previous-generation/",
    ),
)


def retired_reason(
    provider: str, instance_type: str, today: dt.date | None = None
) -> RetiredSize | None:
    """The RETIRED entry of an offer retired by `today`, or None."""
    today = today or dt.date.today()
    for entry in RETIRED:
        if (
            entry.provider == provider.lower()
            and re.fullmatch(entry.pattern, instance_type)
            and dt.date.fromisoformat(entry.retired_on) <= today
        ):
            return entry
    return None


def retired_mask(offers: pd.DataFrame, today: dt.date | None = None) -> np.ndarray:
    """Mask of offers retired by `today` (one lookup per distinct provider and size)."""
    retired = per_distinct(
        lambda p, i: retired_reason(str(p), str(i), today) is not None,
        offers["provider"].astype(str),
        offers["instance_type"].astype(str),
    )
    return retired.astype(bool)
