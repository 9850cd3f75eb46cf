"""Read and validate price snapshots into one Offer table; pure query functions over it.

A snapshot is one CSV per provider in OFFER_COLUMNS, listed in `MANIFEST.json` with its
source, date and row count. Two folders hold snapshots: the bundled one inside the
package (read-only, the offline default) and the user's (`user_snapshot_dir()`), where
`gpuplan pricing refresh` and `add-custom` write. The user's manifest overlays the bundled
one per provider: a provider refreshed by the user is read from the user's folder, every
other provider from the bundled one. Everything else in gpuplan queries the Offer table
this module returns; only `pricing.providers.*.fetch_*` touches the network.

Offer table columns (one row per provider, region and instance type):

=========================  =====  ==========================================================
provider                   str    "aws", "gcp", "azure", "lambda", ... (lower case)
region                     str    provider's region label
instance_type              str    provider's SKU ("p4d.24xlarge"; GCP "a2-highgpu-1g")
gpu_name                   str    canonical GPU name (pricing.gpus.CANONICAL_GPUS)
gpu_count                  float  GPUs per instance; fractional for GPU slices (0.25)
gpu_memory_gib             float  memory of one whole GPU, GiB (NaN when the source does not
                                  say); gpu_count x gpu_memory_gib = instance GPU memory
vcpus, memory_gib          float  host vCPUs and RAM (NaN when unknown)
usd_per_hour               float  on-demand USD/h for the whole instance; NaN = unknown
spot_usd_per_hour          float  spot/preemptible USD/h (regional median); NaN = none
reserved_1y_usd_per_hour   float  1-year commitment, no upfront, effective USD/h; NaN
reserved_3y_usd_per_hour   float  3-year commitment, no upfront, effective USD/h; NaN
interconnect               str    "nvlink", "pcie" or "none" (single GPU)
source                     str    where the price came from (API, catalog and commit)
priced_at                  str    ISO date the price is known to hold (see MANIFEST)
=========================  =====  ==========================================================

A missing price is NaN, never 0: a 0 in a snapshot is rejected, because a placeholder
price would rank as free.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from edge.files import atomic_write_text
from pricing.gpus import CANONICAL_GPUS, did_you_mean, match_gpu_names

PRICE_COLUMNS: tuple[str, ...] = (
    "usd_per_hour",
    "spot_usd_per_hour",
    "reserved_1y_usd_per_hour",
    "reserved_3y_usd_per_hour",
)
NUMERIC_COLUMNS: tuple[str, ...] = (
    "gpu_count",
    "gpu_memory_gib",
    "vcpus",
    "memory_gib",
    *PRICE_COLUMNS,
)
TEXT_COLUMNS: tuple[str, ...] = (
    "provider",
    "region",
    "instance_type",
    "gpu_name",
    "interconnect",
    "source",
    "priced_at",
)
# The columns that lead every offer table and listing: who sells which instance type
# where, with which GPUs and how many.
OFFER_HEAD_COLUMNS: tuple[str, ...] = (
    "provider",
    "region",
    "instance_type",
    "gpu_name",
    "gpu_count",
)
OFFER_COLUMNS: tuple[str, ...] = (
    *OFFER_HEAD_COLUMNS,
    "gpu_memory_gib",
    "vcpus",
    "memory_gib",
    *PRICE_COLUMNS,
    "interconnect",
    "source",
    "priced_at",
)
# Columns a snapshot must have; the others default to missing.
REQUIRED_COLUMNS: tuple[str, ...] = (*OFFER_HEAD_COLUMNS, "usd_per_hour", "source", "priced_at")
# The documented range of each number in an offer: (exclusive low, inclusive high).
# Wide on purpose (a whole rack rents for a few hundred USD/h; the largest hosts have
# a few hundred vCPUs and tens of TiB of memory): a value outside is a unit or data
# error, and inf/nan never pass.
MAX_USD_PER_HOUR = 10_000.0
NUMERIC_RANGES: dict[str, tuple[float, float]] = {
    "gpu_count": (0.0, 1024.0),
    "gpu_memory_gib": (0.0, 1024.0),
    "vcpus": (0.0, 8192.0),
    "memory_gib": (0.0, 65536.0),
    **dict.fromkeys(
        (
            "usd_per_hour",
            "spot_usd_per_hour",
            "reserved_1y_usd_per_hour",
            "reserved_3y_usd_per_hour",
        ),
        (0.0, MAX_USD_PER_HOUR),
    ),
}
INTERCONNECTS = ("nvlink", "pcie", "none")
PRICING_KINDS: dict[str, str] = {
    "on-demand": "usd_per_hour",
    "spot": "spot_usd_per_hour",
    "reserved-1y": "reserved_1y_usd_per_hour",
    "reserved-3y": "reserved_3y_usd_per_hour",
}
MANIFEST_NAME = "MANIFEST.json"
STALE_AFTER_DAYS = 30


class SnapshotError(ValueError):
    """A snapshot file that cannot be used, with the file, line and field named."""

    def __init__(
        self, file: str | Path, message: str, line: int | None = None, field: str | None = None
    ) -> None:
        where = str(file)
        if line is not None:
            where += f", line {line}"
        if field is not None:
            where += f", field {field!r}"
        super().__init__(f"{where}: {message}")
        self.file = str(file)
        self.line = line
        self.field = field


@dataclass(frozen=True)
class SnapshotInfo:
    """One manifest entry: which file holds a provider's prices, from where and when.

    `directory` is the folder the entry was read from (not stored in the manifest);
    `spot_zones_file` and `fixes_file` name optional detail tables beside the snapshot.
    `date_bound` is empty when `priced_at` is the date the prices were published or
    read, and says what is known ("not before 2025-06") when the source is undated
    and `priced_at` is only a lower bound (the bundled catalog extracts).
    """

    provider: str
    file: str
    priced_at: str
    source: str
    rows: int
    sha256: str
    date_basis: str = ""
    source_commit: str = ""
    retrieved_at: str = ""
    spot_zones_file: str = ""
    fixes_file: str = ""
    date_bound: str = ""
    directory: str = field(default="", compare=False)

    def age_days(self, today: dt.date | None = None) -> int:
        """Days since `priced_at`."""
        today = today or dt.date.today()
        return (today - dt.date.fromisoformat(self.priced_at)).days

    @property
    def date_label(self) -> str:
        """The price date as it is known: '2026-11-30', or 'catalog extract, not before
        2025-06' for a bounded date (never an exact age for a date that is not exact)."""
        return f"catalog extract, {self.date_bound}" if self.date_bound else self.priced_at

    @property
    def path(self) -> Path:
        """The snapshot file."""
        return Path(self.directory) / self.file

    @property
    def origin(self) -> str:
        """'bundled' for the package's snapshots, else 'user'."""
        return "bundled" if _same_dir(Path(self.directory), bundled_snapshot_dir()) else "user"

    def manifest_entry(self) -> dict[str, object]:
        """The entry as stored in MANIFEST.json (no `directory`; empty extras left out)."""
        entry = asdict(self)
        entry.pop("directory")
        for optional in ("spot_zones_file", "fixes_file", "date_bound"):
            if not entry[optional]:
                entry.pop(optional)
        return entry


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def bundled_snapshot_dir() -> Path:
    """The snapshot folder shipped inside the package (the offline default)."""
    return Path(str(resources.files("pricing") / "snapshots"))


def user_snapshot_dir() -> Path:
    """Where refreshed and custom snapshots live: a folder the user can write.

    $GPUPLAN_SNAPSHOT_DIR if set, else $XDG_DATA_HOME/gpuplan/snapshots (XDG Base
    Directory spec; $XDG_DATA_HOME defaults to ~/.local/share).
    """
    env = os.environ.get("GPUPLAN_SNAPSHOT_DIR")
    if env:
        return Path(env).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home).expanduser() / "gpuplan" / "snapshots"


def read_manifest(directory: Path | None = None) -> list[SnapshotInfo]:
    """Manifest entries of a snapshot folder, validated.

    With no folder: the manifest in use, the bundled entries with the user folder's
    entry in place of the bundled one for each provider the user refreshed or added.
    """
    if directory is not None:
        return _read_manifest_file(directory)
    bundled = _read_manifest_file(bundled_snapshot_dir())
    user_dir = user_snapshot_dir()
    if _same_dir(user_dir, bundled_snapshot_dir()) or not (user_dir / MANIFEST_NAME).exists():
        return bundled
    user = {info.provider: info for info in _read_manifest_file(user_dir)}
    merged = [user.pop(info.provider, info) for info in bundled]
    return merged + list(user.values())


MAX_MANIFEST_BYTES = 4 * 1024 * 1024
MAX_SNAPSHOT_BYTES = 256 * 1024 * 1024
_FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.csv$")
_TEXT_FIELDS = ("provider", "file", "priced_at", "source", "sha256")


def _read_manifest_file(directory: Path) -> list[SnapshotInfo]:
    return _manifest_entries(directory, "snapshots")


def read_history(directory: Path) -> list[SnapshotInfo]:
    """Snapshots a folder's manifest keeps for `diff` but no longer uses ("history")."""
    if not (directory / MANIFEST_NAME).is_file():
        return []
    return _manifest_entries(directory, "history")


def _manifest_entries(directory: Path, key: str) -> list[SnapshotInfo]:
    """The validated entries of one list of a folder's MANIFEST.json.

    Only what a manifest lists is ever read as a snapshot: a CSV left in the folder
    by a refresh that never committed is not. File names are plain names inside the
    folder (no path), numbers and dates are checked.
    """
    path = directory / MANIFEST_NAME
    try:
        if path.is_dir():
            raise SnapshotError(path, "is a folder, not a manifest file")
        if path.stat().st_size > MAX_MANIFEST_BYTES:
            raise SnapshotError(path, f"is larger than {MAX_MANIFEST_BYTES:,} bytes")
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SnapshotError(
            path,
            "no manifest; run `gpuplan pricing refresh` or point "
            "GPUPLAN_SNAPSHOT_DIR at a folder with one",
        ) from None
    except json.JSONDecodeError as exc:
        raise SnapshotError(
            path, f"not valid JSON ({exc.msg} at line {exc.lineno})", line=exc.lineno
        ) from None
    except (UnicodeDecodeError, RecursionError, OSError) as exc:
        raise SnapshotError(path, f"cannot be read ({type(exc).__name__})") from None
    if not isinstance(raw, dict):
        raise SnapshotError(path, "expected an object with a 'snapshots' list", field="snapshots")
    entries = raw.get(key, [] if key == "history" else None)
    if not isinstance(entries, list):
        raise SnapshotError(path, f"expected an object with a {key!r} list", field=key)
    infos = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or "directory" in entry:
            raise SnapshotError(path, f"entry {i} is not a snapshot entry", field=key)
        try:
            info = SnapshotInfo(**entry, directory=str(directory))
        except TypeError as exc:
            raise SnapshotError(path, f"entry {i}: {exc}", field=key) from None
        _check_entry(info, path, f"{key} entry {i}")
        infos.append(info)
    return infos


def _check_entry(info: SnapshotInfo, path: Path, where: str) -> None:
    for name in _TEXT_FIELDS:
        if not isinstance(getattr(info, name), str):
            raise SnapshotError(path, f"{where}: {name} is not text", field=name)
    for name in ("file", "spot_zones_file", "fixes_file"):
        value = getattr(info, name)
        if (name == "file" or value) and not (isinstance(value, str) and _FILE_NAME.match(value)):
            raise SnapshotError(
                path,
                f"{where}: {name} {str(value)[:80]!r} is not a plain CSV file name in this folder",
                field=name,
            )
    if isinstance(info.rows, bool) or not isinstance(info.rows, int) or info.rows < 0:
        raise SnapshotError(path, f"{where}: rows must be a whole number >= 0", field="rows")
    try:
        dt.date.fromisoformat(info.priced_at)
    except ValueError:
        raise SnapshotError(
            path, f"{where}: priced_at {info.priced_at[:40]!r} is not YYYY-MM-DD", field="priced_at"
        ) from None


def write_manifest(
    directory: Path, infos: Sequence[SnapshotInfo], history: Sequence[SnapshotInfo] = ()
) -> None:
    """Write a folder's MANIFEST.json atomically (temp file + rename).

    `infos` are the snapshots in use; `history` the older ones kept for `diff`.
    """
    document: dict[str, object] = {
        "schema_version": 1,
        "snapshots": [info.manifest_entry() for info in infos],
    }
    if history:
        document["history"] = [info.manifest_entry() for info in history]
    atomic_write_text(directory / MANIFEST_NAME, json.dumps(document, indent=2) + "\n")


def _fail_rows(file: str | Path, frame: pd.DataFrame, bad: pd.Series, field: str, why: str) -> None:
    """Raise for the first row where `bad` holds, naming its CSV line (header = line 1)."""
    if bad.any():
        pos = int(np.flatnonzero(bad.to_numpy())[0])
        value: Any = frame[field].iloc[pos] if field in frame else None
        if hasattr(value, "item"):
            value = value.item()  # a numpy scalar prints as the Python value it holds
        raise SnapshotError(file, f"{value!r} {why}", line=pos + 2, field=field)


def require_columns(
    frame: pd.DataFrame,
    file: str | Path,
    required: Sequence[str] = REQUIRED_COLUMNS,
    what: str = "a snapshot",
) -> None:
    """Raise SnapshotError (line 1) when an offer table lacks a `required` column (for
    `what`: a snapshot, a custom price list)."""
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise SnapshotError(
            file,
            f"missing column(s) {missing}; {what} needs {list(required)}",
            line=1,
            field=missing[0],
        )


def validate_offers(frame: pd.DataFrame, file: str | Path = "<offers>") -> pd.DataFrame:
    """Check an offer table and return it with canonical dtypes and all OFFER_COLUMNS.

    Rejects (SnapshotError naming file, line and field): a missing required column,
    a blank provider/region/instance type, an unknown GPU name, a GPU count <= 0, a price
    that is negative, zero or not a number, an interconnect outside INTERCONNECTS, a
    priced_at that is not an ISO date, and any number that is not finite or outside
    NUMERIC_RANGES (with the range in the message). Blank prices are allowed: they mean
    unknown.
    """
    require_columns(frame, file)
    out = frame.copy()
    for column in OFFER_COLUMNS:
        if column not in out:
            out[column] = np.nan if column in NUMERIC_COLUMNS else ""
    for column in TEXT_COLUMNS:
        out[column] = out[column].astype(object).fillna("").astype(str).str.strip()
        if column == "interconnect":
            out[column] = out[column].replace("", "none")
    for column in ("provider", "region", "instance_type", "source"):
        _fail_rows(file, out, out[column] == "", column, "is blank; every offer needs one")
    for column in NUMERIC_COLUMNS:
        numbers = pd.to_numeric(out[column], errors="coerce")
        not_number = numbers.isna() & out[column].notna() & (out[column].astype(str) != "")
        _fail_rows(file, out, not_number, column, "is not a number")
        out[column] = numbers.astype(float)
    known = out["gpu_name"].isin(CANONICAL_GPUS)
    if not known.all():
        pos = int(np.flatnonzero(~known.to_numpy())[0])
        name = out["gpu_name"].iloc[pos]
        fix = did_you_mean(name, CANONICAL_GPUS)
        raise SnapshotError(
            file,
            f"unknown GPU {name!r}{fix} (valid: {', '.join(CANONICAL_GPUS)})",
            line=pos + 2,
            field="gpu_name",
        )
    _fail_rows(
        file,
        out,
        ~(out["gpu_count"] > 0),
        "gpu_count",
        "is not a GPU count: it must be > 0 (fractions for GPU slices)",
    )
    for column in PRICE_COLUMNS:
        _fail_rows(
            file,
            out,
            out[column] < 0,
            column,
            "is negative; a price is > 0 USD/h, or blank when unknown",
        )
        _fail_rows(
            file,
            out,
            out[column] == 0,
            column,
            "is zero; 0 is a placeholder, not a price: leave it blank when unknown",
        )
    for column, (low, high) in NUMERIC_RANGES.items():
        _fail_rows(
            file,
            out,
            out_of_range(out[column], column),
            column,
            f"is out of range: it must be a finite number > {low:g} and <= {high:g}"
            + (" USD/h" if column in PRICE_COLUMNS else "")
            + ("" if column in REQUIRED_COLUMNS else ", or blank when unknown"),
        )
    _fail_rows(
        file,
        out,
        ~out["interconnect"].isin(INTERCONNECTS),
        "interconnect",
        f"is not one of {list(INTERCONNECTS)}",
    )
    dates = pd.to_datetime(out["priced_at"], format="%Y-%m-%d", errors="coerce")
    _fail_rows(file, out, dates.isna(), "priced_at", "is not an ISO date (YYYY-MM-DD)")
    out["provider"] = out["provider"].str.lower()
    return out.loc[:, list(OFFER_COLUMNS)].reset_index(drop=True)


def out_of_range(values: pd.Series, column: str) -> pd.Series:
    """Where a numeric column is outside NUMERIC_RANGES (missing values are not)."""
    low, high = NUMERIC_RANGES[column]
    numbers = pd.to_numeric(values, errors="coerce").astype(float)
    return numbers.notna() & ~((numbers > low) & (numbers <= high))


def read_text_table(path: Path, skipinitialspace: bool = False) -> pd.DataFrame:
    """A CSV file as text cells (header row = column names; blank lines skipped).

    Strict where pandas is lenient: a row with more or fewer cells than the header is an
    error naming its line (pandas would turn surplus cells into an index, which for a
    hostile row of 100,000 cells takes minutes), as is a cell past csv's size limit.
    Raises SnapshotError, csv.Error or UnicodeDecodeError for the caller to name.
    """
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle, skipinitialspace=skipinitialspace)
        try:
            header = next(reader)
        except StopIteration:
            raise SnapshotError(path, "is empty: expected a header row", line=1) from None
        rows = []
        for row in reader:
            if not row:
                continue
            if len(row) != len(header):
                raise SnapshotError(
                    path,
                    f"has {len(row)} cells where the header has {len(header)}",
                    line=reader.line_num,
                )
            rows.append(row)
    columns = [str(c).strip() for c in header]
    if len(set(columns)) != len(columns):
        duplicate = next(c for c in columns if columns.count(c) > 1)
        raise SnapshotError(path, f"column {duplicate!r} appears twice", line=1, field=duplicate)
    return pd.DataFrame(rows, columns=columns, dtype=object)


def read_snapshot(path: Path, expected_rows: int | None = None) -> pd.DataFrame:
    """One snapshot CSV, validated. `expected_rows` guards against a truncated file."""
    offers = validate_offers(_read_snapshot_text(path), path)
    _check_rows(path, len(offers), expected_rows)
    return offers


def _read_snapshot_text(path: Path) -> pd.DataFrame:
    """A snapshot CSV's cells as text (blank = NaN), before validation."""
    try:
        if path.is_dir():
            raise SnapshotError(path, "is a folder, not a snapshot CSV")
        if path.stat().st_size > MAX_SNAPSHOT_BYTES:
            raise SnapshotError(path, f"is larger than {MAX_SNAPSHOT_BYTES:,} bytes")
        frame = read_text_table(path)
    except FileNotFoundError:
        raise SnapshotError(path, "file listed in the manifest does not exist") from None
    except (csv.Error, UnicodeDecodeError) as exc:
        raise SnapshotError(path, f"not a readable CSV: {exc}") from None
    except OSError as exc:
        raise SnapshotError(path, f"cannot be read ({exc.strerror or exc})") from None
    return frame.replace("", np.nan)


def _check_rows(path: Path, rows: int, expected_rows: int | None) -> None:
    if expected_rows is not None and rows != expected_rows:
        raise SnapshotError(
            path,
            f"has {rows} rows but the manifest says "
            f"{expected_rows}; the file is truncated or was edited by hand",
        )


def load_offers(directory: Path | None = None) -> pd.DataFrame:
    """Every provider's offers as one Offer table, with each offer's `tier` (pricing.tiers)
    and `date_bound` (its snapshot's; '' when priced_at is exact, see SnapshotInfo).

    From one snapshot folder's manifest, or with no folder from the manifest in use
    (read_manifest: the user's snapshots over the bundled ones).
    """
    from pricing.tiers import tiers_of

    infos = read_manifest(directory)
    if not infos:
        offers = empty_offers().assign(date_bound=pd.Series(dtype=object))
        return offers.assign(tier=tiers_of(offers["provider"]))
    texts = [_read_snapshot_text(info.path) for info in infos]
    for info, text in zip(infos, texts, strict=True):
        require_columns(text, info.path)
    try:  # one validation of all rows: a tenth of the time of one per file
        offers = validate_offers(pd.concat(texts, ignore_index=True), "<snapshots>")
    except SnapshotError:
        for info, text in zip(infos, texts, strict=True):
            validate_offers(text, info.path)  # raises naming the file and its line
        raise
    for info, text in zip(infos, texts, strict=True):
        _check_rows(info.path, len(text), info.rows)
    bounds = np.repeat([info.date_bound for info in infos], [len(t) for t in texts])
    return offers.assign(date_bound=bounds.astype(object), tier=tiers_of(offers["provider"]))


PRICE_DATE_BASES = ("exact", "not-before")


def price_date_basis(date_bound: object) -> str:
    """'not-before' when a price date is only a lower bound (its snapshot has a
    `date_bound`, see SnapshotInfo), else 'exact'."""
    return "not-before" if isinstance(date_bound, str) and date_bound else "exact"


def price_date_bases(offers: pd.DataFrame) -> pd.Series:
    """price_date_basis of every offer ('exact' where the table has no date_bound)."""
    if "date_bound" not in offers:
        return pd.Series("exact", index=offers.index, dtype=object)
    return offers["date_bound"].map(price_date_basis).astype(object)


def price_date_label(price_date: object, basis: object) -> str:
    """A price date as a user should read it: '2026-11-30' when exact, '≥ 2025-06-01'
    when only a lower bound, '' when there is none (on-prem rows)."""
    text = "" if price_date is None or pd.isna(price_date) else str(price_date)
    if not text:
        return ""
    return f"≥ {text}" if basis == "not-before" else text


def price_date_labels(rows: pd.DataFrame, date: str = "price_date") -> list[str]:
    """price_date_label of every row, from its `date` column and `price_date_basis`
    (or its `date_bound`, for Offer rows)."""
    bases = rows["price_date_basis"] if "price_date_basis" in rows else price_date_bases(rows)
    return [price_date_label(d, b) for d, b in zip(rows[date], bases, strict=True)]


def empty_offers() -> pd.DataFrame:
    """An Offer table with no rows."""
    return pd.DataFrame(
        {c: pd.Series(dtype=float if c in NUMERIC_COLUMNS else str) for c in OFFER_COLUMNS}
    )


def file_sha256(path: Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def offers_to_csv(offers: pd.DataFrame) -> str:
    """The snapshot CSV text for an offer table (blank = missing, stable float format)."""
    return offers.loc[:, list(OFFER_COLUMNS)].to_csv(
        index=False, float_format="%.6g", lineterminator="\n"
    )


# ---------------------------------------------------------------- pure queries


def filter_offers(
    offers: pd.DataFrame,
    providers: Sequence[str] | None = None,
    regions: Sequence[str] | None = None,
    gpus: Sequence[str] | None = None,
    *,
    tiers: Sequence[str] | None = None,
    include_retired: bool = False,
    today: dt.date | None = None,
) -> pd.DataFrame:
    """Offers matching any of the providers, regions and GPU filters given.

    GPU filters are families or canonical names (see pricing.gpus.match_gpu_names);
    an unknown one raises UnknownGPUError with the closest match. Offers outside `tiers`
    (default pricing.tiers.DEFAULT_TIERS, unless `providers` names providers) and
    retired sizes (pricing.retired, unless `include_retired`) are left out.
    """
    from pricing.retired import retired_mask
    from pricing.tiers import DEFAULT_TIERS, check_tiers, in_tiers

    keep = pd.Series(True, index=offers.index)
    if providers:
        keep &= offers["provider"].isin([p.lower() for p in providers])
    if tiers or not providers:
        keep &= in_tiers(offers, check_tiers(tiers or DEFAULT_TIERS))
    if not include_retired:
        keep &= ~retired_mask(offers, today)
    if regions:
        keep &= offers["region"].isin(list(regions))
    if gpus:
        names = {name for query in gpus for name in match_gpu_names(query)}
        keep &= offers["gpu_name"].isin(names)
    return offers.loc[keep].reset_index(drop=True)


def price_for_kind(offers: pd.DataFrame, kind: str) -> pd.Series:
    """USD/h per offer for a pricing kind (PRICING_KINDS); NaN where not offered."""
    if kind not in PRICING_KINDS:
        fix = did_you_mean(kind, PRICING_KINDS)
        raise ValueError(f"unknown pricing kind {kind!r}{fix} Valid: {', '.join(PRICING_KINDS)}")
    return offers[PRICING_KINDS[kind]]


def unique_values(offers: pd.DataFrame, column: str) -> list[str]:
    """Sorted distinct values of a text column, for choices in the CLI and app."""
    return sorted(str(v) for v in offers[column].dropna().unique())
