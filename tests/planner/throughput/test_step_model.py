"""Step-time model beyond a node: per-GPU batch, fixed per-step floor, hierarchical comm."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from planner.throughput import own_and_published_results, throughput_model_for_model
from planner.throughput.estimate import predict, predict_throughput
from planner.throughput.step_model import (
    ALLREDUCE_CALL_S,
    ALLREDUCE_LEVEL_S,
    BUCKET_BYTES,
    STEP_BEYOND_LOG_ERROR,
    STRAGGLER_SIGMA,
    expected_max_normal,
    exposed_seconds,
    hierarchical_allreduce_seconds,
    per_gpu_batch,
)


@pytest.fixture(scope="module")
def resnet():  # type: ignore[no-untyped-def]
    results, _ = own_and_published_results([])
    return throughput_model_for_model(results, "resnet50")


def per_gpu(model, gpu: str, counts: list[float], **columns: object) -> np.ndarray:  # type: ignore[no-untyped-def]
    queries = pd.DataFrame(
        {"gpu_name": gpu, "total_gpus": counts, "model": "resnet50", "precision": "fp16", **columns}
    )
    return predict_throughput(model, queries)["throughput"].to_numpy() / np.array(counts)


def test_per_gpu_batch_is_the_memory_limit_or_the_cap_share() -> None:
    assert per_gpu_batch([1, 8, 64, 512], 256, 8192).tolist() == [256, 256, 128, 16]
    assert per_gpu_batch([512], 256, np.inf).tolist() == [256]


def test_ring_inside_a_node_is_the_textbook_formula() -> None:
    size = 100e6
    t = hierarchical_allreduce_seconds(8, 8, size, 100.0, 10.0)
    buckets = np.ceil(size / BUCKET_BYTES)
    expected = 2 * 7 / 8 * size / 100e9 + buckets * ALLREDUCE_CALL_S
    assert float(t) == pytest.approx(expected)
    assert float(hierarchical_allreduce_seconds(1, 8, size, 100.0, 10.0)) == 0.0


def test_across_nodes_each_gpu_sends_its_shard_over_its_rail() -> None:
    size = 100e6
    two_nodes = float(hierarchical_allreduce_seconds(16, 8, size, 100.0, 1.0))
    # 2 nodes: the inter-node ring moves 2(2-1)/2 x size/8 bytes per GPU at 1 GB/s, the
    # slower level (inside: 2 x 7/8 x size at 100 GB/s), plus one tree step each way per
    # bucket on top of the call's latency.
    buckets = np.ceil(size / BUCKET_BYTES)
    latency = buckets * (ALLREDUCE_CALL_S + 2 * np.log2(2) * ALLREDUCE_LEVEL_S)
    assert two_nodes == pytest.approx(size / 8 / 1e9 + latency)
    # A fast network: the NVLink level sets the time.
    fast = float(hierarchical_allreduce_seconds(16, 8, size, 100.0, 100.0))
    assert fast == pytest.approx(2 * 7 / 8 * size / 100e9 + latency)


def test_ddp_hides_communication_behind_backward_but_not_the_last_bucket() -> None:
    assert float(exposed_seconds(0.010, 0.050, 100e6)) == pytest.approx(0.010 / 4)
    assert float(exposed_seconds(0.080, 0.050, 100e6)) == pytest.approx(0.030)


def test_per_gpu_efficiency_falls_as_the_per_gpu_batch_shrinks(resnet) -> None:  # type: ignore[no-untyped-def]
    counts = [8.0, 64.0, 512.0, 4096.0]
    capped = per_gpu(resnet, "H100-SXM", counts, global_batch=8192, network_gbps=3200)
    assert np.all(np.diff(capped) < 0)
    assert capped[2] / capped[0] < 0.8  # 16 images per GPU at 512 GPUs
    assert capped[3] / capped[0] < 0.3  # 2 images per GPU at 4,096
    uncapped = per_gpu(resnet, "H100-SXM", counts, network_gbps=3200)
    # Full batches: compute hides the all-reduce; what is lost is the wait for the
    # slowest of 4,096 GPUs rather than of 8.
    wait = (1 + STRAGGLER_SIGMA * expected_max_normal(4096.0)) / (
        1 + STRAGGLER_SIGMA * expected_max_normal(8.0)
    )
    assert uncapped[3] / uncapped[0] == pytest.approx(1 / wait, rel=0.02)


def test_a_slow_network_costs_more_than_a_fast_one_across_nodes(resnet) -> None:  # type: ignore[no-untyped-def]
    slow = per_gpu(resnet, "V100-SXM2-16GB", [512.0], global_batch=8192, network_gbps=25)
    fast = per_gpu(resnet, "V100-SXM2-16GB", [512.0], global_batch=8192, network_gbps=3200)
    assert slow[0] < 0.8 * fast[0]


def test_one_gpu_vms_scale_the_one_gpu_figure_not_a_four_gpu_nvlink_box(resnet) -> None:  # type: ignore[no-untyped-def]
    queries = pd.DataFrame(
        {
            "gpu_name": "H100-SXM",
            "total_gpus": [1.0, 4.0, 4.0],
            "model": "resnet50",
            "precision": "fp16",
            "gpus_per_node": [1.0, 1.0, 8.0],
            "network_gbps": [100.0, 100.0, 3200.0],
        }
    )
    out = predict_throughput(resnet, queries)
    one, vms, box = out["throughput"].tolist()
    assert "1-GPU" in out["throughput_detail"].iloc[1]
    assert "4-GPU" not in out["throughput_detail"].iloc[1]
    assert out["throughput_source"].iloc[2] == "published"  # the 4-GPU NVLink figure
    assert out["throughput_source"].iloc[1] == "scaled"
    assert vms <= 4 * one and vms != box


def test_the_slowest_of_more_gpus_is_slower() -> None:
    z = expected_max_normal([1.0, 2.0, 8.0, 16.0, 4096.0])
    assert z[0] == 0.0
    assert np.all(np.diff(z) > 0)
    # Blom's approximation against the exact expected maxima (0.564 at 2, 1.423 at 8).
    assert z[1] == pytest.approx(0.564, abs=0.03)
    assert z[2] == pytest.approx(1.423, abs=0.02)


def test_small_batches_lose_the_fitted_floor_share(resnet) -> None:  # type: ignore[no-untyped-def]
    queries = pd.DataFrame(
        {
            "gpu_name": "H100-SXM",
            "total_gpus": [512.0],
            "model": "resnet50",
            "precision": "fp16",
            "global_batch": [512.0 * 16],
            "network_gbps": [3200.0],
        }
    )
    out = predict(resnet, queries).iloc[0]
    assert out["per_gpu_batch"] == pytest.approx(16.0)
    assert out["batch_limit"] > 16.0
    # The floor (kernels x 27 µs + optimizer) dominates a 16-image step: well under half
    # the rate at the batch limit, and the step's parts add up to per-GPU throughput.
    assert 0.05 < out["batch_rate"] < 0.5
    assert 0.0 <= out["comm_s"] <= out["comm_total_s"]
    step = out["compute_s"] + out["overhead_s"] + out["comm_s"]
    assert out["throughput"] / 512 == pytest.approx(16.0 / step, rel=0.35)


def test_past_the_node_the_band_widens_by_the_step_models_own_error(resnet, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from planner.throughput import estimate

    queries = pd.DataFrame(
        {"gpu_name": "H100-SXM", "total_gpus": [8.0, 512.0], "model": "resnet50",
         "precision": "fp16", "global_batch": 8192.0, "network_gbps": 3200.0}
    )  # fmt: skip
    widened = predict(resnet, queries)
    monkeypatch.setattr(estimate, "STEP_BEYOND_LOG_ERROR", (0.0, 0.0))
    plain = predict(resnet, queries)
    down, up = STEP_BEYOND_LOG_ERROR
    # Inside the node nothing changes; at 512 GPUs the low side drops by exp(-0.14).
    assert widened["throughput_low"].iloc[0] == pytest.approx(plain["throughput_low"].iloc[0])
    assert widened["throughput_low"].iloc[1] == pytest.approx(
        plain["throughput_low"].iloc[1] * np.exp(-up)
    )
    assert widened["throughput_high"].iloc[1] == pytest.approx(
        plain["throughput_high"].iloc[1] * np.exp(-down)
    )
