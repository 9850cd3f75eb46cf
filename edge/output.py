"""Render a DataFrame as a rich table, JSON (a list of objects) or CSV, for the CLIs.

Number formats follow the column's unit suffix: `*usd*` as dollars (edge.format.money),
`*_pct` (percent points) as percentages (edge.format.percent), `hours*` with one
decimal, counts without decimals. JSON keeps full precision and writes null for missing
values.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from rich.console import Console

from edge.format import money, percent
from edge.spreadsheet import csv_text

if TYPE_CHECKING:
    import pandas as pd

    from edge.tables import Col

FORMATS = ("table", "json", "csv")

# Short table headers; JSON and CSV keep the full column names.
HEADERS: dict[str, str] = {
    "instance_type": "instance",
    "gpu_name": "GPU",
    "gpu_count": "GPUs",
    "throughput_source": "source",
    "hours_to_train": "hours",
    "cost_usd": "cost",
    "usd_per_hour": "$/h",
    "spot_usd_per_hour": "spot $/h",
    "reserved_1y_usd_per_hour": "1y $/h",
    "reserved_3y_usd_per_hour": "3y $/h",
    "usd_per_gpu_hour": "$/GPU-h",
    "price_date": "priced",
    "usd_per_year": "$/year",
    "break_even_util": "break-even util",
    "break_even_months": "break-even months",
    "samples_text": "samples",
    "flops_text": "FLOPs/sample",
    "gpu_model": "GPU",
    "num_gpus": "GPUs",
    "seq_len": "seq",
    "tokens_per_s": "tokens/s",
    "p10_p90": "P10–P90",
    "active_params": "active",
    "predicted_throughput": "throughput",
    "predicted_low": "low",
    "predicted_high": "high",
    "old_usd_per_hour": "old $/h",
    "new_usd_per_hour": "new $/h",
    "change_pct": "change",
}


def _cell(column: str, value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        if "usd" in column:
            return money(value)
        if column.endswith("_pct"):
            return percent(value / 100)
        if column.startswith("hours") or column.endswith("_days") or column.endswith("_hours"):
            return f"{value:,.1f}"
        if column in ("gpu_count",):
            return f"{value:g}"
        if abs(value) >= 100:
            return f"{value:,.0f}"
        return f"{value:.3g}"
    return str(value)


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as JSON-ready dicts: NaN -> None, numpy scalars -> Python numbers."""
    clean = frame.astype(object).where(frame.notna(), None)
    out = []
    for row in clean.to_dict(orient="records"):
        out.append({k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()})
    return out


def table_cols(
    frame: pd.DataFrame,
    columns: Sequence[str],
    beneath: Sequence[str] = (),
    optional: Sequence[str] = (),
) -> list[Col]:
    """A fit-to-width column per name: numbers right-aligned and whole, text wrapped at
    words (never cut mid-word), in the order asked; those in `beneath` go under their row
    where the table does not fit with them, those in `optional` are left out (the first
    named first) where it still does not fit."""
    import pandas as pd

    from edge.tables import Col  # edge.tables loads pandas: not on `gpuplan --help`

    cols = []
    for column in columns:
        header = HEADERS.get(column, column)
        values = frame[column].astype(str)
        drop = len(optional) - list(optional).index(column) if column in optional else 0
        if pd.api.types.is_numeric_dtype(frame[column]):
            cols.append(Col(column, header, partial(_cell, column), right=True, drop=drop))
        elif not values.str.contains(" ").any():  # names and codes: whole, never wrapped
            cols.append(Col(column, header, partial(_cell, column), drop=drop))
        else:
            cols.append(
                Col(
                    column,
                    header,
                    partial(_cell, column),
                    wrap=True,
                    shrink_to=10,
                    below=column in beneath,
                    drop=drop,
                )
            )
    return cols


def emit(
    frame: pd.DataFrame,
    fmt: str,
    title: str | None = None,
    table_columns: Sequence[str] | None = None,
    console: Console | None = None,
    beneath: Sequence[str] = (),
    optional: Sequence[str] = (),
) -> None:
    """Print `frame` to stdout in `fmt`; json/csv show all columns, csv through
    edge.spreadsheet, so no cell runs as a formula. A table shows `table_columns` (all where
    None) and fits the terminal (edge.tables.console_width: $COLUMNS, else the terminal,
    else 100 when piped): those in `beneath` go under their row and those in `optional` are
    left out where it is too narrow."""
    if fmt == "json":
        sys.stdout.write(json.dumps(records(frame), indent=2, default=str) + "\n")
    elif fmt == "csv":
        sys.stdout.write(csv_text(frame))
    elif fmt == "table":
        from edge.tables import console_width, fit_table, make_console

        columns = [c for c in (table_columns or frame.columns) if c in frame.columns]
        width = console.width if console is not None else console_width()
        console = console or make_console(width)
        # Titles and cells may hold paths and labels from outside: fit_table prints them as
        # Text, never markup or emoji.
        cols = table_cols(frame, columns, beneath, optional)
        console.print(fit_table(frame, cols, width, title, more="--format csv or a wider terminal"))
    else:
        raise ValueError(f"unknown format {fmt!r}; valid: {', '.join(FORMATS)}")
