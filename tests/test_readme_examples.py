"""Every example the README names ships with the package, and every `gpuplan` command in
its code blocks runs as written, from a folder outside the checkout with the wheel
installed, except those that need the network, a GPU or a file the reader names (each
listed with why)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_example_the_readme_names_ships() -> None:
    from planner.io.examples import BY_NAME, EXAMPLES_DIR

    named = set(re.findall(r"example:([\w.-]+)", README)) - {"NAME"}
    assert {"queries", "llm-queries", "onprem-dgx-h100", "sweep-aws"} <= named
    assert sorted(named - set(BY_NAME)) == []
    assert all(BY_NAME[n].path.is_file() for n in named)
    paths = set(re.findall(r"examples/[\w.-]+", README))
    assert [p for p in sorted(paths) if not (ROOT / p).is_file()] == []
    assert {p.name for p in EXAMPLES_DIR.iterdir()} == {
        p.name for p in (ROOT / "examples").iterdir()
    }


@pytest.mark.parametrize(
    ("command", "rows"),
    [
        (["estimate-llm", "--queries", "example:llm-queries"], 4),
        (["estimate", "--reference", "example:lambda-throughput", "--queries", "example:queries"],
         4),
    ],
)  # fmt: skip
def test_the_example_queries_run(tmp_path: Path, command: list[str], rows: int) -> None:
    out = tmp_path / "out.csv"
    done = subprocess.run(
        [sys.executable, "-m", "planner.cli.main", *command, "--output", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = out.read_text(encoding="utf-8").splitlines()
    assert (len(lines) == rows + 1 and "throughput" in lines[0]) or "tokens_per_s" in lines[0]


# Commands not run here, by how they start, and why.
NOT_RUN = {
    "gpuplan app": "starts a web server",
    "gpuplan pricing refresh": "reads a provider's prices over the network",
    "gpuplan pricing spot-zones": "reads a refreshed AWS snapshot (from the network)",
    "gpuplan pricing remove": "removes a refreshed snapshot (a refresh needs the network)",
    "gpuplan sweep run": "launches machines",
    "gpuplan sweep resume": "launches machines",
    "gpuplan sweep cleanup": "asks the clouds for machines",
    "gpuplan bench run --workload resnet50": "needs a GPU (bf16, --batch auto)",
    "gpuplan bench run --workload bert": "needs a GPU (fp16 on a large model)",
    "gpuplan bench run --workload gpt --size 1.3b": "needs 8 GPUs",
    "gpuplan bench run --workload ops": "needs a GPU (70 s bound)",
    "gpuplan bench pipeline": "times JPEG decoding for tens of seconds",
}
# A placeholder the reader replaces: <id>, [ID], ID, my-..., other-machine/...
PLACEHOLDER = re.compile(r"<\w+>|\[ID\]|\bID\b|\bmy-|other-machine/")


def readme_commands() -> list[str]:
    """Every `gpuplan ...` line of the README's bash blocks, continuation lines joined and
    comments dropped."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", README, flags=re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            command = line.split("  #")[0].strip()
            if command.startswith("gpuplan "):
                commands.append(" ".join(command.split()))
    return commands


COMMANDS = readme_commands()
RUN = [c for c in COMMANDS if not PLACEHOLDER.search(c) and not c.startswith(tuple(NOT_RUN))]


def test_the_readme_commands_are_found_and_most_run() -> None:
    assert len(COMMANDS) >= 40 and len(RUN) >= 20, (len(COMMANDS), len(RUN))
    skipped = [c for c in COMMANDS if c not in RUN]
    assert all(PLACEHOLDER.search(c) or c.startswith(tuple(NOT_RUN)) for c in skipped)


@pytest.mark.slow
@pytest.mark.parametrize("command", RUN)
def test_each_readme_command_runs_as_written(command: str, installed: Path, tmp_path: Path) -> None:
    """Run by the installed `gpuplan` in an empty folder outside the checkout (files a
    command writes land there; no results and no user snapshots)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GPUPLAN_RESULTS_DIR")}
    done = subprocess.run(
        [str(installed / "bin" / "gpuplan"), *shlex.split(command)[1:]],
        cwd=tmp_path, env={**env, "COLUMNS": "100"}, capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, (command, (done.stdout + done.stderr)[-2000:])
    assert done.stdout.strip() or "--output" in command, command
    assert not list(tmp_path.glob("examples")), "a command wrote an examples folder"


def test_a_plain_examples_path_outside_the_checkout_uses_the_shipped_example(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from planner.cli.main import app

    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(app, ["tco", "--config", "examples/onprem-dgx-h100.toml"])
    assert done.exit_code == 0, done.output
    assert "using the shipped example:onprem-dgx-h100" in done.stderr
    done = CliRunner().invoke(app, ["tco", "--config", "example:onprem-dgx-h10"])
    assert done.exit_code == 2
    assert "unknown example 'onprem-dgx-h10'; did you mean 'onprem-dgx-h100'?" in done.stderr


def test_gpuplan_examples_lists_each_shipped_example() -> None:
    import json

    from planner.cli.main import app
    from planner.io.examples import EXAMPLES

    done = CliRunner().invoke(app, ["examples", "--format", "json"])
    assert done.exit_code == 0, done.output
    listed = json.loads(done.stdout)
    assert [r["name"] for r in listed] == [f"example:{e.name}" for e in EXAMPLES]
    assert all(r["about"] and Path(r["path"]).is_file() for r in listed)
