"""Codes the engine puts in its table columns; planner.render words them.

Miss          a limit an option misses (plan rows' `misses`: a tuple of these, in order)
PriceBasis    how an option's price was found (`price_basis`, with `price_source` the
              catalog's source, or the on-prem config's file, and the amortized figures)
NetworkBasis  what an option's network figure is (`network_basis`, with `network_fabric`
              the published fabric where there is one)
"""

from __future__ import annotations

from enum import StrEnum


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
