"""make_plan with constraints: counts, frontier, picks, on-prem, spot, seeds and edge cases."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
import pandas as pd
import pytest

from benchmarks.results import BenchmarkResult, results_frame
from planner.choose.pareto import pareto_mask
from planner.codes import Miss, PriceBasis
from planner.costs.spot import SPOT_RATE_DEFAULTS
from planner.llm.records import LLMMemoryError
from planner.onprem.tco import (
    OnPremConfig,
    OnPremConfigError,
    amortized_usd_per_gpu_hour,
    config_from_mapping,
)
from planner.plan import PLAN_COLUMNS, make_plan
from planner.render.llm import no_fit_text
from planner.render.notes import APP_CONTROLS, notes_text
from planner.render.plan_words import assumption_lines
from planner.render.rows import misses_text, price_source_text, worded_rows
from planner.request import PlanRequest
from planner.workloads.catalog import get_workload
from pricing.catalog import validate_offers
from tests.planner.results import resnet50_run

RESNET = get_workload("resnet50-imagenet-90ep")


def offer_frame(
    validate: Callable[[pd.DataFrame], pd.DataFrame],
    rows: Iterable[dict[str, object]],
    **more: object,
) -> pd.DataFrame:
    """`rows` through `validate`, each in region r1 from a test source priced 2026-11-01."""
    base = {"region": "r1", "source": "test", "priced_at": "2026-11-01", **more}
    return validate(pd.DataFrame([{**base, **row} for row in rows]))


def offers(*rows: dict[str, object]) -> pd.DataFrame:
    return offer_frame(validate_offers, rows)


def published(gpu: str, count: int, throughput: float) -> BenchmarkResult:
    return resnet50_run(gpu, count, throughput)


RESULTS = results_frame(
    [
        published("A100-SXM-80GB", 1, 2000.0),
        published("A100-SXM-80GB", 2, 3900.0),
        published("A100-SXM-80GB", 4, 7600.0),
        published("H100-SXM", 1, 3000.0),
        published("H100-SXM", 2, 5900.0),
    ]
)
CLOUD = offers(
    {
        "provider": "aws",
        "instance_type": "a100x8",
        "gpu_name": "A100-SXM-80GB",
        "gpu_count": 8,
        "usd_per_hour": 30.0,
        "spot_usd_per_hour": 12.0,
    },
    {
        "provider": "gcp",
        "instance_type": "h100x1",
        "gpu_name": "H100-SXM",
        "gpu_count": 1,
        "usd_per_hour": 9.0,
        "spot_usd_per_hour": 3.0,
    },
    {
        "provider": "azure",
        "region": "r2",
        "instance_type": "a100x1",
        "gpu_name": "A100-SXM-80GB",
        "gpu_count": 1,
        "usd_per_hour": 3.5,
        "spot_usd_per_hour": 1.0,
    },
)


def plan(**kwargs: object):  # type: ignore[no-untyped-def]
    return make_plan(PlanRequest(RESNET, "fp16", **kwargs), CLOUD, RESULTS)  # type: ignore[arg-type]


def test_rows_are_one_per_offer_with_all_columns_and_counts_within_max_gpus() -> None:
    result = plan(max_gpus=64)
    assert list(result.rows.columns) == list(PLAN_COLUMNS)
    assert sorted(result.rows["instance_type"]) == ["a100x1", "a100x8", "h100x1"]
    assert result.rows["chosen_count"].all() and result.rows["rank"].tolist() == [1, 2, 3]
    assert result.options["total_gpus"].max() == 64
    assert (result.rows["hours_p10"] <= result.rows["hours_p50"]).all()
    assert (result.rows["hours_p50"] <= result.rows["hours_p90"]).all()
    assert result.rows["cost_usd"].to_numpy() == pytest.approx(
        (result.rows["billed_hours"] * result.rows["option_usd_per_hour"]).to_numpy()
    )
    small = plan(max_gpus=4, providers=["gcp", "azure"], regions=["r1"])
    assert set(small.options["instance_type"]) == {"h100x1"}
    assert small.options["total_gpus"].max() == 4


def test_frontier_covers_every_count_and_nothing_on_it_is_dominated() -> None:
    result = plan(max_gpus=64)
    options = result.options
    on = pareto_mask(options["hours_to_train"], options["cost_usd"])
    assert options["on_pareto"].tolist() == on.tolist()
    frontier = result.frontier
    assert len(frontier) == int(on.sum()) and frontier["on_pareto"].all()
    assert frontier["hours_to_train"].is_monotonic_increasing
    assert (~frontier["chosen_count"]).any()  # other counts of an offer are on it too
    for row in frontier.itertuples():
        better = (options["hours_to_train"] <= row.hours_to_train) & (
            options["cost_usd"] <= row.cost_usd
        )
        strictly = (options["hours_to_train"] < row.hours_to_train) | (
            options["cost_usd"] < row.cost_usd
        )
        assert not (better & strictly).any()


def test_deadline_picks_the_cheapest_count_that_meets_it() -> None:
    loose = plan(max_gpus=64)
    cheapest = loose.pick("cheapest_within_deadline")
    assert cheapest is not None
    deadline = float(cheapest["hours_to_train"]) / 3
    tight = plan(max_gpus=64, deadline_hours=deadline)
    pick = tight.pick("cheapest_within_deadline")
    assert pick is not None and pick["hours_to_train"] <= deadline
    meets = tight.options.loc[tight.options["hours_to_train"] <= deadline]
    assert pick["cost_usd"] == pytest.approx(meets["cost_usd"].min())
    # Each offer's row is its cheapest count within the deadline.
    for row in tight.rows.itertuples():
        mine = tight.options.loc[
            (tight.options["instance_type"] == row.instance_type)
            & (tight.options["hours_to_train"] <= deadline)
        ]
        if len(mine):
            assert row.cost_usd == pytest.approx(mine["cost_usd"].min())
            assert row.feasible
    status = tight.constraint_status.set_index("constraint")
    assert status.loc["deadline_hours", "binds"]


def test_fastest_within_budget_and_value_pick_respect_the_budget() -> None:
    budget = 150.0
    result = plan(max_gpus=64, budget_usd=budget)
    fastest = result.pick("fastest_within_budget")
    assert fastest is not None and fastest["cost_usd"] <= budget
    within = result.options.loc[result.options["cost_usd"] <= budget]
    assert fastest["hours_to_train"] == pytest.approx(within["hours_to_train"].min())
    value = result.pick("best_cost_per_hour_saved")
    base = result.pick("cheapest_within_deadline")
    assert value is not None and base is not None
    assert value["hours_to_train"] < base["hours_to_train"] and value["cost_usd"] <= budget
    assert value["on_pareto"]


def test_a_deadline_nothing_meets_says_so_and_names_the_fastest() -> None:
    result = plan(max_gpus=8, deadline_hours=0.01)
    assert result.pick("cheapest_within_deadline") is None
    fastest = result.options.sort_values("hours_to_train").iloc[0]
    (unmet,) = result.notes_of("deadline_unmet")
    assert unmet["closest_hours"] == pytest.approx(fastest["hours_to_train"])
    text = " ".join(notes_text(result.notes))
    assert "nothing finishes within 36 s; the fastest option is" in text
    assert f"{fastest['instance_type']} x{fastest['instances']:g}" in text
    assert not result.rows["feasible"].any()
    assert set(result.rows["misses"]) == {(Miss.DEADLINE,)}
    assert set(worded_rows(result.rows)["misses"]) == {"deadline"}
    assert misses_text((Miss.DEADLINE, Miss.BUDGET)) == "deadline, budget"
    assert misses_text(()) == ""
    assert result.pick("fastest_within_budget") is not None  # still shown


def test_a_budget_nothing_meets_says_so_and_names_the_cheapest() -> None:
    result = plan(max_gpus=8, budget_usd=0.5)
    assert result.pick("fastest_within_budget") is None
    cheapest = result.options.sort_values("cost_usd").iloc[0]
    assert any(
        w.startswith("nothing costs $0.50 or less; the cheapest option is ")
        and f"{cheapest['instance_type']} x{cheapest['instances']:g}" in w
        for w in notes_text(result.notes)
    )


def test_onprem_cost_is_amortized_rate_times_gpu_hours() -> None:
    config = OnPremConfig(name="lab", gpu_name="A100-SXM-80GB", servers=2, gpus_per_server=8)
    result = plan(max_gpus=64, onprem=[config], onprem_sources=["lab.toml"])
    local = result.options.loc[result.options["kind"] == "on-prem"]
    assert local["total_gpus"].tolist() == [1, 2, 4, 8, 16]  # limited to the cluster
    rate = float(amortized_usd_per_gpu_hour(config))
    assert local["cost_usd"].to_numpy() == pytest.approx(
        rate * (local["total_gpus"] * local["billed_hours"]).to_numpy()
    )
    # Owned servers: no provisioning or staging, only the environment start; billed by
    # the second of use.
    assert (local["staging_hours"] == 0).all()
    assert local["setup_hours"].to_numpy() == pytest.approx(1 / 60)
    assert (local["billed_hours"] - local["hours_to_train"]).abs().max() <= 1 / 3600
    row = result.rows.loc[result.rows["kind"] == "on-prem"].iloc[0]
    assert row["pricing"] == "amortized" and row["usd_per_gpu_hour"] == pytest.approx(rate)
    assert row["price_source"] == "lab.toml" and row["price_basis"] == PriceBasis.AMORTIZED
    assert row["amortized_usd_per_gpu_hour"] == pytest.approx(rate)
    assert price_source_text(row).startswith(f"lab.toml: amortized ${rate:.2f}/GPU-h at 70%")
    assert any("On-prem lab: 16 x A100-SXM-80GB" in a for a in assumption_lines(result))


def test_zero_or_negative_utilization_is_refused_with_the_field() -> None:
    for bad in (0, -0.3):
        with pytest.raises(OnPremConfigError) as info:
            config_from_mapping({"utilization": bad}, "lab.toml")
        assert "lab.toml: field 'utilization'" in str(info.value)
        assert "must be >= 1e-06 and <= 1" in str(info.value)


def test_spot_takes_longer_than_on_demand_and_uses_the_rate_given() -> None:
    on_demand = plan(max_gpus=8)
    spot = plan(max_gpus=8, pricing="spot")
    a = on_demand.options.set_index(["instance_type", "total_gpus"])
    b = spot.options.set_index(["instance_type", "total_gpus"])
    assert (b["throughput"] == a["throughput"]).all()
    assert (b["hours_to_train"] > a["hours_to_train"]).all()
    row = spot.rows.set_index("instance_type").loc["h100x1"]
    assert row["interruptions_per_hour"] == pytest.approx(
        SPOT_RATE_DEFAULTS["gcp"].interruptions_per_hour
    )
    assert row["interruption_rate_source"] == "default:gcp"
    assert row["hours_p90"] > row["compute_hours"]
    lines = " ".join(assumption_lines(spot))
    assert "gcp 0.00439/h, range 0.0021-0.0068 drawn in P10-P90 (default for gcp" in lines
    assert "cloud.google.com" in lines
    user = plan(max_gpus=8, pricing="spot", interruption_rates={"gcp": 0.2})
    again = user.options.set_index(["instance_type", "total_gpus"])
    assert again.loc[("h100x1", 1.0), "hours_to_train"] > b.loc[("h100x1", 1.0), "hours_to_train"]
    assert "gcp 0.2/h (yours)" in " ".join(assumption_lines(user))


def test_the_seed_fixes_the_monte_carlo_figures() -> None:
    one = plan(max_gpus=8, pricing="spot", seed=3, draws=2000)
    two = plan(max_gpus=8, pricing="spot", seed=3, draws=2000)
    other = plan(max_gpus=8, pricing="spot", seed=4, draws=2000)
    pd.testing.assert_frame_equal(one.rows, two.rows)
    simulated = one.rows["quantile_method"].str.startswith("monte-carlo")
    assert simulated.any()
    assert not np.allclose(
        one.rows.loc[simulated, "hours_p90"], other.rows.loc[simulated, "hours_p90"]
    )


def test_a_gpu_with_no_spec_row_is_left_out_with_its_name() -> None:
    odd = pd.concat(
        [CLOUD, CLOUD.iloc[[0]].assign(gpu_name="Z100", instance_type="future")],
        ignore_index=True,
    )
    result = make_plan(PlanRequest(RESNET, "fp16", max_gpus=8), odd, RESULTS)
    assert "future" not in set(result.rows["instance_type"])
    assert any(
        "1 offers left out: no row in planner/data/gpu_specs.csv" in w and "(Z100)" in w
        for w in notes_text(result.notes)
    )


def test_an_llm_that_fits_nowhere_is_a_clear_error() -> None:
    small = offers(
        {
            "provider": "aws",
            "instance_type": "t4",
            "gpu_name": "T4",
            "gpu_count": 1,
            "usd_per_hour": 0.5,
        }
    )
    with pytest.raises(LLMMemoryError) as info:
        request = PlanRequest(get_workload("llm-70b-1.4t"), "fp16", max_gpus=64)
        make_plan(request, small, results_frame([]))
    assert str(info.value) == "no_layout_fits"  # the engine gives figures; interfaces word them
    text = no_fit_text(info.value, APP_CONTROLS)
    assert "llm-70b-1.4t does not fit in GPU memory at any GPU count offered" in text
    assert "FlashAttention and full recomputation" in text
    # 1,120 GB of states over 64 GPUs is 17.5 GB per GPU: more than a T4's 14.4 GB usable
    # before any activations (1-GPU instances: no tensor parallelism to split them).
    assert "T4 x 64: at least 21.2 GB per GPU of 14.4 usable; 128 would hold it" in text
    assert "Raise Max GPUs per option (now 64)" in text
    assert "--" not in text
    assert info.value.code == "no_layout_fits"
    (t4,) = info.value.shortfalls
    assert (t4.gpu_name, t4.gpus, t4.fewest_gpus) == ("T4", 64, 128)
    assert t4.need_gb > t4.usable_gb == pytest.approx(14.4)


def test_invalid_constraints_are_refused() -> None:
    for kwargs, message in (
        ({"deadline_hours": 0}, "deadline 0 hours"),
        ({"budget_usd": -5}, "budget -5 USD"),
        ({"max_gpus": 0}, "max_gpus 0"),
        ({"gpu_count": 16, "max_gpus": 8}, "GPU count 16 is more than the 8 GPUs allowed"),
        ({"draws": 0}, "draws 0"),
        ({"pricing": "spt"}, "did you mean 'spot'"),
        ({"interruption_rates": {"aws": -1}}, "interruption rate for 'aws'"),
    ):
        with pytest.raises(ValueError, match=message):
            plan(**kwargs)


@pytest.mark.parametrize("name", ["resnet50-imagenet-90ep", "llm-7b-140b"])
def test_nothing_left_to_plan_is_an_empty_plan_that_says_why(name: str) -> None:
    unpriced = CLOUD.assign(spot_usd_per_hour=np.nan)
    request = PlanRequest(get_workload(name), "bf16", "spot", max_gpus=8)
    result = make_plan(request, unpriced, RESULTS)
    assert result.rows.empty and list(result.rows.columns) == list(PLAN_COLUMNS)
    assert result.picks.empty and result.frontier.empty and result.options.empty
    words = notes_text(result.notes)
    assert result.notes[0].to_dict() == {
        "code": "offers_dropped",
        "offers": 3,
        "gpus": ("A100-SXM-80GB", "H100-SXM"),
        "reason": "no_price",
        "pricing": "spot",
    }
    assert words[0] == "3 offers left out: no spot price (A100-SXM-80GB, H100-SXM)"
    assert [n.code for n in result.notes][1:2] == ["no_options"]
    assert words[1].startswith("no option left to plan")
