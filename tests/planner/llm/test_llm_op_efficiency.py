"""planner.llm.op_efficiency: measured GEMM, attention and memory rates of a GPU from its
op results (own measured first), through the table own_and_published_results builds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks import ops
from benchmarks.harness import RunOptions
from benchmarks.op_figures import OpFigure, attention_flops, gemm_flops
from benchmarks.results import OP_SCHEMA_VERSION, BenchmarkResult, results_frame, write_result
from planner.llm.op_efficiency import (
    dense_peak_tflops,
    measured_attention,
    measured_attention_tflops,
    measured_gemm_tflops,
    measured_memory_gbps,
)
from planner.throughput import own_and_published_results, reference_from_results

H200_BF16_PEAK = 989.4  # planner/data/gpu_specs.csv, dense


def gemm(m: int, n: int, k: int, tflops: float, precision: str = "bf16") -> OpFigure:
    flops = gemm_flops(m, n, k)
    ms = flops / tflops / 1e9
    return OpFigure(op="gemm", precision=precision, m=m, n=n, k=k, flops=flops, ms=ms,
                    ms_p10=ms, ms_p90=ms, repeats=5, tflops=tflops)  # fmt: skip


def attention(head_dim: int, seq_len: int, tflops: float) -> OpFigure:
    batch, heads = 16384 // seq_len, 2048 // head_dim
    flops = attention_flops(batch, heads, seq_len, head_dim, causal=True)
    ms = flops / tflops / 1e9
    return OpFigure(op="attention", precision="bf16", batch=batch, heads=heads, seq_len=seq_len,
                    head_dim=head_dim, causal=True, flops=flops, ms=ms, ms_p10=ms, ms_p90=ms,
                    repeats=5, tflops=tflops, backend="flash")  # fmt: skip


def copy(gb_per_s: float) -> OpFigure:
    moved = 2 * 2**31
    ms = moved / gb_per_s / 1e6
    return OpFigure(op="copy", precision="bf16", bytes_moved=moved, ms=ms, ms_p10=ms,
                    ms_p90=ms, repeats=5, gb_per_s=gb_per_s)  # fmt: skip


def op_run(run_id: str, figures: list[OpFigure], **fields: Any) -> BenchmarkResult:
    """An op result of an H200 (named by its CUDA device name, as a run writes it)."""
    values: dict[str, Any] = {
        "schema_version": OP_SCHEMA_VERSION, "id": run_id, "workload": "ops",
        "model_size": "full", "precision": None, "device": "cuda",
        "device_name": "NVIDIA H200", "world_size": 1, "throughput": 700.0,
        "throughput_unit": "TFLOP/s", "started_at": "2026-12-01T00:00:00+00:00",
        "op_figures": figures,
    }  # fmt: skip
    return BenchmarkResult(**(values | fields))


GRID = [gemm(2048, 768, 768, 300.0), gemm(8192, 8192, 8192, 750.0), gemm(8192, 1376, 8192, 520.0)]
FIGURES = [*GRID, attention(128, 4096, 400.0), attention(64, 4096, 330.0),
           attention(128, 16384, 450.0), copy(4200.0)]  # fmt: skip


def table_with(tmp_path: Path, *results: BenchmarkResult) -> Any:
    for result in results:
        write_result(result, tmp_path)
    table, problems = own_and_published_results([str(tmp_path)])
    assert problems == []
    return table


def test_the_gemm_table_of_a_gpu_and_precision_with_its_efficiency(tmp_path: Path) -> None:
    table = table_with(tmp_path, op_run("ops-h200", FIGURES))
    gemms = measured_gemm_tflops(table, "H200-SXM", "bf16")
    assert gemms is not None and gemms.run_id == "ops-h200" and gemms.source == "measured"
    assert gemms.peak_tflops == H200_BF16_PEAK and len(gemms.shapes) == 3
    exact = gemms.nearest(8192, 1376, 8192)
    assert (exact.m, exact.n, exact.k, exact.log2_distance) == (8192, 1376, 8192, 0.0)
    assert exact.tflops == pytest.approx(520.0)
    assert exact.efficiency == pytest.approx(520.0 / H200_BF16_PEAK)
    near = gemms.nearest(7000, 9000, 8192)  # nearest in log space: the 8192 cube
    assert (near.m, near.n, near.k) == (8192, 8192, 8192) and 0 < near.log2_distance < 0.5
    assert gemms.tflops_at(2000, 800, 700) == pytest.approx(300.0)
    assert gemms.efficiency_at(2000, 800, 700) == pytest.approx(300.0 / H200_BF16_PEAK)
    frame = gemms.frame()
    assert list(frame.columns) == ["m", "n", "k", "tflops", "peak_tflops", "efficiency"]
    assert frame["efficiency"].max() == pytest.approx(750.0 / H200_BF16_PEAK)
    assert measured_gemm_tflops(table, "h200", "bf16") is not None  # an alias of H200-SXM


def test_none_for_another_precision_or_gpu_or_no_op_results(tmp_path: Path) -> None:
    table = table_with(tmp_path, op_run("ops-h200", FIGURES))
    assert measured_gemm_tflops(table, "H200-SXM", "fp8") is None
    assert measured_gemm_tflops(table, "H100-SXM", "bf16") is None
    assert measured_attention_tflops(table, "H200-SXM", "fp16", 128, 4096) is None
    assert measured_memory_gbps(table, "A100-SXM-80GB") is None
    training_only = own_and_published_results([])[0]
    assert measured_gemm_tflops(training_only, "H200-SXM", "bf16") is None
    with pytest.raises(ValueError, match="unknown precision 'int8'"):
        measured_gemm_tflops(table, "H200-SXM", "int8")


def test_attention_nearest_head_dim_then_sequence_length(tmp_path: Path) -> None:
    table = table_with(tmp_path, op_run("ops-h200", FIGURES))
    assert measured_attention_tflops(table, "H200-SXM", "bf16", 128, 4096) == pytest.approx(400.0)
    assert measured_attention_tflops(table, "H200-SXM", "bf16", 64, 2048) == pytest.approx(330.0)
    point = measured_attention(table, "H200-SXM", "bf16", 96, 12000)  # d 96: nearer 128 (log2)
    assert point is not None and (point.head_dim, point.seq_len) == (128, 16384)
    assert point.efficiency == pytest.approx(450.0 / H200_BF16_PEAK) and point.backend == "flash"
    assert measured_memory_gbps(table, "H200-SXM") == pytest.approx(4200.0)


def test_own_measured_runs_first_then_full_grids_then_the_newest(tmp_path: Path) -> None:
    old = op_run("ops-old", [gemm(4096, 4096, 4096, 600.0)], started_at="2026-01-01")
    new = op_run("ops-new", [gemm(4096, 4096, 4096, 700.0)], started_at="2026-06-01")
    tiny = op_run("ops-tiny", [gemm(512, 768, 768, 90.0)], model_size="tiny",
                  started_at="2026-11-01")  # fmt: skip
    published = op_run("ops-pub", [gemm(4096, 4096, 4096, 800.0)], source="published:x",
                       started_at="2026-12-01")  # fmt: skip
    frame = results_frame([old, tiny, published, new]).assign(gpu_name="H200-SXM")
    chosen = measured_gemm_tflops(frame, "H200-SXM", "bf16")
    assert chosen is not None and chosen.run_id == "ops-new"
    only_published = measured_gemm_tflops(
        results_frame([published]).assign(gpu_name="H200-SXM"), "H200-SXM", "bf16"
    )
    assert only_published is not None and only_published.source == "published"


def test_op_results_leave_the_throughput_figures_as_they_were(tmp_path: Path) -> None:
    before = reference_from_results(own_and_published_results([])[0])
    after = reference_from_results(table_with(tmp_path, op_run("ops-h200", FIGURES)))
    assert "ops" not in set(after["model"]) and len(after) == len(before)


def test_a_cpu_run_is_read_and_answers_for_no_gpu(tmp_path: Path) -> None:
    options = RunOptions(workload="ops", size="tiny", device="cpu", precision="fp32", steps=2,
                         warmup=1).checked()  # fmt: skip
    ops.run_to_file(options, tmp_path)
    table, problems = own_and_published_results([str(tmp_path)])
    assert problems == [] and (table["workload"] == "ops").sum() == 1
    assert table.loc[table["workload"] == "ops", "gpu_name"].isna().all()
    assert measured_gemm_tflops(table, "H200-SXM", "fp32") is None


def test_dense_peaks_from_the_spec_table() -> None:
    assert dense_peak_tflops("H200-SXM", "bf16") == H200_BF16_PEAK
    assert dense_peak_tflops("H100-SXM", "fp8") == pytest.approx(1978.9)
    assert dense_peak_tflops("V100-SXM2-16GB", "bf16") is None  # no bf16 tensor cores
    assert dense_peak_tflops("not-a-gpu", "fp32") is None
