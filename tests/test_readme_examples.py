"""Every example file the README names ships in the repository, and every `gpuplan`
command in its code blocks runs as written, except those that need the network, a GPU or
a file the reader names (each listed with why)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_example_path_the_readme_names_exists() -> None:
    named = set(re.findall(r"examples/[\w.-]+", README))
    assert {"examples/queries.csv", "examples/llm_queries.csv"} <= named
    assert [p for p in sorted(named) if not (ROOT / p).is_file()] == []


@pytest.mark.parametrize(
    ("command", "rows"),
    [
        (["estimate-llm", "--queries", "examples/llm_queries.csv"], 4),
        (["estimate", "--reference", "reference/benchmarks/lambda_pytorch_throughput.csv",
          "--queries", "examples/queries.csv"], 4),
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


@pytest.fixture()
def reader_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder as a reader's checkout: examples/ and reference/ as shipped, nothing else
    (files a command writes land here); no results and no user snapshots."""
    for name in ("examples", "reference"):
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GPUPLAN_RESULTS_DIR", raising=False)
    return tmp_path


@pytest.mark.parametrize("command", RUN)
def test_each_readme_command_runs_as_written(command: str, reader_folder: Path) -> None:
    from planner.cli.main import app

    args = shlex.split(command)[1:]
    done = CliRunner().invoke(app, args, env={"COLUMNS": "100"})
    assert done.exit_code == 0, (command, done.output[-2000:])
    assert done.stdout.strip() or "--output" in command, command
