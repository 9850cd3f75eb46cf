"""Sweep results are `measured` throughput for exactly the instance type they ran on."""

from __future__ import annotations

import pandas as pd
import pytest

from benchmarks.results import BenchmarkResult, results_frame
from planner.plan import make_plan
from planner.request import PlanRequest
from planner.workloads.catalog import get_workload
from pricing.catalog import validate_offers
from tests.planner.results import resnet50_run

SWEEP = "ab-20261130t120000-ab12"


def offers() -> pd.DataFrame:
    base = {"provider": "aws", "region": "us-east-1", "source": "test",
            "priced_at": "2026-11-01", "gpu_name": "A10G", "gpu_count": 1}  # fmt: skip
    rows = [{**base, "instance_type": "g5.xlarge", "usd_per_hour": 1.0},
            {**base, "instance_type": "g5.2xlarge", "usd_per_hour": 1.2}]  # fmt: skip
    return validate_offers(pd.DataFrame(rows))


def result(throughput: float, sweep: dict | None, started_at: str, suffix: str) -> BenchmarkResult:
    return resnet50_run(
        "A10G",
        1,
        throughput,
        id=f"resnet50-full-bf16-{suffix}",
        source="measured",
        notes="",
        precision="bf16",
        device_name="NVIDIA A10G",
        started_at=started_at,
        sweep=sweep,
    )


def test_sweep_figure_wins_for_its_instance_type_only() -> None:
    where = {"sweep_id": SWEEP, "backend": "aws", "cloud": "aws", "region": "us-east-1",
             "instance_type": "g5.xlarge", "spot": False}  # fmt: skip
    table = results_frame(
        [
            # The same GPU on other hardware, measured later: the GPU-keyed join's figure.
            result(400.0, None, "2026-12-01T10:00:00+00:00", "onprem"),
            result(310.0, where, "2026-11-30T12:01:00+00:00", "s1"),
            result(330.0, where, "2026-11-30T12:05:00+00:00", "s2"),
            result(999.0, {**where, "sweep_id": "old-20250101t000000-0000"}, "2025-01-01", "old"),
        ]
    )
    request = PlanRequest(get_workload("resnet50-imagenet-90ep"), "bf16", gpu_count=1)
    plan = make_plan(request, offers(), table)
    by_type = plan.rows.set_index("instance_type")
    assert sorted(by_type.index) == ["g5.2xlarge", "g5.xlarge"]
    swept = by_type.loc["g5.xlarge"]
    assert swept["throughput"] == pytest.approx(320.0)  # median of the newest sweep's runs
    assert swept["throughput_source"] == "measured"
    assert SWEEP in swept["throughput_detail"] and "2026-11-30" in swept["throughput_detail"]
    other = by_type.loc["g5.2xlarge"]
    # The GPU-keyed join: the median of every own run of this GPU and count (310, 330, 400,
    # 999), the figure `estimate` and the Scaling page aggregate too.
    assert other["throughput"] == pytest.approx(365.0)
    assert other["throughput_source"] == "measured"
    assert other["throughput_detail"] == "median of 4 runs"


def test_a_swept_cpu_run_is_said_used_for_its_instance_type() -> None:
    from planner.render.notes import notes_text

    where = {"sweep_id": SWEEP, "backend": "aws", "cloud": "aws", "region": "us-east-1",
             "instance_type": "g5.xlarge", "spot": False}  # fmt: skip
    run = result(2.0, where, "2026-11-30T12:01:00+00:00", "cpu").model_copy(
        update={"device": "cpu", "device_name": "", "gpu_name": None}
    )
    request = PlanRequest(get_workload("resnet50-imagenet-90ep"), "bf16", gpu_count=1)
    plan = make_plan(request, offers(), results_frame([run]))
    swept = plan.rows.set_index("instance_type").loc["g5.xlarge"]
    assert swept["throughput"] == 2.0 and swept["throughput_source"] == "measured"
    text = " ".join(notes_text(plan.notes))
    assert "own result resnet50-full-bf16-cpu used for g5.xlarge (sweep)" in text
