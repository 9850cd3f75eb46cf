"""The step model's constants refit from the measurements they cite."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from planner.render.explain import explain_step
from planner.throughput import step_model
from planner.throughput.step_calibration import (
    CNN_FILE,
    allreduce_sweeps,
    allreduce_times,
    batch_sweeps,
    fit_allreduce_latency,
    fit_kernel_floor,
    fit_straggler_sigma,
    load_calibration,
    straggler_pairs,
)


def test_a_batch_pair_gives_the_step_time_line() -> None:
    # 8 GPUs: per-GPU step 10 ms + 1 ms per sample -> 42 ms at 32, 266 ms at 256.
    rows = pd.DataFrame(
        {
            "source": "s",
            "model": "ResNet-50",
            "gpu_model": "A100-40GB",
            "num_gpus": 8,
            "precision": "fp32",
            "batch_size": [32.0, 256.0],
            "train_samples_per_sec": [8 * 32 / 0.042, 8 * 256 / 0.266],
        }
    )
    sweep = batch_sweeps(rows).iloc[0]
    assert sweep["floor_s"] == pytest.approx(0.010)
    assert sweep["sample_s"] == pytest.approx(0.001)
    assert sweep["b_half"] == pytest.approx(10.0)
    assert sweep["small_ratio"] == pytest.approx((32 / 0.042) / (256 / 0.266))
    assert fit_kernel_floor(batch_sweeps(rows), {"ResNet-50": 500.0}) == pytest.approx(20e-6)
    with pytest.raises(ValueError, match="kernel count"):
        fit_kernel_floor(batch_sweeps(rows), {"VGG": 100.0})


def test_repeated_runs_at_one_batch_count_once_at_their_mean_rate() -> None:
    # One GPU, batch 16 run twice (600 and 1,000 samples/s: host-bound steps are noisy).
    rows = pd.DataFrame(
        {
            "source": "own", "model": "ResNet-50", "gpu_model": "H200-SXM", "num_gpus": 1,
            "precision": "fp16", "batch_size": [16.0, 16.0, 256.0],
            "train_samples_per_sec": [600.0, 1000.0, 6000.0],
        }
    )  # fmt: skip
    sweep = batch_sweeps(rows).iloc[0]
    assert sweep["batches"] == "16/256"
    assert sweep["small_ratio"] == pytest.approx(800.0 / 6000.0)
    assert sweep["floor_s"] == pytest.approx((16 / 800 - 256 / 6000 * 16 / 256) / (1 - 16 / 256))


def test_one_batch_is_no_sweep_and_memory_formats_are_not_mixed() -> None:
    rows = pd.DataFrame(
        {
            "source": "s", "model": "m", "gpu_model": "g", "num_gpus": 1, "precision": "amp",
            "memory_format": ["NCHW", "NHWC"], "batch_size": [384.0, 512.0],
            "train_samples_per_sec": [1459.0, 1751.0],
        }
    )  # fmt: skip
    assert batch_sweeps(rows).empty


def _sweep(alpha: float, beta: float, ranks: float, nodes: int) -> pd.DataFrame:
    sizes = 2.0 ** np.arange(15, 31)
    c = 2 * (ranks - 1) / ranks
    busbw = c * sizes / (alpha + c * sizes / beta) / 1e9
    return pd.DataFrame(
        {
            "source": "s", "gpu_model": "g", "num_nodes": nodes, "num_ranks": ranks,
            "algo": "ring", "collective": "all_reduce", "message_bytes": sizes,
            "busbw_GBps": busbw,
        }
    )  # fmt: skip


def test_alpha_beta_come_back_from_a_synthetic_sweep() -> None:
    rows = pd.concat([_sweep(40e-6, 400e9, 8, 1), _sweep(440e-6, 350e9, 32, 4)])
    sweeps = allreduce_sweeps(allreduce_times(rows))
    assert sweeps["alpha_s"].tolist() == pytest.approx([40e-6, 440e-6], rel=0.01)
    assert sweeps["beta_gbs"].tolist() == pytest.approx([400, 350], rel=0.01)
    call, level = fit_allreduce_latency(sweeps)
    # 4 nodes: 2 log2(4) = 4 tree levels carry the 400 µs beyond the node's call.
    assert call == pytest.approx(40e-6, rel=0.01)
    assert level == pytest.approx(100e-6, rel=0.02)


def test_the_straggler_spread_from_one_and_eight_gpus() -> None:
    rows = pd.DataFrame(
        {
            "source": "s", "model": ["a", "a", "b", "b"], "precision": "fp32",
            "batch_size": 256.0, "num_gpus": [1, 8, 1, 8],
            "train_samples_per_sec": [100.0, 8 * 100 / 1.1, 100.0, 8 * 100 / 1.1],
        }
    )  # fmt: skip
    pairs = straggler_pairs(rows)
    z8 = float(step_model.expected_max_normal(8))
    assert pairs["sigma"].tolist() == pytest.approx([0.1 / z8] * 2)
    assert fit_straggler_sigma(pairs) == pytest.approx(0.1 / z8)


def test_the_shipped_constants_are_the_fits_of_the_bundled_measurements() -> None:
    sweeps, allreduce = load_calibration()
    assert fit_kernel_floor(sweeps) == pytest.approx(step_model.KERNEL_FLOOR_S, rel=0.05)
    call, level = fit_allreduce_latency(allreduce)
    assert call == pytest.approx(step_model.ALLREDUCE_CALL_S, rel=0.05)
    assert level == pytest.approx(step_model.ALLREDUCE_LEVEL_S, rel=0.05)
    rows = pd.read_csv(CNN_FILE)
    sigma = fit_straggler_sigma(straggler_pairs(rows))
    assert sigma == pytest.approx(step_model.STRAGGLER_SIGMA, rel=0.05)


def test_the_step_words_name_the_penalty_the_exposed_share_and_the_sources() -> None:
    row = {
        "per_gpu_batch": 16.0, "batch_limit": 256.0, "batch_rate": 0.58, "comm_s": 0.0021,
        "comm_total_s": 0.0054, "total_gpus": 512.0,
    }  # fmt: skip
    words = explain_step(row)
    assert "batch 16/GPU: 58% of the batch-256 rate" in words
    assert step_model.FLOOR_SOURCE in words
    assert "all-reduce 2.1 ms exposed of 5.4 ms" in words
    assert "512 ranks" in words
    # At the batch limit on one GPU there is neither penalty nor all-reduce to explain.
    full = {**row, "per_gpu_batch": 256.0, "batch_rate": 1.0, "total_gpus": 1.0}
    assert explain_step(full) == ""
    assert explain_step({"per_gpu_batch": float("nan")}) == ""
