"""Tables that fit the terminal: chosen columns, formatted cells, text cut to the width.

`fit_table` lays out a few named columns of a frame (ignoring any others, so frames may
grow columns without changing the compact view) and shortens the columns marked
shrinkable, longest first, with an ellipsis until the table fits `width`. `wide_table`
prints every column of the frame, formatted, for `--wide`. `console_width` is $COLUMNS,
else the terminal's width, else `fallback` (output piped to a file).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import pandas as pd
from rich.console import Console, Group, RenderableType
from rich.text import Text

from edge.format import duration, money

DEFAULT_WIDTH = 100
# Each column costs two spaces between it and the next.
PAD = 2


@dataclass(frozen=True)
class Col:
    """A column: frame key, header, cell formatter, right-aligned?, shrinkable? (min width)."""

    key: str
    header: str
    cell: Callable[[Any], str] = str
    right: bool = False
    shrink_to: int = 0


def console_width(fallback: int = DEFAULT_WIDTH, stderr: bool = False) -> int:
    """$COLUMNS, else the terminal's width, else `fallback`."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 20:
        return int(columns)
    stream = sys.stderr if stderr else sys.stdout
    if stream.isatty():
        return shutil.get_terminal_size((fallback, 40)).columns
    return fallback


def make_console(width: int, stderr: bool = False) -> Console:
    """A console of exactly `width` columns (no colour codes when piped) that turns no
    `:name:` into an emoji: lines quoting outside text print it as written."""
    return Console(width=width, stderr=stderr, soft_wrap=False, highlight=False, emoji=False)


def _ellipsize(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def cells(frame: pd.DataFrame, columns: Sequence[Col]) -> list[list[str]]:
    """Formatted cells, row by row, for the columns present in `frame` ("" where absent)."""
    blank = [""] * len(frame)
    by_column = [
        [_safe(c.cell, v) for v in frame[c.key].tolist()] if c.key in frame.columns else blank
        for c in columns
    ]
    return [list(row) for row in zip(*by_column, strict=True)] if by_column else []


def _safe(cell: Callable[[Any], str], value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "-"
    try:
        return cell(value)
    except (TypeError, ValueError):
        return str(value)


def fit_widths(rows: list[list[str]], columns: Sequence[Col], width: int) -> list[int]:
    """Column widths that fit `width` (headers and cells; shrinkable columns cut first)."""
    widths = [max([len(c.header), *(len(r[i]) for r in rows)]) for i, c in enumerate(columns)]
    total = sum(widths) + PAD * len(widths)
    while total > width:
        candidates = [i for i, c in enumerate(columns) if c.shrink_to and widths[i] > c.shrink_to]
        if not candidates:
            break
        widest = max(candidates, key=lambda i: widths[i] - columns[i].shrink_to)
        widths[widest] -= 1
        total -= 1
    return widths


def fit_table(
    frame: pd.DataFrame,
    columns: Sequence[Col],
    width: int,
    title: str | None = None,
) -> RenderableType:
    """A title line and a table of `columns` whose lines fit `width` (text cut with …).

    Laid out as plain lines (header, rule, rows; two spaces between columns): what a rich
    Table with box.SIMPLE_HEAD draws, at a fraction of its cost for hundreds of rows. A
    line still wider than `width` once every shrinkable column is at its minimum is cut.
    """
    rows = cells(frame, columns)
    widths = fit_widths(rows, columns, width)

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            _ellipsize(v, w).rjust(w) if c.right else _ellipsize(v, w).ljust(w)
            for v, w, c in zip(values, widths, columns, strict=True)
        )

    header = _ellipsize(line([c.header for c in columns]), width)
    parts: list[RenderableType] = []
    if title:
        parts.append(Text(_ellipsize(title, width), style="bold"))
    parts.append(Text(header, style="bold"))
    parts.append(Text("─" * len(header)))
    if rows:
        parts.append(Text("\n".join(_ellipsize(line(r), width) for r in rows)))
    return Group(*parts)


def print_fit(
    frame: pd.DataFrame,
    columns: Sequence[Col],
    title: str | None = None,
    width: int | None = None,
) -> None:
    """fit_table on stdout at console_width()."""
    width = width or console_width()
    make_console(width).print(fit_table(frame, columns, width, title))


def wide_cell(column: str, value: Any) -> str:
    """Any plan/price column formatted by its name: money, hours, fractions, counts."""
    if value is None or (isinstance(value, float) and value != value):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, int | float):
        if "usd" in column:
            return money(float(value))
        if "gpu_hours" in column:  # an amount of GPU time (e.g. per month), not a duration
            return f"{float(value):,.0f} GPU-h"
        if "hours" in column:
            return duration(float(value), short=True)
        if column in ("mfu", "utilization") or column.endswith("_fraction"):
            return f"{float(value):.1%}"
        if float(value).is_integer():
            return f"{float(value):,.0f}"
        return f"{float(value):,.4g}"
    return str(value)


def print_wide(frame: pd.DataFrame, title: str | None = None) -> None:
    """Every column of `frame`, formatted, no width limit (for --wide; pipe to `less -S`)."""
    columns = [Col(str(c), str(c), partial(wide_cell, str(c))) for c in frame.columns]
    rows = cells(frame, columns)
    widths = fit_widths(rows, columns, 10**6)
    make_console(sum(widths) + PAD * len(widths) + 1).print(fit_table(frame, columns, 10**6, title))
