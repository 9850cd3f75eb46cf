"""tools/gpu_suite.sh: the standard GPU suite, checked on CPU (dry runs and a smoke step)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from benchmarks.results import load_results

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "tools" / "gpu_suite.sh"


def suite(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SUITE), *args], capture_output=True, text=True, timeout=240,
        env={**os.environ, "PYTHON": sys.executable, **env},
    )  # fmt: skip


def commands(output: str) -> list[str]:
    return [line for line in output.splitlines() if "planner.cli.main bench run" in line]


def test_dry_run_lists_the_standard_suite_with_a_world_size_series() -> None:
    done = suite("--dry-run", SUITE_GPUS="6")
    assert done.returncode == 0, done.stderr
    lines = commands(done.stdout)
    assert "--workload ops --size full --device cuda" in lines[0]  # first, every precision
    assert "--precision" not in lines[0]
    lines = lines[1:]
    expected = [
        ("resnet50", "full", "fp16", "--batch auto"),
        ("resnet50", "full", "bf16", "--batch auto"),
        ("bert", "large", "fp16", ""),
        ("bert", "large", "bf16", ""),
        ("gpt", "124m", "bf16", "--compile"),
        ("gpt", "350m", "bf16", "--compile"),
        ("gpt", "1.3b", "bf16", "--compile"),
    ]
    assert len(lines) == len(expected) + 1
    for line, (workload, size, precision, flag) in zip(lines, expected, strict=False):
        assert f"--workload {workload} --size {size} --precision {precision}" in line
        assert flag in line and "--device cuda" in line
    assert "--world-size 1\\,2\\,4\\,6" in lines[-1]
    assert "fp8 training skipped" in done.stdout  # compute capability 9.0 has fp8; the harness not
    assert "ops step measures fp8 GEMMs" in done.stdout


def test_cpu_smoke_runs_the_first_steps_and_writes_valid_results(tmp_path: Path) -> None:
    dry = suite("--dry-run", "--cpu-smoke")
    lines = commands(dry.stdout)
    assert lines and all("--size tiny" in line and "--device cpu" in line for line in lines)
    assert len(lines) == len(set(lines))
    done = suite("--cpu-smoke", OUT=str(tmp_path), SUITE_MAX_STEPS="2")
    assert done.returncode == 0, done.stdout + done.stderr
    results, problems = load_results(tmp_path)
    assert not problems
    by_workload = {r.workload: r for r in results}
    assert sorted(by_workload) == ["ops", "resnet50"]
    assert by_workload["resnet50"].model_size == "tiny"
    ops = by_workload["ops"]
    assert ops.model_size == "tiny" and ops.op_figures
    assert {f.op for f in ops.op_figures} == {"gemm", "attention", "copy", "add"}


def test_the_ops_step_stops_at_its_own_share_of_the_budget(tmp_path: Path) -> None:
    done = suite("--cpu-smoke", OUT=str(tmp_path), SUITE_MAX_STEPS="1", SUITE_OPS_S="1")
    assert done.returncode == 1 and "step failed (exit 124): --workload ops" in done.stderr
    assert list(tmp_path.iterdir()) == []  # stopped: nothing written


def test_unknown_option_is_refused() -> None:
    done = suite("--fast")
    assert done.returncode == 2 and "unknown option --fast" in done.stderr
