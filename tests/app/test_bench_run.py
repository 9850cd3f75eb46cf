"""The quick benchmark's subprocess boundary: its command, its progress, its errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from planner.ui import bench_run

FIXTURES = Path(__file__).parent / "fixtures"


def test_the_command_is_gpuplan_bench_run_on_the_cpu(tmp_path: Path) -> None:
    argv = bench_run.command("bert", 12, 2, tmp_path)
    assert argv[:3] == [sys.executable, "-m", "planner.cli.main"]
    assert argv[3:5] == ["bench", "run"]
    text = " ".join(argv[5:])
    assert "--workload bert --size tiny --device cpu --steps 12 --warmup 2" in text
    assert f"--out {tmp_path} --format json" in text


def test_progress_is_read_from_the_real_progress_bar() -> None:
    # stderr of `gpuplan bench run --workload resnet50 --size tiny --device cpu --steps 30
    # --warmup 3` as the app runs it (TTY_COMPATIBLE=1 TTY_INTERACTIVE=1 NO_COLOR=1).
    text = (FIXTURES / "bench_run_stderr.txt").read_text()
    cuts = [text.index("1/3 ") + 3, text.index("12/30") + 5, len(text)]
    seen = [bench_run.last_progress(text[:cut]) for cut in cuts]
    assert seen == [("warm-up", 1, 3), ("measure", 12, 30), ("measure", 30, 30)]
    fractions = [bench_run.overall_fraction(p, 3, 30) for p in seen]
    assert fractions == pytest.approx([1 / 33, 15 / 33, 1.0])
    assert bench_run.last_progress("running resnet50 tiny fp32 cpu x1: batch 32") is None
    assert bench_run.overall_fraction(None, 3, 30) == 0.0


def test_error_text_drops_control_codes_and_bar_redraws() -> None:
    stderr = (FIXTURES / "bench_run_stderr.txt").read_text() + "\nerror: out of memory\n"
    text = bench_run.BenchOutcome(1, [], stderr).error_text()
    assert text.endswith("error: out of memory")
    assert "\x1b" not in text and "30/30" not in text


def test_a_failing_command_reports_its_exit_code_and_message() -> None:
    argv = [sys.executable, "-c", "import sys; sys.stderr.write('error: no torch\\n'); sys.exit(2)"]
    seen: list[object] = []
    outcome = bench_run.run(argv, seen.append, timeout_s=60, poll_s=0.05)
    assert (outcome.returncode, outcome.results) == (2, [])
    assert outcome.error_text() == "error: no torch"


def test_a_run_past_its_time_is_stopped() -> None:
    argv = [sys.executable, "-c", "import time; time.sleep(30)"]
    outcome = bench_run.run(argv, lambda _: None, timeout_s=0.5, poll_s=0.05)
    assert outcome.timed_out and outcome.returncode != 0


def test_the_command_check_agrees_with_the_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "planner.cli.main", "bench", "run", "--help"],
        capture_output=True,
        timeout=120,
    )
    assert bench_run.bench_run_command_exists() == (done.returncode == 0)
