"""benchmarks.batch_choice: a batch sweep's own runs at slower batches are left out of the
figures, and the plan says so."""

from __future__ import annotations

import pandas as pd
import pytest

from benchmarks.batch_choice import fastest_batches, without_slower_batches
from benchmarks.results import BenchmarkResult, results_frame
from planner.plan import make_plan
from planner.render.notes import notes_text
from planner.request import PlanRequest
from planner.workloads.catalog import get_workload
from pricing.catalog import validate_offers


def row(batch: float | None, rate: float, **fields: object) -> dict[str, object]:
    base = {
        "source": "measured", "workload": "resnet50", "model_size": "full",
        "precision": "fp16", "gpu_name": "H200-SXM", "device": "cuda", "world_size": 1,
    }  # fmt: skip
    return {**base, "batch_size_per_device": batch, "throughput": rate, **fields}


def test_the_fastest_batch_stands_and_other_configurations_are_untouched() -> None:
    table = pd.DataFrame(
        [
            row(16, 675.0), row(16, 1077.0), row(64, 2216.0), row(256, 6084.0),
            row(256, 6100.0), row(512, 6393.0),
            row(16, 615.0, precision="bf16"), row(256, 4689.0, precision="bf16"),
            row(32, 900.0, world_size=8),  # one batch only: nothing to choose
            row(None, 1500.0),  # no batch recorded: kept
            row(16, 100.0, source="published"),  # published figures are not sweeps
        ]
    )  # fmt: skip
    fastest = fastest_batches(table)
    # 0: the row stands (its batch is the fastest, or it is no sweep's).
    assert fastest.fillna(0).tolist() == [512] * 5 + [0, 256, 0, 0, 0, 0]
    kept = without_slower_batches(table)
    assert kept["throughput"].tolist() == [6393.0, 4689.0, 900.0, 1500.0, 100.0]


def test_the_median_rate_per_batch_chooses_not_the_largest_batch() -> None:
    # Past the knee a larger batch can be slower: 256 (median 5,000) beats 512 (4,800).
    table = pd.DataFrame([row(256, 5000.0), row(256, 4900.0), row(256, 5100.0), row(512, 4800.0)])
    assert fastest_batches(table).tolist()[3] == 256
    assert without_slower_batches(table)["throughput"].tolist() == [5000.0, 4900.0, 5100.0]


def own(batch: int, rate: float) -> BenchmarkResult:
    return BenchmarkResult(
        id=f"resnet50-full-fp16-cudax1-b{batch}",
        source="measured",
        workload="resnet50",
        model_size="full",
        precision="fp16",
        device="cuda",
        device_name="NVIDIA H200",
        gpu_name="H200-SXM",
        world_size=1,
        batch_size_per_device=batch,
        throughput=rate,
        throughput_unit="images/s",
        started_at="2026-12-04",
    )


def test_a_plan_times_a_swept_gpu_at_its_fastest_batch_and_says_why_the_rest_are_not_used() -> None:
    """A batch sweep pooled into one figure would make the 1-GPU row 3x too slow."""
    sweep = results_frame([own(16, 675.0), own(64, 2216.0), own(256, 6084.0)])
    offer = {"provider": "nebius", "region": "r1", "source": "test", "priced_at": "2026-11-01",
             "instance_type": "h200x1", "gpu_name": "H200-SXM", "gpu_count": 1,
             "usd_per_hour": 3.5}  # fmt: skip
    plan = make_plan(
        PlanRequest(get_workload("resnet50-imagenet-90ep"), "fp16"),
        validate_offers(pd.DataFrame([offer])),
        sweep,
    )
    one = plan.rows.loc[plan.rows["total_gpus"] == 1].iloc[0]
    assert one["throughput_source"] == "measured" and one["throughput"] == pytest.approx(6084.0)
    skipped = plan.notes_of("own_result_skipped")
    assert sorted(n["batch"] for n in skipped) == [16.0, 64.0]
    assert {n["reason"] for n in skipped} == {"smaller_batch"}
    words = " ".join(notes_text(skipped))
    assert "batch 16; the same GPU, model and precision ran faster at batch 256" in words
    assert [n["id"] for n in plan.notes_of("own_result_used")] == ["resnet50-full-fp16-cudax1-b256"]


def test_the_figure_caches_tell_tables_apart_by_batch() -> None:
    """Two tables that differ only in the batch of each run keep other runs (and say so of
    others), so the content key of the plan's caches must see the batch."""
    from planner.throughput.offers import results_digest

    first = results_frame([own(16, 675.0), own(256, 6084.0), own(512, 6100.0)])
    second = first.assign(batch_size_per_device=[16.0, 256.0, 16.0])
    assert results_digest(first) != results_digest(second)
    # First: 512 is the fastest batch. Second: 256 (batch 16's median is 3,388 img/s).
    assert without_slower_batches(first)["throughput"].tolist() == [6100.0]
    assert without_slower_batches(second)["throughput"].tolist() == [6084.0]
