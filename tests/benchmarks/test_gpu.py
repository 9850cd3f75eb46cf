"""On a CUDA machine (pytest -m gpu): device name, NVML power/energy, CUDA memory, auto batch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from pricing.gpus import gpu_from_device_name

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]
ROOT = Path(__file__).resolve().parents[2]


def bench_run(out: Path, *args: str) -> dict[str, object]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "planner.cli.main",
            "bench",
            "run",
            "--device",
            "cuda",
            "--out",
            str(out),
            "--format",
            "json",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    [result] = json.loads(done.stdout)
    return result  # type: ignore[no-any-return]


def test_a_cuda_run_reports_the_gpu_power_and_memory(tmp_path: Path) -> None:
    r = bench_run(tmp_path, "--workload", "gpt", "--size", "tiny", "--precision", "bf16",
                  "--steps", "30", "--peak-tflops", "100")  # fmt: skip
    assert r["device"] == "cuda" and str(r["device_name"]).startswith("NVIDIA")
    assert gpu_from_device_name(str(r["device_name"])) is not None
    assert r["gpu_name"] is None  # the planner maps it
    assert str(r["peak_memory_source"]).startswith("torch.cuda.max_memory_allocated")
    assert r["config"]["timing"] == "CUDA events per step"  # type: ignore[index]
    assert r["energy_j"] is not None and r["energy_j"] > 0  # type: ignore[operator]
    assert r["mean_power_w"] is not None and r["mfu"] is not None
    assert r["env"]["cudnn"] and r["env"]["driver"]  # type: ignore[index]


def test_batch_auto_on_cuda_finds_a_batch_within_the_cap(tmp_path: Path) -> None:
    r = bench_run(tmp_path, "--workload", "resnet50", "--size", "tiny", "--precision", "fp16",
                  "--batch", "auto", "--max-batch", "512", "--steps", "5")  # fmt: skip
    assert r["batch_size_per_device"] == 512  # the tiny CNN fits: the cap decides
    assert r["config"]["grad_scaler"] is True  # type: ignore[index]
