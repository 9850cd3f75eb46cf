"""tools/gpu_suite.sh: the standard GPU suite, checked on CPU (dry runs and a smoke step)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from benchmarks.results import load_results

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "tools" / "gpu_suite.sh"
CLOCKED_TIMEOUT = ROOT / "tests" / "clocked_timeout.py"


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
        *(("resnet50", "full", precision, "--batch auto") for precision in ("fp16", "bf16")),
        *(("bert", "large", precision, "") for precision in ("fp16", "bf16")),
        *(("gpt", size, "bf16", "--compile") for size in ("124m", "350m", "1.3b")),
        ("resnet50", "full", "fp16", "--batch 16\\,32\\,64\\,128"),  # the batch sweeps
        ("bert", "large", "fp16", "--batch 4\\,8\\,32\\,64"),
    ]
    assert len(lines) == len(expected) + 1
    for line, (workload, size, precision, flag) in zip(lines, expected, strict=False):
        assert f"--workload {workload} --size {size} --precision {precision}" in line
        assert flag in line and "--device cuda" in line
    assert "--world-size 1\\,2\\,4\\,6" in lines[-1]
    # last, the host cost of a sharded gather's per-tensor copies, on the GPU
    assert done.stdout.splitlines()[-1].endswith("tools/bench_slice_copies.py --device cuda ")
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
    """The ops step runs under `timeout` with SUITE_OPS_S as its limit (not the budget);
    stopped there (SIGINT, mid-measurement) it leaves nothing and the suite says it failed."""
    shim = tmp_path / "bin" / "timeout"  # its limit runs out once the step is measuring
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{CLOCKED_TIMEOUT}" "$@"\n')
    shim.chmod(0o755)
    out, log = tmp_path / "out", tmp_path / "timeout.log"
    done = suite(
        "--cpu-smoke", OUT=str(out), SUITE_MAX_STEPS="1", SUITE_OPS_S="7", TIMEOUT_LOG=str(log),
        PATH=f"{shim.parent}:{os.environ['PATH']}", TTY_COMPATIBLE="1", TTY_INTERACTIVE="1",
    )  # fmt: skip
    (call,) = [line.split("\0") for line in log.read_text().splitlines()]
    assert call[:3] == ["--signal=INT", "--kill-after=30", "7"], call  # its share, not 480 s
    assert call[3:5] == [sys.executable, "-m"] and "--workload ops" in " ".join(call)
    assert done.returncode == 1 and "step failed (exit 124): --workload ops" in done.stderr
    assert "interrupted: no result written for ops" in done.stderr  # stopped mid-run
    assert not out.exists() or list(out.iterdir()) == []  # stopped: nothing written


def test_the_steps_see_the_callers_c_compiler(tmp_path: Path) -> None:
    """An exported CC (the compiler torch.compile builds with) reaches every step unchanged:
    the suite once kept the compute capability in a shell variable of that name, so each
    --compile step ran the C compiler '9.0' and failed."""
    log = tmp_path / "env.log"
    fake_python = tmp_path / "python"  # records the step's CC instead of running it
    fake_python.write_text(f'#!/bin/sh\necho "CC=$CC" >> "{log}"\n')
    fake_python.chmod(0o755)
    done = suite(
        "--cpu-smoke", OUT=str(tmp_path / "out"), SUITE_MAX_STEPS="2", CC="/usr/bin/cc",
        PYTHON=str(fake_python),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert log.read_text().splitlines() == ["CC=/usr/bin/cc"] * 2


def test_unknown_option_is_refused() -> None:
    done = suite("--fast")
    assert done.returncode == 2 and "unknown option --fast" in done.stderr
