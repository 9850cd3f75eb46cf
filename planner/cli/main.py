"""`gpuplan`: plan GPU training cost and time from measured throughput and dated prices.

Commands: plan, workloads, estimate, estimate-llm, tco, app (one module each in
planner/cli, estimate and estimate-llm together); `pricing`, `bench` and `sweep` are
mounted from their packages (`bench calibrate`, which needs the planner, is added to
the bench group here); `--version` prints the version.
Every command prints a table by default and takes `--format json|csv`. Bad input
gets `error: ...` with the valid choices and exit code 2, never a traceback.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

# Only light modules at the top: `gpuplan --help` and `--version` must not load pandas,
# numpy or scipy (tests/test_cli_startup.py); commands import the engine when they run.
from benchmarks.cli import app as bench_app
from benchmarks.sweep.cli import make_app as make_sweep_app
from planner.cli.app import APP_CONTEXT, serve_app
from planner.cli.calibrate import calibrate
from planner.cli.estimate import estimate, estimate_llm
from planner.cli.plan import plan
from planner.cli.tco import tco
from planner.cli.workloads import workloads
from pricing.cli import app as pricing_app

app = typer.Typer(
    help="gpuplan: which GPUs train this job fastest for the money, and how sure we are.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.command("plan")(plan)
app.command("workloads")(workloads)
app.command("estimate")(estimate)
app.command("estimate-llm")(estimate_llm)
app.command("tco")(tco)
app.command("app", context_settings=APP_CONTEXT)(serve_app)
app.add_typer(pricing_app, name="pricing")
# `bench calibrate` needs the planner, which benchmarks must not import: mounted here.
bench_app.command("calibrate")(calibrate)
app.add_typer(bench_app, name="bench")


def package_version() -> str:
    """The installed gpuplan's version (importlib.metadata), or 'unknown' from a bare checkout."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gpuplan")
    except PackageNotFoundError:
        return "unknown (not installed: pip install -e .)"


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"gpuplan {package_version()}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="print the version and exit"
        ),
    ] = False,
) -> None:
    """gpuplan: which GPUs train this job fastest for the money, and how sure we are."""


def _sweep_data() -> Any:
    """The prices and expected throughput a sweep's preview reads (planner.io.sweep_data)."""
    from planner.io.sweep_data import CatalogSweepData

    return CatalogSweepData()


app.add_typer(make_sweep_app(_sweep_data), name="sweep")


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
