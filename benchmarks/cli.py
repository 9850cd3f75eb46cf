"""`gpuplan bench`: run standard training benchmarks and look at their results.

This module imports no torch at import time: `gpuplan --help` and `bench list` work
without it; `bench run` imports the harness when it runs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from benchmarks.results import ResultFileError, load_results, read_result

app = typer.Typer(help="Training benchmarks: run, list and show results.", no_args_is_help=True)


def default_results_dir() -> Path:
    """$GPUPLAN_RESULTS_DIR, else ./results."""
    return Path(os.environ.get("GPUPLAN_RESULTS_DIR", "results"))


@app.command("list")
def list_results(
    directory: Annotated[Path | None, typer.Argument(help="results folder")] = None,
) -> None:
    """One line per result in a folder (default $GPUPLAN_RESULTS_DIR or ./results)."""
    directory = directory or default_results_dir()
    results, problems = load_results(directory)
    console = Console()
    table = Table(title=f"{len(results)} results in {directory}")
    for column in (
        "id",
        "workload",
        "size",
        "precision",
        "device",
        "world",
        "throughput",
        "source",
    ):
        table.add_column(column)
    for r in sorted(results, key=lambda r: r.started_at):
        table.add_row(
            r.id,
            r.workload,
            r.model_size,
            r.precision,
            r.device_name or r.device,
            str(r.world_size),
            f"{r.throughput:,.1f} {r.throughput_unit}",
            r.source,
        )
    console.print(table)
    for problem in problems:
        Console(stderr=True).print(f"[yellow]skipped:[/] {problem}", highlight=False)


@app.command("show")
def show(
    result: Annotated[str, typer.Argument(help="result id or path to a result file")],
    directory: Annotated[Path | None, typer.Option("--dir", help="results folder")] = None,
) -> None:
    """Print one result file in full (validated)."""
    path = Path(result)
    if not path.exists():
        path = (directory or default_results_dir()) / f"{result}.json"
    try:
        loaded = read_result(path)
    except FileNotFoundError:
        Console(stderr=True).print(f"[bold red]error:[/] no result {result!r} (looked for {path})")
        raise typer.Exit(2) from None
    except ResultFileError as exc:
        Console(stderr=True).print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(2) from None
    print(json.dumps(loaded.model_dump(), indent=2))
