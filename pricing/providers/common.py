"""Helpers every provider parser shares: the fixes record, GPU resolution, finishing offers.

A parser returns `(offers, fixes)`: `fixes` has one row per row dropped or value set
missing, with the reason (FIX_COLUMNS), so nothing is discarded silently.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from pricing.aliases import resolve_offer_gpu, unsupported_reason
from pricing.catalog import OFFER_COLUMNS, validate_offers
from pricing.gpus import UnknownGPUError

FIX_COLUMNS = ("provider", "region", "instance_type", "field", "action", "reason")

Fix = dict[str, str]


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


def interconnect_for(gpu_name: str, gpu_count: float) -> str:
    """'nvlink' for multi-GPU SXM/superchip parts, 'pcie' for other multi-GPU, else 'none'."""
    if gpu_count <= 1:
        return "none"
    if "SXM" in gpu_name or gpu_name in {"B200", "B300", "GB200", "GH200"}:
        return "nvlink"
    return "pcie"


def interconnects(gpu_names: pd.Series, gpu_counts: pd.Series) -> pd.Series:
    """interconnect_for over columns (vectorized)."""
    names = gpu_names.astype(str)
    fabric = names.str.contains("SXM") | names.isin(["B200", "B300", "GB200", "GH200"])
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
        reason = unsupported_reason(label)
        gpu: str | None = None
        if reason is None:
            try:
                gpu = resolve_offer_gpu(provider, label, instance, gib)
            except UnknownGPUError as exc:
                closest = f" (closest known name: {exc.suggestion!r})" if exc.suggestion else ""
                reason = (
                    f"GPU {label!r} is in no quirk table of pricing/aliases.py{closest}; "
                    "add it there to plan for it"
                )
        if gpu is None:
            fixes.append(
                fix(provider, "*", instance, "gpu_name", "dropped", reason or "unsupported")
            )
        resolved[(label, instance)] = gpu
    pairs = zip(frame[accelerator].astype(str), frame["instance_type"].astype(str), strict=True)
    return pd.Series([resolved[p] for p in pairs], index=frame.index, dtype=object)


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
    for row in offers.loc[bad].itertuples():
        fixes.append(
            fix(
                provider,
                str(row.region),
                str(row.instance_type),
                "spot_usd_per_hour",
                "set missing",
                f"spot {row.spot_usd_per_hour:g} is not below on-demand "
                f"{row.usd_per_hour:g}: a repeated or mislabelled meter",
            )
        )
    offers.loc[bad, "spot_usd_per_hour"] = np.nan


def drop_unpriced(offers: pd.DataFrame, provider: str, fixes: list[Fix]) -> pd.DataFrame:
    """Offers with at least one price; the others are recorded and dropped."""
    from pricing.catalog import PRICE_COLUMNS

    none = offers.loc[:, list(PRICE_COLUMNS)].isna().all(axis=1)
    for row in offers.loc[none].itertuples():
        fixes.append(
            fix(
                provider,
                str(row.region),
                str(row.instance_type),
                "usd_per_hour",
                "dropped",
                "no on-demand, spot or reserved price in the source",
            )
        )
    return offers.loc[~none]


def drop_out_of_range(offers: pd.DataFrame, provider: str, fixes: list[Fix]) -> pd.DataFrame:
    """Offers whose numbers are finite and in range (catalog.NUMERIC_RANGES), on record.

    A price out of range (inf, 1e400, a unit error) is set missing; a row whose GPU
    count is out of range, or that had prices and has none left, is dropped. An API answer must
    never commit an infinite price.
    """
    from pricing.catalog import NUMERIC_RANGES, PRICE_COLUMNS, out_of_range

    out = offers.reset_index(drop=True)
    prices = [c for c in PRICE_COLUMNS if c in out]
    priced = out.loc[:, prices].notna().any(axis=1)
    for column, (low, high) in NUMERIC_RANGES.items():
        if column not in out:
            continue
        bad = out_of_range(out[column], column)
        action = "dropped" if column == "gpu_count" else "set missing"
        for row in out.loc[bad].itertuples():
            fixes.append(
                fix(
                    provider,
                    str(row.region),
                    str(row.instance_type),
                    column,
                    action,
                    f"{getattr(row, column)!r} is not a finite number in ({low:g}, {high:g}]",
                )
            )
        if column == "gpu_count":
            out = out.loc[~bad]
        else:
            out.loc[bad, column] = np.nan
    lost = priced.loc[out.index] & out.loc[:, prices].isna().all(axis=1)
    for row in out.loc[lost].itertuples():
        fixes.append(
            fix(
                provider,
                str(row.region),
                str(row.instance_type),
                "usd_per_hour",
                "dropped",
                "no price left in range",
            )
        )
    return out.loc[~lost]


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
