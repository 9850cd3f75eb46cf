"""One GPU's scaling as the Scaling page shows it: figures, laws, extrapolation, links."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from planner.settings import CommModel
from planner.throughput.estimate import fit_throughput_model
from planner.throughput.scaling import ring_throughput
from planner.throughput.scaling_report import (
    LAW_COLUMNS,
    extrapolation,
    extrapolation_counts,
    gpus_with_figures,
    interconnect_assumed,
    law_curves,
    model_choices,
    scaling_points,
    throughput_unit,
)

GPUS = ["A100-SXM-40GB", "A100-PCIe-80GB", "H100-SXM", "H100-PCIe", "RTX-A6000", "RTX-3090"]
THETA = 0.05


def reference() -> pd.DataFrame:
    """Six GPUs measured at 1, 2 and 4 GPUs on an exact ring law (θ = 0.05)."""
    rows = [
        (gpu, n, "resnet50", "fp16", float(ring_throughput(n, 1000.0 + 100 * i, THETA)), "v0")
        for i, gpu in enumerate(GPUS)
        for n in (1, 2, 4)
    ]
    rows.append(("H100-SXM", 1, "resnet50", "tf32", 900.0, "v0"))
    columns = ["gpu_name", "total_gpus", "model", "precision", "throughput", "generation"]
    return pd.DataFrame(rows, columns=columns).assign(source="published", detail="test figure")


@pytest.fixture(scope="module")
def model():  # type: ignore[no-untyped-def]
    return fit_throughput_model(reference(), generations=("v0",))


def ring_efficiency(n: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + THETA * 2.0 * (n - 1.0) / n)


def test_counts_cover_1_to_1024_with_the_node_boundary() -> None:
    counts = extrapolation_counts(1024, gpus_per_node=6)
    assert counts[0] == 1 and counts[-1] == 1024
    assert {2, 3, 4, 6, 7, 8, 512}.issubset(set(counts))
    assert np.all(np.diff(counts) > 0) and np.all(counts == np.round(counts))


def test_points_carry_their_efficiency(model) -> None:  # type: ignore[no-untyped-def]
    points = scaling_points(model, "H100-SXM", "resnet50", "fp16")
    assert points["total_gpus"].tolist() == [1.0, 2.0, 4.0]
    assert points["efficiency"].to_numpy() == pytest.approx(ring_efficiency(points["total_gpus"]))
    assert set(points["source"]) == {"published"}


def test_every_law_is_drawn_and_the_chosen_one_fits_the_figures(model) -> None:  # type: ignore[no-untyped-def]
    counts = np.array([1.0, 2.0, 4.0, 64.0])
    laws = law_curves(model, "H100-SXM", "resnet50", "fp16", counts)
    assert list(laws.columns) == list(LAW_COLUMNS)
    assert set(laws["law"]) == {"linear", "amdahl", "usl", "ring"}
    chosen = laws.loc[laws["chosen"]]
    assert chosen["law"].unique().tolist() == ["ring"]  # the data are an exact ring law
    truth = ring_throughput(counts[:3], 1200.0, THETA)
    assert chosen["throughput"].to_numpy()[:3] == pytest.approx(truth, rel=2e-3)
    linear = laws.loc[laws["law"] == "linear"]
    assert linear["efficiency"].tolist() == pytest.approx([1.0] * 4)
    # Ring saturates: 64 GPUs lose about as much as 4 do (θ·2(N−1)/N → 2θ).
    assert chosen["efficiency"].iloc[3] == pytest.approx(1 / (1 + 2 * THETA * 63 / 64), rel=1e-2)


def test_one_count_means_no_fitted_law(model) -> None:  # type: ignore[no-untyped-def]
    assert law_curves(model, "H100-SXM", "resnet50", "tf32", np.array([1.0, 2.0])).empty


def test_extrapolation_reproduces_figures_and_the_network_matters_only_across_nodes(
    model,  # type: ignore[no-untyped-def]
) -> None:
    counts = np.array([1.0, 2.0, 4.0, 8.0, 16.0, 256.0])
    fast = extrapolation(model, "H100-SXM", "resnet50", "fp16", counts, CommModel(8 * 400.0))
    slow = extrapolation(model, "H100-SXM", "resnet50", "fp16", counts, CommModel(10.0))
    truth = ring_throughput(np.array([1.0, 2.0, 4.0]), 1200.0, THETA)
    assert fast["throughput"].to_numpy()[:3] == pytest.approx(truth)
    assert fast["throughput_source"].tolist()[:4] == ["published"] * 3 + ["scaled"]
    assert fast["efficiency"].iloc[0] == pytest.approx(1.0)
    assert fast["beyond_node"].tolist() == [False] * 4 + [True] * 2
    within = slice(0, 4)
    assert slow["throughput"].iloc[within].tolist() == pytest.approx(
        fast["throughput"].iloc[within].tolist()
    )
    assert (slow["throughput"].iloc[4:] < fast["throughput"].iloc[4:]).all()
    assert "10 Gb/s per node" in slow["throughput_detail"].iloc[-1]
    band = fast.dropna()
    assert (band["throughput_low"] <= band["throughput"]).all()
    assert (band["throughput"] <= band["throughput_high"]).all()
    # the efficiency band never promises super-linear scaling the law does not allow
    # (the throughput band's top over one GPU's point figure read 86%-117%)
    assert fast["throughput_high"].iloc[0] > fast["throughput"].iloc[0]  # a band above 100%
    assert (band["efficiency_high"] <= band["efficiency"].clip(lower=1.0) + 1e-12).all()
    assert (band["efficiency_low"] <= band["efficiency"]).all()


def test_a_smaller_node_moves_the_boundary(model) -> None:  # type: ignore[no-untyped-def]
    counts = np.array([2.0, 4.0, 8.0])
    curve = extrapolation(
        model, "H100-SXM", "resnet50", "fp16", counts, CommModel(100.0, gpus_per_node=2)
    )
    # The 4-GPU figure ran over one node's NVLink: with 2-GPU nodes, 4 GPUs already
    # cross the network, so only the 2-GPU figure anchors and the step model carries it.
    assert curve["beyond_node"].tolist() == [False, True, True]


def test_an_unmeasured_gpu_is_estimated(model) -> None:  # type: ignore[no-untyped-def]
    curve = extrapolation(model, "L40S", "resnet50", "fp16", np.array([1.0, 8.0]))
    assert curve["throughput_source"].tolist() == ["estimated", "estimated"]
    assert curve["throughput"].notna().all()
    assert law_curves(model, "L40S", "resnet50", "fp16", np.array([1.0])).empty


def test_interconnect_assumed_per_scale() -> None:
    comm = CommModel(network_gbps_per_node=400.0, gpus_per_node=8)
    nvlink = interconnect_assumed("H100-SXM", comm)
    assert nvlink["scope"].tolist() == [
        "2 GPUs",
        "3-8 GPUs in a node",
        "more than 8 GPUs (across nodes)",
    ]
    assert "NVLink" in nvlink["link"].iloc[1]
    # H100 SXM NVLink 900 GB/s bidirectional -> 450 per direction, x 0.8 achievable.
    assert nvlink["bus_gbs"].tolist() == pytest.approx([360.0, 360.0, 40.0])
    pcie = interconnect_assumed("H100-PCIe", CommModel(network_gbps_per_node=3200.0))
    assert pcie["link"].iloc[1].startswith("PCIe gen 5")
    assert pcie["bus_gbs"].iloc[2] == pytest.approx(min(pcie["bus_gbs"].iloc[1], 400 * 0.8))
    single = interconnect_assumed("H100-SXM", CommModel(gpus_per_node=1))
    assert single["scope"].tolist() == ["more than 1 GPU (across nodes)"]


def test_choices_and_units() -> None:
    ref = reference()
    choices = model_choices(ref)
    assert choices[["model", "precision", "gpus"]].values.tolist() == [
        ["resnet50", "fp16", 6],
        ["resnet50", "tf32", 1],
    ]
    gpus = gpus_with_figures(ref, "resnet50", "fp16")
    assert len(gpus) == 6 and set(gpus["counts"]) == {3}
    results = pd.DataFrame(
        {
            "workload": ["resnet50", "bert", "ssd"],
            "model_size": ["full", "large", ""],
            "throughput_unit": ["images/s", "sequences/s", "images/s"],
        }
    )
    assert throughput_unit(results, "resnet50") == "images/s"
    assert throughput_unit(results, "bert_large_squad") == "sequences/s"
    assert throughput_unit(results, "ssd") == "images/s"


def test_a_workload_and_its_benchmark_model_share_one_fit() -> None:
    from planner.throughput import (
        own_and_published_results,
        throughput_model_for_model,
        throughput_model_for_results,
    )
    from planner.workloads.catalog import get_workload

    results, _ = own_and_published_results([])
    by_workload = throughput_model_for_results(
        results, get_workload("bert-large-squad-2ep"), "fp16"
    )
    assert throughput_model_for_model(results, "bert_large_squad") is by_workload
    assert set(by_workload.scaling.groups["model"]) == {"bert_large_squad"}
