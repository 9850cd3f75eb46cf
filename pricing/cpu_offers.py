"""CPU-only instances and their prices: a catalog of its own, beside the GPU offers.

The GPU Offer table (pricing.catalog) holds only instances with GPUs; CPU-only instance
types (AWS m8i/m8g, GCP c2/c4/n1, Azure Fsv2 in the bundled extracts) live here, so every
GPU path (plans, `pricing` tables, `estimate`, sweeps) reads exactly what it read before.
A plan reads this table only for its CPU baseline rows (planner.choose.baseline).

The bundled CPU catalog is `pricing/snapshots/cpu/` (one CSV per provider and a
MANIFEST.json in the GPU snapshots' format, pricing.catalog.SnapshotInfo), built from
reference/pricing/*_vms.csv by tools/build_bundled_data.py. `pricing refresh` does not
refresh it.

CPU offer table columns (one row per provider, region and instance type):

=========================  =====  ==========================================================
provider, region, instance_type   as in the GPU Offer table
vcpus                      float  vCPUs (hardware threads) of the instance, > 0
memory_gib                 float  RAM, GiB (NaN when unknown)
arch                       str    "x86_64" or "arm64" (CPU_ARCHS)
usd_per_hour               float  on-demand USD/h for the whole instance; NaN = unknown
spot_usd_per_hour          float  spot USD/h (regional median); NaN = none
reserved_1y/3y_usd_per_hour float NaN (the extracts have none)
source, priced_at          str    the catalog and commit; the date known (see MANIFEST)
=========================  =====  ==========================================================
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from pricing.catalog import (
    MAX_USD_PER_HOUR,
    PRICE_COLUMNS,
    SnapshotError,
    SnapshotInfo,
    _read_snapshot_text,
    read_manifest,
    require_columns,
)

CPU_NAME = "CPU"  # the gpu_name a plan gives a CPU-only option (gpu_count 0)
CPU_ARCHS = ("x86_64", "arm64")
CPU_OFFER_COLUMNS: tuple[str, ...] = (
    "provider", "region", "instance_type", "vcpus", "memory_gib", "arch", *PRICE_COLUMNS,
    "source", "priced_at",
)  # fmt: skip
CPU_REQUIRED_COLUMNS: tuple[str, ...] = (
    "provider", "region", "instance_type", "vcpus", "arch", "usd_per_hour", "source",
    "priced_at",
)  # fmt: skip
_NUMBERS: dict[str, tuple[float, float]] = {
    "vcpus": (0.0, 8192.0),
    "memory_gib": (0.0, 65536.0),
    **dict.fromkeys(PRICE_COLUMNS, (0.0, MAX_USD_PER_HOUR)),
}


def bundled_cpu_dir() -> Path:
    """The CPU catalog folder shipped inside the package."""
    from pricing.catalog import bundled_snapshot_dir

    return bundled_snapshot_dir() / "cpu"


def validate_cpu_offers(frame: pd.DataFrame, file: str | Path = "<cpu offers>") -> pd.DataFrame:
    """Check a CPU offer table; return it in CPU_OFFER_COLUMNS with float numbers.

    Rejects (SnapshotError naming file, line and field) a missing required column, a blank
    provider, region or instance type, vCPUs that are not a number > 0, an arch outside
    CPU_ARCHS, a price that is not a number > 0 (blank = unknown), any number outside its
    range, and a priced_at that is not an ISO date.
    """
    require_columns(frame, file, CPU_REQUIRED_COLUMNS, "a CPU catalog")
    out = frame.copy()
    for column in CPU_OFFER_COLUMNS:
        if column not in out:
            out[column] = np.nan if column in _NUMBERS else ""
    for column in ("provider", "region", "instance_type", "arch", "source", "priced_at"):
        out[column] = out[column].astype(object).fillna("").astype(str).str.strip()
    for column in ("provider", "region", "instance_type", "source"):
        _fail(file, out, out[column] == "", column, "is blank; every CPU offer needs one")
    for column, (low, high) in _NUMBERS.items():
        numbers = pd.to_numeric(out[column], errors="coerce")
        given = out[column].notna() & (out[column].astype(str) != "")
        _fail(file, out, numbers.isna() & given, column, "is not a number")
        bad = numbers.notna() & ~((numbers > low) & (numbers <= high))
        unit = " USD/h (blank when unknown)" if column in PRICE_COLUMNS else ""
        why = f"is out of range: it must be > {low:g} and <= {high:g}{unit}"
        _fail(file, out, bad, column, why)
        out[column] = numbers.astype(float)
    _fail(file, out, out["vcpus"].isna(), "vcpus", "is missing: a CPU offer needs its vCPUs")
    _fail(file, out, ~out["arch"].isin(CPU_ARCHS), "arch", f"is not one of {list(CPU_ARCHS)}")
    dates = pd.to_datetime(out["priced_at"], format="%Y-%m-%d", errors="coerce")
    _fail(file, out, dates.isna(), "priced_at", "is not an ISO date (YYYY-MM-DD)")
    out["provider"] = out["provider"].str.lower()
    return out.loc[:, list(CPU_OFFER_COLUMNS)].reset_index(drop=True)


def _fail(file: str | Path, frame: pd.DataFrame, bad: pd.Series, field: str, why: str) -> None:
    """Raise for the first row where `bad` holds, naming its CSV line (header = line 1)."""
    if bad.any():
        pos = int(np.flatnonzero(bad.to_numpy())[0])
        value = frame[field].iloc[pos]
        raise SnapshotError(file, f"{value!r} {why}", line=pos + 2, field=field)


def cpu_offers_to_csv(offers: pd.DataFrame) -> str:
    """The CSV text of a CPU offer table (blank = missing, stable float format)."""
    return offers.loc[:, list(CPU_OFFER_COLUMNS)].to_csv(
        index=False, float_format="%.6g", lineterminator="\n"
    )


def load_cpu_offers(directory: Path | None = None) -> pd.DataFrame:
    """Every CPU offer of a CPU catalog folder's manifest (the bundled one by default),
    validated, with its snapshot's `date_bound` ('' when priced_at is exact)."""
    if directory is None:
        return _bundled().copy()
    return _load(directory)


@lru_cache(maxsize=1)
def _bundled() -> pd.DataFrame:
    return _load(bundled_cpu_dir())


def _load(directory: Path) -> pd.DataFrame:
    infos = read_manifest(directory)
    if not infos:
        empty = pd.DataFrame({c: pd.Series(dtype=object) for c in CPU_OFFER_COLUMNS})
        return empty.assign(date_bound=pd.Series(dtype=object))
    texts = [_read_snapshot_text(info.path) for info in infos]
    try:  # all rows validated at once, a third of the time of one file after another
        for text in texts:
            require_columns(text, "<cpu offers>", CPU_REQUIRED_COLUMNS, "a CPU catalog")
        offers = validate_cpu_offers(pd.concat(texts, ignore_index=True), "<cpu offers>")
    except SnapshotError:  # again one file at a time, to name the file and line refused
        for info, text in zip(infos, texts, strict=True):
            validate_cpu_offers(text, info.path)
            _check_rows(info, len(text))
        raise
    for info, text in zip(infos, texts, strict=True):
        _check_rows(info, len(text))
    bounds = [info.date_bound for info, text in zip(infos, texts, strict=True) for _ in text.index]
    return offers.assign(date_bound=pd.Series(bounds, dtype=object))


def _check_rows(info: SnapshotInfo, rows: int) -> None:
    if rows != info.rows:
        raise SnapshotError(info.path, f"has {rows} rows but the manifest says {info.rows}")
