"""Helpers for sweep tests: specs that run tiny CPU benchmarks on "the remote" (this
machine, reached through the loopback sshd in tests/sshd.py)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from planner.cli.main import app

ROOT = Path(__file__).resolve().parents[3]
# The remote runs this checkout's code with the test interpreter, one thread each.
REMOTE = (
    f'remote_python = "{sys.executable}"\n'
    f'remote_env = {{ PYTHONPATH = "{ROOT}", OMP_NUM_THREADS = "1" }}\n'
)
TINY_RUNS = """
[[runs]]
workload = "gpt"
size = "tiny"
device = "cpu"
precision = "fp32"
steps = 2
warmup = 1
batch = [2, 4]
"""
ONE_RUN = TINY_RUNS.replace("batch = [2, 4]", "batch = 2")


def ssh_target(host: str, extra: str = "") -> str:
    return f'[[targets]]\nbackend = "ssh"\nhost = "{host}"\n{REMOTE}{extra}\n'


def spec_text(targets: str, runs: str = TINY_RUNS, max_usd: float = 5, parallel: int = 2) -> str:
    return (
        f'name = "loopback"\n[limits]\nmax_usd = {max_usd}\nmax_minutes_per_target = 10\n'
        f"max_parallel = {parallel}\n\n{targets}\n{runs}"
    )


def sweep_cli(*args: str) -> Result:
    """`gpuplan sweep ARGS` in this process; an exception in it fails the test."""
    return CliRunner().invoke(app, ["sweep", *args], catch_exceptions=False)


@pytest.fixture(autouse=True)
def remote_dir_in_tmp(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Every sweep's remote folders go into a temporary folder, not the real home
    (~/.gpuplan-sweep); afterwards no sweep of this test has a folder there."""
    remote = tmp_path_factory.mktemp("remote-home")  # a name check_remote_path accepts
    monkeypatch.setenv("GPUPLAN_SWEEP_REMOTE_DIR", str(remote))
    yield remote
    home = Path.home() / ".gpuplan-sweep"
    left = [p.stem for p in tmp_path.rglob("sweeps/*.json") if (home / p.stem).exists()]
    assert not left, f"sweep(s) {left} left folders in {home}"


@pytest.fixture()
def sweep_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "sweeps"
    monkeypatch.setenv("GPUPLAN_SWEEP_DIR", str(directory))
    return directory


def only_state(directory: Path) -> dict:
    """The one state file in `directory`, parsed (fails if missing, partial or several)."""
    files = [p for p in directory.glob("*.json")]
    assert len(files) == 1, files
    assert not list(directory.glob(".*.tmp")), "a temporary state file was left behind"
    return json.loads(files[0].read_text())
