"""Checks at the edge: numbers finite and in range, input files bounded, output paths usable.

One place for what every flag, config file and result number must satisfy, so a message
always names the field and its valid range: `--checkpoint-minutes inf: must be a finite
number from 0 to 10,080`. Ranges are wide (they catch nonsense and overflow, not unusual
but real values); the range of each flag is in FLAG_RANGES.
"""

from __future__ import annotations

import math
import sys
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.safe_paths import RefusedFileError, read_text_bounded, shorten

MAX_CONFIG_BYTES = 1024 * 1024  # an on-prem TOML config
MAX_TABLE_BYTES = 64 * 1024 * 1024  # a reference or query CSV
MAX_TOML_DEPTH = 16  # nested tables/arrays in a config (the flat on-prem config uses 1)


class RangeError(ValueError):
    """A number that is not finite or not within its documented range."""


class InputPathError(ValueError):
    """A path given for a file to read or write that cannot be used."""


class NestingError(ValueError):
    """A TOML or JSON document nested deeper than its limit."""


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
        low = f"{self.low:,g}"
        high = f"{self.high:,g}"
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


# Flags of `gpuplan plan`, `estimate` and `tco`: what each accepts.
FLAG_RANGES: dict[str, Range] = {
    "--checkpoint-minutes": Range(0, 7 * 24 * 60, unit="minutes"),
    "--restart-minutes": Range(0, 7 * 24 * 60, unit="minutes"),
    "--global-batch-tokens": Range(0, 1e12, low_inclusive=False, unit="tokens"),
    "--network-gbps": Range(0, 1e6, low_inclusive=False, unit="Gb/s"),
    "--gpus-per-node": Range(1, 1024, integer=True, unit="GPUs"),
    "--overlap": Range(0, 1),
    "--monthly-gpu-hours": Range(0, 1e12, low_inclusive=False, unit="GPU-hours per month"),
    "--utilization": Range(0, 1, low_inclusive=False),
}
# Throughput in a reference file: positive and below anything a cluster reaches.
THROUGHPUT_RANGE = Range(0, 1e12, low_inclusive=False, unit="samples or tokens per second")
GPU_COUNT_RANGE = Range(1, 1_000_000, unit="GPUs")


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


def warn_lines(lines: Iterable[str], prefix: str = "warning") -> None:
    """Each line to stderr as `warning: ...`: plain text, one line each (newlines folded),
    so scripts reading --format json|csv output still see what was ignored."""
    for line in lines:
        flat = " ".join(str(line).split())
        sys.stderr.write(f"{prefix}: {shorten(flat, 2000)}\n")
    sys.stderr.flush()


def read_text_file(path: str | Path, what: str, max_bytes: int, hint: str = "") -> str:
    """The UTF-8 text of the regular file `path`; InputPathError naming `what` otherwise
    (missing, a folder, a device, larger than `max_bytes`, not UTF-8, unreadable)."""
    fix = f"; {hint}" if hint else ""
    if not str(path).strip():
        raise InputPathError(f"{what}: an empty path{fix}")
    try:
        return read_text_bounded(path, max_bytes)
    except RefusedFileError as exc:
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
            case _:
                problem = f": {exc}"
        raise InputPathError(f"{what} {shorten(Path(path))}{problem}") from None


def _depth(value: Any) -> int:
    deepest = 0
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
        deepest = max(deepest, depth)
    return deepest


def loads_toml(text: str, max_depth: int = MAX_TOML_DEPTH) -> dict[str, Any]:
    """tomllib.loads, with nesting deeper than `max_depth` refused as a NestingError (a
    RecursionError never escapes); tomllib.TOMLDecodeError for text that is not TOML."""
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise NestingError(f"nested deeper than {max_depth} levels") from None
    if _depth(data) > max_depth:
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


def read_csv_table(path: Path, what: str, error: Callable[[str], Exception]) -> Any:
    """A CSV file (at most MAX_TABLE_BYTES) as a pandas DataFrame of text cells with stripped
    column names. An unreadable file raises `error(message)`, the message naming the file."""
    import io

    import pandas as pd

    try:
        text = read_text_file(path, f"{what} file", MAX_TABLE_BYTES, "give a CSV file")
    except InputPathError as exc:
        raise error(str(exc)) from None
    try:
        frame = pd.read_csv(
            io.StringIO(text), dtype=str, keep_default_na=False, skipinitialspace=True
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise error(f"{path}: not a readable CSV file ({exc})") from exc
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame
