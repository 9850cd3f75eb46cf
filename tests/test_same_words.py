"""One Plan reads the same in the CLI, the app and the HTML report: every figure a pick shows
is worded by edge.format and every reason by planner.render, in all three."""

from __future__ import annotations

import html
import re

import pytest

from edge.format import duration, money, money_range
from planner.plan import Plan, make_plan
from planner.render.plan_tables import print_plan
from planner.render.plan_words import pick_reason, worded_status
from planner.request import PlanRequest
from planner.throughput import own_and_published_results
from planner.workloads.catalog import get_workload
from pricing.catalog import load_offers, read_manifest

PICKED = ("cheapest_within_deadline", "fastest_within_budget", "best_cost_per_hour_saved")


@pytest.fixture(scope="module")
def plan() -> Plan:
    request = PlanRequest(
        get_workload("resnet50-imagenet-90ep"), "fp16", providers=("aws",), gpus=("H100", "A100"),
        max_gpus=64, deadline_hours=8.0,
    )  # fmt: skip
    results, _ = own_and_published_results([])
    return make_plan(request, load_offers(), results)


def cli_text(plan: Plan, capsys: pytest.CaptureFixture[str]) -> str:
    print_plan(plan, view="picks", width=400)
    return capsys.readouterr().out


def app_and_report(plan: Plan) -> tuple[list[str], str]:
    pytest.importorskip("streamlit")
    from planner.ui.export import report_html
    from planner.ui.plan_view import pick_lines, plan_report

    report = report_html(plan_report(plan, read_manifest()))
    return pick_lines(plan), html.unescape(report)


def test_every_pick_has_the_same_figures_and_reason_everywhere(
    plan: Plan, capsys: pytest.CaptureFixture[str]
) -> None:
    cli = cli_text(plan, capsys)
    app_lines, report = app_and_report(plan)
    assert len(plan.picks) >= 2
    for name in PICKED:
        row = plan.pick(name)
        if row is None:
            continue
        reason = pick_reason(row, plan.request)
        cost, hours = float(row["cost_usd"]), float(row["hours_to_train"])
        band = money_range(float(row["cost_p10_usd"]), float(row["cost_p90_usd"]))
        # The CLI's picks table: short money, the duration, the P10-P90 dollars, the reason.
        line = next(x for x in cli.splitlines() if reason in x)
        assert money(cost, short=True) in line and duration(hours) in line and band in line
        # The app's pick line and the report's summary: the same words, at full length.
        app = next(x for x in app_lines if reason in x)
        assert money(cost) in app and duration(hours) in app
        assert app in report
        # Read back, the figures are the plan's to the precision shown.
        shown = float(re.search(r"\$([\d,.]+) in", app)[1].replace(",", ""))  # type: ignore[index]
        assert shown == pytest.approx(cost, rel=0.01, abs=0.01)


def test_constraints_read_the_same_in_the_cli_and_the_report(
    plan: Plan, capsys: pytest.CaptureFixture[str]
) -> None:
    print_plan(plan, view="constraints", width=400)
    cli = " ".join(capsys.readouterr().out.split())
    _, report = app_and_report(plan)
    report = " ".join(report.split())
    notes = worded_status(plan)["note"].tolist()
    assert notes
    for note in notes:
        assert " ".join(str(note).split()) in cli
        assert " ".join(str(note).split()) in report
