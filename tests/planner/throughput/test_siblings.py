"""Same-silicon GPUs: a GPU without a figure takes its sibling's, scaled by what differs."""

from __future__ import annotations

import pandas as pd
import pytest

from planner.machines.silicon import siblings_of
from planner.throughput import own_and_published_results
from planner.throughput.offers import throughput_inputs
from planner.throughput.siblings import compute_share, sibling_ratio, with_sibling_figures
from planner.workloads.catalog import get_workload


def test_siblings_share_die_and_clocks() -> None:
    assert set(siblings_of("A100-SXM-80GB")) == {
        "A100-SXM-40GB", "A100-PCIe-40GB", "A100-PCIe-80GB",
    }  # fmt: skip
    assert "H200-SXM" in siblings_of("H100-SXM")
    assert "H100-PCIe" not in siblings_of("H100-SXM")  # fewer SMs, lower clocks
    assert siblings_of("no-such-gpu") == []


def test_the_ratio_moves_only_by_bandwidth_and_power() -> None:
    # Same TDP, bandwidth 2039 / 1555: all compute-bound = 1, all memory-bound = 1.31.
    assert sibling_ratio("A100-SXM-80GB", "A100-SXM-40GB", 1.0) == pytest.approx(1.0)
    assert sibling_ratio("A100-SXM-80GB", "A100-SXM-40GB", 0.0) == pytest.approx(2039 / 1555)
    # Same bandwidth, 250 W against 400 W: the sustained clock as the cube root.
    assert sibling_ratio("A100-PCIe-40GB", "A100-SXM-40GB", 1.0) == pytest.approx(
        (250 / 400) ** (1 / 3)
    )


def test_the_compute_share_is_fitted_on_siblings_measured_together() -> None:
    def figures(x_h200: float) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "gpu_name": ["H100-SXM", "H200-SXM", "V100-SXM2-16GB"],
                "model": "resnet50",
                "precision": "fp16",
                "generation": "v2",
                "total_gpus": 1.0,
                "throughput": [1000.0, x_h200, 400.0],
            }
        )

    assert compute_share(figures(1000.0), "resnet50", "fp16") == pytest.approx(1.0)
    assert compute_share(figures(1000.0 * 4800 / 3350), "resnet50", "fp16") == pytest.approx(0.0)


def test_a_gpu_without_a_figure_takes_its_siblings() -> None:
    figures = pd.DataFrame(
        {
            "gpu_name": ["A100-SXM-40GB", "A100-SXM-40GB"],
            "total_gpus": [1.0, 8.0],
            "throughput": [1000.0, 7600.0],
            "throughput_low": [950.0, 7000.0],
            "throughput_high": [1050.0, 8000.0],
            "source": "published",
            "detail": "bench",
        }
    )
    out = with_sibling_figures(figures, 1.0).set_index(["gpu_name", "total_gpus"])
    assert out.loc[("A100-SXM-80GB", 1.0), "throughput"] == pytest.approx(1000.0)
    assert out.loc[("A100-SXM-80GB", 8.0), "source"] == "sibling"  # same NVLink fabric
    assert "A100-SXM-40GB figure x 1.000" in out.loc[("A100-SXM-80GB", 1.0), "detail"]
    # A PCIe card takes only the 1-GPU figure across fabrics.
    assert ("A100-PCIe-40GB", 8.0) not in out.index


def test_a100_80gb_is_within_a_few_percent_of_the_40gb_published_figure() -> None:
    results, _ = own_and_published_results([])
    figures = throughput_inputs(results, get_workload("resnet50-imagenet-90ep"), "fp16").figures
    one = figures.loc[figures["total_gpus"] == 1].set_index("gpu_name")
    sxm40, sxm80 = one.loc["A100-SXM-40GB"], one.loc["A100-SXM-80GB"]
    assert sxm40["source"] == "published" and sxm80["source"] == "sibling"
    assert 1.0 <= sxm80["throughput"] / sxm40["throughput"] <= 1.10  # was +43% estimated


def test_a_multi_gpu_figure_does_not_carry_to_a_sibling_with_slower_links() -> None:
    """The H800 SXM is the H100 SXM's die with 400 GB/s NVLink against 900: its
    single-GPU figure carries, an 8-GPU one does not."""
    from planner.throughput.siblings import fabric_keys, with_sibling_figures

    keys = fabric_keys(["H100-SXM", "H800-SXM", "H200-SXM"])
    assert keys[0] == keys[2] and keys[0] != keys[1]
    figures = pd.DataFrame(
        {
            "gpu_name": ["H100-SXM", "H100-SXM"],
            "total_gpus": [1, 8],
            "throughput": [1000.0, 7600.0],
            "source": ["published", "published"],
            "detail": ["x", "y"],
        }
    )
    out = with_sibling_figures(figures, 0.5)
    assert sorted(out.loc[out["gpu_name"] == "H800-SXM", "total_gpus"]) == [1]
    assert sorted(out.loc[out["gpu_name"] == "H200-SXM", "total_gpus"]) == [1, 8]
