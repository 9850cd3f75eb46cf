"""Running the gpuplan CLI in-process from tests."""

from __future__ import annotations

import shlex

from typer.testing import CliRunner, Result

from planner.cli.main import app


def gpuplan_ok(command: str) -> Result:
    """Run `gpuplan <command>` (split as a shell would) in-process; it must exit 0."""
    done = CliRunner().invoke(app, shlex.split(command))
    assert done.exit_code == 0, done.output
    return done
