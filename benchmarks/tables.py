"""`gpuplan bench list|show|run` and `gpuplan sweep plan|status` as tables that fit the
terminal (edge.tables)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from edge.tables import Col, console_width, print_fit, print_wide

if TYPE_CHECKING:
    from rich.console import RenderableType

    from benchmarks.sweep.preview import SweepPreview


def _throughput(value: object) -> str:
    return f"{float(value):,.1f}"  # type: ignore[arg-type]


def _throughput_text(row: Mapping[str, Any]) -> str:
    """A row's throughput and unit; an operator run (no model throughput) its best GEMM."""
    if pd.isna(row["throughput"]) and pd.notna(row.get("achieved_tflops")):
        return f"{_throughput(row['achieved_tflops'])} TFLOP/s best GEMM"
    return f"{_throughput(row['throughput'])} {row['throughput_unit']}"


def _cv(value: object) -> str:
    return f"{float(value):.1%}"  # type: ignore[arg-type]


def _batch(value: object) -> str:
    """A per-device batch ("-" for runs without one: operator and published figures)."""
    return "-" if pd.isna(value) else f"{float(value):g}"  # type: ignore[arg-type]


RESULT_COLUMNS: tuple[Col, ...] = (
    Col("id", "id (workload-size-precision-device x count-time)", shrink_to=24),
    Col("device_label", "device", shrink_to=8, drop=3),
    Col("world_size", "count", right=True),
    Col("batch_size_per_device", "batch/dev", _batch, right=True, drop=1),
    Col("throughput_text", "throughput", right=True),
    Col("throughput_cv", "CV", _cv, right=True, drop=2),
)


def print_results(frame: pd.DataFrame, title: str, wide: bool = False) -> None:
    """One line per result (every column with `wide`)."""
    if wide:
        print_wide(frame, title)
        return
    shown = frame.copy()
    if not shown.empty:
        shown["device_label"] = shown["device_name"].fillna(shown["device"])
        shown["throughput_text"] = [_throughput_text(row) for row in shown.to_dict("records")]
    print_fit(shown, RESULT_COLUMNS, title, console_width())


def print_result(record: Mapping[str, Any]) -> None:
    """One result as field / value lines (nested values as compact JSON)."""
    rows = [
        {"field": k, "value": json.dumps(v) if isinstance(v, dict | list) else str(v)}
        for k, v in record.items()
        if v is not None
    ]
    columns = (Col("field", "field"), Col("value", "value", shrink_to=20))
    print_fit(pd.DataFrame(rows), columns, str(record.get("id", "result")), console_width())


def print_cells(
    headers: list[str],
    rows: list[list[str]],
    title: str,
    optional: tuple[str, ...] = (),
    console: Any = None,
) -> None:
    """Rows of formatted cells under `headers` that fit the terminal: the columns named in
    `optional` left out, the first named first, where they do not fit (said under it)."""
    from edge.tables import fit_table, make_console

    frame = pd.DataFrame(rows, columns=headers)
    columns = [
        Col(h, h, right=True, drop=len(optional) - optional.index(h) if h in optional else 0)
        for h in headers
    ]
    width = console.width if console is not None else console_width()
    table = fit_table(frame, columns, width, title, more="--format json or a wider terminal")
    (console or make_console(width)).print(table)


# `gpuplan sweep plan|run|resume|status` tables (benchmarks.sweep.cli prints them). Where a
# table does not fit, the columns with the highest `drop` are left out first and named
# under it (--format json has every figure).
SWEEP_MORE = "--format json or a wider terminal"
PREVIEW_TITLE = "sweep preview (minutes and dollars expected; worst case = the cap per target)"
PREVIEW_COLUMNS: tuple[Col, ...] = (
    Col("target", "target", shrink_to=14),
    Col("backend", "backend", drop=4),
    Col("region", "region", drop=5),
    Col("instance", "instance", shrink_to=12, drop=2),
    Col("gpu", "GPU", shrink_to=11),
    Col("usd_per_hour", "$/h", right=True),
    Col("priced_at", "priced at", drop=6),
    Col("provision", "provision", right=True, drop=8),
    Col("install", "install", right=True, drop=7),
    Col("runs", "runs", right=True, drop=3),
    Col("expected_min", "expected min", right=True),
    Col("expected_usd", "expected $", right=True),
    Col("worst_usd", "worst $", right=True),
)
STATUS_COLUMNS: tuple[Col, ...] = (
    Col("target", "target", shrink_to=12),
    Col("state", "state", shrink_to=10, wrap=True),
    Col("runs_done", "runs done", right=True),
    Col("elapsed", "elapsed", right=True),
    Col("spent", "spent", right=True),
    Col("why", "why / last line", shrink_to=20, wrap=True),
)
# The predicted-vs-measured cells come as header -> words (the planner's
# calibration_cells); a header not named here is a plain column, always shown.
CHECKED_COLUMNS: dict[str, Col] = {
    c.header: c
    for c in (
        # Ids differ at their ends (device, time, hash): where the table does not fit, an
        # id is said in full under its row rather than cut.
        Col("result", "result", below=True),
        Col("GPU", "GPU", shrink_to=8),
        Col("model", "model", shrink_to=8, drop=3),
        Col("prec.", "prec.", drop=4),
        Col("GPUs", "GPUs", right=True, drop=2),  # the result id says it too ("cudax8")
        Col("measured", "measured", right=True),
        Col("predicted", "predicted", right=True),
        Col("unit", "unit"),
        Col("error", "error", right=True),
        Col("in band", "in band", right=True, drop=5),
        Col("method", "method", drop=1),
        Col("why not compared", "why not compared", below=True),
    )
}
CHECKED_TITLE = "predicted without each result vs measured (gpuplan bench calibrate)"


def usd_cents(value: float | None) -> str:
    """Dollars to the cent (edge.format.money), "-" when unknown."""
    from edge.format import money

    return "-" if value is None else money(value, cents=True)


def date_label(priced_at: str | None, basis: str | None) -> str:
    """A price date as a user should read it: '≥ 2025-06-01' when only a lower bound."""
    text = priced_at or ""
    return f"≥ {text}" if text and basis == "not-before" else text


def preview_frame(preview: SweepPreview) -> pd.DataFrame:
    """One row of words per target, then the totals (PREVIEW_COLUMNS' keys)."""
    rows = [
        {
            "target": t.label,
            "backend": t.backend,
            "region": t.region or "-",
            "instance": t.instance_type or "-",
            "gpu": f"{t.gpu_count or '?'}x {t.gpu_name}" if t.gpu_name else "-",
            "usd_per_hour": usd_cents(t.usd_per_hour),
            "priced_at": date_label(t.priced_at, t.price_date_basis),
            "provision": f"{t.provision_min:.1f}",
            "install": f"{t.install_min:.1f}",
            "runs": f"{sum(r.minutes for r in t.runs):.1f} ({len(t.runs)})",
            "expected_min": f"{t.expected_min:.1f}",
            "expected_usd": usd_cents(t.expected_usd),
            "worst_usd": usd_cents(t.worst_usd),
        }
        for t in preview.targets
    ]
    total = dict.fromkeys(rows[0] if rows else [c.key for c in PREVIEW_COLUMNS], "")
    total |= {
        "target": "total",
        "expected_min": f"{sum(t.expected_min for t in preview.targets):.1f}",
        "expected_usd": usd_cents(preview.expected_usd),
        "worst_usd": usd_cents(preview.worst_usd),
    }
    return pd.DataFrame([*rows, total], columns=[c.key for c in PREVIEW_COLUMNS])


def status_frame(
    data: Mapping[str, Any], live_line: Mapping[int, str] | None = None
) -> pd.DataFrame:
    """One row per target of a sweep's state (benchmarks.sweep.state): state, runs done,
    elapsed (minutes:seconds), dollars so far, and why it failed (its first line and its
    failing step's last lines, remote_output.why_lines) or its last output line, each
    further line of which is a row of its own under it."""
    from benchmarks.runners.remote_output import why_lines
    from benchmarks.sweep import state as st
    from benchmarks.sweep.lock import as_of

    now = as_of(dict(data))  # a sweep whose controller is gone: its last write
    rows: list[dict[str, str]] = []
    for t in data["targets"]:
        detail = t.get("detail") and t["state"] != st.DONE
        elapsed = "-"
        if t.get("launched_at"):
            end = st.parse_iso(t["terminated_at"]) if t.get("terminated_at") else now
            seconds = int((end - st.parse_iso(t["launched_at"])).total_seconds())
            elapsed = f"{seconds // 60}:{seconds % 60:02d}"
        done = sum(1 for r in t["runs"].values() if r["status"] == st.DONE)
        last = t.get("reason") or (live_line or {}).get(t["index"], "")
        why = why_lines(str(last)).splitlines() or [""]
        rows.append(
            {
                "target": t["label"],
                "state": t["state"] + (f": {t['detail']}" if detail else ""),
                "runs_done": f"{done}/{len(t['runs'])}",
                "elapsed": elapsed,
                "spent": usd_cents(st.spend_usd(t, now)),
                "why": why[0],
            }
        )
        rows += [dict.fromkeys(("target", "state", "runs_done", "elapsed", "spent"), "")
                 | {"why": line} for line in why[1:]]  # fmt: skip
    return pd.DataFrame(rows, columns=[c.key for c in STATUS_COLUMNS])


def checked_table(checked: list[dict[str, str]], width: int) -> RenderableType:
    """The sweep's results predicted without each vs measured (header -> words), fitting
    `width`: "why not compared" under its row."""
    from edge.tables import fit_table

    frame = pd.DataFrame(checked)
    columns = [CHECKED_COLUMNS.get(h, Col(h, h)) for h in frame.columns]
    return fit_table(frame, columns, width, CHECKED_TITLE, more=SWEEP_MORE)
