"""CSV output that a spreadsheet shows as written, never runs as a formula: every
`--format csv`, `--output` file and download of gpuplan goes through `csv_text`.

A cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return is read as a formula by
Excel, LibreOffice and Google Sheets (`=HYPERLINK(...)`, `+cmd|' /C calc'!A0`): such a
text cell gets a leading single quote, which they show as text (OWASP, "CSV Injection").
A number written as text (`-5`, `+1.5e3`) stays as it is, and so do numbers, booleans and
missing values.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# A decimal number as a spreadsheet reads one: sign, digits, fraction, exponent.
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def safe_cell(value: Any) -> Any:
    """`value`, with a `'` before it when it is text that a spreadsheet would run."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of `frame` whose text cells and column names are safe_cell'ed."""
    import pandas as pd

    out = frame.copy()
    for column in out.columns:
        values = out[column]
        if pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values):
            out[column] = values.map(safe_cell)
    out.columns = [safe_cell(str(c)) for c in out.columns]
    return out


def csv_text(frame: pd.DataFrame) -> str:
    """`frame` as CSV text (no index, newline line ends), spreadsheet_safe."""
    return str(spreadsheet_safe(frame).to_csv(index=False, lineterminator="\n"))
