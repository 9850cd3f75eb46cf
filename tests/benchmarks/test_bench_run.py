"""`gpuplan bench run` as a user runs it: one valid result per run, nothing on failure."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchmarks.models import gpt
from benchmarks.results import read_result
from planner.cli.main import app

ROOT = Path(__file__).resolve().parents[2]
REQUIRED_KEYS = (
    "schema_version", "id", "workload", "model_size", "precision", "world_size",
    "batch_size_per_device", "samples_per_s", "tokens_per_s", "step_time_s_p50",
    "step_time_s_p90", "throughput_cv", "achieved_tflops", "peak_memory_gib",
    "mean_power_w", "energy_j", "device_name", "env", "started_at", "source",
)  # fmt: skip
ENV_KEYS = ("torch", "cuda", "cudnn", "nccl", "driver", "cpu_model", "cpu_cores",
            "memory_gib", "hostname", "cloud_provider", "instance_type")  # fmt: skip
TINY_GPT = ("--workload", "gpt", "--size", "tiny", "--device", "cpu")  # the quickest run


def bench(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "planner.cli.main", "bench", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


def results_in(directory: Path) -> list[dict[str, object]]:
    return [json.loads(p.read_text()) for p in sorted(directory.glob("*.json"))]


def test_gpt_tiny_on_cpu_writes_one_valid_result(tmp_path: Path) -> None:
    done = bench("run", *TINY_GPT, "--steps", "20", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and files[0].suffix == ".json"
    raw = json.loads(files[0].read_text())
    assert set(REQUIRED_KEYS) <= set(raw) and set(ENV_KEYS) <= set(raw["env"])
    result = read_result(files[0])
    assert result.source == "measured" and result.workload == "gpt"
    assert result.model_size == "tiny" and result.world_size == 1
    assert result.throughput > 0 and result.throughput_unit == "tokens/s"
    assert result.tokens_per_s == pytest.approx(result.samples_per_s * gpt.CONFIGS["tiny"].seq_len)
    assert len(result.step_times_s) == 20
    assert result.step_time_s_p50 <= result.step_time_s_p90  # type: ignore[operator]
    assert result.energy_j is None and result.energy_source.startswith("not measured")
    assert result.env["torch"] and result.device_name == result.env["cpu_model"]
    assert result.id in done.stdout


def test_world_size_series_writes_one_result_per_size(tmp_path: Path) -> None:
    """One run per size of the series; the two-process run is DDP over gloo."""
    done = bench("run", *TINY_GPT, "--world-size", "1,2", "--steps", "5", "--warmup", "2",
                 "--batch", "8", "--out", str(tmp_path))  # fmt: skip
    assert done.returncode == 0, done.stderr
    results = results_in(tmp_path)
    assert sorted(r["world_size"] for r in results) == [1, 2]  # type: ignore[type-var]
    assert {r["batch_size_per_device"] for r in results} == {8}
    for r in results:  # global throughput: every process's samples
        assert r["samples_per_s"] == pytest.approx(
            8 * r["world_size"] / r["step_time_s_p50"]  # type: ignore[operator]
        )
    (ddp,) = [r for r in results if r["world_size"] == 2]
    assert ddp["interconnect"] == "DDP over gloo"
    assert ddp["config"]["ddp_backend"] == "gloo"  # type: ignore[index]


def test_batch_series_writes_one_result_per_batch(tmp_path: Path) -> None:
    """A batch sweep in one command: each batch is its own result, at its own rate."""
    done = bench("run", *TINY_GPT, "--batch", "2,8", "--steps", "4", "--warmup", "1",
                 "--out", str(tmp_path))  # fmt: skip
    assert done.returncode == 0, done.stderr
    results = results_in(tmp_path)
    assert sorted(r["batch_size_per_device"] for r in results) == [2, 8]  # type: ignore[type-var]
    assert len({r["id"] for r in results}) == 2
    for r in results:
        assert r["samples_per_s"] == pytest.approx(
            r["batch_size_per_device"] / r["step_time_s_p50"]  # type: ignore[operator]
        )


def test_batch_auto_on_cpu_writes_the_batch_it_found(tmp_path: Path) -> None:
    done = bench("run", "--workload", "bert", "--size", "tiny", "--device", "cpu",
                 "--batch", "auto", "--max-batch", "12", "--steps", "3", "--warmup", "1",
                 "--out", str(tmp_path))  # fmt: skip
    assert done.returncode == 0, done.stderr
    [result] = results_in(tmp_path)
    assert result["batch_size_per_device"] == 12
    assert result["config"]["batch_auto"]["cap"] == 12  # type: ignore[index]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--world-size", "0"], "--world-size"),
        (["--world-size", "1,x"], "--world-size"),
        (["--batch", "lots"], "--batch"),
        (["--batch", "16,0"], "'0' is not a positive whole number or 'auto'"),
        (["--batch", "auto,16"], "auto finds one batch; give it alone, or a series"),
        (["--precision", "tf32"], "tf32"),
        (["--size", "ful"], "did you mean 'full'"),
    ],
)
def test_bad_options_exit_2_with_the_fix(args: list[str], message: str, tmp_path: Path) -> None:
    runner = CliRunner()
    workload = "resnet50" if "--size" in args else "gpt"
    done = runner.invoke(
        app,
        [
            "bench",
            "run",
            "--workload",
            workload,
            "--device",
            "cpu",
            *args,
            "--out",
            str(tmp_path),
        ],
    )
    assert done.exit_code == 2, done.output
    assert message in done.output and "Traceback" not in done.output
    assert list(tmp_path.iterdir()) == []


def test_an_exception_in_a_step_exits_1_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = gpt.loss
    calls = {"n": 0}

    def failing(model: object, batch: tuple[object, ...]) -> object:
        calls["n"] += 1
        if calls["n"] == 4:
            raise RuntimeError("simulated NaN check")
        return real(model, batch)  # type: ignore[arg-type]

    monkeypatch.setattr(gpt, "loss", failing)
    done = CliRunner().invoke(
        app,
        ["bench", "run", *TINY_GPT, "--steps", "10", "--warmup", "2", "--out", str(tmp_path)],
    )
    assert done.exit_code == 1
    assert "timed step 2 of 10 failed" in done.output and "no result written" in done.output
    assert not tmp_path.exists() or list(tmp_path.iterdir()) == []


def _processes_mentioning(text: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            if text in (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode():
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def read_until(proc: subprocess.Popen[bytes], text: str, timeout_s: float = 120) -> str:
    """The child's stderr up to and including `text` (read as it comes)."""
    assert proc.stderr is not None
    fd, seen = proc.stderr.fileno(), b""
    deadline = time.monotonic() + timeout_s
    while text.encode() not in seen:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(fd, 65536) if ready else b""
        assert chunk, f"no {text!r} on stderr: {seen.decode(errors='replace')}"
        seen += chunk
    return seen.decode(errors="replace")


@pytest.mark.parametrize("world_size", ["1", "2"])
def test_ctrl_c_leaves_no_result_and_exits_non_zero(world_size: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    command = [sys.executable, "-m", "planner.cli.main", "bench", "run", *TINY_GPT,
               "--world-size", world_size, "--steps", "1000000", "--warmup", "1",
               "--out", str(out)]  # fmt: skip
    # Its own process group, ended whatever happens: a run of a million steps (and its
    # torchrun workers) must not outlive a failed test. TTY_COMPATIBLE: rich draws the
    # progress bar into the pipe, so the test sees when the timed steps have begun.
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
        env={**os.environ, "TTY_COMPATIBLE": "1", "TTY_INTERACTIVE": "1"},
        start_new_session=True,
    )  # fmt: skip
    try:
        shown = read_until(proc, "running")  # options checked, the run starting
        assert shown.startswith("running"), shown
        read_until(proc, " measure ")  # the progress bar of the timed steps: well into them
        assert proc.poll() is None
        proc.send_signal(signal.SIGINT)
        _, rest = proc.communicate(timeout=90)
        err = rest.decode(errors="replace")
        assert proc.returncode == 130
        assert "interrupted: no result written" in err and "Traceback" not in err
        assert not out.exists() or list(out.iterdir()) == []
        deadline = time.monotonic() + 10
        while _processes_mentioning(str(out)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _processes_mentioning(str(out)) == []  # no orphaned torchrun worker
    finally:
        with contextlib.suppress(ProcessLookupError):  # the group is gone: nothing left
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_show_rejects_a_malformed_result_naming_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"id": "x", "workload": "gpt", "precision": "fp32",
                               "world_size": 1, "throughput": -5,
                               "started_at": "2026-11-30"}))  # fmt: skip
    done = CliRunner().invoke(app, ["bench", "show", str(bad)])
    assert done.exit_code == 2
    assert str(bad) in done.output and "'throughput'" in done.output


def test_pipeline_command_writes_a_result_per_worker_count(tmp_path: Path) -> None:
    done = bench("pipeline", "--workers", "0,1", "--batch", "4", "--batches", "3",
                 "--warmup", "1", "--images", "4", "--out", str(tmp_path))  # fmt: skip
    assert done.returncode == 0, done.stderr
    results = results_in(tmp_path)
    assert sorted(r["config"]["workers"] for r in results) == [0, 1]  # type: ignore[index]
    assert all(r["samples_per_s_per_core"] > 0 for r in results)  # type: ignore[operator]
    assert "images/s per core" in done.stdout


def test_a_failing_multi_process_run_shows_why_and_writes_nothing(tmp_path: Path) -> None:
    # Every worker finds that no batch fits the budget: the run fails inside torchrun.
    done = bench("run", "--workload", "gpt", "--size", "tiny", "--device", "cpu",
                 "--world-size", "2", "--batch", "auto", "--memory-budget-gib", "0.0001",
                 "--steps", "2", "--out", str(tmp_path))  # fmt: skip
    assert done.returncode == 1
    assert "2-process run failed" in done.stderr
    assert "raise --memory-budget-gib" in done.stderr  # the workers' own error, shown
    assert not tmp_path.exists() or list(tmp_path.iterdir()) == []
