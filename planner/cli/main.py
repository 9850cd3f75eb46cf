"""`gpuplan`: plan GPU training cost and time from measured throughput and dated prices.

Commands: plan, workloads, examples, estimate, estimate-llm, tco, app (one module each in
planner/cli, estimate and estimate-llm together); `pricing`, `bench` and `sweep` are
mounted from their packages (`bench calibrate`, which needs the planner, is added to
the bench group here); `--version` prints the version.
Every command prints a table by default and takes `--format json|csv`. Bad input
gets `error: ...` with the valid choices and exit code 2, never a traceback.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

# Only light modules at the top: `gpuplan --help` and `--version` must not load pandas,
# numpy or scipy (tests/test_cli_startup.py); commands import the engine when they run.
from benchmarks.cli import app as bench_app
from benchmarks.result_checks import add_result_check
from benchmarks.sweep.cli import make_app as make_sweep_app
from planner.cli.app import APP_CONTEXT, serve_app
from planner.cli.calibrate import calibrate
from planner.cli.estimate import estimate, estimate_llm
from planner.cli.examples import examples
from planner.cli.plan import plan
from planner.cli.tco import tco
from planner.cli.workloads import workloads
from pricing.cli import app as pricing_app

HELP_WIDTH_PIPED = 100  # the help's width when it goes to a file or a pipe (as the tables)
# A help line that starts with one of these keeps its line break (a list or an example).
_KEEP_BREAK_BEFORE = ("-", "*", "•", " ", "$", "gpuplan ")


def _help_width() -> int:
    """$COLUMNS, else the terminal's width, else HELP_WIDTH_PIPED (edge.tables.console_width
    without its pandas import: `gpuplan --help` stays light)."""
    import os
    import shutil
    import sys

    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 20:
        return int(columns)
    if sys.stdout.isatty():
        return shutil.get_terminal_size((HELP_WIDTH_PIPED, 40)).columns
    return HELP_WIDTH_PIPED


def fold_paragraphs(paragraphs: list[str], markup_mode: object = None) -> str:
    """Help paragraphs with their single line breaks folded into spaces, so the terminal's
    width decides where lines break (a docstring's own breaks left "too" alone on a line at
    80 columns); lines of a list or an example keep theirs."""
    folded = []
    for paragraph in paragraphs:
        lines = paragraph.split("\n")
        out = [lines[0]]
        for line in lines[1:]:
            if line.startswith(_KEEP_BREAK_BEFORE) or paragraph.startswith("\b"):
                out.append("\n" + line)
            else:
                out.append(" " + line.strip())
        folded.append("".join(out))
    return "\n\n".join(folded)


# Below this width the help panels leave out the options' type column (<str>, <int>): its
# dozen columns go to the descriptions, which otherwise cut words at 80.
HELP_TYPES_FROM_WIDTH = 100
# An options-panel row: [required,] long, short, negative long, negative short, type, help.
_OPTION_ROW_CELLS = 6


def _names_whole_table() -> type:
    """A rich Table whose first columns (the help panels' option names) are never cut
    ("--no-flash-atten…" left a name no one can type); below HELP_TYPES_FROM_WIDTH an
    options row leaves out its type cell."""
    from rich.table import Table

    class NamesWholeTable(Table):
        def add_row(self, *renderables: Any, **options: Any) -> None:
            cells = list(renderables)
            if len(cells) >= _OPTION_ROW_CELLS and _help_width() < HELP_TYPES_FROM_WIDTH:
                del cells[-2]
            super().add_row(*cells, **options)
            for column in self.columns[:-1]:
                column.no_wrap = True

    return NamesWholeTable


def _readable_help(rich_utils: Any) -> None:
    """typer's rich help at the terminal's width with paragraphs folded (fold_paragraphs)."""
    import inspect

    rich_console = rich_utils._get_rich_console

    def console_at_width(stderr: bool = False) -> Any:
        rich_utils.MAX_WIDTH = _help_width()  # read when the help prints, not at import
        return rich_console(stderr)

    rich_utils._get_rich_console = console_at_width
    rich_utils.Table = _names_whole_table()
    rich_utils._fix_linebreaks = fold_paragraphs
    command_help = rich_utils._make_command_help

    def folded_command_help(*, help_text: str, markup_mode: Any) -> Any:
        first, *rest = inspect.cleandoc(help_text).split("\n\n")
        if not first.startswith("\b"):
            first = " ".join(first.split())
        return command_help(help_text="\n\n".join([first, *rest]), markup_mode=markup_mode)

    rich_utils._make_command_help = folded_command_help


class _RichUtilsOnFirstUse:
    """Stands in for typer.rich_utils (rich's markdown and tables, ~0.1 s to import) until
    typer reaches for it to print help or an error: then imports it, makes it readable
    (_readable_help) and hands it over, so a plan that prints neither never loads it.
    typer imports it as `from . import rich_utils`, which takes this attribute as it is."""

    def __getattr__(self, name: str) -> Any:
        import importlib

        module = importlib.import_module("typer.rich_utils")  # replaces this stand-in
        _readable_help(module)
        return getattr(module, name)


if "typer.rich_utils" in sys.modules:
    _readable_help(sys.modules["typer.rich_utils"])
else:
    setattr(typer, "rich_utils", _RichUtilsOnFirstUse())  # noqa: B010 (typer has no such name typed)
app = typer.Typer(
    help="gpuplan: which GPUs train this job fastest for the money, and how sure we are.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.command("plan")(plan)
app.command("workloads")(workloads)
app.command("examples")(examples)
app.command("estimate")(estimate)
app.command("estimate-llm")(estimate_llm)
app.command("tco")(tco)
app.command("app", context_settings=APP_CONTEXT)(serve_app)
app.add_typer(pricing_app, name="pricing")
# `bench calibrate` needs the planner, which benchmarks must not import: mounted here.
bench_app.command("calibrate")(calibrate)


def _physics_problem(result: Any) -> str | None:
    """planner.io.result_physics.physics_problem, imported when a result is checked."""
    from planner.io.result_physics import physics_problem

    return physics_problem(result)


# `bench add` and a sweep's intake refuse a result above its GPU's datasheet peak.
add_result_check(_physics_problem)
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
    """The prices and expected throughput a sweep's preview reads (planner.sweep_preview)."""
    from planner.sweep_preview import CatalogSweepData

    return CatalogSweepData()


def _input_path(value: str) -> str:
    """The file an argument names: `example:NAME` is a shipped example (planner.io.examples)."""
    from planner.io.examples import input_path

    return input_path(value)


app.add_typer(make_sweep_app(_sweep_data, _input_path), name="sweep")


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
