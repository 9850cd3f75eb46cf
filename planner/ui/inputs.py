"""Sidebar inputs the pages build alike, each bound to the URL by a PageState.

- `offer_filters`: which offers to weigh (provider tiers, providers, retired sizes,
  regions, GPUs), asked the same way, under the same keys, on the Plan and Prices pages.
- `number`: a number input described as data (a mapping of its label, default and the
  widget's keywords), so a page lists its inputs in one table and labels its errors from it.
- `optional_number`: a number input that starts empty (None: not set).
- `worded_radio`: a radio whose options are shown in words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import streamlit as st

from planner.ui import data
from planner.ui.state import PageState
from pricing.catalog import unique_values
from pricing.tiers import DEFAULT_TIERS, TIERS

TIERS_HELP = (
    "Marketplace = single hosts listed by third parties (Vast.ai): most companies cannot buy "
    "them under a contract, so they are left out unless picked here."
)


@dataclass(frozen=True)
class OfferFilters:
    """The offers asked for: tiers, providers, retired sizes or not, regions and GPUs
    (no region or GPU: all of them)."""

    tiers: list[str]
    providers: list[str]
    include_retired: bool
    regions: list[str]
    gpus: list[str]


# Offer choices kept: one per distinct tiers or providers chosen (a few kB each).
MAX_CHOICES = 64


@st.cache_data(show_spinner=False, max_entries=MAX_CHOICES)
def _provider_choices(tiers: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """Every provider of the snapshot in use, and those of `tiers` (the default choice);
    once for every session that asks."""
    offers = data.offers()
    in_tiers = offers.loc[offers["tier"].isin(tiers)]
    return unique_values(offers, "provider"), unique_values(in_tiers, "provider")


@st.cache_data(show_spinner=False, max_entries=MAX_CHOICES)
def _place_choices(providers: tuple[str, ...], every_gpu: bool) -> tuple[list[str], list[str]]:
    """The regions of `providers`' offers, and the GPUs of their offers (of every offer with
    `every_gpu`); once for every session that asks."""
    offers = data.offers()
    in_providers = offers.loc[offers["provider"].isin(providers)]
    return (
        unique_values(in_providers, "region"),
        unique_values(offers if every_gpu else in_providers, "gpu_name"),
    )


def offer_filters(
    ps: PageState,
    retired_help: str,
    gpus_help: str | None = None,
    every_gpu: bool = False,
) -> OfferFilters:
    """Tiers, providers (by default those of the chosen tiers), retired sizes, regions of the
    chosen providers and GPUs: of the chosen providers, or of every offer with `every_gpu`
    (the offers of the snapshot in use)."""
    tiers = ps.multiselect(
        "Provider tiers", list(TIERS), name="tiers", default=list(DEFAULT_TIERS), help=TIERS_HELP
    )
    every_provider, in_tiers = _provider_choices(tuple(tiers))
    providers = ps.multiselect(
        "Providers",
        every_provider,
        name="providers",
        default=in_tiers,
        depends_on=tuple(tiers),
    )
    retired = ps.toggle("Include retired sizes", name="retired", default=False, help=retired_help)
    region_choices, gpu_choices = _place_choices(tuple(providers), every_gpu)
    regions = ps.multiselect("Regions (none = all)", region_choices, name="regions", default=[])
    gpus = ps.multiselect("GPUs (none = all)", gpu_choices, name="gpus", default=[], help=gpus_help)
    return OfferFilters(tiers, providers, retired, regions, gpus)


def number(ps: PageState, name: str, field: Mapping[str, Any]) -> Any:
    """The number input of `field` (its "label", "default" and st.number_input's keywords)
    under URL parameter `name`."""
    spec = dict(field)
    return ps.number_input(spec.pop("label"), name=name, **spec)


def optional_number(ps: PageState, label: str, name: str, **kwargs: Any) -> Any:
    """A number input that starts empty: None until a value is entered."""
    return ps.number_input(label, name=name, default=None, **kwargs)


def worded_radio(
    ps: PageState, label: str, words: Mapping[str, str], name: str, default: str, **kwargs: Any
) -> Any:
    """A radio of the keys of `words`, each shown as its words."""
    return ps.radio(label, list(words), name=name, default=default, format_func=words.get, **kwargs)
