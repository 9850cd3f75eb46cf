"""Results written by the benchmarks are the planner's `measured` throughput."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.results import load_results, write_result
from benchmarks.summary import Measurement, make_result
from planner.throughput import bundled_results_dir, own_and_published_results, throughput_table
from planner.workloads.catalog import get_workload


def h100_resnet50(step_s: float) -> Measurement:
    return Measurement(
        workload="resnet50",
        model_size="full",
        precision="fp16",
        device="cuda",
        device_name="NVIDIA H100 80GB HBM3",  # as torch.cuda.get_device_name reports it
        world_size=1,
        batch_size_per_device=256,
        step_times_s=[step_s] * 10,
        wall_s=10 * step_s,
        flops_per_sample=24.5e9,
        throughput_unit="images/s",
        tokens_per_sample=None,
        peak_memory_gib=40.0,
        peak_memory_source="torch.cuda.max_memory_allocated",
    )


def test_a_cuda_result_is_measured_throughput_for_its_canonical_gpu(tmp_path: Path) -> None:
    result = make_result(h100_resnet50(0.08), "h100-run", "2026-11-30T05:00:00+00:00")
    assert result.gpu_name is None  # the planner maps the device name, not the benchmark
    write_result(result, tmp_path)
    table, problems = own_and_published_results([str(tmp_path)])
    assert problems == []
    rows = throughput_table(table, get_workload("resnet50-imagenet-90ep"), "fp16")
    h100 = rows.loc[(rows["gpu_name"] == "H100-SXM") & (rows["total_gpus"] == 1)].iloc[0]
    assert h100["source"] == "measured"
    assert h100["throughput"] == pytest.approx(256 / 0.08)
    assert "h100-run" in h100["detail"]


def test_the_bundled_sample_results_load_cleanly() -> None:
    results, problems = load_results(bundled_results_dir())
    assert problems == []
    workloads = {r.workload for r in results}
    assert {"resnet50", "bert", "gpt", "input-pipeline"} <= workloads
    assert all(r.source == "measured" and r.env.get("torch") for r in results)
    assert {r.world_size for r in results if r.workload == "gpt"} >= {1, 2}
