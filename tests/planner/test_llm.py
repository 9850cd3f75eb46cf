"""LLM memory (hand calculations) and tokens/s from measured, transferred or assumed MFU."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmarks.results import BenchmarkResult, results_frame, write_result
from planner.llm import (
    SIZE_LOG_ERROR_PER_DECADE,
    TRANSFER_LOG_ERROR,
    LLMSettings,
    activation_bytes,
    activation_bytes_per_layer,
    gpt_mfu_figures,
    llm_throughput,
    memory_check,
    min_gpus,
    params_from_size,
)
from planner.throughput import own_and_published_results
from planner.workloads import get_workload

LLM_70B = get_workload("llm-70b-1.4t")  # 70e9 params, 80 layers, d_model 8192, seq 2048
LLM_7B = get_workload("llm-7b-140b")  # 6.7e9 params, 32 layers, d_model 4096
LLM_1B = get_workload("llm-1.3b-26b")  # 1.3e9 params, 24 layers, d_model 2048


def test_activation_formula_is_korthikanti_eq_1() -> None:
    # s b h (34 + 5 a s / h) with s = 2048, b = 1, h = 8192, a = 64 heads of 128.
    assert activation_bytes_per_layer(2048, 1, 8192, 64) == 2048 * 8192 * (34 + 80)
    assert activation_bytes_per_layer(2048, 1, 8192, 64, "fp32") == 2 * 2048 * 8192 * 114
    per_layer = 2048 * 8192 * 114
    settings = LLMSettings()
    assert activation_bytes(LLM_70B, "bf16", settings, recompute=False) == 80 * per_layer
    # Full recompute keeps 2 s b h per layer plus one layer being recomputed.
    assert activation_bytes(LLM_70B, "bf16", settings, recompute=True) == (
        80 * 2 * 2048 * 8192 + per_layer
    )


def test_70b_needs_sharding_and_the_hand_counted_gpus() -> None:
    states = 16 * 70e9  # 1,120 GB
    usable = 80e9 * 0.9
    recompute = 80 * 2 * 2048 * 8192 + 2048 * 8192 * 114  # 4.6 GB
    need = min_gpus(LLM_70B, "bf16", 80)
    assert need["unsharded"] == math.inf  # not on one 80 GB GPU without sharding
    assert need["zero3"] == math.ceil(states / (usable - recompute)) == 17
    assert need["recompute"]  # 153 GB of activations without it: never fits
    assert need["states_gb"] == pytest.approx(1120.0)
    check = memory_check(
        LLM_70B, "bf16", np.array([80.0, 80.0, 80.0, 180.0]), np.array([1.0, 8.0, 17.0, 8.0])
    )
    assert check["fits"].tolist() == [False, False, True, True]
    # Eight 180 GB GPUs (B200) hold it with ZeRO-3: 140 + 4.6 GB of 162 usable. Eight 80 GB
    # GPUs cannot: 16 bytes/parameter alone is 140 GB per GPU.
    b200 = check.iloc[3]
    assert b200["sharding"] == "zero3" and b200["recompute"]
    assert b200["memory_per_gpu_gb"] == pytest.approx(states / 8 / 1e9 + recompute / 1e9)
    assert min_gpus(LLM_70B, "bf16", 180)["zero3"] == 8


def test_7b_and_1b_minimum_counts_by_hand() -> None:
    act_7b = 32 * 2048 * 4096 * (34 + 5 * 32 * 2048 / 4096)  # 30.6 GB
    rc_7b = 32 * 2 * 2048 * 4096 + 2048 * 4096 * 114  # 1.49 GB
    assert min_gpus(LLM_7B, "bf16", 80, LLMSettings(recompute="none"))["zero3"] == math.ceil(
        16 * 6.7e9 / (72e9 - act_7b)
    ) == 3  # fmt: skip
    assert min_gpus(LLM_7B, "bf16", 80)["zero3"] == math.ceil(16 * 6.7e9 / (72e9 - rc_7b)) == 2
    one = min_gpus(LLM_1B, "bf16", 80)
    assert one["unsharded"] == 1 and not one["recompute"]  # 20.8 + 11.5 GB on one GPU
    # 24 GB (21.6 usable): 20.8 GB of states + 0.68 GB with full recompute just fits.
    assert min_gpus(LLM_1B, "bf16", 24)["unsharded"] == 1
    assert min_gpus(LLM_1B, "bf16", 24)["recompute"]
    assert min_gpus(LLM_1B, "bf16", 16)["unsharded"] == math.inf  # 14.4 GB usable
    assert min_gpus(LLM_1B, "bf16", 16)["zero3"] == math.ceil(20.8e9 / (14.4e9 - 0.6795e9))
    check = memory_check(LLM_7B, "bf16", np.array([80.0] * 3), np.array([2.0, 3.0, 4.0]))
    assert check["recompute"].tolist() == [True, False, False]
    assert check["sharding"].tolist() == ["zero3"] * 3


def test_activations_alone_can_overflow_every_count() -> None:
    long = get_workload("llm-7b-140b")
    settings = LLMSettings(recompute="none", micro_batch=8)
    need = min_gpus(long, "bf16", 80, settings)
    assert need["zero3"] == math.inf and need["activations_gb"] > 72


def gpt(
    gpu: str | None,
    size: str,
    mfu: float,
    world: int = 1,
    device: str = "cuda",
    run: int = 0,
    precision: str = "bf16",
    device_name: str = "",
) -> BenchmarkResult:
    return BenchmarkResult(
        id=f"gpt-{gpu}-{size}-{world}-{run}-{device}",
        workload="gpt",
        model_size=size,
        precision=precision,  # type: ignore[arg-type]
        device=device,  # type: ignore[arg-type]
        device_name=device_name,
        gpu_name=gpu,
        world_size=world,
        throughput=1000.0,
        throughput_unit="tokens/s",
        tokens_per_s=1000.0,
        mfu=mfu,
        started_at="2026-11-20",
    )


def options(*rows: tuple[str, float, float]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["gpu_name", "total_gpus", "gpus_per_node"])


def test_mfu_figures_leave_out_cpu_and_tiny_runs() -> None:
    results = results_frame(
        [
            gpt("A100-SXM-80GB", "1.3b", 0.48, run=1),
            gpt("A100-SXM-80GB", "1.3b", 0.52, run=2),
            gpt(None, "tiny", 0.9, device="cpu"),
            gpt("H100-SXM", "tiny", 0.05),
            gpt("A100-SXM-80GB", "1.3b", 0.30, precision="fp32"),
        ]
    )
    figures, notes = gpt_mfu_figures(results, "bf16")
    assert len(figures) == 1
    row = figures.iloc[0]
    assert (row["gpu_name"], row["params"], row["mfu"], row["mfu_low"], row["mfu_high"]) == (
        "A100-SXM-80GB", 1.3e9, 0.50, 0.48, 0.52,
    )  # fmt: skip
    assert row["source"] == "measured" and row["runs"] == 2
    assert any("from CPUs" in n for n in notes)
    assert any("size tiny not used" in n for n in notes)
    assert params_from_size("124m") == 124e6 and params_from_size("7b") == 6.7e9
    assert params_from_size("tiny") is None


def test_a_run_without_peak_gets_mfu_from_achieved_tflops_over_the_spec_peak() -> None:
    run = gpt("H100-SXM", "1.3b", 0.5).model_copy(update={"mfu": None, "achieved_tflops": 445.2})
    figures, _ = gpt_mfu_figures(results_frame([run]), "bf16")
    assert figures.loc[0, "mfu"] == pytest.approx(445.2 / 989.4)  # H100 SXM dense bf16 peak


def test_mfu_measured_on_this_gpu_then_transferred_to_size_count_and_other_gpus() -> None:
    results = results_frame(
        [gpt("A100-SXM-80GB", "1.3b", 0.48, run=1), gpt("A100-SXM-80GB", "1.3b", 0.52, run=2)]
    )
    figures, _ = gpt_mfu_figures(results, "bf16")
    opts = options(("A100-SXM-80GB", 1, 8), ("A100-SXM-80GB", 8, 8), ("H100-SXM", 1, 8))
    out = llm_throughput(opts, LLM_1B, "bf16", figures)
    peak = 312e12
    assert out["throughput_source"].tolist() == ["measured", "scaled", "estimated"]
    assert out["throughput"].iloc[0] == pytest.approx(0.50 * peak / LLM_1B.flops_per_sample)
    assert out["throughput_low"].iloc[0] == pytest.approx(out["throughput"].iloc[0] * 0.48 / 0.5)
    assert "measured by the GPT benchmark on this GPU" in out["throughput_detail"].iloc[0]
    # Eight GPUs in one node: the ring all-reduce costs a little.
    assert 0.45 < out["mfu"].iloc[1] < 0.50
    assert "ring all-reduce efficiency 1 -> 8 GPUs" in out["throughput_detail"].iloc[1]
    # Another GPU: the measured MFU, transferred with a wider band.
    h100 = out.iloc[2]
    assert h100["mfu"] == pytest.approx(0.50)
    assert h100["throughput"] == pytest.approx(0.50 * 989.4e12 / LLM_1B.flops_per_sample)
    down = math.log(h100["throughput"] / h100["throughput_low"])
    assert down == pytest.approx(math.hypot(math.log(0.5 / 0.48), TRANSFER_LOG_ERROR))
    assert "transferred from GPT runs on A100-SXM-80GB" in h100["throughput_detail"]


def test_size_transfer_widens_the_band_by_decades() -> None:
    results = results_frame([gpt("H100-SXM", "124m", 0.40)])
    figures, _ = gpt_mfu_figures(results, "bf16")
    near = llm_throughput(options(("H100-SXM", 1, 8)), LLM_1B, "bf16", figures).iloc[0]
    far = llm_throughput(options(("H100-SXM", 1, 8)), LLM_70B, "bf16", figures).iloc[0]
    assert near["throughput_source"] == far["throughput_source"] == "scaled"
    width = lambda r: math.log(r["throughput_high"] / r["throughput"])  # noqa: E731
    assert width(near) == pytest.approx(SIZE_LOG_ERROR_PER_DECADE * math.log10(1.3e9 / 124e6))
    assert width(far) == pytest.approx(SIZE_LOG_ERROR_PER_DECADE * math.log10(70e9 / 124e6))
    assert "size 124m -> target" in far["throughput_detail"]


def test_no_gpt_result_assumes_40_percent_and_recompute_costs_a_quarter() -> None:
    figures, _ = gpt_mfu_figures(results_frame([]), "bf16")
    opts = options(("H100-SXM", 1, 8), ("H100-SXM", 1, 8), ("V100-SXM2-16GB", 1, 8))
    memory = pd.DataFrame({"sharding": ["none"] * 3, "recompute": [False, True, False]})
    out = llm_throughput(opts, LLM_1B, "bf16", figures, memory)
    assert out["mfu"].iloc[0] == pytest.approx(0.40)
    assert out["mfu"].iloc[1] == pytest.approx(0.30)
    assert (out["throughput_low"].iloc[0], out["throughput_high"].iloc[0]) == pytest.approx(
        (out["throughput"].iloc[0] * 0.25 / 0.4, out["throughput"].iloc[0] * 0.55 / 0.4)
    )
    assert "assumed MFU 40%" in out["throughput_detail"].iloc[0]
    # A V100 has no bf16 tensor cores: no figure, and the reason.
    assert np.isnan(out["throughput"].iloc[2])
    assert "no bf16 peak" in out["throughput_detail"].iloc[2]


def test_own_gpt_results_on_disk_map_device_names_and_skip_cpus(results_dir: Path) -> None:
    write_result(gpt(None, "350m", 0.42, device_name="NVIDIA A100-SXM4-80GB"), results_dir)
    write_result(gpt(None, "tiny", 0.95, device="cpu", device_name="Intel Xeon"), results_dir)
    table, problems = own_and_published_results([str(results_dir)])
    assert problems == []
    figures, notes = gpt_mfu_figures(table, "fp16")  # bf16 results serve fp16 too
    assert figures["gpu_name"].tolist() == ["A100-SXM-80GB"]
    assert figures["mfu"].tolist() == [0.42]
    assert any("1 GPT results from CPUs" in n for n in notes)
