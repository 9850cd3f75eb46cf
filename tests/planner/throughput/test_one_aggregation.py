"""The plan path and `estimate` aggregate results through one function, into one vocabulary."""

from __future__ import annotations

import pandas as pd
import pytest

import planner.throughput.estimate as estimate_module
import planner.throughput.offers as offers_module
from planner.throughput import reference_from_results, throughput_table
from planner.throughput.estimate import fit_throughput_model
from planner.throughput.offers import results_with_generation
from planner.workloads.catalog import get_workload
from tests.planner.results import resnet50_run

FIGURE_COLUMNS = ["gpu_name", "model", "precision", "total_gpus", "throughput", "throughput_low",
                  "throughput_high", "runs", "source", "detail"]  # fmt: skip


def run(gpu: str, count: int, throughput: float, version: str, source: str = "published:lambda"):
    # v1 and v2 share a date: the generation tells them apart
    return resnet50_run(
        gpu,
        count,
        throughput,
        id=f"{gpu}-{count}-{throughput}-{version}",
        source=source,
        notes=f"Lambda {version} {gpu} x{count}",
        env={"benchmark_version": version} if source != "measured" else {},
    )


def results() -> pd.DataFrame:
    return results_with_generation(
        [
            run("H100-SXM", 1, 2700.0, "v1"),
            run("H100-SXM", 1, 2790.0, "v2"),
            run("H100-SXM", 1, 2800.0, "v2"),
            run("H100-SXM", 1, 2810.0, "v2"),
            run("H100-SXM", 8, 21000.0, "v1"),
            run("A100-SXM-40GB", 1, 1100.0, "v2"),
            run("A100-SXM-40GB", 1, 1200.0, "v2"),
            run("A100-SXM-40GB", 1, 1500.0, "own", source="measured"),
        ]
    )


def test_plan_and_estimate_aggregate_through_the_one_function(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[int] = []
    original = estimate_module.aggregate_figures

    def counting(reference: pd.DataFrame) -> pd.DataFrame:
        calls.append(len(reference))
        return original(reference)

    monkeypatch.setattr(estimate_module, "aggregate_figures", counting)
    monkeypatch.setattr(offers_module, "aggregate_figures", counting)
    table = results()
    plan_figures = throughput_table(table, get_workload("resnet50-imagenet-90ep"), "fp16")
    estimate_figures = fit_throughput_model(reference_from_results(table)).figures
    assert calls == [len(table), len(table)]  # once per path, the same rows each time

    # Per (GPU, count) the plan keeps the estimate path's figure of the best source and
    # newest generation, row for row: measured A100, v2 H100 at 1 GPU, v1 H100 at 8.
    best = {("A100-SXM-40GB", 1.0, "own"), ("H100-SXM", 1.0, "v2"), ("H100-SXM", 8.0, "v1")}
    keys = zip(estimate_figures["gpu_name"], estimate_figures["total_gpus"],
               estimate_figures["generation"], strict=True)  # fmt: skip
    mine = estimate_figures.loc[[k in best for k in keys]]
    key = ["gpu_name", "total_gpus"]
    # Same-silicon siblings (planner.throughput.siblings) are carried from these figures,
    # after the aggregation: the A100 40GB's to its other memory sizes and form factors,
    # the H100 SXM's to the H200 SXM and the H800 SXM.
    carried = plan_figures["source"] == "sibling"
    assert set(plan_figures.loc[carried, "gpu_name"]) == {
        "A100-SXM-80GB", "A100-PCIe-40GB", "A100-PCIe-80GB", "H200-SXM", "H800-SXM"
    }  # fmt: skip
    plan_figures = plan_figures.loc[~carried]
    pd.testing.assert_frame_equal(
        plan_figures.loc[:, FIGURE_COLUMNS].sort_values(key).reset_index(drop=True),
        mine.loc[:, FIGURE_COLUMNS].sort_values(key).reset_index(drop=True),
    )
    h100 = plan_figures.set_index(key).loc[("H100-SXM", 1.0)]
    assert (h100["throughput"], h100["runs"]) == (2800.0, 3)  # v2 only, not pooled with v1
    assert h100["throughput_low"] == 2790.0 and h100["detail"].startswith("Lambda v2")
    a100 = plan_figures.set_index(key).loc[("A100-SXM-40GB", 1.0)]
    assert (a100["source"], a100["throughput"]) == ("measured", 1500.0)
    assert a100["detail"] == "own run A100-SXM-40GB-1-1500.0-own"


def test_the_generation_is_the_carried_version_not_read_from_the_detail() -> None:
    table = results_with_generation([run("H100-SXM", 1, 2700.0, "v1")])
    table["detail"] = "Lambda v2 H100-SXM x1"  # the text says v2, the carried value v1
    assert list(reference_from_results(table)["generation"]) == ["v1"]
    table["generation"] = ""  # nothing carried: the figure's date, whatever the text says
    assert list(reference_from_results(table)["generation"]) == ["2025-12-01"]


def test_published_figures_carry_their_benchmark_version() -> None:
    from benchmarks.published import read_published_table
    from planner.throughput import own_and_published_results

    table, _ = own_and_published_results([])
    published = table.loc[table["source"].str.startswith("published")]
    versions = read_published_table().set_index("id")["benchmark_version"]
    assert (published["generation"] == published["id"].map(versions)).all()
    assert set(published["generation"]) == set(versions)
