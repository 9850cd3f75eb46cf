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
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from edge.console import text_console
from edge.format import money, percent

if TYPE_CHECKING:
    import pandas as pd

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


def emit(
    frame: pd.DataFrame,
    fmt: str,
    title: str | None = None,
    table_columns: Sequence[str] | None = None,
    console: Console | None = None,
) -> None:
    """Print `frame` to stdout in `fmt` (table shows `table_columns`; json/csv show all)."""
    import pandas as pd

    if fmt == "json":
        sys.stdout.write(json.dumps(records(frame), indent=2, default=str) + "\n")
    elif fmt == "csv":
        sys.stdout.write(frame.to_csv(index=False))
    elif fmt == "table":
        console = console or text_console()
        columns = [c for c in (table_columns or frame.columns) if c in frame.columns]
        # The title may hold paths and labels from outside: text, never markup or emoji.
        shown_title = Text(title) if title is not None else None
        table = Table(title=shown_title, show_lines=False, header_style="bold")
        for column in columns:
            numeric = pd.api.types.is_numeric_dtype(frame[column])
            table.add_column(
                HEADERS.get(column, column), justify="right" if numeric else "left", overflow="fold"
            )
        for row in frame.loc[:, columns].itertuples(index=False):
            # Text cells: no markup or emoji codes (":FINLAND:" in an offer reference).
            table.add_row(*[Text(_cell(c, v)) for c, v in zip(columns, row, strict=True)])
        console.print(table)
    else:
        raise ValueError(f"unknown format {fmt!r}; valid: {', '.join(FORMATS)}")
