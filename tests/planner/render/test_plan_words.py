"""The engine returns codes and figures; planner.render.plan_words words them."""

from __future__ import annotations

import pandas as pd
import pytest

from planner.choose.pareto import STATUS_CASES, STATUS_COLUMNS, constraint_status, picks
from planner.render.plan_words import (
    _method_lines,
    assumption_lines,
    constraint_text,
    hours_text,
    pick_reason,
    usd_text,
    worded_picks,
    worded_status,
)
from planner.render.rows import constraint_phrases
from planner.request import PlanRequest
from planner.workloads.catalog import get_workload
from tests.planner.choose.test_pareto import options_frame
from tests.planner.choose.test_plan_constraints import plan


def test_the_engine_tables_hold_codes_and_figures_not_sentences() -> None:
    status = constraint_status(options_frame(), 10.0, 300.0, 512)
    assert list(status.columns) == list(STATUS_COLUMNS)
    assert "note" not in status.columns
    for row in status.to_dict(orient="records"):
        assert row["case"] in STATUS_CASES[row["constraint"]]
    chosen = picks([10.0, 5.0, 2.0], [100.0, 120.0, 300.0], None, None)
    assert "why" not in chosen.columns


def test_each_constraint_case_is_worded_with_its_figures() -> None:
    status = constraint_status(options_frame(), 1000.0, 1000.0, 512).set_index("constraint")
    text = {c: constraint_text(status.loc[c].to_dict() | {"constraint": c}) for c in status.index}
    assert text["deadline_hours"] == "the cheapest option, a slow x1 (1 GPU), finishes in 4.2 days"
    assert text["budget_usd"] == "the fastest option, b fast x64 (512 GPUs), costs $400"
    assert text["max_gpus"] == (
        "the fastest option within the budget, b fast x64 (512 GPUs), uses 512 of 512 allowed; "
        "more might be faster"
    )
    assert text["onprem_gpus"] == "the fastest on-prem option uses 32 of the cluster's 32 GPUs"
    unbounded = constraint_status(options_frame(), None, None, 2048).set_index("constraint")
    row = unbounded.loc["max_gpus"].to_dict() | {"constraint": "max_gpus"}
    assert (
        constraint_text(row)
        == "the fastest option, b fast x64 (512 GPUs), uses 512 of 2048 allowed"
    )


def test_pick_reasons_follow_the_request() -> None:
    workload = get_workload("resnet50-imagenet-90ep")
    free = PlanRequest(workload=workload)
    bound = PlanRequest(workload=workload, deadline_hours=6.0, budget_usd=200.0)
    cheapest = {"pick": "cheapest_within_deadline"}
    assert pick_reason(cheapest, free) == "least cost (no deadline given)"
    assert pick_reason(cheapest, bound) == (
        "least cost among options finishing within the deadline"
    )
    assert pick_reason({"pick": "fastest_within_budget"}, free) == "fewest hours (no budget given)"
    value = {"pick": "best_cost_per_hour_saved", "usd_per_hour_saved": 4.0, "hours_saved": 5.0,
             "extra_usd": 20.0}  # fmt: skip
    assert pick_reason(value, free) == (
        "$4.00 more per hour saved than the cheapest feasible option (5.0 h sooner for $20.00 more)"
    )


@pytest.mark.parametrize(
    ("value", "hours", "usd"),
    [(0.25, "15 min", "$0.25"), (105.123, "4.4 days", "$105"), (0.001, "4 s", "<$0.01")],
)
def test_hours_and_dollars_read_as_people_write_them(value: float, hours: str, usd: str) -> None:
    assert (hours_text(value), usd_text(value)) == (hours, usd)


def test_worded_tables_add_the_words_beside_the_figures() -> None:
    result = plan(max_gpus=8, deadline_hours=3.0)
    status = worded_status(result)
    assert list(status.columns).index("note") == list(status.columns).index("binds") + 1
    assert all(isinstance(n, str) and n for n in status["note"])
    chosen = worded_picks(result)
    assert list(chosen.columns)[:2] == ["pick", "why"]
    assert (chosen["why"].str.len() > 0).all()
    assert len(chosen) == len(result.picks)
    lines = assumption_lines(result)
    assert any(line.startswith("Workload ") for line in lines)
    assert any(line.startswith("Constraints: ") and "deadline" in line for line in lines)


def test_an_empty_plan_still_states_its_constraints() -> None:
    result = plan(max_gpus=8, gpus=("B300",))
    assert result.rows.empty
    assert assumption_lines(result) == [
        "Constraints: at most 8 GPUs per option; GPUs B300; pricing on-demand."
    ]
    assert not hasattr(result.request, "describe")  # worded in planner.render.rows only
    chosen = worded_picks(result)
    assert chosen.empty and chosen.columns.is_unique and "why" in chosen.columns
    assert isinstance(worded_status(result), pd.DataFrame)


def test_constraint_phrases_word_every_constraint_set() -> None:
    request = plan(max_gpus=8, gpus=("B300",)).request.with_changes(
        deadline_hours=2.5, budget_usd=1234.4, providers=("aws", "gcp"), reserved_discount=0.35
    )
    assert constraint_phrases(request) == [
        "deadline 2.5 h",
        "budget $1,234",
        "at most 8 GPUs per option",
        "providers aws, gcp",
        "GPUs B300",
        "pricing on-demand",
        "assumed reserved discount 35% off on-demand",
    ]


def test_the_llm_method_line_gives_flops_per_token_with_an_si_prefix() -> None:
    for name, scale, prefix in (("llm-7b-140b", 1e9, "G"), ("llm-405b-8.1t", 1e12, "T")):
        request = PlanRequest(workload=get_workload(name), precision="bf16")
        method = " ".join(_method_lines(request))
        per_token = request.workload.flops_per_sample
        assert 1 <= per_token / scale < 1000  # 6N: ~45 GFLOP at 7B, ~2.5 TFLOP at 405B
        assert f"{per_token / scale:.3g} {prefix}FLOP per token" in method
        assert "e+" not in method
