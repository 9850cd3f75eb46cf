"""Helpers every provider parser shares: the fixes record, GPU resolution, finishing offers.

A parser returns `(offers, fixes)`: `fixes` has one row per row dropped or value set
missing, with the reason (FIX_COLUMNS), so nothing is discarded silently.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from pricing.aliases import resolve_offer_gpu, unsupported_reason
from pricing.catalog import (
    NUMERIC_RANGES,
    OFFER_COLUMNS,
    PRICE_COLUMNS,
    out_of_range,
    validate_offers,
)
from pricing.gpus import UnknownGPUError

FIX_COLUMNS = ("provider", "region", "instance_type", "field", "action", "reason")

Fix = dict[str, str]
# GPUs without "SXM" in their canonical name that are NVLink parts (SXM or superchip).
NVLINK_PARTS = frozenset({"B200", "B300", "GB200", "GB300", "GH200"})


class MalformedPayload(ValueError):
    """An API record that is not in the shape the provider documents."""


@dataclass(frozen=True)
class ParsedCatalog:
    """A provider's offers as parsed from its API, with what was fixed and extra tables."""

    offers: pd.DataFrame
    fixes: pd.DataFrame
    source: str
    details: dict[str, pd.DataFrame] = field(default_factory=dict)
    # Per provider, for sources that date each provider's prices apart:
    # provider -> (priced_at, date basis, source commit).
    dates: dict[str, tuple[str, str, str]] = field(default_factory=dict)


def fix(
    provider: str, region: str, instance_type: str, field: str, action: str, reason: str
) -> Fix:
    """One fixes row."""
    return {
        "provider": provider,
        "region": region,
        "instance_type": instance_type,
        "field": field,
        "action": action,
        "reason": reason,
    }


def fixes_frame(rows: Iterable[Fix]) -> pd.DataFrame:
    """The fixes table (FIX_COLUMNS) from fix rows."""
    return pd.DataFrame(list(rows), columns=list(FIX_COLUMNS))


def fix_rows(
    fixes: list[Fix],
    provider: str,
    rows: pd.DataFrame,
    field: str,
    action: str,
    reason: str | Callable[[Any], str],
) -> None:
    """One fixes row per row of `rows` (an offer table's region and instance_type);
    `reason` is the text, or makes it from the row (an itertuples record)."""
    for row in rows.itertuples():
        why = reason(row) if callable(reason) else reason
        fixes.append(fix(provider, str(row.region), str(row.instance_type), field, action, why))


def interconnect_for(gpu_name: str, gpu_count: float) -> str:
    """'nvlink' for multi-GPU SXM/superchip parts, 'pcie' for other multi-GPU, else 'none'."""
    if gpu_count <= 1:
        return "none"
    if "SXM" in gpu_name or gpu_name in NVLINK_PARTS:
        return "nvlink"
    return "pcie"


def interconnects(gpu_names: pd.Series, gpu_counts: pd.Series) -> pd.Series:
    """interconnect_for over columns (vectorized)."""
    names = gpu_names.astype(str)
    fabric = names.str.contains("SXM") | names.isin(list(NVLINK_PARTS))
    out = np.where(gpu_counts <= 1, "none", np.where(fabric, "nvlink", "pcie"))
    return pd.Series(out, index=gpu_names.index, dtype=object)


def resolve_gpus(
    provider: str,
    frame: pd.DataFrame,
    accelerator: str,
    fixes: list[Fix],
    memory_gib: str | None = None,
) -> pd.Series:
    """Canonical GPU per row (pricing.aliases), None where unsupported or unknown.

    Resolves each distinct (accelerator, instance type) once. Unsupported accelerators
    (TPUs, graphics cards without a spec row) and names no quirk table knows are
    recorded in `fixes` and left None for the caller to drop: a live catalog that lists a
    new chip should not stop a refresh, and the fix says which table to extend.
    """
    columns = [accelerator, "instance_type", *([memory_gib] if memory_gib else [])]
    keys = frame.loc[:, columns].drop_duplicates()
    resolved: dict[tuple[str, str], str | None] = {}
    for row in keys.itertuples(index=False):
        label, instance = str(row[0]), str(row[1])
        gib = float(row[2]) if memory_gib and pd.notna(row[2]) else None
        gpu, reason = resolve_gpu(provider, label, instance, gib)
        if gpu is None:
            why = reason or "unsupported"
            fixes.append(fix(provider, "*", instance, "gpu_name", "dropped", why))
        resolved[(label, instance)] = gpu
    pairs = zip(frame[accelerator].astype(str), frame["instance_type"].astype(str), strict=True)
    return pd.Series([resolved[p] for p in pairs], index=frame.index, dtype=object)


def api_offers(
    offers: pd.DataFrame,
    provider: str,
    source: str,
    priced_at: str,
    fixes: list[Fix],
    memory_gib: str | None = None,
) -> pd.DataFrame:
    """A provider API's offers (an `accelerator` column and prices in USD/h) as offers of
    GPUs, for finish_offers: the canonical GPU (resolve_gpus; rows without one dropped
    on record), the provider, the interconnect, the source retrieved on `priced_at`
    (ISO date, also the price date), GPU memory missing where the API gives none, spot
    prices not below on-demand set missing and rows left with no price dropped."""
    gpus = resolve_gpus(provider, offers, "accelerator", fixes, memory_gib)
    offers = offers.assign(gpu_name=gpus)
    offers = offers.loc[offers["gpu_name"].notna()].copy()
    offers["provider"] = provider
    offers["gpu_count"] = offers["gpu_count"].astype(float)
    if "gpu_memory_gib" not in offers:
        offers["gpu_memory_gib"] = np.nan
    offers["interconnect"] = interconnects(offers["gpu_name"], offers["gpu_count"])
    offers["source"] = f"{source}, retrieved {priced_at}"
    offers["priced_at"] = priced_at
    drop_spot_not_below_on_demand(offers, provider, fixes)
    return drop_unpriced(offers, provider, fixes)


def api_catalog(
    offers: pd.DataFrame, provider: str, source: str, priced_at: str, fixes: list[Fix]
) -> ParsedCatalog:
    """The catalog of a provider API's offers: api_offers, finished (finish_offers), and
    every fix made on the way."""
    offers = api_offers(offers, provider, source, priced_at, fixes)
    return ParsedCatalog(finish_offers(offers, provider, fixes), fixes_frame(fixes), source)


def resolve_gpu(
    provider: str, label: str, instance_type: str, memory_gib: float | None = None
) -> tuple[str | None, str | None]:
    """(canonical GPU, None) for an offer's accelerator label (pricing.aliases), or (None,
    why not): an unsupported accelerator, or a name no quirk table knows (with the
    closest known name); the reason is None where the tables give none."""
    reason = unsupported_reason(label)
    gpu: str | None = None
    if reason is None:
        try:
            gpu = resolve_offer_gpu(provider, label, instance_type, memory_gib)
        except UnknownGPUError as exc:
            closest = f" (closest known name: {exc.suggestion!r})" if exc.suggestion else ""
            reason = (
                f"GPU {label!r} is in no quirk table of pricing/aliases.py{closest}; "
                "add it there to plan for it"
            )
    return gpu, reason


PRICE_KEYS = ["region", "instance_type", "kind"]


def set_prices_missing(
    prices: pd.DataFrame, bad: pd.Series, provider: str, fixes: list[Fix], sources: str
) -> None:
    """Set the `bad` prices of a long price table (PRICE_KEYS, usd) missing, in place,
    on record, one fix per key: a price not above 0 is a placeholder, any other bad one
    is priced differently by two `sources` ("SKUs", "meters")."""
    for row in prices.loc[bad].drop_duplicates(PRICE_KEYS).itertuples():
        why = (
            "placeholder price (0 or not a number)"
            if not row.usd > 0
            else f"two {sources} price it differently"
        )
        region, instance, kind = str(row.region), str(row.instance_type), str(row.kind)
        fixes.append(fix(provider, region, instance, kind, "set missing", why))
    prices.loc[bad, "usd"] = np.nan


def wide_prices(prices: pd.DataFrame, index: list[str]) -> pd.DataFrame:
    """One row per `index` with a column per PRICE_COLUMNS (USD/h, NaN where not given)
    from a long table of (index..., kind, usd) with one price per kind."""
    wide = (
        prices.set_index([*index, "kind"])["usd"]
        .unstack("kind")
        .reindex(columns=list(PRICE_COLUMNS))
        .reset_index()
    )
    wide.columns.name = None
    return wide


def drop_spot_not_below_on_demand(offers: pd.DataFrame, provider: str, fixes: list[Fix]) -> None:
    """Set spot prices that are not below on-demand to missing, in place, on record.

    A spot price at or above on-demand is a mislabelled meter (the reference Azure
    catalog repeats the on-demand price as spot for H100 sizes), not a discount.
    """
    bad = (
        offers["spot_usd_per_hour"].notna()
        & offers["usd_per_hour"].notna()
        & (offers["spot_usd_per_hour"] >= offers["usd_per_hour"])
    )
    fix_rows(
        fixes,
        provider,
        offers.loc[bad],
        "spot_usd_per_hour",
        "set missing",
        lambda row: (
            f"spot {row.spot_usd_per_hour:g} is not below on-demand "
            f"{row.usd_per_hour:g}: a repeated or mislabelled meter"
        ),
    )
    offers.loc[bad, "spot_usd_per_hour"] = np.nan


def drop_unpriced(offers: pd.DataFrame, provider: str, fixes: list[Fix]) -> pd.DataFrame:
    """Offers with at least one price; the others are recorded and dropped."""
    none = offers.loc[:, list(PRICE_COLUMNS)].isna().all(axis=1)
    fix_rows(
        fixes,
        provider,
        offers.loc[none],
        "usd_per_hour",
        "dropped",
        "no on-demand, spot or reserved price in the source",
    )
    return offers.loc[~none]


def drop_out_of_range(offers: pd.DataFrame, provider: str, fixes: list[Fix]) -> pd.DataFrame:
    """Offers whose numbers are finite and in range (catalog.NUMERIC_RANGES), on record.

    A price out of range (inf, 1e400, a unit error) is set missing; a row whose GPU
    count is out of range, or that had prices and has none left, is dropped. An API answer must
    never commit an infinite price.
    """
    out = offers.reset_index(drop=True)
    prices = [c for c in PRICE_COLUMNS if c in out]
    priced = out.loc[:, prices].notna().any(axis=1)
    for column, (low, high) in NUMERIC_RANGES.items():
        if column not in out:
            continue
        bad = out_of_range(out[column], column)
        action = "dropped" if column == "gpu_count" else "set missing"
        why = functools.partial(_not_in_range, column=column, low=low, high=high)
        fix_rows(fixes, provider, out.loc[bad], column, action, why)
        if column == "gpu_count":
            out = out.loc[~bad]
        else:
            out.loc[bad, column] = np.nan
    lost = priced.loc[out.index] & out.loc[:, prices].isna().all(axis=1)
    fix_rows(fixes, provider, out.loc[lost], "usd_per_hour", "dropped", "no price left in range")
    return out.loc[~lost]


def _not_in_range(row: Any, column: str, low: float, high: float) -> str:
    """Why a row's `column` is out of NUMERIC_RANGES: its value as written, the range."""
    return f"{getattr(row, column)!r} is not a finite number in ({low:g}, {high:g}]"


def finish_offers(
    offers: pd.DataFrame | list[dict[str, object]],
    provider: str,
    fixes: list[Fix] | None = None,
) -> pd.DataFrame:
    """Offers sorted (region, GPU, count, instance) and validated as a snapshot.

    With `fixes`, numbers out of range are first set missing or dropped on record
    (drop_out_of_range) instead of failing the whole catalog.
    """
    frame = pd.DataFrame(offers, columns=list(OFFER_COLUMNS))
    if fixes is not None:
        frame = drop_out_of_range(frame, provider, fixes)
    frame = frame.sort_values(["region", "gpu_name", "gpu_count", "instance_type"])
    return validate_offers(frame, f"<{provider} catalog>")
