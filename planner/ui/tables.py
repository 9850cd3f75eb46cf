"""st.dataframe with every column wide enough for its header and its longest cell, and the
column configs the app's tables share.

The grid draws on a canvas and clips what does not fit its column ("A100-P", "$4,3");
`fitted` sets each configured column's width in pixels from the text it will show
(the column's number format applied to its values), so no cell is cut. `shared_columns`
gives the columns that read the same in every table, `banded` a figure's P10 and P90
columns beside it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd
import streamlit as st

# Pixels per character of the grid's 14 px font (digits and capitals are the widest), and
# for the cell padding plus the header's sort arrow.
PX_PER_CHAR = 7.6
PADDING_PX = 30
MAX_PX = 1600
_col = st.column_config
# Columns shown alike wherever they appear: their header and number format.
SHARED_COLUMNS: dict[str, Any] = {
    "provider": _col.TextColumn("provider"),
    "region": _col.TextColumn("region"),
    "instance_type": _col.TextColumn("instance"),
    "gpu_name": _col.TextColumn("GPU"),
    "pricing": _col.TextColumn("pricing"),
    "usd_per_gpu_hour": _col.NumberColumn("$/GPU-hour", format="dollar"),
    "price_source": _col.TextColumn("price source"),
}


def shared_columns(*names: str) -> dict[str, Any]:
    """The configs of the SHARED_COLUMNS named."""
    return {name: SHARED_COLUMNS[name] for name in names}


def banded(label: str, fmt: str, column: str, p10: str, p90: str) -> dict[str, Any]:
    """Number columns of a figure and its band: `label`, `label` P10 and `label` P90."""
    return {
        column: _col.NumberColumn(label, format=fmt),
        p10: _col.NumberColumn(f"{label} P10", format=fmt),
        p90: _col.NumberColumn(f"{label} P90", format=fmt),
    }


def cell_text(value: Any, fmt: str | None) -> str:
    """A value as the grid shows it under a NumberColumn format (or as text)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "✓"
    if fmt and isinstance(value, int | float):
        if fmt == "dollar":
            return f"${value:,.2f}"
        if fmt == "percent":
            return f"{value * 100:,.2f}%"
        if fmt == "localized":
            return f"{value:,}"
        if fmt.startswith("%"):
            try:
                return fmt % value
            except (TypeError, ValueError):
                return str(value)
    return str(value)


def fitted(frame: pd.DataFrame, config: Mapping[str, Any]) -> dict[str, Any]:
    """`config` with a pixel width for every column of `frame` (configured or not), from its
    header and the longest text any of its cells shows; at most MAX_PX (hostile text)."""
    out = dict(config)
    for column in frame.columns:
        if column in config and config[column] is None:
            continue  # hidden
        spec = dict(config.get(column) or {})
        fmt = (spec.get("type_config") or {}).get("format")
        label = str(spec.get("label") or column)
        values = frame[column]
        if fmt is None and (values.dtype == object or str(values.dtype) in ("str", "string")):
            lengths = values.fillna("").astype(str).str.len()
            longest = int(lengths.max()) if len(values) else 0
        else:
            longest = max((len(cell_text(v, fmt)) for v in values), default=0)
        chars = max(len(label), longest)
        spec["width"] = min(int(chars * PX_PER_CHAR + PADDING_PX), MAX_PX)
        out[column] = spec
    return out


def show_table(frame: pd.DataFrame, config: Mapping[str, Any], key: str, **kwargs: Any) -> Any:
    """st.dataframe of `frame` with `config` fitted to its text; hidden index."""
    return st.dataframe(
        frame, hide_index=True, column_config=fitted(frame, config), key=key, **kwargs
    )
