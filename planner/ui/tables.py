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
import pickle
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import streamlit as st

# Each character's width in pixels in the grid's 14 px Source Sans (the larger of the cell's
# regular and the header's semibold, rounded up to half a pixel; measured with the page's
# canvas in chromium), characters not listed at WIDE_CHAR_PX; and the cell padding (8 px
# each side, with 3 px to spare).
CHAR_PX: dict[str, float] = {
    char: px
    for chars, px in (
        (" ", 3.0), ("',.:;Iijl|·", 4.0), ("!f", 4.5), ("()-/[\\]{}", 5.0), ("rt", 5.5),
        ("*?csz", 6.5), ('"J_vxy–', 7.0), ("0123456789#$+<=>FLY^aegk~≥κ", 7.5),
        ("AESTVXZ`bdhnopquσθ", 8.0), ("BCKPR", 8.5), ("&DG✓", 9.0), ("HNOQU", 9.5),
        ("Mw", 10.5), ("W", 11.5), ("%m", 12.0), ("@", 12.5),
    )
    for char in chars
}  # fmt: skip
WIDE_CHAR_PX = 12.5
PADDING_PX = 19
MAX_PX = 2400  # the step model's "how" text reaches ~1,600 px: a wide column scrolls, never cuts
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


def text_px(text: str) -> float:
    """`text`'s width in the grid's font, in pixels (CHAR_PX)."""
    return sum(CHAR_PX.get(char, WIDE_CHAR_PX) for char in text)


def fitted(frame: pd.DataFrame, config: Mapping[str, Any]) -> dict[str, Any]:
    """`config` with a pixel width for every column of `frame` (configured or not), from its
    header and the widest text any of its cells shows; at most MAX_PX (hostile text)."""
    out = dict(config)
    for column in frame.columns:
        if column in config and config[column] is None:
            continue  # hidden
        spec = dict(config.get(column) or {})
        fmt = (spec.get("type_config") or {}).get("format")
        label = str(spec.get("label") or column)
        values = frame[column]
        if fmt is None and (values.dtype == object or str(values.dtype) in ("str", "string")):
            texts = values.fillna("").astype(str)
        else:
            texts = pd.Series([cell_text(v, fmt) for v in values], dtype=object)
        # each distinct text measured (cut where it passes MAX_PX anyway: hostile text)
        widest = max((text_px(t[: MAX_PX // 3]) for t in texts.unique()), default=0.0)
        spec["width"] = min(int(max(text_px(label), widest) + PADDING_PX + 0.999), MAX_PX)
        out[column] = spec
    return out


def table_px(frame: pd.DataFrame, config: Mapping[str, Any], columns: Sequence[str]) -> int:
    """How wide `columns` of `frame` draw together, left to right, as fitted sets them."""
    widths = fitted(frame.loc[:, list(columns)], config)
    return sum(int(widths[c]["width"]) for c in columns)


# Fitted widths kept per distinct table and config (a few kB each): every session that shows
# the same table measures its text once.
MAX_FITTED = 256


@st.cache_data(show_spinner=False, max_entries=MAX_FITTED)
def _fitted_once(pickled: bytes, config: Mapping[str, Any]) -> dict[str, Any]:
    """`fitted` of the pickled table, keyed by its bytes: exact (pandas' own row hash reads
    an object column as text, so 1 and "1", or None and "None", would share widths)."""
    return fitted(pickle.loads(pickled), config)  # bytes show_table pickled just now


def show_table(frame: pd.DataFrame, config: Mapping[str, Any], key: str, **kwargs: Any) -> Any:
    """st.dataframe of `frame` with `config` fitted to its text (once per distinct table);
    hidden index."""
    widths = _fitted_once(pickle.dumps(frame, pickle.HIGHEST_PROTOCOL), dict(config))
    return st.dataframe(frame, hide_index=True, column_config=widths, key=key, **kwargs)
