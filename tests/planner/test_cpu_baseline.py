"""The CPU baseline: the CPU-only catalog, the CPU spec table, CPU throughput and the plan step."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from benchmarks.results import results_frame
from benchmarks.summary import Measurement, make_result
from planner.costs.cost import dollars
from planner.machines.cpus import cpu_family
from planner.plan import make_plan
from planner.render.notes import notes_text
from planner.request import PlanRequest
from planner.throughput.cpu import (
    DEFAULT_ACHIEVED_FRACTION,
    DEFAULT_ERROR,
    SERIAL_FRACTION,
    cpu_throughput,
    own_cpu_rate,
    parallel_efficiency,
)
from planner.workloads.catalog import get_workload
from pricing.catalog import SnapshotError, load_offers
from pricing.cpu_offers import CPU_NAME, load_cpu_offers, validate_cpu_offers
from pricing.providers.skypilot_cpu import parse_skypilot_cpu_vms
from tests.planner.choose.test_plan_constraints import CLOUD, RESNET, RESULTS, offer_frame
from tests.planner.results import resnet50_run

BERT = get_workload("bert-large-squad-2ep")


def cpu_offers(*rows: dict[str, object]) -> pd.DataFrame:
    return offer_frame(validate_cpu_offers, rows, arch="x86_64")


CPUS = cpu_offers(
    {"provider": "aws", "instance_type": "m8i.96xlarge", "vcpus": 384, "usd_per_hour": 20.0},
    {"provider": "aws", "instance_type": "m8g.2xlarge", "vcpus": 8, "usd_per_hour": 0.36,
     "arch": "arm64"},
)  # fmt: skip


def cpu_run(
    size: str = "full",
    per_core: float | None = 1.5,
    threads: int = 4,  # type: ignore[no-untyped-def]
    cpu: str = "AMD EPYC",
):
    """A measured CPU run of ResNet-50 at `threads` cores (make_result's own arithmetic)."""
    m = Measurement(
        workload="resnet50", model_size=size, precision="fp32", device="cpu",
        device_name=cpu, world_size=1, batch_size_per_device=8,
        step_times_s=[8 / (per_core * threads)] * 5 if per_core else [1.0] * 5, wall_s=5.0,
        flops_per_sample=RESNET.flops_per_sample, throughput_unit="images/s",
        tokens_per_sample=None, peak_memory_gib=1.0, peak_memory_source="rss",
        env={"torch_threads": threads} if per_core else {},
    )  # fmt: skip
    return make_result(m, f"cpu-{size}-{threads}", "2026-12-01T00:00:00+00:00")


def test_the_cpu_catalog_keeps_cpu_only_rows_with_arch_and_collapses_zones() -> None:
    catalog = pd.DataFrame(
        {
            "InstanceType": ["m8g.2xlarge", "m8g.2xlarge", "p4d.24xlarge", "a2-highgpu-1g", ""],
            "AcceleratorName": ["", "", "A100", "", "L4"],
            "AcceleratorCount": [None, None, 8, None, 1],
            "vCPUs": [8, 8, 96, 12, 0],
            "MemoryGiB": [32, 32, 1152, 85, 0],
            "Price": [0.36, 0.36, 21.96, 3.67, 0.5],
            "SpotPrice": [0.10, 0.20, 9.0, 1.0, 0.2],
            "Region": ["us-east-1"] * 5,
            "Arch": ["arm64", "arm64", "x86_64", "x86_64", "x86_64"],
        }
    )
    offers, _ = parse_skypilot_cpu_vms("gcp", catalog, "src", "2026-01-01")
    assert list(offers["instance_type"]) == ["m8g.2xlarge"]  # GPU rows and GPU hosts out
    assert offers.loc[0, "arch"] == "arm64" and offers.loc[0, "vcpus"] == 8
    assert offers.loc[0, "spot_usd_per_hour"] == pytest.approx(0.15)  # median of the zones


def test_a_bad_cpu_offer_is_refused_naming_its_line_and_field() -> None:
    for field, value in (("vcpus", 0), ("arch", "sparc"), ("usd_per_hour", -1)):
        row = {"provider": "aws", "instance_type": "m8i.large", "vcpus": 2, "usd_per_hour": 0.1}
        with pytest.raises(SnapshotError) as info:
            cpu_offers({**row, field: value})
        assert info.value.field == field and info.value.line == 2


def test_bundled_cpu_offers_have_vcpus_and_arch_and_stay_out_of_the_gpu_offers() -> None:
    cpus = load_cpu_offers()
    assert {"aws", "gcp", "azure"} <= set(cpus["provider"])
    arch = cpus.drop_duplicates("instance_type").set_index("instance_type")["arch"]
    assert arch["m8i.96xlarge"] == "x86_64" and arch["m8g.48xlarge"] == "arm64"
    gpu = load_offers()
    assert not gpu["instance_type"].isin(cpus["instance_type"]).any()
    assert (gpu["gpu_count"] > 0).all()
    families = cpu_family(cpus)
    assert (families["cpu_family"] != "").all()  # every bundled CPU type has a spec row


def test_physical_cores_are_half_the_vcpus_with_smt_and_all_of_them_on_graviton() -> None:
    families = cpu_family(CPUS)
    assert list(families["physical_cores"]) == [192.0, 8.0]
    assert list(families["cpu_arch"]) == ["x86_64", "arm64"]
    assert families.loc[0, "peak_gflops_per_core"] == pytest.approx(64 * 3.9)  # AVX-512 x 2
    assert families.loc[1, "peak_gflops_per_core"] == pytest.approx(32 * 2.8)  # 4 x 128-bit
    unknown = cpu_offers({"provider": "aws", "instance_type": "c7a.large", "vcpus": 2,
                          "usd_per_hour": 0.1})  # fmt: skip
    assert cpu_family(unknown).loc[0, "cpu_family"] == ""


def test_parallel_efficiency_falls_with_cores_as_amdahl_says() -> None:
    eff = parallel_efficiency([1, 2, 48, 192])
    assert eff[0] == 1.0 and all(a > b for a, b in itertools.pairwise(eff))
    assert eff[2] == pytest.approx(1 / (1 + SERIAL_FRACTION * 47))


def test_a_cpu_run_records_its_rate_per_core() -> None:
    result = cpu_run(per_core=1.5, threads=4)
    assert result.samples_per_s_per_core == pytest.approx(1.5)
    assert result.samples_per_s == pytest.approx(6.0)


def test_own_cpu_rate_takes_the_run_back_to_one_core_and_skips_other_sizes() -> None:
    runs = results_frame([cpu_run("tiny", per_core=900.0), cpu_run(per_core=1.5, threads=4),
                          cpu_run(per_core=None)])  # fmt: skip
    rate, run_id = own_cpu_rate(runs, RESNET)  # type: ignore[misc]
    assert run_id == "cpu-full-4"
    expected = RESNET.flops_per_sample * 1.5 / parallel_efficiency(4)[()] / 1e9
    assert rate == pytest.approx(expected)
    assert own_cpu_rate(results_frame([cpu_run("tiny", per_core=900.0)]), RESNET) is None


def test_cpu_throughput_is_cores_times_rate_times_efficiency_over_flops() -> None:
    options = CPUS.join(cpu_family(CPUS))
    default = cpu_throughput(options, RESNET, RESULTS)
    cores, peak = 192.0, 64 * 3.9
    expected = cores * peak * DEFAULT_ACHIEVED_FRACTION * 1e9 * parallel_efficiency(cores)
    assert default.loc[0, "throughput"] == pytest.approx(expected / RESNET.flops_per_sample)
    assert default.loc[0, "throughput_low"] == pytest.approx(
        default.loc[0, "throughput"] * (1 - DEFAULT_ERROR)
    )
    assert (default["throughput_source"] == "estimated").all()
    assert (
        "192 cores" in default.loc[0, "baseline_detail"]
        and "±50%" in default.loc[0, "baseline_detail"]
    )
    xeon = results_frame([cpu_run(per_core=1.5, threads=4, cpu="Intel(R) Xeon(R) 6975P-C")])
    own = cpu_throughput(options, RESNET, xeon)
    # The Intel run sets the Intel x86 row's rate, not the Graviton (arm64) row's.
    assert list(own["throughput_source"]) == ["scaled", "estimated"]
    assert "own run cpu-full-4 on Intel" in own.loc[0, "baseline_detail"]
    assert own.loc[1, "cpu_gflops_per_core"] == default.loc[1, "cpu_gflops_per_core"]
    rate = own_cpu_rate(xeon, RESNET)[0]  # type: ignore[index]
    assert own.loc[0, "cpu_run_factor"] == pytest.approx(rate / (64 * 3.9 * 0.45))
    # An AMD run speaks for neither (no AMD family here); an arm64 one for Graviton only.
    amd = cpu_throughput(options, RESNET, results_frame([cpu_run(per_core=1.5, threads=4)]))
    assert (amd["throughput_source"] == "estimated").all()
    arm = cpu_throughput(options, RESNET, results_frame([cpu_run(cpu="aarch64")]))
    assert list(arm["throughput_source"]) == ["estimated", "scaled"]


def test_a_plan_says_which_cpu_rows_a_run_moved_and_counts_it_used() -> None:
    run = cpu_run(per_core=1.5, threads=4, cpu="Intel(R) Xeon(R) 6975P-C")
    mine = pd.concat([RESULTS, results_frame([run])], ignore_index=True)
    plan = make_plan(PlanRequest(RESNET, max_gpus=64), CLOUD, mine, CPUS)
    (applied,) = plan.notes_of("cpu_run_applied")
    assert (applied["moved"], applied["families"], applied["kept"]) == (1, ("m8i",), 1)
    words = notes_text([applied])[0]
    assert "1 CPU row(s) of its own CPU (m8i" in words and "1 row(s) of other CPUs" in words
    used = [n for n in plan.notes_of("own_result_used") if n["id"] == "cpu-full-4"]
    assert used and not [n for n in plan.notes_of("own_result_skipped") if n["id"] == "cpu-full-4"]
    assert "CPU run" in notes_text(used)[0]


def test_the_cached_cpu_rows_follow_the_results_and_the_catalog() -> None:
    """The costed CPU rows are reused across plans of one request, keyed by content: a
    results table with an own CPU run, or another CPU catalog, gets its own rows, and a
    plan's renumbering of them leaves the next plan's unchanged."""
    request = PlanRequest(RESNET, max_gpus=64)

    def cpu_rows(results: pd.DataFrame, catalog: pd.DataFrame) -> pd.DataFrame:
        options = make_plan(request, CLOUD, results, catalog).options
        return options.loc[options["gpu_name"] == CPU_NAME].reset_index(drop=True)

    first = cpu_rows(RESULTS, CPUS)
    xeon = results_frame([cpu_run(per_core=1.5, threads=4, cpu="Intel(R) Xeon(R) 6975P-C")])
    moved = cpu_rows(pd.concat([RESULTS, xeon], ignore_index=True), CPUS)
    assert list(first["throughput_source"]) == ["estimated", "estimated"]
    assert list(moved["throughput_source"]) == ["scaled", "estimated"]
    dearer = cpu_rows(RESULTS, CPUS.assign(usd_per_hour=CPUS["usd_per_hour"] * 2))
    assert dearer["cost_usd"].to_numpy() == pytest.approx(2 * first["cost_usd"].to_numpy())
    pd.testing.assert_frame_equal(cpu_rows(RESULTS, CPUS), first)


def test_a_plan_shows_cpu_options_in_days_beside_unchanged_gpu_rows() -> None:
    request = PlanRequest(RESNET, max_gpus=64)
    with_cpu = make_plan(request, CLOUD, RESULTS, CPUS)
    without = make_plan(request, CLOUD, RESULTS, CPUS.iloc[0:0])
    cpu = with_cpu.options.loc[with_cpu.options["gpu_name"] == CPU_NAME]
    assert len(cpu) == 2 and (cpu["total_gpus"] == 0).all()
    assert (cpu["hours_to_train"] > 48).all()  # days on CPU
    billed = dollars(cpu.assign(billing_increment_s=1.0, billing_minimum_s=60.0),
                     cpu["hours_to_train"])  # fmt: skip
    assert cpu["cost_usd"].to_numpy() == pytest.approx(billed)
    assert not cpu["chosen_count"].any()
    assert (cpu["baseline_detail"].str.startswith("CPU baseline")).all()
    pd.testing.assert_frame_equal(with_cpu.rows, without.rows)
    pd.testing.assert_frame_equal(with_cpu.picks, without.picks)
    gpu = with_cpu.options.loc[with_cpu.options["gpu_name"] != CPU_NAME]
    assert list(gpu["option_id"]) == list(without.options["option_id"])


def test_a_cpu_option_is_a_pick_only_where_it_truly_wins() -> None:
    dear = CLOUD.assign(usd_per_hour=CLOUD["usd_per_hour"] * 1000)
    plan = make_plan(PlanRequest(RESNET, max_gpus=64), dear, RESULTS, CPUS)
    cheapest = plan.pick("cheapest_within_deadline")
    assert cheapest is not None and cheapest["gpu_name"] == CPU_NAME
    assert cheapest["throughput_detail"].startswith("CPU baseline")
    assert plan.frontier["gpu_name"].eq(CPU_NAME).any()
    assert not plan.rows["gpu_name"].eq(CPU_NAME).any()  # a baseline, no offer's count


def test_no_cpu_baseline_for_llms_or_an_exact_gpu_count() -> None:
    llm = make_plan(PlanRequest(get_workload("llm-125m-2.5b")), CLOUD, RESULTS, CPUS)
    assert not llm.options["gpu_name"].eq(CPU_NAME).any()
    eight = make_plan(PlanRequest(RESNET, gpu_count=8), CLOUD, RESULTS, CPUS)
    assert not eight.options["gpu_name"].eq(CPU_NAME).any()


def test_bert_plans_get_a_cpu_baseline_within_the_providers_asked() -> None:
    bert = results_frame(
        [
            resnet50_run(
                gpu,
                n,
                x,
                id=f"bert-{gpu}-{n}",
                workload="bert",
                model_size="large",
                throughput_unit="sequences/s",
            )
            for gpu, n, x in (
                ("A100-SXM-80GB", 1, 60.0),
                ("A100-SXM-80GB", 2, 118.0),
                ("H100-SXM", 1, 110.0),
            )
        ]
    )
    plan = make_plan(PlanRequest(BERT, providers=["gcp"]), CLOUD, bert, CPUS)
    assert not plan.options["gpu_name"].eq(CPU_NAME).any()  # CPUs are aws only here
    plan = make_plan(PlanRequest(BERT), CLOUD, bert, CPUS)
    cpu = plan.options.loc[plan.options["gpu_name"] == CPU_NAME]
    assert len(cpu) == 2 and (cpu["throughput_source"] == "estimated").all()
    gpu = plan.options.loc[plan.options["gpu_name"] != CPU_NAME]
    assert cpu["hours_to_train"].min() > 5 * gpu["hours_to_train"].min()


def test_the_app_table_words_cpu_rows_fastest_first_in_days() -> None:
    from planner.render.plan_tables import cpu_baseline_table

    table = cpu_baseline_table(make_plan(PlanRequest(RESNET, max_gpus=64), CLOUD, RESULTS, CPUS))
    assert list(table["instance"]) == ["m8i.96xlarge", "m8g.2xlarge"]
    assert table["time"].str.endswith("days").all()
    assert table["basis"].str.startswith("CPU baseline").all()
