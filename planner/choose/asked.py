"""The offers a request asks about: its filters, reserved prices, and how old their prices are."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd

from planner.notes import Note
from planner.request import PlanRequest
from pricing.catalog import STALE_AFTER_DAYS, filter_offers
from pricing.gpus import match_gpu_names
from pricing.reserved import (
    RESERVED_KINDS,
    has_kind_price,
    no_reserved_message,
    with_reserved_discount,
)


class NoReservedPriceError(ValueError):
    """Reserved pricing asked for, and no offer chosen has such a price."""


def offers_asked_for(request: PlanRequest, offers: pd.DataFrame) -> pd.DataFrame:
    """The offers within the request's providers, regions, GPUs and tiers (pricing.catalog),
    with an assumed reserved price where the request gives a discount for missing ones.

    Raises NoReservedPriceError for reserved pricing without on-prem configs when no offer
    left has a reserved price and no discount was given.
    """
    chosen = filter_offers(
        offers,
        list(request.providers),
        list(request.regions),
        list(request.gpus),
        tiers=list(request.tiers) or None,
        include_retired=request.include_retired,
        today=request.today,
    )
    if request.reserved_discount is not None:
        return with_reserved_discount(chosen, request.pricing, request.reserved_discount)
    if (
        request.pricing in RESERVED_KINDS
        and not request.onprem
        and not has_kind_price(chosen, request.pricing)
    ):
        raise NoReservedPriceError(no_reserved_message(request.pricing))
    return chosen


def unpriced_gpus(request: PlanRequest, offers: pd.DataFrame) -> tuple[str, ...]:
    """The GPUs asked for (request.gpus, as given) that no offer in `offers` prices at all:
    no provider, region or tier lists one, retired sizes included."""
    names = offers["gpu_name"]
    return tuple(q for q in request.gpus if not names.isin(match_gpu_names(q)).any())


def nothing_left_note(request: PlanRequest, offers: pd.DataFrame, chosen: int) -> Note:
    """The no_options note for a plan with no option: the GPUs asked for that no offer
    prices, how many offers the filters chose (`chosen`) and how many on-prem configs."""
    values = {
        "unpriced_gpus": unpriced_gpus(request, offers),
        "offers_chosen": int(chosen),
        "onprem": len(request.onprem),
    }
    return Note("no_options", values)


def unpriced_notes(request: PlanRequest, offers: pd.DataFrame) -> list[Note]:
    """A gpus_unpriced note naming the GPUs asked for that no offer prices (none if all are)."""
    gpus = unpriced_gpus(request, offers)
    return [Note("gpus_unpriced", {"gpus": gpus})] if gpus else []


def cpu_offers_asked_for(request: PlanRequest, cpu_offers: pd.DataFrame) -> pd.DataFrame:
    """The CPU-only offers (pricing.cpu_offers) a request's CPU baseline weighs: within its
    providers, regions and tiers, with its reserved discount where it gives one. GPU
    filters do not apply: the baseline stands beside whichever GPUs were asked for."""
    from pricing.tiers import DEFAULT_TIERS, check_tiers, in_tiers

    keep = np.ones(len(cpu_offers), dtype=bool)
    if request.providers:
        keep &= cpu_offers["provider"].isin([p.lower() for p in request.providers]).to_numpy()
    if request.tiers or not request.providers:
        keep &= in_tiers(cpu_offers, check_tiers(list(request.tiers) or list(DEFAULT_TIERS)))
    if request.regions:
        keep &= cpu_offers["region"].isin(list(request.regions)).to_numpy()
    chosen = cpu_offers.loc[keep].reset_index(drop=True)
    if request.reserved_discount is not None:
        return with_reserved_discount(chosen, request.pricing, request.reserved_discount)
    return chosen


def stale_price_notes(offers: pd.DataFrame, today: dt.date | None) -> list[Note]:
    """One stale_prices note naming the providers whose prices are older than
    STALE_AFTER_DAYS (provider, oldest price date, age in days)."""
    today = today or dt.date.today()
    # Plain dicts, not groupby: pandas groups string columns through pyarrow's compute
    # engine, whose import (~0.1 s) a plan otherwise never needs.
    oldest: dict[str, str] = {}
    providers = offers["provider"].to_numpy(dtype=object)  # a loop over numpy, not arrow
    dates = offers["priced_at"].to_numpy(dtype=object)
    for provider, priced_at in zip(providers, dates, strict=True):
        if pd.notna(provider) and pd.notna(priced_at):
            key, date = str(provider), str(priced_at)
            oldest[key] = min(oldest.get(key, date), date)
    stale = []
    for provider, priced_at in sorted(oldest.items()):
        age = (today - dt.date.fromisoformat(priced_at)).days
        if age > STALE_AFTER_DAYS:
            stale.append((provider, priced_at, age))
    if not stale:
        return []
    # A bundled catalog extract's date is only a lower bound ("not before 2025-06").
    bounds: dict[str, str] = {}
    if "date_bound" in offers:
        first: dict[str, object] = {}
        for provider, bound in zip(providers, offers["date_bound"].to_numpy(object), strict=True):
            if pd.notna(provider) and pd.notna(bound):
                first.setdefault(str(provider), bound)
        bounds = {p: str(b) for p, b in sorted(first.items()) if b}
    values = {"stale_after_days": STALE_AFTER_DAYS, "providers": tuple(stale)}
    return [Note("stale_prices", {**values, "bounds": bounds} if bounds else values)]
