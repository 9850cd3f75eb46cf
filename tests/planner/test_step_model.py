"""Step-time model beyond a node: per-GPU batch, fixed per-step floor, hierarchical comm."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from planner.throughput import own_and_published_results, throughput_model_for_model
from planner.throughput.estimate import predict_throughput
from planner.throughput.step_model import (
    ALPHA_INTRA_S,
    ALPHA_NET_S,
    BUCKET_BYTES,
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
    expected = 2 * 7 / 8 * size / 100e9 + buckets * 2 * 7 * ALPHA_INTRA_S
    assert float(t) == pytest.approx(expected)
    assert float(hierarchical_allreduce_seconds(1, 8, size, 100.0, 10.0)) == 0.0


def test_across_nodes_each_gpu_sends_its_shard_over_its_rail() -> None:
    size = 100e6
    two_nodes = float(hierarchical_allreduce_seconds(16, 8, size, 100.0, 10.0))
    one_node = float(hierarchical_allreduce_seconds(8, 8, size, 100.0, 10.0))
    # 2 nodes: the inter-node ring moves 2(2-1)/2 x size/8 bytes per GPU at 10 GB/s, plus
    # one tree step each way per bucket.
    buckets = np.ceil(size / BUCKET_BYTES)
    expected = size / 8 / 10e9 + buckets * 2 * np.log2(2) * ALPHA_NET_S
    assert two_nodes - one_node == pytest.approx(expected)


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
    assert uncapped[3] / uncapped[0] > 0.95  # full batches: compute hides the all-reduce


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
