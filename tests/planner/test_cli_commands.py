"""`gpuplan`'s command table (planner.cli.main.COMMANDS): each help line is the one its
command prints, and `gpuplan --help` lists them without importing any command's module."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from planner.cli.main import COMMANDS, app, load_command
from tests.conftest import ROOT

COMMAND_MODULES = ("planner.cli.", "benchmarks.cli", "benchmarks.sweep", "pricing.cli")


def first_paragraph(help_text: str) -> str:
    """The help's first paragraph on one line, as the commands panel shows it."""
    return " ".join(inspect.cleandoc(help_text).split("\n\n")[0].split())


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_help_line_is_the_commands_own(name: str) -> None:
    command = load_command(name)
    assert command.name == name
    assert first_paragraph(command.help or "") == COMMANDS[name].help


def test_help_lists_every_command_without_importing_one() -> None:
    probe = (
        "import json, sys\n"
        "sys.argv = ['gpuplan', '--help']\n"
        "from planner.cli.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, env=env
    )
    help_text, modules = done.stdout.rsplit("\n", 2)[:2]
    imported = [m for m in json.loads(modules) if m.startswith(COMMAND_MODULES)]
    assert imported == ["planner.cli.main"]
    for name in COMMANDS:
        assert f" {name} " in help_text


def test_a_listed_command_runs_and_an_unknown_one_is_refused() -> None:
    ran = CliRunner().invoke(app, ["workloads", "--format", "json"])
    assert ran.exit_code == 0 and json.loads(ran.stdout)
    refused = CliRunner().invoke(app, ["workload"])
    assert refused.exit_code == 2
    assert "No such command" in refused.output
