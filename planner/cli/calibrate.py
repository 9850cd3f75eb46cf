"""`gpuplan bench calibrate`: what gpuplan would have predicted for each own result without
it, the measured figure, the error, the method, and the error by GPU and by method.

The engine (planner.throughput.calibration) and pandas are imported when the command
runs: `gpuplan --help` loads neither. Rejected result files are named on stderr; the
others are still compared.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from benchmarks.folders import default_results_dir
from edge.console import warn_lines, working
from planner.cli.options import Format, check_format


def calibrate(
    results: Annotated[
        list[str] | None,
        typer.Option(
            "--results",
            help="own results folder (default: $GPUPLAN_RESULTS_DIR, else ./results, as "
            "gpuplan plan); repeatable",
        ),
    ] = None,
    fmt: Format = "table",
) -> None:
    """Predicted (leave-one-out) vs measured for every own result, and the error summary."""
    check_format(fmt)
    from edge.output import records
    from planner.render.calibration import print_calibration, worded_calibration
    from planner.throughput import own_and_published_results
    from planner.throughput.calibration import calibrate as predicted_vs_measured
    from planner.throughput.calibration import error_summary

    folders = results if results is not None else [str(default_results_dir())]
    table, problems = own_and_published_results(folders)
    warn_lines(problems)
    with working("predicting each own result without it (leave-one-out)"):
        rows = predicted_vs_measured(table)
    summary = error_summary(rows)
    if fmt == "table":
        print_calibration(rows, summary)
    elif fmt == "json":
        out = {"results": records(worded_calibration(rows)), "summary": records(summary)}
        sys.stdout.write(json.dumps(out, indent=2, default=str) + "\n")
    else:
        from edge.spreadsheet import csv_text

        sys.stdout.write(csv_text(worded_calibration(rows)))
