"""Throughput from the best source: figures, fitted scaling, spec estimates."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from planner.throughput.estimate import fit_throughput_model, predict_throughput
from planner.throughput.scaling import ring_throughput
from planner.throughput.spec_model import spec_features

GPUS = ["A100-SXM-40GB", "A100-PCIe-80GB", "H100-SXM", "H100-PCIe", "RTX-A6000", "RTX-3090"]


def reference() -> pd.DataFrame:
    """Six GPUs, two models, counts 1, 2, 4 on a ring law; A100-SXM-40GB in two generations."""
    rows = []
    for model, scale in (("resnet50", 4.0), ("bert_large_squad", 0.5)):
        feats = spec_features(pd.Series(GPUS), pd.Series(["fp16_amp"] * len(GPUS)))
        one = scale * np.exp(0.7 * feats["log_peak"] + 0.3 * feats["log_bw"])
        for gpu, x1 in zip(GPUS, one, strict=True):
            for n in (1, 2, 4):
                x = float(ring_throughput(n, x1, 0.05))
                rows.append((gpu, n, model, "fp16_amp", x, "v0", "measured"))
    rows.append(("A100-SXM-40GB", 1, "resnet50", "fp16_amp", 3000.0, "v1", "measured"))
    rows.append(("A100-SXM-40GB", 1, "resnet50", "fp16_amp", 3100.0, "v1", "measured"))
    return pd.DataFrame(
        rows,
        columns=[
            "gpu_name",
            "total_gpus",
            "model",
            "precision",
            "throughput",
            "generation",
            "source",
        ],
    )


@pytest.fixture(scope="module")
def fitted():  # type: ignore[no-untyped-def]
    return fit_throughput_model(reference())


def row(gpu: str, count: int, model: str = "resnet50", generation: str = "") -> tuple:
    """One query at fp16_amp (every query here asks fp16_amp); generation '' is the newest."""
    return (gpu, count, model, "fp16_amp", generation)


def ask(fitted, rows: list[tuple]) -> pd.DataFrame:  # type: ignore[no-untyped-def]
    columns = ["gpu_name", "total_gpus", "model", "precision", "generation"]
    queries = pd.DataFrame(rows, columns=columns)
    return pd.concat([queries, predict_throughput(fitted, queries)], axis=1)


def test_known_counts_reproduce_the_figures(fitted) -> None:  # type: ignore[no-untyped-def]
    ref = reference()
    out = ask(fitted, [row("H100-PCIe", 2, "bert_large_squad")])
    truth = ref.loc[
        (ref["gpu_name"] == "H100-PCIe")
        & (ref["total_gpus"] == 2)
        & (ref["model"] == "bert_large_squad"),
        "throughput",
    ].iloc[0]
    assert out["throughput"].iloc[0] == pytest.approx(truth)
    assert out["throughput_source"].iloc[0] == "measured"


def test_newest_generation_wins_at_a_count_it_has(fitted) -> None:  # type: ignore[no-untyped-def]
    out = ask(
        fitted,
        [
            row("A100-SXM-40GB", 1),
            row("A100-SXM-40GB", 1, generation="v0"),
            row("A100-SXM-40GB", 8),
        ],
    )
    assert out["throughput"].iloc[0] == pytest.approx(3050.0)  # median of the v1 runs
    # The band is where a new run lands (run_spread), not the two runs' min..max.
    down, up = fitted.run_band
    assert out["throughput_low"].iloc[0] == pytest.approx(3050.0 * np.exp(down))
    assert out["throughput_high"].iloc[0] == pytest.approx(3050.0 * np.exp(up))
    assert "median of 2 runs (v1)" in out["throughput_detail"].iloc[0]
    assert out["throughput"].iloc[1] != pytest.approx(3050.0)  # v0 asked for, v0 given
    # 8 GPUs: the v0 run has the nearest count (4), so it anchors the law.
    assert "through the 4-GPU measured figure (v0)" in out["throughput_detail"].iloc[2]


def test_other_counts_follow_the_fitted_law(fitted) -> None:  # type: ignore[no-untyped-def]
    ref = reference()
    x1 = ref.loc[
        (ref["gpu_name"] == "H100-SXM") & (ref["total_gpus"] == 1) & (ref["model"] == "resnet50"),
        "throughput",
    ].iloc[0]
    out = ask(fitted, [row("H100-SXM", 8)])
    assert out["throughput_source"].iloc[0] == "scaled"
    assert out["throughput"].iloc[0] == pytest.approx(ring_throughput(8, x1, 0.05), rel=1e-3)
    assert "law fitted to counts 1,2,4" in out["throughput_detail"].iloc[0]
    assert out["throughput_low"].iloc[0] <= out["throughput"].iloc[0]
    assert out["throughput"].iloc[0] <= out["throughput_high"].iloc[0]


def test_across_nodes_the_network_costs_throughput(fitted) -> None:  # type: ignore[no-untyped-def]
    out = ask(
        fitted,
        [row("H100-SXM", 8, "bert_large_squad"), row("H100-SXM", 64, "bert_large_squad")],
    )
    per_gpu = out["throughput"] / out["total_gpus"]
    assert per_gpu.iloc[1] < per_gpu.iloc[0]
    assert (
        "beyond 8 GPUs: step-time model" in out["throughput_detail"].iloc[1]
        and "all-reduce over 400 Gb/s per node" in out["throughput_detail"].iloc[1]
    )


def test_absent_gpu_is_estimated_with_a_band(fitted) -> None:  # type: ignore[no-untyped-def]
    out = ask(
        fitted,
        [row("L40S", 1, generation="v0"), row("L40S", 4, generation="v0"), row("L40S", 1)],
    )
    assert (out["throughput_source"] == "estimated").all()
    # Without a generation the estimate is for the newest (v1 ran the A100 ~50% faster).
    assert out["throughput"].iloc[2] > 1.3 * out["throughput"].iloc[0]
    assert "generation v1" in out["throughput_detail"].iloc[2]
    feats = spec_features(pd.Series(["L40S"]), pd.Series(["fp16_amp"]))
    law = 4.0 * np.exp(0.7 * feats["log_peak"] + 0.3 * feats["log_bw"]).iloc[0]
    assert out["throughput"].iloc[0] == pytest.approx(law, rel=0.15)
    assert (out["throughput_low"] < out["throughput"]).all()
    assert (out["throughput"] < out["throughput_high"]).all()
    assert 3.5 < out["throughput"].iloc[1] / out["throughput"].iloc[0] <= 4
    assert "spec regression" in out["throughput_detail"].iloc[0]


def test_one_measured_count_falls_back_to_the_communication_model() -> None:
    ref = reference()
    ref = pd.concat(
        [
            ref,
            pd.DataFrame(
                [("L4", 4, "resnet50", "fp16_amp", 2000.0, "v0", "measured")], columns=ref.columns
            ),
        ]
    )
    out = ask(fit_throughput_model(ref), [row("L4", 8)])
    assert out["throughput_source"].iloc[0] == "scaled"
    assert "one count measured: ring all-reduce model" in out["throughput_detail"].iloc[0]
    assert 3900 < out["throughput"].iloc[0] <= 4000


def test_no_estimate_without_a_spec_row(fitted) -> None:  # type: ignore[no-untyped-def]
    out = ask(fitted, [row("Mystery-GPU", 1)])
    assert out["throughput_source"].iloc[0] == "none"
    assert np.isnan(out["throughput"].iloc[0])
    assert "no spec row" in out["throughput_detail"].iloc[0]


def test_without_any_measured_scaling_the_analytic_comm_model_applies() -> None:
    ref = pd.DataFrame(
        [("H100-SXM", 1, "resnet50", "fp16_amp", 2800.0)],
        columns=["gpu_name", "total_gpus", "model", "precision", "throughput"],
    )
    out = ask(fit_throughput_model(ref), [row("H100-SXM", 4)])
    # Ring all-reduce of 25.6M fp32 gradients over NVLink (900/2 GB/s x 0.8 achievable),
    # 2(N-1) latency steps of 5 us, against 1280 images / 2800 images/s of compute.
    compute = 1280 / 2800
    comm = 2 * 3 * 5e-6 + 1.5 * 25.6e6 * 4 / (450e9 * 0.8)
    assert out["throughput"].iloc[0] == pytest.approx(4 * 2800 * compute / (compute + comm))
    assert out["throughput_source"].iloc[0] == "scaled"
    assert "analytic ring all-reduce model" in out["throughput_detail"].iloc[0]
