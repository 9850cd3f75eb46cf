"""Cost math and the plan composer on tiny inline tables."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from benchmarks.results import BenchmarkResult, results_frame
from planner.costs.cost import cost_to_train, hours_to_train, usd_per_million_samples
from planner.plan import PLAN_COLUMNS, make_plan
from planner.render.llm import with_llm_details
from planner.render.notes import notes_text
from planner.request import PlanRequest
from planner.throughput import throughput_for_offers, throughput_table
from planner.workloads.catalog import get_workload
from pricing.catalog import validate_offers


def offers(*rows: dict[str, object]) -> pd.DataFrame:
    base = {"provider": "aws", "region": "r1", "source": "test", "priced_at": "2026-11-01"}
    return validate_offers(pd.DataFrame([{**base, **row} for row in rows]))


def result(
    gpu: str,
    count: int,
    throughput: float,
    source: str = "published:lambda",
    precision: str = "fp16",
    started_at: str = "2025-12-01",
) -> BenchmarkResult:
    return BenchmarkResult(
        id=f"{source.replace(':', '-')}-{gpu}-{count}-{throughput}-{started_at}",
        source=source,
        workload="resnet50",
        model_size="full",
        precision=precision,  # type: ignore[arg-type]
        gpu_name=gpu,
        world_size=count,
        throughput=throughput,
        throughput_unit="images/s",
        started_at=started_at,
        notes=f"{gpu} x{count}",
    )


def test_hours_and_cost() -> None:
    hours = hours_to_train(3.6e6, pd.Series([1000.0, 0.0, -5.0]))
    assert hours.iloc[0] == pytest.approx(1.0)
    assert hours.iloc[1:].isna().all()
    assert cost_to_train(pd.Series([2.0]), pd.Series([3.5])).iloc[0] == 7.0
    assert usd_per_million_samples(pd.Series([3.6]), pd.Series([1000.0])).iloc[0] == pytest.approx(
        1.0
    )


def test_one_a100_hours_are_samples_over_published_throughput() -> None:
    workload = get_workload("resnet50-imagenet-90ep")
    table = results_frame([result("A100-SXM-40GB", 1, 2000.0)])
    plan = make_plan(
        PlanRequest(workload, "fp16"),
        offers(
            {"instance_type": "a", "gpu_name": "A100-SXM-40GB", "gpu_count": 1, "usd_per_hour": 4.0}
        ),
        table,
    )
    row = plan.rows.iloc[0]
    assert row["compute_hours"] == pytest.approx(1_281_167 * 90 / 2000.0 / 3600)
    # Wall time adds start-up, dataset staging (ImageNet, 147.9 GB) and checkpoint writes.
    fixed = row["setup_hours"] + row["staging_hours"] + row["checkpoint_write_hours"]
    assert row["staging_hours"] > 0 and row["setup_hours"] > 0
    assert row["hours_to_train"] == pytest.approx(row["compute_hours"] + fixed)
    assert row["cost_usd"] == pytest.approx(row["billed_hours"] * 4.0)
    assert 0 <= row["billed_hours"] - row["hours_to_train"] <= 3600 / 3600
    assert row["throughput_source"] == "published"
    assert list(plan.rows.columns) == list(PLAN_COLUMNS)


def test_measured_beats_published_and_newest_generation_wins() -> None:
    workload = get_workload("resnet50-imagenet-90ep")
    table = results_frame(
        [
            result("H100-SXM", 1, 2500.0, started_at="2022-07-01"),
            result("H100-SXM", 1, 3000.0),
            result("H100-SXM", 1, 3100.0),
            result("A100-SXM-40GB", 1, 1200.0),
            result("A100-SXM-40GB", 1, 1500.0, source="measured", started_at="2026-11-01"),
        ]
    )
    figures = throughput_table(table, workload, "fp16").set_index("gpu_name")
    assert figures.loc["H100-SXM", "throughput"] == 3050.0  # median of the newest two
    assert figures.loc["H100-SXM", "throughput_low"] == 3000.0
    assert figures.loc["A100-SXM-40GB", "source"] == "measured"
    assert figures.loc["A100-SXM-40GB", "throughput"] == 1500.0


def test_other_counts_follow_the_fitted_law_and_say_so() -> None:
    workload = get_workload("resnet50-imagenet-90ep")
    table = throughput_table(
        results_frame([result("V100-SXM2-16GB", 1, 800.0), result("V100-SXM2-16GB", 4, 3000.0)]),
        workload,
        "fp16",
    )
    some = offers(
        {"instance_type": "a", "gpu_name": "V100-SXM2-16GB", "gpu_count": 8, "usd_per_hour": 1.0},
        {"instance_type": "b", "gpu_name": "V100-SXM2-16GB", "gpu_count": 0.5, "usd_per_hour": 1.0},
        {"instance_type": "c", "gpu_name": "V100-SXM2-16GB", "gpu_count": 4, "usd_per_hour": 1.0},
        {"instance_type": "d", "gpu_name": "T4", "gpu_count": 1, "usd_per_hour": 1.0},
    )
    speed = throughput_for_offers(some, table)
    # Two points pin the ring law: E(4) = 3000 / 3200 = 1 / (1 + 1.5 θ).
    theta = (3200 / 3000 - 1) / 1.5
    expected_8 = 3000 * (8 / (1 + 1.75 * theta)) / (4 / (1 + 1.5 * theta))
    assert speed["throughput"].iloc[0] == pytest.approx(expected_8, rel=1e-3)
    assert speed["throughput"].iloc[0] < 6000.0  # not linear
    assert "ring" in speed["throughput_detail"].iloc[0]
    assert "fitted to counts 1,4" in speed["throughput_detail"].iloc[0]
    assert "through the 4-GPU published figure" in speed["throughput_detail"].iloc[0]
    assert speed["throughput_low"].iloc[0] <= speed["throughput"].iloc[0]
    assert speed["throughput"].iloc[0] <= speed["throughput_high"].iloc[0]
    assert speed["throughput"].iloc[1] == pytest.approx(400.0)  # a slice scales linearly
    assert speed["throughput_source"].tolist()[:3] == ["scaled", "scaled", "published"]
    # One GPU's figures cannot calibrate a spec regression: no estimate for the T4.
    assert np.isnan(speed["throughput"].iloc[3])


def test_plan_ranks_by_cost_leaves_out_unpriced_and_unmeasured_with_warnings() -> None:
    workload = get_workload("resnet50-imagenet-90ep")
    table = results_frame([result("A100-SXM-40GB", 1, 1000.0), result("H100-SXM", 1, 3000.0)])
    some = offers(
        {
            "instance_type": "slow-cheap",
            "gpu_name": "A100-SXM-40GB",
            "gpu_count": 1,
            "usd_per_hour": 1.0,
        },
        {"instance_type": "fast-dear", "gpu_name": "H100-SXM", "gpu_count": 1, "usd_per_hour": 6.0},
        {"instance_type": "no-price", "gpu_name": "H100-SXM", "gpu_count": 1, "usd_per_hour": None},
        {"instance_type": "no-figure", "gpu_name": "T4", "gpu_count": 1, "usd_per_hour": 0.5},
    )
    plan = make_plan(PlanRequest(workload, "fp16", today=dt.date(2026, 11, 2)), some, table)
    assert plan.rows["instance_type"].tolist() == ["slow-cheap", "fast-dear"]
    assert plan.rows["rank"].tolist() == [1, 2]
    text = " ".join(notes_text(plan.notes))
    assert "1 offers left out: no resnet50 fp16 throughput figure or estimate (T4)" in text
    assert "1 offers left out: no on-demand price (H100-SXM)" in text
    assert "older than" not in text


def test_spot_plan_uses_spot_prices_and_warns_on_stale_prices() -> None:
    workload = get_workload("resnet50-imagenet-90ep")
    table = results_frame([result("A100-SXM-40GB", 1, 1000.0)])
    some = offers(
        {
            "instance_type": "a",
            "gpu_name": "A100-SXM-40GB",
            "gpu_count": 1,
            "usd_per_hour": 4.0,
            "spot_usd_per_hour": 1.5,
        },
        {"instance_type": "b", "gpu_name": "A100-SXM-40GB", "gpu_count": 1, "usd_per_hour": 3.0},
    )
    request = PlanRequest(workload, "fp16", pricing="spot", today=dt.date(2027, 1, 1))
    plan = make_plan(request, some, table)
    assert plan.rows["instance_type"].tolist() == ["a"]
    assert plan.rows["usd_per_hour"].tolist() == [1.5]
    (stale,) = plan.notes_of("stale_prices")
    assert stale["providers"] == (("aws", "2026-11-01", 61),)
    assert "older than 30 days: aws 2026-11-01 (61 d)" in notes_text([stale])[0]


def test_bf16_uses_fp16_figures_only_on_gpus_with_bf16() -> None:
    workload = get_workload("resnet50-imagenet-90ep")
    table = results_frame([result("A100-SXM-40GB", 1, 1000.0), result("V100-SXM2-16GB", 1, 800.0)])
    figures = throughput_table(table, workload, "bf16")
    own = figures.loc[figures["source"] != "sibling"]  # A100 siblings take the A100's
    assert own["gpu_name"].tolist() == ["A100-SXM-40GB"]
    assert not figures["gpu_name"].str.startswith("V100").any()
    assert figures["detail"].iloc[0].startswith("fp16 AMP figure as bf16 proxy")


def test_llm_plan_uses_the_mfu_prior_and_a_layout_that_fits() -> None:
    workload = get_workload("llm-7b-140b")  # 7.0e9 parameters, GPT-3-like shape
    some = offers(
        {"instance_type": "one", "gpu_name": "H100-SXM", "gpu_count": 1, "usd_per_hour": 4.0},
        {"instance_type": "eight", "gpu_name": "H100-SXM", "gpu_count": 8, "usd_per_hour": 32.0},
    )
    plan = make_plan(PlanRequest(workload, "bf16", max_gpus=8), some, results_frame([]))
    rows = plan.rows.set_index("instance_type")
    # 7e9 x 16 bytes = 112 GB: one 80 GB GPU (72 GB usable) cannot hold it in any layout.
    options = plan.options.set_index(["instance_type", "total_gpus"])
    assert ("one", 1.0) not in options.index
    assert rows.loc["one", "total_gpus"] > 1 and "dp" in rows.loc["one", "sharding"]
    eight = rows.loc["eight"]
    # One NVLink node: data-parallel communication hides behind compute, so the step is the
    # operators' (planner.llm.ops at Hopper's kernel defaults), below the GEMMs' 70% of
    # peak, and throughput is MFU x peak x GPUs / FLOPs per token.
    assert eight["sharding"].startswith("tp1 pp1 dp8")
    assert 0.4 < eight["mfu"] < 0.70 and eight["dp_comm_share"] == 0.0
    expected = eight["mfu"] * 989.4e12 * 8 / workload.flops_per_sample
    assert eight["throughput"] == pytest.approx(expected)
    assert eight["throughput_source"] == "estimated"
    assert eight["mfu_source"] == "kernels_hopper" and eight["throughput_detail"] == ""
    worded = with_llm_details(plan).rows.set_index("instance_type").loc["eight"]
    assert "Hopper kernels" in worded["throughput_detail"]
    assert eight["hours_p10"] < eight["hours_to_train"] < eight["hours_p90"]
    assert any(
        "too few GPUs to hold llm-7b-140b in any layout" in w for w in notes_text(plan.notes)
    )


def test_offers_without_figures_get_estimates_on_the_bundled_data() -> None:
    from benchmarks.published import published_frame

    workload = get_workload("resnet50-imagenet-90ep")
    gpus = ["T4", "L4", "L40S", "A10G", "B300", "A100-SXM-80GB", "H100-SXM"]
    some = offers(
        *(
            {"instance_type": g, "gpu_name": g, "gpu_count": n, "usd_per_hour": 1.0}
            for g in gpus
            for n in (1, 8)
        )
    )
    plan = make_plan(PlanRequest(workload, "fp16"), some, published_frame())
    rows = plan.rows.set_index(["gpu_name", "gpu_count"])
    assert len(rows) == len(gpus) * 2
    for gpu in gpus[:-2]:
        assert rows.loc[(gpu, 1.0), "throughput_source"] == "estimated"
        assert "spec regression" in rows.loc[(gpu, 1.0), "throughput_detail"]
    # A 70 W T4 lies outside the calibrated cards: the detail says so.
    assert "board power below the calibrated" in rows.loc[("T4", 1.0), "throughput_detail"]
    assert "extrapolated" not in rows.loc[("L40S", 1.0), "throughput_detail"]
    assert rows.loc[("H100-SXM", 1.0), "throughput_source"] == "published"
    assert rows.loc[("H100-SXM", 8.0), "throughput_source"] == "scaled"
    # The A100 80GB takes its published 40GB sibling's figure, scaled by bandwidth.
    assert rows.loc[("A100-SXM-80GB", 1.0), "throughput_source"] == "sibling"
    assert "A100-SXM-40GB figure x 1.0" in rows.loc[("A100-SXM-80GB", 1.0), "throughput_detail"]
    assert (plan.rows["hours_p10"] < plan.rows["hours_to_train"]).all()
    assert (plan.rows["hours_to_train"] < plan.rows["hours_p90"]).all()
    # Specs order the estimates: an L4 (121 TFLOPS, 300 GB/s) trains slower than an L40S.
    assert rows.loc[("L4", 1.0), "throughput"] < rows.loc[("L40S", 1.0), "throughput"]
    assert rows.loc[("L40S", 1.0), "throughput"] < rows.loc[("B300", 1.0), "throughput"]
