"""The operator model reads the operator benchmark: a GPU that ran `bench run --workload ops`
is timed from its measured GEMMs, attention and bandwidth instead of the kernel defaults."""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path

import pandas as pd
import pytest

from benchmarks.results import write_result
from planner.llm.throughput import predict_layout, prediction_record
from planner.render.llm import llm_detail
from planner.throughput import own_and_published_results
from planner.workloads.catalog import get_workload
from tests.planner.llm.test_llm_op_efficiency import attention, copy, gemm, op_run

P7 = get_workload("llm-6.7b-134b")
SIZES = (2048, 4096, 11008, 16384, 32768)


def h200_run(gemm_tflops: float, attention_tflops: float = 400.0) -> pd.DataFrame:
    """The results table of an H200 operator run (written and read back as a user's
    results folder is) with every GEMM of SIZES^3 at one rate."""
    gemms = [gemm(m, n, k, gemm_tflops) for m, n, k in itertools.product(SIZES, repeat=3)]
    figures = [*gemms, attention(128, 2048, attention_tflops), copy(3800.0)]
    with tempfile.TemporaryDirectory() as folder:
        write_result(op_run(f"ops-{gemm_tflops}", figures), Path(folder))
        table, problems = own_and_published_results([folder])
    assert problems == []
    return table


def test_a_measured_gpu_is_timed_from_its_own_kernels() -> None:
    default = predict_layout(P7, "bf16", "H200-SXM", 8, 8, 3200.0)
    slow = predict_layout(P7, "bf16", "H200-SXM", 8, 8, 3200.0, ops=h200_run(300.0))
    fast = predict_layout(P7, "bf16", "H200-SXM", 8, 8, 3200.0, ops=h200_run(600.0))
    assert default.rate_source == "kernels_hopper"
    assert slow.rate_source == fast.rate_source == "kernels_measured"
    assert slow.kernels_run == "ops-300.0"
    # Same layout and batch: twice the measured GEMM rate halves the GEMMs' seconds.
    assert fast.layout.label == slow.layout.label
    slow_gemm = slow.layout.step_s * slow.layout.gemm_share
    fast_gemm = fast.layout.step_s * fast.layout.gemm_share
    assert fast_gemm == pytest.approx(slow_gemm / 2, rel=1e-6)
    # Attention runs at its measured rate too: the same in both.
    slow_attention = slow.layout.step_s * slow.layout.attention_share
    assert slow_attention == pytest.approx(fast.layout.step_s * fast.layout.attention_share)
    # Measured kernels narrow the band to the framework's uncertainty.
    width = lambda p: p.tokens_per_s_high / p.tokens_per_s_low  # noqa: E731
    assert width(slow) < width(default)
    words = llm_detail(prediction_record(slow) | {"layout": slow.layout.label}, "bf16")
    assert "measured kernels" in words and "run ops-300.0" in words


def test_another_gpus_run_changes_nothing() -> None:
    plain = predict_layout(P7, "bf16", "H100-SXM", 8, 8, 3200.0)
    other = predict_layout(P7, "bf16", "H100-SXM", 8, 8, 3200.0, ops=h200_run(300.0))
    assert other.rate_source == "kernels_hopper"
    assert other.tokens_per_s == pytest.approx(plain.tokens_per_s)


def test_a_plan_reads_the_operator_runs_in_its_results() -> None:
    from planner.choose.options import machine_option
    from planner.llm.for_plan import with_llm_throughput
    from planner.request import PlanRequest

    request = PlanRequest(P7, "bf16")
    option = machine_option("H200-SXM", 8).assign(network_gbps=3200.0)
    rows, _, _ = with_llm_throughput(option, request, h200_run(450.0))
    assert rows["mfu_source"].iloc[0] == "kernels_measured"
