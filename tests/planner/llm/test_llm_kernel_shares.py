"""Per-GPU kernel efficiencies from measured best matmul rates, source weights of the stack
fit, and the corpus's pure data-parallel layouts."""

import json
import math

import pandas as pd
import pytest

from planner.llm.corpus import _pinned
from planner.llm.matmul_rates import MAMF_BF16_TFLOPS, matmul_factor, matmul_share
from planner.llm.ops import HBM_FRACTION, HOPPER_GEMM, kernel_default
from planner.llm.stack_fit import SOURCE_RUNS_CAP, source_weights
from planner.llm.throughput import gpu_figures
from planner.settings import StatedLayout
from tests.conftest import ROOT


def _kernels(gpu: str):
    figures = gpu_figures(gpu)
    assert figures is not None
    return kernel_default(figures.architecture, gpu)


def test_the_h100_keeps_hoppers_figures_and_its_same_silicon_h800_too():
    assert _kernels("H100-SXM").gemm == pytest.approx(HOPPER_GEMM)
    assert _kernels("H800-SXM") == _kernels("H100-SXM")


def test_a_gpu_whose_best_gemm_reaches_less_of_its_peak_is_timed_slower():
    # MI325X and MI300X share the die and the listed peak; the MI325X's higher power
    # limit lets its best GEMM reach 60% of it against the MI300X's 51%.
    assert matmul_share("MI325X") > matmul_share("MI300X")
    assert _kernels("MI325X").gemm / _kernels("MI300X").gemm == pytest.approx(
        MAMF_BF16_TFLOPS["MI325X"] / MAMF_BF16_TFLOPS["MI300X"]
    )
    # attention moves in proportion to the GEMMs
    k = _kernels("MI300X")
    assert k.attention / k.gemm == pytest.approx(0.35 / 0.55)


def test_a_gpu_without_a_measured_matmul_takes_its_siblings_or_its_generation_figure():
    # Same silicon, no figure of its own: the measured sibling's share (the A100 80GB
    # boards take the A100 SXM 40GB's, the H800 SXM the H100 SXM's).
    assert matmul_share("A100-SXM-80GB") == matmul_share("A100-SXM-40GB")
    assert _kernels("A100-SXM-80GB") == _kernels("A100-SXM-40GB")
    assert _kernels("A100-SXM-40GB").gemm == pytest.approx(0.724, abs=1e-3)
    assert matmul_factor("H800-SXM") == 1.0
    # the H200 SXM has its own, from gpuplan's own run: 2% above the H100 SXM's best
    assert matmul_factor("H200-SXM") == pytest.approx(811.3 / 794.5)
    # No figure on its silicon either: the generation's (Hopper's for the H200 NVL).
    assert math.isnan(matmul_factor("H200-NVL"))
    assert _kernels("H200-NVL").gemm == pytest.approx(0.70)


def test_the_streaming_share_of_hbm_is_the_measured_copies_and_adds():
    # FlagPerf's A100-40GB device copy, and gpuplan's own H200 copy and add (ops run)
    bandwidth = pd.read_csv(ROOT / "reference" / "calibration" / "memory_bandwidth.csv")
    a100 = bandwidth[bandwidth["benchmark"].str.contains("device copy kernel")].iloc[0]
    shares = [a100["achieved_GBps"] / a100["spec_GBps_stated"]]
    ops = ROOT / "reference" / "own_runs" / "h200-20261204"
    run = json.loads(next(ops.glob("ops-*.json")).read_text())
    for op in ("copy", "add"):
        figure = next(f for f in run["op_figures"] if f["op"] == op)
        shares.append(figure["gb_per_s"] / 4800.0)  # the H200 SXM's datasheet 4.8 TB/s
    assert min(shares) > 0.85 and max(shares) < 0.92
    assert sum(shares) / len(shares) == pytest.approx(HBM_FRACTION, abs=0.001)


def test_a_large_source_counts_as_the_cap_and_a_small_one_is_not_inflated():
    sources = ["big"] * (2 * SOURCE_RUNS_CAP) + ["one"]
    weights = source_weights(sources)
    assert weights[0] == pytest.approx(math.sqrt(0.5))
    assert weights[-1] == 1.0
    assert sum(weights[:-1] ** 2) == pytest.approx(SOURCE_RUNS_CAP)


def _row(**values: float) -> pd.Series:
    base = {"tp": math.nan, "pp": math.nan, "cp": math.nan, "dp": math.nan, "num_gpus": 16.0}
    return pd.Series({**base, **values})


def test_a_stated_data_parallel_size_of_every_gpu_pins_pure_data_parallelism():
    assert _pinned(_row(dp=16.0)) == StatedLayout(1, 1, 1)
    assert _pinned(_row(dp=8.0)) is None  # the rest is not stated: searched
    assert _pinned(_row()) is None
    assert _pinned(_row(tp=2.0, dp=8.0)) == StatedLayout(2, 1, 1)


def test_stated_virtual_pipeline_and_expert_parallel_sizes_are_pinned_the_rest_searched():
    assert _pinned(_row(pp=8.0, vp=2.0)) == StatedLayout(1, 8, 1, vpp=2, ep=0)
    assert _pinned(_row(pp=4.0, ep=8.0)) == StatedLayout(1, 4, 1, vpp=0, ep=8)
