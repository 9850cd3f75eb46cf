"""Job overheads, billing increments, the CPU data-loader ceiling and their words."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from planner.costs.checkpoint import (
    DEFAULT_NODE_WRITE_GBS,
    GPU_FAILURES_PER_HOUR,
    HOST_COPY_GBS,
    CheckpointState,
    checkpoint_interval_hours,
    checkpoint_times,
    state_gb,
)
from planner.costs.hours import checkpoint_state, trained_params
from planner.costs.overheads import (
    DEFAULT_IMAGES_PER_S_PER_VCPU,
    billed_hours,
    images_per_s_per_vcpu,
    job_overheads,
    loader_ceiling,
)
from planner.plan import make_plan
from planner.render.explain import explain_limit, explain_time
from planner.request import PlanRequest
from planner.settings import JobOverheads
from planner.throughput import own_and_published_results
from planner.workloads.catalog import get_workload
from tests.cli_helpers import gpuplan_ok


def options(**columns: object) -> pd.DataFrame:
    base = {
        "kind": "cloud",
        "provider": "aws",
        "network_gbps": 100.0,
        "vcpus": 32.0,
        "gpu_count": 8.0,
        "instances": 1.0,
    }
    return pd.DataFrame({**base, **columns}, index=[0])


def test_billing_rounds_up_to_the_increment_and_the_minimum() -> None:
    hours = np.array([10 / 3600, 61 / 60, 2.0])
    assert billed_hours(hours, 1.0, 60.0) == pytest.approx([60 / 3600, 61 / 60, 2.0])
    assert billed_hours(hours, 3600.0, 3600.0) == pytest.approx([1.0, 2.0, 2.0])
    assert billed_hours(hours, 60.0, 60.0) == pytest.approx([1 / 60, 61 / 60, 2.0])


def test_staging_is_dataset_over_the_slower_of_network_and_disk() -> None:
    slow = job_overheads(
        options(network_gbps=10.0), 100.0, CheckpointState(0.0), np.array([1.0]), JobOverheads()
    )
    assert slow["staging_hours"].iloc[0] == pytest.approx(100 * 8 / 10 / 3600)
    fast = job_overheads(
        options(network_gbps=3200.0), 100.0, CheckpointState(0.0), np.array([1.0]), JobOverheads()
    )
    assert fast["staging_hours"].iloc[0] == pytest.approx(100 * 8 / 16 / 3600)
    given = job_overheads(
        options(), 100.0, CheckpointState(0.0), np.array([1.0]), JobOverheads(0, 0)
    )
    assert given["setup_hours"].iloc[0] == 0 and given["staging_hours"].iloc[0] == 0


def test_checkpoints_are_written_every_interval_given() -> None:
    # 1B parameters = 14 GB; one instance with a 100 Gb/s network writes 5 GB/s (the cap).
    state = CheckpointState(state_gb(1e9))
    frame = job_overheads(options(), 0.0, state, np.array([5.5]), JobOverheads(None, None, 1.0))
    assert frame["checkpoint_write_hours"].iloc[0] == pytest.approx(5 * 14 / 5 / 3600)
    none = job_overheads(options(), 0.0, state, np.array([5.5]), JobOverheads(None, None, 0.0))
    assert none["checkpoint_write_hours"].iloc[0] == 0


def test_every_instance_writes_its_shard_in_parallel() -> None:
    state = CheckpointState(1000.0)
    one = checkpoint_times(options(instances=1.0), state, np.array([10.0]), 1.0)
    many = checkpoint_times(options(instances=64.0), state, np.array([10.0]), 1.0)
    assert one["checkpoint_stall_s"].iloc[0] == pytest.approx(1000 / 5)
    assert many["checkpoint_stall_s"].iloc[0] == pytest.approx(1000 / 64 / 5)
    # Unknown network: one local NVMe drive.
    slow = checkpoint_times(options(network_gbps=np.nan), state, np.array([10.0]), 1.0)
    assert slow["checkpoint_stall_s"].iloc[0] == pytest.approx(1000 / DEFAULT_NODE_WRITE_GBS)


def test_young_interval_shortens_as_failures_grow_with_gpus() -> None:
    # Llama 3: 419 interruptions in 54 days on 16,384 GPUs.
    assert pytest.approx(1.97e-5, rel=0.01) == GPU_FAILURES_PER_HOUR
    small, large = checkpoint_interval_hours(np.array([0.01, 0.01]), np.array([8, 512]))
    assert small == pytest.approx((2 * 0.01 / (8 * GPU_FAILURES_PER_HOUR)) ** 0.5)
    assert small / large == pytest.approx(8.0)  # sqrt(512 / 8)


def test_asynchronous_saves_stall_only_for_the_host_copy() -> None:
    blocking = checkpoint_times(options(), CheckpointState(800.0), np.array([100.0]))
    background = checkpoint_times(options(), CheckpointState(800.0, True), np.array([100.0]))
    assert blocking["checkpoint_stall_s"].iloc[0] == pytest.approx(800 / 5)
    assert background["checkpoint_stall_s"].iloc[0] == pytest.approx(800 / 8 / HOST_COPY_GBS)
    # The background write (160 s) must end before the next save.
    assert background["checkpoint_interval_hours"].iloc[0] >= 160 / 3600


def test_lora_checkpoints_save_only_the_adapters() -> None:
    full = get_workload("llm-69b-finetune-1b")
    lora = get_workload("llm-69b-lora-1b")
    assert trained_params(full) == pytest.approx(full.params)
    assert trained_params(lora) < 0.01 * full.params
    assert checkpoint_state(lora, "deepspeed").gb < 5  # GB, not the 1 TB of full state
    assert checkpoint_state(full, "megatron").asynchronous
    assert not checkpoint_state(get_workload("resnet50-imagenet-90ep"), "megatron").asynchronous


@pytest.mark.parametrize(
    ("workload", "gpus", "most"),
    [("llm-405b-8.1t", 512, 0.05), ("llm-70b-lora-1b", 8, 0.01)],
)
def test_checkpoints_are_a_small_share_of_a_plan(workload: str, gpus: int, most: float) -> None:
    offers = pd.DataFrame(
        {
            "provider": "aws",
            "region": "us-east-1",
            "instance_type": "p5.48xlarge",
            "gpu_name": "H100-SXM",
            "gpu_count": 8.0,
            "vcpus": 192.0,
            "memory_gib": 2048.0,
            "network_gbps": 3200.0,
            "usd_per_hour": 55.0,
            "spot_usd_per_hour": np.nan,
            "interconnect": "",
            "source": "test",
            "priced_at": "2026-11-01",
        },
        index=[0],
    )
    request = PlanRequest(get_workload(workload), max_gpus=gpus)
    table = make_plan(request, offers, own_and_published_results([])[0]).rows
    share = table["checkpoint_write_hours"] / table["hours_to_train"]
    assert len(table) and (share < most).all() and (table["checkpoint_gb"] > 0).all()


def test_negative_overrides_are_refused() -> None:
    with pytest.raises(ValueError, match="startup_minutes"):
        JobOverheads(startup_minutes=-1)


def test_the_loader_rate_comes_from_own_pipeline_results() -> None:
    results, _ = own_and_published_results([])
    rate, basis = images_per_s_per_vcpu(results)
    assert 300 < rate < 600 and "bench pipeline" in basis
    assert images_per_s_per_vcpu(pd.DataFrame())[0] == DEFAULT_IMAGES_PER_S_PER_VCPU
    # One process per GPU keeps a vCPU: (32 - 8) x rate.
    assert loader_ceiling(options(), 500.0)[0] == pytest.approx(24 * 500)


def test_a_plan_says_when_the_vcpus_cannot_feed_the_gpus() -> None:
    offers = pd.DataFrame(
        {
            "provider": ["gcp", "gcp"],
            "region": "us-central1",
            "instance_type": ["few-cpus", "many-cpus"],
            "gpu_name": "H100-SXM",
            "gpu_count": 8.0,
            "vcpus": [16.0, 208.0],
            "memory_gib": 512.0,
            "usd_per_hour": [80.0, 88.0],
            "spot_usd_per_hour": np.nan,
            "interconnect": "",
            "source": "test",
            "priced_at": "2026-11-01",
        }
    )
    results, _ = own_and_published_results([])
    request = PlanRequest(get_workload("resnet50-imagenet-90ep"), "fp16", max_gpus=8)
    plan = make_plan(request, offers, results)
    rows = plan.rows.set_index("instance_type")
    few, many = rows.loc["few-cpus"], rows.loc["many-cpus"]
    assert few["limit_code"] == "cpu-bound" and many["limit_code"] != "cpu-bound"
    assert few["throughput"] == pytest.approx(few["loader_ceiling"])
    assert few["gpu_throughput"] == pytest.approx(many["throughput"])
    words = explain_limit(few.to_dict(), "images/s")
    assert words.startswith("CPU-bound: 16 vCPUs feed ~") and "the GPUs could do ~" in words
    assert "start-up" in explain_time(many.to_dict()) and "billed" in explain_time(many.to_dict())


def test_bert_fine_tuning_is_minutes_not_seconds_and_start_up_binds() -> None:
    result = CliRunner().invoke(
        app, ["plan", "--workload", "bert-large-squad-2ep", "--format", "csv", "--view", "picks"]
    )
    assert result.exit_code == 0, result.output
    from io import StringIO

    picks = pd.read_csv(StringIO(result.stdout)).set_index("pick")
    fastest = picks.loc["fastest_within_budget"]
    assert fastest["hours_to_train"] > 5 / 60
    assert fastest["setup_hours"] > fastest["compute_hours"]
    for column in ("setup_hours", "staging_hours", "billed_hours", "billing_basis"):
        assert picks[column].notna().all()


def test_startup_minutes_override_and_its_error() -> None:
    runner = CliRunner()
    ok = gpuplan_ok(
        "plan -w bert-base-squad-2ep --startup-minutes 0 --staging-gbps 0"
        " --format csv --provider aws"
    )
    from io import StringIO

    rows = pd.read_csv(StringIO(ok.stdout))
    assert (rows["setup_hours"] == 0).all() and (rows["staging_hours"] == 0).all()
    bad = runner.invoke(app, ["plan", "-w", "bert-base-squad-2ep", "--startup-minutes", "-3"])
    assert bad.exit_code != 0 and "--startup-minutes -3" in bad.output
    assert "Traceback" not in bad.output
