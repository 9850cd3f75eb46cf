"""Words and tables for predicted vs measured (planner.throughput.calibration).

`worded_calibration` turns the engine's reason codes into words (the rows --format json|csv
write and the app shows); `print_calibration` prints the compared results, the results
not compared with why, and the error summary, as tables that fit the terminal. Numbers
are formatted by edge.format.
"""

from __future__ import annotations

import math

import pandas as pd
from rich.console import Group, RenderableType
from rich.text import Text

from edge.format import percent
from edge.tables import Col, console_width, fit_table, make_console
from planner.throughput.calibration import WITHIN

# Short enough for the terminal table; the codes' meaning is in planner.throughput.calibration.
REASON_WORDS: dict[str, str] = {
    "cpu": "CPU run (gpuplan predicts GPUs)",
    "unknown-gpu": "GPU not in gpuplan's GPU table",
    "llm": "GPT run of a size with no parameter count",
    "not-training": "trains no model (input pipeline, operators)",
    "no-model": "no other result of this model",
    "no-prediction": "no figure or spec estimate for this GPU",
}
BY_WORDS = {"gpu": "GPU", "method": "method", "all": "all"}
METHOD_WORDS = {"llm": "LLM model"}  # the other methods are words already


def reason_text(code: str) -> str:
    """The words for one reason code ("" for a compared result)."""
    return REASON_WORDS.get(code, code) if code else ""


def worded_calibration(table: pd.DataFrame) -> pd.DataFrame:
    """calibrate() rows with `reason` in words (as --format json|csv write them)."""
    return table.assign(reason=table["reason"].fillna("").astype(str).map(reason_text))


def _rate(value: object) -> str:
    number = float(value)  # type: ignore[arg-type]
    if not math.isfinite(number):
        return "-"
    return f"{number:,.0f}" if abs(number) >= 100 else f"{number:,.3g}"


def _signed(value: object) -> str:
    number = float(value)  # type: ignore[arg-type]
    return "-" if not math.isfinite(number) else ("+" if number > 0 else "") + percent(number)


COMPARED_COLUMNS: tuple[Col, ...] = (
    Col("id", "result", shrink_to=12),
    Col("gpu_name", "GPU", shrink_to=8),
    Col("model", "model", shrink_to=8),
    Col("precision", "prec."),
    Col("total_gpus", "GPUs", str, right=True),
    Col("measured", "measured", _rate, right=True),
    Col("predicted", "predicted", _rate, right=True),
    Col("throughput_unit", "unit"),
    Col("error", "error", _signed, right=True),
    Col("in_band", "in band", lambda v: "yes" if v == 1 else "no", right=True),
    Col("method", "method", lambda v: METHOD_WORDS.get(str(v), str(v))),
)
SWEEP_COLUMN = Col("sweep_id", "sweep", shrink_to=8)
NOT_COMPARED_COLUMNS: tuple[Col, ...] = (
    Col("id", "result", shrink_to=12),
    Col("gpu_name", "device", shrink_to=8),
    Col("model", "model", shrink_to=8),
    Col("reason", "why not compared", reason_text, shrink_to=20),
)
SUMMARY_TABLE_COLUMNS: tuple[Col, ...] = (
    Col("by", "by", lambda v: BY_WORDS.get(str(v), str(v))),
    Col("group", "group", lambda v: METHOD_WORDS.get(str(v), str(v)), shrink_to=8),
    Col("count", "results", str, right=True),
    Col("median_abs_error", "median |error|", percent, right=True),
    Col("within_10pct", f"within ±{percent(WITHIN, 0)}", lambda v: percent(v, 0), right=True),
    Col("in_band", "in 80% band", lambda v: percent(v, 0), right=True),
)
TITLE = "Predicted without each own result vs measured (error = predicted / measured - 1)"


def calibration_view(table: pd.DataFrame, summary: pd.DataFrame, width: int) -> RenderableType:
    """The three tables (compared, not compared, summary) that fit `width`."""
    compared = table.loc[table["reason"] == ""]
    skipped = table.loc[table["reason"] != ""]
    parts: list[RenderableType] = []
    if table.empty:
        return Text(
            "No own results (the bundled samples are not counted): `gpuplan bench run` writes "
            "them into the results folder."
        )
    if compared.empty:
        parts.append(Text("No own GPU result could be compared (see below).", style="bold"))
    else:
        swept = compared["sweep_id"].fillna("").astype(str).ne("").any()
        columns = (*COMPARED_COLUMNS, SWEEP_COLUMN) if swept else COMPARED_COLUMNS
        parts.append(fit_table(compared, columns, width, TITLE))
    if not skipped.empty:
        parts += [Text(""), fit_table(skipped, NOT_COMPARED_COLUMNS, width, "Not compared")]
    if not summary.empty:
        parts += [Text(""), fit_table(summary, SUMMARY_TABLE_COLUMNS, width, "Error summary")]
    return Group(*parts)


def calibration_cells(table: pd.DataFrame) -> list[dict[str, str]]:
    """calibrate() rows as words, header -> cell (COMPARED_COLUMNS, then "why not
    compared"): what `gpuplan sweep status` prints for a sweep's results."""
    columns = (*COMPARED_COLUMNS, Col("reason", "why not compared", reason_text))
    out = []
    for _, row in table.iterrows():
        compared = row["reason"] == ""
        out.append(
            {
                c.header: (c.cell(row[c.key]) if compared or c.key in SHOWN_ALWAYS else "")
                for c in columns
            }
        )
    return out


SHOWN_ALWAYS = ("id", "gpu_name", "model", "precision", "total_gpus", "measured",
                "throughput_unit", "reason")  # fmt: skip


def print_calibration(table: pd.DataFrame, summary: pd.DataFrame, width: int | None = None) -> None:
    """calibration_view on stdout at console_width()."""
    width = width or console_width()
    make_console(width).print(calibration_view(table, summary, width))
