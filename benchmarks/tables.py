"""`gpuplan bench list|show|run` as tables that fit the terminal."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pandas as pd

from edge.tables import Col, console_width, print_fit, print_wide


def _throughput(value: object) -> str:
    return f"{float(value):,.1f}"  # type: ignore[arg-type]


def _cv(value: object) -> str:
    return f"{float(value):.1%}"  # type: ignore[arg-type]


RESULT_COLUMNS: tuple[Col, ...] = (
    Col("id", "id (workload-size-precision-device x count-time)", shrink_to=24),
    Col("device_label", "device", shrink_to=8, drop=2),
    Col("world_size", "count", right=True),
    Col("throughput_text", "throughput", right=True),
    Col("throughput_cv", "CV", _cv, right=True, drop=1),
)


def print_results(frame: pd.DataFrame, title: str, wide: bool = False) -> None:
    """One line per result (every column with `wide`)."""
    if wide:
        print_wide(frame, title)
        return
    shown = frame.copy()
    if not shown.empty:
        shown["device_label"] = shown["device_name"].fillna(shown["device"])
        shown["throughput_text"] = [
            f"{_throughput(t)} {u}"
            for t, u in zip(shown["throughput"], shown["throughput_unit"], strict=True)
        ]
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
