"""Codes the engine puts in its table columns; planner.render words them.

Miss          a limit an option misses (plan rows' `misses`: a tuple of these, in order)
PriceBasis    how an option's price was found (`price_basis`, with `price_source` the
              catalog's source, or the on-prem config's file, and the amortized figures)
NetworkBasis  what an option's network figure is (`network_basis`, with `network_fabric`
              the published fabric where there is one)
ThroughputSource  where a throughput figure came from (`source` of figures,
              `throughput_source` of plan rows), best first (SOURCE_RANK)
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class Miss(StrEnum):
    """A limit an option misses."""

    DEADLINE = "deadline"
    BUDGET = "budget"


class PriceBasis(StrEnum):
    """How an option's price was found: a dated catalog, or amortized on-prem costs."""

    CATALOG = "catalog"
    AMORTIZED = "amortized"


class NetworkBasis(StrEnum):
    """What an option's network figure is: published, assumed for its provider or by
    default, or assumed for an on-prem server."""

    PUBLISHED = "published"
    PROVIDER_ASSUMED = "provider-assumed"
    DEFAULT_ASSUMED = "default-assumed"
    ONPREM_ASSUMED = "onprem-assumed"


class ThroughputSource(StrEnum):
    """Where a throughput figure came from, best first: an own run, a published figure, a
    same-silicon sibling's figure, a figure moved to another GPU count by a scaling law,
    the spec model's estimate, or nothing. A published result's `source` is
    "published:<origin>" in a results table (is_published)."""

    MEASURED = "measured"
    PUBLISHED = "published"
    SIBLING = "sibling"
    SCALED = "scaled"
    ESTIMATED = "estimated"
    NONE = "none"


# A figure's rank when several answer the same (GPU, count): lower is better.
SOURCE_RANK = {source.value: rank for rank, source in enumerate(ThroughputSource)}


def is_published(sources: Any) -> Any:
    """True where a results table's `source` (a pandas Series) is a published figure
    ("published" or "published:<origin>"), False for own runs and missing values."""
    return sources.fillna("").astype(str).str.startswith(ThroughputSource.PUBLISHED.value)
