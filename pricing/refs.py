"""Offer references a user types, resolved against the Offer table (pure queries).

Syntax (provider names are case-insensitive; the rest is exact):

  provider:region:instance_type   one offer, e.g. aws:us-east-1:p5.48xlarge
  provider:instance_type          that instance type in its cheapest region, e.g. aws:p5.48xlarge
  GPU                             the cheapest offer of that GPU anywhere, e.g. H100-SXM or H100

"Cheapest" is per GPU-hour at the chosen pricing kind; offers without that price are skipped.
Instance types may contain colons (Fluidstack's "H100_NVLINK_80GB::8"): after the provider,
the rest is tried as an instance type first, then as region:instance_type.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from pricing.catalog import price_for_kind, unique_values
from pricing.gpus import UnknownGPUError, canonical_gpu, closest_match, did_you_mean


class OfferRefError(ValueError):
    """An offer reference that matches no priced offer, with the closest valid choice."""


def with_gpu_hour_price(offers: pd.DataFrame, kind: str) -> pd.DataFrame:
    """Offers plus `usd_per_gpu_hour` (instance price at `kind` / gpu_count; NaN = none)."""
    return offers.assign(
        pricing=kind, usd_per_gpu_hour=price_for_kind(offers, kind) / offers["gpu_count"]
    )


# Per-GPU-hour column of each pricing kind (gpu_hour_prices).
GPU_HOUR_COLUMNS: dict[str, str] = {
    "on-demand": "on_demand_usd_per_gpu_hour",
    "spot": "spot_usd_per_gpu_hour",
    "reserved-1y": "reserved_1y_usd_per_gpu_hour",
    "reserved-3y": "reserved_3y_usd_per_gpu_hour",
}


def gpu_hour_prices(offers: pd.DataFrame) -> pd.DataFrame:
    """USD per GPU-hour at every pricing kind (instance price / gpu_count), offers' index.

    Columns: GPU_HOUR_COLUMNS' values; NaN where the offer has no price of that kind.
    """
    return pd.DataFrame(
        {
            column: price_for_kind(offers, kind) / offers["gpu_count"]
            for kind, column in GPU_HOUR_COLUMNS.items()
        },
        index=offers.index,
    )


def _cheapest(rows: pd.DataFrame, ref: str, kind: str) -> pd.DataFrame:
    priced = rows.loc[rows["usd_per_gpu_hour"].notna()]
    if priced.empty:
        kinds = [
            k
            for k, column in (
                ("on-demand", "usd_per_hour"),
                ("spot", "spot_usd_per_hour"),
                ("reserved-1y", "reserved_1y_usd_per_hour"),
                ("reserved-3y", "reserved_3y_usd_per_hour"),
            )
            if rows[column].notna().any()
        ]
        have = f"; it has {', '.join(kinds)} prices" if kinds else ""
        raise OfferRefError(f"{ref!r} has no {kind} price in the snapshot{have}")
    order = priced.sort_values(["usd_per_gpu_hour", "provider", "region"], kind="stable")
    return order.head(1)


def resolve_offer_ref(offers: pd.DataFrame, ref: str, kind: str) -> pd.DataFrame:
    """The one offer row (with usd_per_gpu_hour and `ref`) a reference means at `kind`."""
    table = with_gpu_hour_price(offers, kind)
    text = ref.strip()
    if ":" not in text:
        try:
            gpu = canonical_gpu(text)
        except UnknownGPUError as exc:
            raise OfferRefError(
                f"{exc} (an offer reference is provider:region:instance_type, "
                "provider:instance_type or a GPU name)"
            ) from None
        rows = table.loc[table["gpu_name"] == gpu]
        if rows.empty:
            raise OfferRefError(f"no offer of {gpu} in the snapshot")
        return _cheapest(rows, ref, kind).assign(ref=ref)
    provider, rest = text.split(":", 1)
    providers = unique_values(table, "provider")
    if provider.lower() not in providers:
        fix = did_you_mean(provider, providers)
        raise OfferRefError(
            f"unknown provider {provider!r} in {ref!r}{fix} Valid: {', '.join(providers)}"
        )
    mine = table.loc[table["provider"] == provider.lower()]
    types = unique_values(mine, "instance_type")
    if rest in types:
        return _cheapest(mine.loc[mine["instance_type"] == rest], ref, kind).assign(ref=ref)
    if ":" not in rest:
        hint = closest_match(rest, types)
        fix = f"; did you mean '{provider.lower()}:{hint}'?" if hint else ""
        raise OfferRefError(f"unknown {provider.lower()} instance type {rest!r}{fix}")
    region, instance = rest.split(":", 1)
    if instance not in types:
        fix = did_you_mean(instance, types)
        raise OfferRefError(f"unknown {provider.lower()} instance type {instance!r}{fix}")
    rows = mine.loc[mine["instance_type"] == instance]
    regions = unique_values(rows, "region")
    if region not in regions:
        fix = did_you_mean(region, regions)
        raise OfferRefError(
            f"{provider.lower()} has no {instance} in region {region!r}{fix} "
            f"Regions with it: {', '.join(regions)}"
        )
    return _cheapest(rows.loc[rows["region"] == region], ref, kind).assign(ref=ref)


def resolve_offer_refs(offers: pd.DataFrame, refs: Sequence[str], kind: str) -> pd.DataFrame:
    """One row per reference, in the order given (see resolve_offer_ref)."""
    frames = [resolve_offer_ref(offers, ref, kind) for ref in refs]
    return pd.concat(frames, ignore_index=True)


def priced_offers(offers: pd.DataFrame, gpu_name: str, kind: str) -> pd.DataFrame:
    """Every offer of one GPU with a price at `kind`, cheapest per GPU-hour first, with
    `usd_per_gpu_hour`, `pricing` and `ref` (provider:region:instance_type)."""
    table = with_gpu_hour_price(offers, kind)
    rows = table.loc[(table["gpu_name"] == gpu_name) & table["usd_per_gpu_hour"].notna()]
    rows = rows.sort_values(["usd_per_gpu_hour", "provider", "region"], kind="stable")
    rows = rows.reset_index(drop=True)
    return rows.assign(ref=rows["provider"] + ":" + rows["region"] + ":" + rows["instance_type"])


def cheapest_per_provider(offers: pd.DataFrame, gpu_name: str, kind: str) -> pd.DataFrame:
    """The cheapest offer per GPU-hour of one GPU from each provider at `kind`, cheapest first.

    `ref` is each row's provider:region:instance_type. Empty when nothing is priced.
    """
    rows = priced_offers(offers, gpu_name, kind)
    return rows.drop_duplicates("provider").reset_index(drop=True)
