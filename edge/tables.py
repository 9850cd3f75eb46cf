"""Tables that fit the terminal: chosen columns, formatted cells, never a word cut.

`fit_table` lays out a few named columns of a frame (ignoring any others, so frames may
grow columns without changing the compact view) and narrows the columns marked
shrinkable, longest first, until the table fits `width`: a `wrap` column's cells go on
over more lines at word boundaries, any other shrinkable cell is cut after its last whole
word with an ellipsis (`cut`). A header is never cut. Where the table still does not fit,
the columns marked `drop` are left out (highest first) and a line names them (--wide shows
them). `wide_table` prints every column of the frame, formatted, for `--wide`.
`console_width` is $COLUMNS, else the terminal's width, else `fallback` (output piped).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import pandas as pd
from rich.console import Console, Group, RenderableType
from rich.text import Text

from edge.format import duration, money

DEFAULT_WIDTH = 100
# Each column costs two spaces between it and the next.
PAD = 2
# A `below` column is laid out in the grid only where it gets at least this many columns.
BELOW_INLINE_MIN = 40


@dataclass(frozen=True)
class Col:
    """A column: frame key, header, cell formatter, right-aligned?, shrinkable? (min width),
    wrap (go on over more lines instead of cutting), drop (left out where the table does
    not fit: the highest first; 0: always shown), below (where the table does not fit,
    printed under its row as `header: value`, wrapped, instead of in a column)."""

    key: str
    header: str
    cell: Callable[[Any], str] = str
    right: bool = False
    shrink_to: int = 0
    wrap: bool = False
    drop: int = 0
    below: bool = False


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


# Where a cell may be cut: after a space or a separator inside names (gpu_1x_gh200,
# p5.48xlarge, us-east-1, a/b, "a, b").
_BOUNDARY = re.compile(r"[\s_\-./,:;(]")


def cut(text: str, width: int) -> str:
    """`text` in at most `width` characters: whole, or cut after its last whole word (or
    name part) with an ellipsis; "…" alone where not even one word fits."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    head = text[: width - 1]
    ends = [m.end() for m in _BOUNDARY.finditer(text[:width])]
    if not ends:
        return "…"
    return head[: ends[-1]].rstrip() + "…" if ends[-1] <= width - 1 else head.rstrip() + "…"


def wrap_words(text: str, width: int) -> list[str]:
    """`text` over lines of at most `width` characters, broken at spaces and hyphens; a
    word longer than `width` on its own line, cut after a name part (`cut`)."""
    lines = textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=True)
    return [cut(line, width) for line in lines] or [""]


_ellipsize = cut


# A column's formatted cells by (key, cell function): fitting a table tries several sets of
# columns over the same frame, and formatting each cell once is most of its cost.
CellCache = dict[tuple[str, Callable[[Any], str]], list[str]]


def cells(
    frame: pd.DataFrame, columns: Sequence[Col], cache: CellCache | None = None
) -> list[list[str]]:
    """Formatted cells, row by row, for the columns present in `frame` ("" where absent);
    `cache` keeps each column's cells for the next call on the same frame."""
    cache = {} if cache is None else cache
    blank = [""] * len(frame)
    by_column = []
    for c in columns:
        if c.key not in frame.columns:
            by_column.append(blank)
            continue
        if (c.key, c.cell) not in cache:
            cache[c.key, c.cell] = [_safe(c.cell, v) for v in frame[c.key].tolist()]
        by_column.append(cache[c.key, c.cell])
    return [list(row) for row in zip(*by_column, strict=True)] if by_column else []


def _safe(cell: Callable[[Any], str], value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "-"
    try:
        return cell(value)
    except (TypeError, ValueError):
        return str(value)


def _min_width(column: Col, values: Sequence[str]) -> int:
    """The narrowest a column gets: its header, its shrink_to, and for a wrap column its
    longest word (up to 24 characters: a longer one is cut after a name part) and its
    longest cell up to 16 characters (short cells are never wrapped)."""
    floor = max(len(column.header), column.shrink_to)
    if column.wrap:
        words = [len(w) for v in values for w in v.split()]
        floor = max(floor, min(max(words, default=0), 24))
        floor = max(floor, min(max(map(len, values), default=0), 16))
    return floor


def fit_widths(rows: list[list[str]], columns: Sequence[Col], width: int) -> list[int]:
    """Column widths that fit `width` (headers and cells; shrinkable columns cut first)."""
    widths = [max([len(c.header), *(len(r[i]) for r in rows)]) for i, c in enumerate(columns)]
    floors = [
        _min_width(c, [r[i] for r in rows]) if (c.shrink_to or c.wrap) else widths[i]
        for i, c in enumerate(columns)
    ]
    total = sum(widths) + PAD * len(widths)
    while total > width:
        candidates = [i for i in range(len(columns)) if widths[i] > floors[i]]
        if not candidates:
            break
        widest = max(candidates, key=lambda i: widths[i] - floors[i])
        widths[widest] -= 1
        total -= 1
    return widths


def _fits(frame: pd.DataFrame, shown: Sequence[Col], width: int, cache: CellCache) -> bool:
    widths = fit_widths(cells(frame, shown, cache), shown, width)
    return sum(widths) + PAD * len(widths) <= width


def _fitting_columns(
    frame: pd.DataFrame, columns: Sequence[Col], width: int, cache: CellCache | None = None
) -> tuple[list[Col], list[Col], list[Col]]:
    """The columns shown in the grid, those shown under each row (the `below` ones, where
    the table does not fit with them) and those left out (the `drop` ones, highest first,
    until the rest fit)."""
    cache = {} if cache is None else cache
    shown = [c for c in columns if c.key in frame.columns or not (c.drop or c.below)]
    beneath: list[Col] = []
    # A `below` column stays in the grid only where it gets BELOW_INLINE_MIN columns.
    roomy = [
        replace(c, shrink_to=max(c.shrink_to, BELOW_INLINE_MIN)) if c.below else c for c in shown
    ]
    if not _fits(frame, roomy, width, cache):
        beneath = [c for c in shown if c.below]
        shown = [c for c in shown if not c.below]
    left_out: list[Col] = []
    while not _fits(frame, shown, width, cache):
        droppable = [c for c in shown if c.drop]
        if not droppable:
            break
        victim = max(droppable, key=lambda c: c.drop)
        shown = [c for c in shown if c is not victim]
        left_out.insert(0, victim)
    return shown, beneath, left_out


def left_out_columns(frame: pd.DataFrame, columns: Sequence[Col], width: int) -> list[str]:
    """The keys of the columns fit_table leaves out at `width` (the `drop` ones, highest
    first, until the rest fit): what a caller needs to say elsewhere what they held."""
    return [c.key for c in _fitting_columns(frame, columns, width)[2]]


def fit_table(
    frame: pd.DataFrame,
    columns: Sequence[Col],
    width: int,
    title: str | None = None,
    more: str = "--wide or a wider terminal",
) -> RenderableType:
    """A title (wrapped at words) and a table of `columns` whose lines fit `width`; `more`
    says where the columns left out are shown.

    Laid out as plain lines (header, rule, rows; two spaces between columns): what a rich
    Table with box.SIMPLE_HEAD draws, at a fraction of its cost for hundreds of rows. A
    line still wider than `width` once every shrinkable column is at its minimum and every
    `drop` column is left out is cut after its last whole word.
    """
    cache: CellCache = {}
    shown, beneath, left_out = _fitting_columns(frame, columns, width, cache)
    rows = cells(frame, shown, cache)
    widths = fit_widths(rows, shown, width)
    under = cells(frame, beneath, cache)

    def lines_under(values: Sequence[str]) -> list[str]:
        return [
            "  " + line
            for c, v in zip(beneath, values, strict=True)
            if v not in ("", "-")
            for line in wrap_words(f"{c.header}: {v}", width - 2)
        ]

    def lines(values: Sequence[str]) -> list[str]:
        parts = [
            wrap_words(v, w) if c.wrap else [cut(v, w)]
            for v, w, c in zip(values, widths, shown, strict=True)
        ]
        height = max(len(p) for p in parts)
        out = []
        for k in range(height):
            out.append(
                "  ".join(
                    (p[k] if k < len(p) else "").rjust(w)
                    if c.right
                    else (p[k] if k < len(p) else "").ljust(w)
                    for p, w, c in zip(parts, widths, shown, strict=True)
                )
            )
        return out

    header = cut(
        "  ".join(
            c.header.rjust(w) if c.right else c.header.ljust(w)
            for c, w in zip(shown, widths, strict=True)
        ),
        width,
    )
    # Every line is laid out to `width` here: rich need not wrap it again (no_wrap).
    laid_out = partial(Text, no_wrap=True)
    parts: list[RenderableType] = []
    if title:
        parts.append(laid_out("\n".join(wrap_words(title, width)), style="bold"))
    parts.append(laid_out(header, style="bold"))
    parts.append(laid_out("─" * len(header)))
    if rows:
        body = [
            cut(x, width)
            for k, r in enumerate(rows)
            for x in [*lines(r), *(lines_under(under[k]) if beneath else [])]
        ]
        parts.append(laid_out("\n".join(body)))
    if left_out:
        names = ", ".join(c.header for c in left_out)
        note = f"not shown at this width: {names} ({more})"
        parts.append(laid_out("\n".join(wrap_words(note, width))))
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
        return plain_number(float(value))
    return str(value)


def plain_number(value: float) -> str:
    """A number without scientific notation: whole with thousands separators from 1,000 up
    (13,344, never 1.334e+04), else 4 significant digits (12.35, 0.0449, 0.000012)."""
    if value.is_integer() or abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 1e-3:
        return f"{value:.4g}"
    return f"{value:.8f}".rstrip("0")


def print_wide(frame: pd.DataFrame, title: str | None = None) -> None:
    """Every column of `frame`, formatted, no width limit (for --wide; pipe to `less -S`)."""
    columns = [Col(str(c), str(c), partial(wide_cell, str(c))) for c in frame.columns]
    rows = cells(frame, columns)
    widths = fit_widths(rows, columns, 10**6)
    make_console(sum(widths) + PAD * len(widths) + 1).print(fit_table(frame, columns, 10**6, title))
