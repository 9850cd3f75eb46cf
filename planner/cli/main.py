"""`gpuplan`: plan GPU training cost and time from measured throughput and dated prices.

Commands: plan, workloads, examples, estimate, estimate-llm, tco, app (one module each in
planner/cli, estimate and estimate-llm together); `pricing`, `bench` and `sweep` are
mounted from their packages (`bench calibrate`, which needs the planner, is added to
the bench group here); `--version` prints the version.
Every command prints a table by default and takes `--format json|csv`. Bad input
gets `error: ...` with the valid choices and exit code 2, never a traceback.
"""

from __future__ import annotations

import importlib
import sys
from functools import cache
from typing import Annotated, Any, NamedTuple

import typer
from typer.core import TyperGroup

# Only light modules at the top: `gpuplan --help` and `--version` must not load pandas,
# numpy or scipy (tests/test_cli_startup.py), nor any command's module: each command is
# named in COMMANDS with its help line and imported when it runs (LazyCommands).
from benchmarks.result_checks import add_result_check

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


class CommandEntry(NamedTuple):
    """A sub-command as `gpuplan --help` lists it: the first paragraph of its help, as
    written in its docstring or Typer(help=...), and where it lives (`module:attribute`: a
    command function, a typer.Typer group, or with `factory` a function that returns the
    group), imported only when the command runs."""

    help: str
    where: str
    context_settings: dict[str, Any] | None = None
    factory: bool = False

    def load(self) -> Any:
        """The command function or typer.Typer group this entry names."""
        module, attribute = self.where.split(":")
        found = getattr(importlib.import_module(module), attribute)
        return found() if self.factory else found


# `gpuplan app`'s other options go to `streamlit run` as written (--server.headless true).
APP_CONTEXT = {"allow_extra_args": True, "ignore_unknown_options": True}
COMMANDS: dict[str, CommandEntry] = {
    "plan": CommandEntry(
        "Plan a training run: every offer at its best GPU count, the time/cost frontier and picks.",
        "planner.cli.plan:plan",
    ),
    "workloads": CommandEntry(
        "The workload catalog: samples to train and FLOPs per sample.",
        "planner.cli.workloads:workloads",
    ),
    "examples": CommandEntry(
        "The example files shipped with gpuplan: name, what it is, the commands that take it "
        "and where it is installed.",
        "planner.cli.examples:examples",
    ),
    "estimate": CommandEntry(
        "Predict throughput for any GPU, count, model and precision from a reference file.",
        "planner.cli.estimate:estimate",
    ),
    "estimate-llm": CommandEntry(
        "Predict LLM training tokens/s: the fastest tensor/context/pipeline/data-parallel "
        "layout that fits, timed operator by operator (GEMMs, attention, memory-bound, "
        "communication).",
        "planner.cli.estimate:estimate_llm",
    ),
    "tco": CommandEntry(
        "Buy or rent: on-prem cost per GPU-hour by line with its P10-P90 band, and against "
        "each cloud offer the share of cases buying is cheaper over the server's life.",
        "planner.cli.tco:tco",
    ),
    "app": CommandEntry(
        "Start the web app (Streamlit) in this terminal; needs pip install 'gpuplan\\[app]'.",
        "planner.cli.app:serve_app",
        APP_CONTEXT,
    ),
    "pricing": CommandEntry(
        "Price snapshots: show offers, check their age, refresh them from the providers' "
        "APIs, compare them, add your own.",
        "pricing.cli:app",
    ),
    "bench": CommandEntry(
        "Training benchmarks: run, list and show results.",
        "planner.cli.main:bench_group",
        factory=True,
    ),
    "sweep": CommandEntry(
        "Benchmark sweeps on SSH servers and cloud instances: preview, run, clean up.",
        "planner.cli.main:sweep_group",
        factory=True,
    ),
}


def load_command(name: str) -> Any:
    """The click command or group of COMMANDS[name], its module imported now."""
    entry = COMMANDS[name]
    found = entry.load()
    holder = typer.Typer(add_completion=False)
    if isinstance(found, typer.Typer):
        holder.add_typer(found, name=name)
    else:
        holder.command(name, context_settings=entry.context_settings)(found)
    return typer.main.get_group(holder).commands[name]


class LazyCommands(TyperGroup):
    """gpuplan's group: lists COMMANDS by name and help line, and imports a command's module
    only when that command runs (or its own help prints), so `gpuplan --help` stays light."""

    listing_only = False  # True while the group's own help prints

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in COMMANDS:
            return None
        if self.listing_only and cmd_name not in self.commands:
            return typer.core.TyperCommand(cmd_name, help=COMMANDS[cmd_name].help)
        if cmd_name not in self.commands:
            self.commands[cmd_name] = load_command(cmd_name)
        return self.commands[cmd_name]

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self.listing_only = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self.listing_only = False


app = typer.Typer(
    cls=LazyCommands,
    help="gpuplan: which GPUs train this job fastest for the money, and how sure we are.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


@cache
def bench_group() -> typer.Typer:
    """`gpuplan bench`: benchmarks' group with `bench calibrate`, which needs the planner
    (benchmarks must not import it), mounted here once."""
    from benchmarks.cli import app as bench_app
    from planner.cli.calibrate import calibrate

    bench_app.command("calibrate")(calibrate)
    return bench_app


def _physics_problem(result: Any) -> str | None:
    """planner.io.result_physics.physics_problem, imported when a result is checked."""
    from planner.io.result_physics import physics_problem

    return physics_problem(result)


# `bench add` and a sweep's intake refuse a result above its GPU's datasheet peak.
add_result_check(_physics_problem)


def package_version() -> str:
    """gpuplan's version (edge.version, which pyproject.toml reads)."""
    from edge.version import VERSION

    return VERSION


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


@cache
def sweep_group() -> typer.Typer:
    """`gpuplan sweep`: previews priced from the bundled catalog, specs by example name."""
    from benchmarks.sweep.cli import make_app

    return make_app(_sweep_data, _input_path)


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
