"""Checks at the edge: numbers finite and in range, input files bounded, output paths usable.

One place for what every flag, config file and result number must satisfy, so a message
always names the field and its valid range: `--checkpoint-minutes inf: must be a finite
number from 0 to 10,080`. Ranges are wide (they catch nonsense and overflow, not unusual
but real values). A quantity that is both a flag and a column of a query file has one
entry in FIELD_RANGES, which FLAG_RANGES and the file readers both use; the range of
each flag is in FLAG_RANGES.

Reference and query CSV files are read row by row (`read_csv_table`) and refused, with
file, line and column, as soon as one is over its bounds: MAX_TABLE_BYTES,
MAX_TABLE_ROWS, MAX_TABLE_COLUMNS, MAX_CELL_CHARS, or a column name given twice.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edge.console import shorten as shorten  # imported from here by the CLI
from edge.console import warn_lines as warn_lines
from edge.files import RefusedFileError, bounded_lines, json_depth, open_bounded, read_text_bounded

MAX_CONFIG_BYTES = 1024 * 1024  # an on-prem TOML config
MAX_TABLE_BYTES = 16 * 1024 * 1024  # a reference or query CSV (Lambda's reference: 1.1 MB)
MAX_TABLE_ROWS = 10_000  # data rows of a reference or query CSV (Lambda's reference: 2,805)
MAX_TABLE_COLUMNS = 100  # columns of a reference or query CSV (Lambda's reference: 24)
MAX_CELL_CHARS = 1_000  # characters of one cell or column name of a reference or query CSV
MAX_TOML_DEPTH = 16  # nested tables/arrays in a config (the flat on-prem config uses 1)


class RangeError(ValueError):
    """A number that is not finite or not within its documented range."""


class InputPathError(ValueError):
    """A path given for a file to read or write that cannot be used."""


class NestingError(ValueError):
    """A TOML or JSON document nested deeper than its limit."""


class TableError(ValueError):
    """A CSV file over one of its bounds; the message names file, line and column."""


def _bound_text(value: float) -> str:
    """A range's end as people read it: 10,000,000 (whole, below a billion), else 1e+12."""
    if float(value).is_integer() and abs(value) < 1e9:
        return f"{value:,.0f}"
    return f"{value:,g}"


@dataclass(frozen=True)
class Range:
    """Valid values: low to high, each end inclusive or not; optionally whole numbers."""

    low: float
    high: float
    low_inclusive: bool = True
    high_inclusive: bool = True
    integer: bool = False
    unit: str = ""

    def text(self) -> str:
        """'from 0 to 10,080 minutes', 'greater than 0 and at most 1e+12 tokens'."""
        low, high = _bound_text(self.low), _bound_text(self.high)
        unit = f" {self.unit}" if self.unit else ""
        kind = "a whole number" if self.integer else "a finite number"
        if self.low_inclusive and self.high_inclusive:
            return f"{kind} from {low} to {high}{unit}"
        lower = f"at least {low}" if self.low_inclusive else f"greater than {low}"
        upper = f"at most {high}" if self.high_inclusive else f"less than {high}"
        return f"{kind} {lower} and {upper}{unit}"

    def holds(self, value: float) -> bool:
        """Whether `value` is finite, within the range, and whole when it must be."""
        if not math.isfinite(value):
            return False
        if self.integer and not float(value).is_integer():
            return False
        above = value >= self.low if self.low_inclusive else value > self.low
        below = value <= self.high if self.high_inclusive else value < self.high
        return above and below


# Quantities given as a flag, as a column of a query file (`estimate`, `estimate-llm`), or
# both: one range each, so a row never accepts what the flag refuses. Keyed by the column
# name; the flag is `--` + the name with dashes (flag_name).
FIELD_RANGES: dict[str, Range] = {
    "params": Range(0, 1e15, low_inclusive=False, unit="parameters"),
    "seq_len": Range(1, 10_000_000, integer=True, unit="tokens"),
    "num_gpus": Range(1, 1_000_000, integer=True, unit="GPUs"),
    "n_layer": Range(1, 10_000, integer=True, unit="layers"),
    "d_model": Range(1, 1_000_000, integer=True),
    "global_batch_tokens": Range(0, 1e12, low_inclusive=False, unit="tokens"),
    "global_batch": Range(0, 1e9, low_inclusive=False, unit="samples per step"),
    "gpus_per_node": Range(1, 1024, integer=True, unit="GPUs"),
    "network_gbps": Range(0, 1e6, low_inclusive=False, unit="Gb/s"),
    "ffn": Range(1, 10_000_000, integer=True),
    "heads": Range(1, 100_000, integer=True, unit="heads"),
    "kv_heads": Range(1, 100_000, integer=True, unit="heads"),
    "vocab": Range(1, 100_000_000, integer=True, unit="tokens"),
}


def flag_name(field: str) -> str:
    """The command-line flag of a FIELD_RANGES quantity: 'gpus_per_node' -> '--gpus-per-node'."""
    return "--" + field.replace("_", "-")


# The FIELD_RANGES quantities that are also flags (of `plan`, `estimate`, `estimate-llm`).
FLAG_FIELDS = (
    "seq_len",
    "n_layer",
    "d_model",
    "global_batch_tokens",
    "gpus_per_node",
    "network_gbps",
    "ffn",
    "heads",
    "kv_heads",
    "vocab",
)
# Flags of `gpuplan plan`, `estimate`, `estimate-llm` and `tco`: what each accepts.
FLAG_RANGES: dict[str, Range] = {
    "--checkpoint-minutes": Range(0, 7 * 24 * 60, unit="minutes"),
    "--restart-minutes": Range(0, 7 * 24 * 60, unit="minutes"),
    "--overlap": Range(0, 1),
    "--monthly-gpu-hours": Range(0, 1e12, low_inclusive=False, unit="GPU-hours per month"),
    "--utilization": Range(0, 1, low_inclusive=False),
    **{flag_name(field): FIELD_RANGES[field] for field in FLAG_FIELDS},
}
# Throughput in a reference file: positive and below anything a cluster reaches.
THROUGHPUT_RANGE = Range(0, 1e12, low_inclusive=False, unit="samples or tokens per second")
GPU_COUNT_RANGE = FIELD_RANGES["num_gpus"]


def check_number(name: str, value: Any, valid: Range) -> float:
    """`value` as a float when it is a finite number within `valid`; RangeError naming
    `name` and the range otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RangeError(f"{name} {shorten(repr(value))}: not a number; must be {valid.text()}")
    if not valid.holds(float(value)):
        raise RangeError(f"{name} {value:g}: must be {valid.text()}")
    return float(value)


def check_flag(flag: str, value: float | int | None) -> None:
    """check_number for a CLI flag with its FLAG_RANGES entry (None: not given, fine)."""
    if value is not None:
        check_number(flag, value, FLAG_RANGES[flag])


def check_flags(values: dict[str, float | int | None]) -> None:
    """check_flag for each (flag, value): the first bad one raises RangeError."""
    for flag, value in values.items():
        check_flag(flag, value)


def read_text_file(path: str | Path, what: str, max_bytes: int, hint: str = "") -> str:
    """The UTF-8 text of the regular file `path`; InputPathError naming `what` otherwise
    (missing, a folder, a device, larger than `max_bytes`, not UTF-8, unreadable)."""
    if not str(path).strip():
        raise InputPathError(f"{what}: an empty path{_fix(hint)}")
    try:
        return read_text_bounded(path, max_bytes)
    except RefusedFileError as exc:
        raise _refused(path, what, max_bytes, hint, exc) from None


def _fix(hint: str) -> str:
    return f"; {hint}" if hint else ""


def _refused(
    path: str | Path, what: str, max_bytes: int, hint: str, exc: RefusedFileError
) -> InputPathError:
    """The InputPathError for a file refused for `exc.reason`, naming `what` and the file."""
    fix = _fix(hint)
    match exc.reason:
        case "missing" | "dangling":
            problem = f": no such file{fix}"
        case "unreadable":
            problem = f": cannot be read ({exc.detail}){fix}"
        case "folder":
            problem = f" is a folder{fix or '; give a file'}"
        case "not_regular":
            problem = f" is not a regular file{fix}"
        case "too_large":
            problem = f": {exc.size_bytes:,} bytes, more than the {max_bytes:,} allowed"
        case "grew":
            problem = f": more than the {max_bytes:,} bytes allowed"
        case "not_utf8":
            problem = ": not a UTF-8 text file"
        case _:
            problem = f": {exc}"
    return InputPathError(f"{what} {shorten(Path(path))}{problem}")


def loads_toml(text: str, max_depth: int = MAX_TOML_DEPTH) -> dict[str, Any]:
    """tomllib.loads, with nesting deeper than `max_depth` refused as a NestingError (a
    RecursionError never escapes); tomllib.TOMLDecodeError for text that is not TOML."""
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise NestingError(f"nested deeper than {max_depth} levels") from None
    if json_depth(data) > max_depth:
        raise NestingError(f"nested deeper than {max_depth} levels")
    return data


def check_output_path(path: str | Path, what: str = "--output") -> Path:
    """A file path that can be written: not a folder, in a folder that exists."""
    if not str(path).strip():
        raise InputPathError(f"{what}: an empty path; give a file name")
    path = Path(path)
    shown = shorten(path)
    if path.is_dir():
        raise InputPathError(f"{what} {shown} is a folder; give a file name inside it")
    parent = path.parent
    if not parent.is_dir():
        raise InputPathError(
            f"{what} {shown}: the folder {shorten(parent)!r} does not exist; create it first"
        )
    return path


def read_csv_table(
    path: Path,
    what: str,
    error: Callable[[str], Exception],
    max_rows: int = MAX_TABLE_ROWS,
) -> Any:
    """A CSV file as a pandas DataFrame of text cells, column names stripped.

    Read row by row and refused with `error(message)` naming the file (and the line and
    column where there is one) as soon as it is unreadable, larger than MAX_TABLE_BYTES,
    longer than `max_rows` data rows, wider than MAX_TABLE_COLUMNS, has a cell or name of
    more than MAX_CELL_CHARS characters, a row with more cells than the header, or a
    column name twice: a file over a bound is never read whole. Rows with fewer cells
    than the header get blank ones; blank lines are skipped.
    """
    import csv

    import pandas as pd

    hint = "give a CSV file"
    if not str(path).strip():
        raise error(f"{what} file: an empty path; {hint}")
    try:
        with open_bounded(Path(path), MAX_TABLE_BYTES) as handle:
            reader = csv.reader(bounded_lines(handle, MAX_TABLE_BYTES), skipinitialspace=True)
            header = _header(path, next((r for r in reader if r not in ([], [""])), None))
            rows = _data_rows(path, reader, header, max_rows)
    except RefusedFileError as exc:
        raise error(str(_refused(path, f"{what} file", MAX_TABLE_BYTES, hint, exc))) from None
    except csv.Error as exc:
        raise error(f"{shorten(path)}: not a readable CSV file ({exc})") from None
    except TableError as exc:
        raise error(str(exc)) from None
    return pd.DataFrame(rows, columns=header, dtype=str)


def _header(path: Path, row: list[str] | None) -> list[str]:
    """The column names of a CSV file's first row, checked: some, at most
    MAX_TABLE_COLUMNS, each at most MAX_CELL_CHARS, none twice."""
    if row is None:
        raise TableError(f"{shorten(path)}: empty; a CSV file starts with a row of column names")
    if len(row) > MAX_TABLE_COLUMNS:
        raise TableError(
            f"{shorten(path)}, line 1: {len(row):,} columns, more than the "
            f"{MAX_TABLE_COLUMNS:,} allowed"
        )
    names = [name.strip() or f"Unnamed: {i}" for i, name in enumerate(row)]
    first: dict[str, int] = {}
    for i, name in enumerate(names):
        if len(name) > MAX_CELL_CHARS:
            raise TableError(
                f"{shorten(path)}, line 1, column {i + 1}: a name of {len(name):,} characters, "
                f"more than the {MAX_CELL_CHARS:,} allowed"
            )
        if name in first:
            raise TableError(
                f"{shorten(path)}, line 1: columns {first[name] + 1} and {i + 1} are both "
                f"named {shorten(name, 60)!r}; rename or remove one of them"
            )
        first[name] = i
    return names


def _data_rows(
    path: Path, reader: Iterator[list[str]], header: list[str], max_rows: int
) -> list[list[str]]:
    """The data rows after the header, each as long as the header, checked as they are
    read: at most `max_rows`, no row longer than the header, no cell over MAX_CELL_CHARS.
    A row is named by its line as the other checks count (the header is line 1)."""
    rows: list[list[str]] = []
    width = len(header)
    for row in reader:
        if row in ([], [""]):
            continue
        line = len(rows) + 2
        if len(rows) == max_rows:
            raise TableError(
                f"{shorten(path)}: more than {max_rows:,} rows, the most one file may hold; "
                "split it into files of at most that many rows"
            )
        if len(row) > width:
            raise TableError(
                f"{shorten(path)}, line {line}: {len(row)} cells, but the header names {width} "
                "columns; quote a cell that holds a comma"
            )
        for i, cell in enumerate(row):
            if len(cell) > MAX_CELL_CHARS:
                raise TableError(
                    f"{shorten(path)}, line {line}, field {header[i]!r}: {len(cell):,} "
                    f"characters, more than the {MAX_CELL_CHARS:,} allowed"
                )
        rows.append(row + [""] * (width - len(row)))
    return rows
