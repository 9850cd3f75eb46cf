"""Frontier, count choice, picks and binding constraints on tiny inline sets."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from planner.choose.pareto import (
    HOURS_TIE_SHARE,
    best_cost_per_hour_saved,
    choose_counts,
    constraint_status,
    feasible_mask,
    pareto_mask,
    picks,
)
from planner.render.plan_words import constraint_text

#                 A     B     C     D      E     F     G
HOURS = np.array([10.0, 5.0, 5.0, 2.0, 12.0, 2.0, np.nan])
COST = np.array([100.0, 150.0, 120.0, 300.0, 100.0, 300.0, 1.0])


def test_frontier_excludes_dominated_rows_and_keeps_exact_ties() -> None:
    on = pareto_mask(HOURS, COST)
    # A: cheapest; C beats B at the same hours; D and F tie exactly; E is A but slower;
    # G has no time and is never on the frontier.
    assert on.tolist() == [True, False, True, True, False, True, False]


def test_same_cost_faster_option_dominates() -> None:
    assert pareto_mask([3.0, 1.0], [5.0, 5.0]).tolist() == [False, True]
    assert pareto_mask([1.0], [1.0]).tolist() == [True]
    assert pareto_mask([], []).tolist() == []


def test_feasible_needs_both_constraints_where_given() -> None:
    assert feasible_mask(HOURS, COST, None, None).tolist() == [True] * 6 + [False]
    ok = feasible_mask(HOURS, COST, deadline_hours=6, budget_usd=200)
    assert ok.tolist() == [False, True, True, False, False, False, False]


def test_count_per_offer_meets_the_deadline_at_least_cost_else_fastest() -> None:
    group = ["x", "x", "x", "y", "y"]
    hours = [8.0, 4.0, 2.0, 30.0, 20.0]
    cost = [10.0, 11.0, 13.0, 5.0, 6.0]
    assert choose_counts(group, hours, cost, deadline_hours=5).tolist() == [
        False, True, False, False, True,
    ]  # fmt: skip
    # No deadline: the cheapest count of each offer.
    assert choose_counts(group, hours, cost, None).tolist() == [True, False, False, True, False]
    # Equal cost: the faster count.
    assert choose_counts(["z", "z"], [4.0, 2.0], [7.0, 7.0], None).tolist() == [False, True]


def test_picks_on_inline_data() -> None:
    table = picks(HOURS, COST, deadline_hours=6, budget_usd=200)
    by = dict(zip(table["pick"], table["position"], strict=True))
    assert by["cheapest_within_deadline"] == 2  # C: $120 in 5 h
    assert by["fastest_within_budget"] == 2  # B and C take 5 h within $200; C is cheaper
    # Feasible: B, C. Baseline C; nothing feasible is faster: no value pick.
    assert "best_cost_per_hour_saved" not in by
    loose = picks(HOURS, COST, deadline_hours=None, budget_usd=None)
    by = dict(zip(loose["pick"], loose["position"], strict=True))
    assert by["cheapest_within_deadline"] == 0  # A: $100 in 10 h beats E (same cost, slower)
    assert by["fastest_within_budget"] == 3  # D and F tie at 2 h and $300: the first
    # From A ($100, 10 h): C saves 5 h for $20 ($4/h), D saves 8 h for $200 ($25/h).
    assert by["best_cost_per_hour_saved"] == 2
    value = loose.set_index("pick").loc["best_cost_per_hour_saved"]
    assert value["usd_per_hour_saved"] == pytest.approx(4.0)
    assert (value["hours_saved"], value["extra_usd"]) == pytest.approx((5.0, 20.0))
    assert np.isnan(loose.set_index("pick").loc["cheapest_within_deadline", "hours_saved"])


def test_cost_per_hour_saved_is_measured_from_the_cheapest_feasible_option() -> None:
    hours = np.array([100.0, 99.0, 10.0, 50.0])
    cost = np.array([1000.0, 1010.0, 1500.0, 1400.0])
    found = best_cost_per_hour_saved(hours, cost, np.ones(4, bool))
    assert found is not None
    position, rate, base = found
    # From (100 h, $1000): $10 for 1 h, $500 for 90 h ($5.56/h), $400 for 50 h ($8/h; and
    # dominated by neither). The cheapest hours are the 90 bought at $5.56 each.
    assert (base, position) == (0, 2)
    assert rate == (1500.0 - 1000.0) / 90.0
    assert best_cost_per_hour_saved(hours, cost, np.array([True, False, False, False])) is None


def test_picks_never_pay_more_for_hours_the_plan_cannot_tell_apart() -> None:
    """Two offers 13 days long, one a minute faster (a start-up assumption) for twice the
    price: the fastest pick is the cheaper of the tied pair and there is no value pick;
    an option 2% faster is a real saving and is picked."""
    hours = np.array([13.0 * 24 + 1 / 60, 13.0 * 24, 13.0 * 24 * 0.98])
    cost = np.array([1.0e6, 2.2e6, 2.5e6])
    tied = picks(hours[:2], cost[:2], deadline_hours=None, budget_usd=None)
    by = dict(zip(tied["pick"], tied["position"], strict=True))
    assert by == {"cheapest_within_deadline": 0, "fastest_within_budget": 0}
    real = picks(hours, cost, deadline_hours=None, budget_usd=None)
    by = dict(zip(real["pick"], real["position"], strict=True))
    assert by["fastest_within_budget"] == 2 and by["best_cost_per_hour_saved"] == 2
    assert HOURS_TIE_SHARE == 0.01


def options_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "provider": ["a", "b", "on-prem"],
            "instance_type": ["slow", "fast", "lab"],
            "instances": [1.0, 64.0, 4.0],
            "total_gpus": [1.0, 512.0, 32.0],
            "kind": ["cloud", "cloud", "on-prem"],
            "gpus_available": [np.nan, np.nan, 32.0],
            "hours": [100.0, 1.0, 5.0],
            "cost": [50.0, 400.0, 200.0],
        }
    )


def test_constraint_status_says_what_binds() -> None:
    status = constraint_status(options_frame(), 10.0, 300.0, 512).set_index("constraint")
    assert status.loc["deadline_hours", "binds"]
    assert status.loc["deadline_hours", "case"] == "costs_more"
    assert status.loc["deadline_hours", "delta_usd"] == pytest.approx(150.0)
    assert status.loc["deadline_hours", "option"] == "on-prem lab x4 (32 GPUs)"
    assert "meeting the deadline costs $150 more (on-prem lab x4 (32 GPUs))" in constraint_text(
        status.reset_index().iloc[0]
    )
    assert status.loc["budget_usd", "binds"]
    assert status.loc["budget_usd", "case"] == "takes_longer"
    assert status.loc["budget_usd", "delta_hours"] == pytest.approx(4.0)
    assert "within the budget the fastest takes 4.0 h longer" in constraint_text(
        status.reset_index().iloc[1]
    )
    assert not status.loc["max_gpus", "binds"]  # within the budget the on-prem one is fastest
    assert status.loc["onprem_gpus", "binds"]  # and it uses the whole cluster
    loose = constraint_status(options_frame(), 1000.0, 1000.0, 512).set_index("constraint")
    assert not loose.loc["deadline_hours", "binds"] and not loose.loc["budget_usd", "binds"]
    assert loose.loc["max_gpus", "binds"]  # the fastest uses all 512 GPUs allowed


def test_constraint_status_when_nothing_meets_names_the_closest() -> None:
    status = constraint_status(options_frame(), 0.5, 10.0, 512).set_index("constraint")
    notes = {r["constraint"]: constraint_text(r) for _, r in status.reset_index().iterrows()}
    assert notes["deadline_hours"] == (
        "nothing finishes within 30 min; the fastest option is b fast x64 (512 GPUs) at 1.0 h"
    )
    assert notes["budget_usd"] == (
        "nothing costs $10.00 or less; the cheapest option is a slow x1 (1 GPU) at $50.00"
    )
