"""The Plan page under AppTest: its picks, chart and table follow its inputs, a link
reproduces the planner's own answer, and bad inputs are inline messages."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from edge.format import duration, money
from planner.choose.constraints import DEFAULT_MAX_GPUS
from planner.plan import Plan, make_plan
from planner.render.plan_words import assumption_lines
from planner.request import PlanRequest
from planner.throughput import own_and_published_results
from planner.ui.export import csv_bytes, report_html
from planner.ui.plan_view import (
    PICK_TITLES,
    band_text,
    headline,
    option_text,
    plan_report,
    warning_lines,
)
from planner.workloads.catalog import WORKLOADS, Workload, llm_workload
from pricing.catalog import load_offers, read_manifest, unique_values
from pricing.tiers import DEFAULT_TIERS
from tests.app.conftest import chart, metrics, plain, table_with, trace, values

Open = Callable[..., AppTest]
DEFAULT = "resnet50-imagenet-90ep"
CHEAPEST, FASTEST, VALUE = PICK_TITLES.values()


def direct(results_dir: Path, workload: Workload | None = None, **kwargs: Any) -> Plan:
    """The plan make_plan gives for the page's default inputs, changed by `kwargs`."""
    offers = load_offers()
    table, _ = own_and_published_results([str(results_dir)])
    # The page weighs the default tiers' providers (no marketplace hosts) by default.
    buyable = offers.loc[offers["tier"].isin(DEFAULT_TIERS)]
    kwargs.setdefault("providers", unique_values(buyable, "provider"))
    kwargs.setdefault("tiers", DEFAULT_TIERS)
    kwargs.setdefault("max_gpus", DEFAULT_MAX_GPUS)
    return make_plan(PlanRequest(workload or WORKLOADS[DEFAULT], **kwargs), offers, table)


def shown_options(at: AppTest) -> list[str]:
    """The option named under each pick (bold markdown lines in the pick boxes)."""
    return [
        plain(m.value.strip("*")) for m in at.markdown if re.fullmatch(r"\*\*[^*]+\*\*", m.value)
    ]


def expected_options(plan: Plan) -> list[str]:
    return [option_text(plan.pick(name)) for name in plan.picks["pick"]]


def ranked(at: AppTest) -> pd.DataFrame:
    return table_with(at, "rank", "throughput_source", "price_date", "price_source")


def test_default_view_shows_the_planners_picks_chart_and_sources(
    open_page: Open, results_dir: Path
) -> None:
    at = open_page("plan")
    plan = direct(results_dir)
    shown = metrics(at)
    assert list(shown) == [CHEAPEST, FASTEST, VALUE]
    cheapest = plan.pick("cheapest_within_deadline")
    assert cheapest is not None
    assert shown[CHEAPEST].startswith(money(cheapest["cost_usd"], short=True) + " · ")
    assert shown_options(at) == expected_options(plan)
    table = ranked(at)
    assert len(table) == len(plan.rows)
    assert table["instance_type"].tolist() == plan.rows["instance_type"].tolist()
    assert table["cost_usd"].is_monotonic_increasing  # no deadline: all feasible, by cost
    assert set(table["throughput_source"]) <= {
        "measured",
        "published",
        "sibling",
        "scaled",
        "estimated",
    }
    # A bundled extract's date is a lower bound, and the table says so.
    bounded = (plan.rows["price_date_basis"] == "not-before").to_numpy()
    assert bounded.any()
    assert set(plan.rows["price_date_basis"]) <= {"exact", "not-before"}
    assert plan.rows["price_date"].str.fullmatch(r"\d{4}-\d{2}-\d{2}").all()
    assert table["price_date"].tolist() == [
        f"≥ {d}" if b else d for d, b in zip(plan.rows["price_date"], bounded, strict=True)
    ]
    assert {"hours_p10", "hours_p90", "cost_p10_usd", "cost_p90_usd", "throughput_detail"} <= set(
        table.columns
    )
    assert table.loc[0, "pick"] == "cheapest"
    assert "Prices as of: aws (catalog extract, not before 2025-06)" in plain(at.caption[0].value)
    figure = chart(at, "plan.chart")
    assert figure["layout"]["xaxis"]["type"] == "log" == figure["layout"]["yaxis"]["type"]
    frontier = trace(figure, "time/cost frontier (every GPU count)")
    assert len(frontier["x"]) == len(plan.frontier)
    assert frontier["x"] == sorted(frontier["x"])
    star = trace(figure, "pick: fastest")
    fastest = plan.pick("fastest_within_budget")
    assert fastest is not None
    assert star["x"] == [pytest.approx(fastest["hours_to_train"])]
    lam = trace(figure, "lambda")
    assert lam["error_x"]["symmetric"] is False
    assert max(values(lam["error_x"]["array"])) > 0  # P90 whiskers drawn
    first = plan.rows.query("provider == 'lambda'").iloc[0]
    hover = lam["customdata"][0]
    assert hover[0] == option_text(first)  # instance, instances and region
    assert hover[1].startswith(f"{first['total_gpus']:g} x {first['gpu_name']}")
    assert hover[2].endswith(f"({first['throughput_source']})")
    first_date = first["price_date"]
    if first["price_date_basis"] == "not-before":
        first_date = f"≥ {first_date}"
    assert hover[4].endswith(f"priced {first_date}")
    assert at.query_params["workload"] == DEFAULT
    assert at.query_params["pricing"] == "on-demand"
    assert "deadline_hours" not in at.query_params


def test_figures_read_as_edge_format_words_them() -> None:
    """Money and hours on the Plan page are edge.format's words: thousands as k from
    $1,000, whole hours from 10 h, whole days from 100 days."""
    row = pd.Series(
        {
            "cost_usd": 4381.2,
            "hours_to_train": 12.34,
            "cost_p10_usd": 4100.0,
            "cost_p90_usd": 123456.0,
            "hours_p10": 11.0,
            "hours_p90": 2960.0,
        }
    )
    assert headline(row) == "$4.38k · 12 h"
    assert band_text(row) == "P10–P90: 11 h–123 days, $4,100–$123,456"


def test_the_assumptions_list_every_line_and_the_stale_price_warning_keeps_its_fix(
    open_page: Open, results_dir: Path
) -> None:
    at = open_page("plan")
    plan = direct(results_dir)
    listed = next(plain(m.value) for m in at.markdown if "Precision fp16" in m.value)
    assert listed.count("\n- ") + 1 == len(assumption_lines(plan)) + len(warning_lines(plan))
    # The bundled catalog extracts are stale; the warning ends with how to refresh them.
    assert "`gpuplan pricing refresh skypilot` (or `aws-public`, `azure`)" in listed.replace(
        "\\", ""
    )


def test_a_tighter_deadline_changes_the_cheapest_pick(open_page: Open, results_dir: Path) -> None:
    loose = direct(results_dir).pick("cheapest_within_deadline")
    assert loose is not None
    deadline = round(float(loose["hours_to_train"]) / 2, 2)  # the cheapest misses it
    tight = direct(results_dir, deadline_hours=deadline).pick("cheapest_within_deadline")
    assert tight is not None and tight["hours_to_train"] <= deadline

    at = open_page("plan")
    before = shown_options(at)[0]
    at.number_input(key="plan.deadline_hours").set_value(deadline).run()
    assert not at.exception
    after = shown_options(at)[0]
    assert before == option_text(loose) != after == option_text(tight)
    assert at.query_params["deadline_hours"] == f"{deadline:g}"
    figure = chart(at, "plan.chart")
    assert trace(figure, f"deadline {deadline:g} h")["x"] == [deadline, deadline]


def test_a_budget_changes_the_fastest_pick(open_page: Open, results_dir: Path) -> None:
    free = direct(results_dir).pick("fastest_within_budget")
    assert free is not None
    budget = round(float(free["cost_usd"]) / 2)  # the fastest is over it
    bound = direct(results_dir, budget_usd=budget).pick("fastest_within_budget")
    assert bound is not None and bound["cost_usd"] <= budget

    at = open_page("plan")
    at.number_input(key="plan.budget_usd").set_value(float(budget)).run()
    assert not at.exception
    assert shown_options(at)[1] == option_text(bound) != option_text(free)
    assert float(at.query_params["budget_usd"]) == budget


def test_pricing_kind_changes_the_prices(open_page: Open) -> None:
    at = open_page("plan")
    on_demand = ranked(at)
    at.radio(key="plan.pricing").set_value("spot").run()
    spot = ranked(at)
    assert set(spot["pricing"]) == {"spot"}
    assert {"interruptions_per_hour", "interruption_rate_source"} <= set(spot.columns)
    both = on_demand.merge(spot, on=["provider", "region", "instance_type"], suffixes=("", "_s"))
    assert len(both) > 10
    assert (both["usd_per_hour_s"] < both["usd_per_hour"]).mean() > 0.9
    # The bundled snapshots carry no reserved prices: the page says so in the words the
    # CLI's plan and tco use (pricing.reserved.no_reserved_message).
    at.radio(key="plan.pricing").set_value("reserved-1y").run()
    assert not at.exception
    assert "o reserved-1y price for the offers chosen" in plain(at.error[0].value)  # N or n
    assert "--reserved-discount 0.35" in plain(at.error[0].value)
    assert not at.metric
    # With a negotiated discount every row is priced, and labelled an assumption.
    at.number_input(key="plan.reserved_discount").set_value(35.0).run()
    reserved = ranked(at)
    assert set(reserved["pricing"]) == {"reserved-1y"} and len(reserved) > 10
    assert reserved["price_source"].str.contains("assumed: on-demand less 35%").all()
    both = on_demand.merge(
        reserved, on=["provider", "region", "instance_type"], suffixes=("", "_r")
    )
    ratio = both["option_usd_per_hour_r"] / both["option_usd_per_hour"]
    assert ratio.round(6).eq(0.65).all()


def test_spot_interruption_rate_override_lengthens_the_runs(open_page: Open) -> None:
    at = open_page("plan", {"pricing": "spot", "providers": ["aws"]})
    before = ranked(at)
    assert set(before["interruption_rate_source"]) == {"default:aws"}
    at.number_input(key="plan.rate_aws").set_value(0.5).run()
    after = ranked(at)
    assert set(after["interruption_rate_source"]) == {"user"}
    assert after["spot_overhead_factor"].min() > before["spot_overhead_factor"].max()
    assert at.query_params["rate_aws"] == "0.5"


def test_providers_and_regions_filter_the_rows(open_page: Open) -> None:
    at = open_page("plan")
    at.multiselect(key="plan.providers").set_value(["aws", "gcp"]).run()
    assert set(ranked(at)["provider"]) == {"aws", "gcp"}
    regions = at.multiselect(key="plan.regions").options
    assert "us-east-1" in regions and "Sweden, SE, EU" not in regions
    at.multiselect(key="plan.regions").set_value(["us-east-1"]).run()
    assert set(ranked(at)["region"]) == {"us-east-1"}
    assert at.query_params["providers"] == ["aws", "gcp"]
    assert at.query_params["regions"] == "us-east-1"


def test_describing_an_llm_plans_in_tokens(open_page: Open, results_dir: Path) -> None:
    at = open_page("plan")
    at.radio(key="plan.job").set_value("llm").run()
    assert not at.exception
    table = ranked(at)
    assert set(table["throughput_unit"]) == {"tokens/s"}
    assert {"mfu", "memory_per_gpu_gb"} <= set(table.columns)
    assert at.query_params["params_b"] == "7" and at.query_params["tokens_b"] == "140"
    assert "workload" not in at.query_params
    plan = direct(results_dir, llm_workload(7e9, 140e9))
    assert shown_options(at) == expected_options(plan)
    at.number_input(key="plan.params_b").set_value(1.3).run()
    assert "llm-1.3b-140b" in chart(at, "plan.chart")["layout"]["title"]["text"]


def test_a_link_reproduces_the_planners_pick(open_page: Open, results_dir: Path) -> None:
    providers = ["aws", "azure", "gcp"]
    loose = direct(results_dir, providers=providers, pricing="spot")
    cheapest = loose.pick("cheapest_within_deadline")
    assert cheapest is not None
    deadline = round(float(cheapest["hours_to_train"]) / 3, 1)
    query = {
        "deadline_hours": str(deadline),
        "providers": providers,
        "pricing": "spot",
        "precision": "fp16",
    }
    at = open_page("plan", query)
    plan = direct(results_dir, providers=providers, pricing="spot", deadline_hours=deadline)
    assert not at.warning
    assert shown_options(at) == expected_options(plan)
    assert option_text(plan.pick("cheapest_within_deadline")) != option_text(cheapest)
    assert at.number_input(key="plan.deadline_hours").value == deadline
    assert at.query_params["providers"] == providers


def test_onprem_comes_from_the_example_or_the_onprem_page(open_page: Open) -> None:
    at = open_page("plan", {"onprem": "true"})
    onprem = ranked(at).query("provider == 'on-prem'")
    assert len(onprem) == 1
    assert onprem["price_source"].iloc[0].startswith("examples/onprem-dgx-h100.toml: amortized")
    assert "on-prem dgx-h100-x4 from examples/onprem-dgx-h100.toml" in plain(at.markdown[0].value)
    at.radio(key="plan.onprem_config").set_value("onprem_page").run()
    # Not opened in this session: said, and the example is used.
    assert "has not been opened in this session" in plain(at.info[0].value)
    assert len(ranked(at).query("provider == 'on-prem'")) == 1


def test_onprem_page_inputs_are_used_and_their_errors_named(
    results_dir: Path,
) -> None:
    from tests.app.conftest import page_script

    def run(remembered: dict[str, Any]) -> AppTest:
        at = AppTest.from_file(str(page_script("plan")), default_timeout=90)
        at.session_state["_gpuplan_remembered"] = remembered
        at.query_params.update({"onprem": "true", "onprem_config": "onprem_page"})
        return at.run()

    at = run({"onprem.gpu": "A100-SXM-80GB", "onprem.servers": 2, "onprem.utilization": 0.9})
    assert not at.exception and not at.info
    row = ranked(at).query("provider == 'on-prem'").iloc[0]
    assert row["gpu_name"] == "A100-SXM-80GB"
    assert "the Cloud vs on-prem page's inputs" in row["price_source"]
    assert "90% utilization" in row["price_source"]
    bad = run({"onprem.utilization": 0.0})
    assert not bad.exception and not bad.metric
    assert "field 'utilization'" in plain(bad.error[0].value)
    assert "Fix it on the Cloud vs on-prem page" in plain(bad.error[0].value)


@pytest.mark.parametrize(
    ("key", "value", "field"),
    [
        ("plan.budget_usd", 0.0, "**Budget (USD)**: budget 0.0 USD: it must be a number > 0"),
        ("plan.deadline_hours", 0.0, "**Deadline (hours)**: deadline 0.0 hours: it must be"),
    ],
)
def test_zero_budget_or_deadline_is_an_inline_error(
    open_page: Open, key: str, value: float, field: str
) -> None:
    at = open_page("plan")
    at.number_input(key=key).set_value(value).run()
    assert not at.exception
    assert len(at.error) == 1 and plain(at.error[0].value).startswith(field)
    assert "clear the field" in plain(at.error[0].value)
    assert not at.metric and not at.get("plotly_chart")


def test_zero_budget_in_a_link_is_the_same_error(open_page: Open) -> None:
    at = open_page("plan", {"budget_usd": "0"})
    assert "budget 0.0 USD: it must be a number > 0" in plain(at.error[0].value)


def test_an_llm_of_zero_parameters_is_an_inline_error(open_page: Open) -> None:
    at = open_page("plan", {"job": "llm", "params_b": "0"})
    assert not at.exception and not at.metric
    assert "**Parameters (billions)** 0" in plain(at.error[0].value)
    assert "an LLM needs params > 0" in plain(at.error[0].value)


def test_an_llm_that_fits_nowhere_is_an_inline_error(open_page: Open) -> None:
    at = open_page("plan", {"job": "llm", "params_b": "70000", "max_gpus": "8"})
    assert not at.exception and not at.metric
    message = plain(at.error[0].value)
    assert "does not fit in GPU memory at any GPU count offered" in message
    assert "Raise Max GPUs per option (now 8)" in message and "--max-gpus" not in message


def test_a_deadline_nothing_meets_says_so_and_names_the_fastest(
    open_page: Open, results_dir: Path
) -> None:
    fastest = direct(results_dir).pick("fastest_within_budget")
    assert fastest is not None
    at = open_page("plan", {"deadline_hours": "0.001"})
    assert not at.error
    warning = plain(at.warning[0].value)
    assert warning.startswith("Nothing finishes within 4 s; the fastest option is aws")
    assert f"{fastest['instance_type']} x{fastest['instances']:g}" in warning
    assert metrics(at)[CHEAPEST] == "none" == metrics(at)[VALUE]
    assert "Nothing meets both the deadline and the budget." in [plain(c.value) for c in at.caption]


def test_no_provider_is_a_message_not_an_error(open_page: Open) -> None:
    at = open_page("plan")
    at.multiselect(key="plan.providers").set_value([]).run()
    assert not at.exception
    assert "Pick at least one provider" in plain(at.info[0].value)


def test_the_csv_and_report_carry_the_rows_picks_and_sources(results_dir: Path) -> None:
    plan = direct(results_dir, deadline_hours=2.0, pricing="spot")
    manifest = read_manifest()
    html = report_html(plan_report(plan, manifest, "http://x/?deadline_hours=2&pricing=spot"))
    page = html.replace("\u200b", "")  # the break opportunities after "_" in table cells
    assert "<h1>Plan: resnet50-imagenet-90ep (fp16, spot)</h1>" in page
    for name in plan.picks["pick"]:
        row = plan.pick(name)
        assert row is not None
        assert f"{PICK_TITLES[name]}: {option_text(row)}" in page
    for instance in plan.rows["instance_type"].head(20):
        assert f"<td>{instance}</td>" in page
    for info in manifest:
        if info.provider in set(plan.rows["provider"]):
            # The report never shows a bounded date as exact.
            dated = (
                f"prices of ≥ {info.priced_at} (catalog extract, {info.date_bound})"
                if info.date_bound
                else f"prices of {info.priced_at}"
            )
            assert f"{info.provider} {dated} ({info.source})" in page
            assert f"{info.provider} prices of {info.priced_at} (" not in page
    assert "Throughput sources: " in page and "throughput_detail" in page
    assert "Deadline binds: The cheapest option takes" in page
    picked = plan.pick("fastest_within_budget")
    assert picked is not None  # durations and dollars in words, not 2.34e+06
    assert f"<td>{duration(picked['hours_to_train'])}</td>" in page
    assert f"<td>{money(picked['cost_usd'])}</td>" in page
    # the app's headers, never a raw column name
    assert "<th>hours P10</th>" in page and "hours_to_train</th>" not in page
    assert page.count("Plotly.newPlot") == 1 and not re.search(r"<script[^>]*\bsrc=", page)
    assert "http://x/?deadline_hours=2&amp;pricing=spot" in page

    csv = pd.read_csv(io.BytesIO(csv_bytes(plan.rows)))
    assert csv["instance_type"].tolist() == plan.rows["instance_type"].tolist()
    assert csv["throughput_source"].tolist() == plan.rows["throughput_source"].tolist()
    assert csv["price_date"].astype(str).tolist() == plan.rows["price_date"].tolist()
    assert csv["price_date_basis"].tolist() == plan.rows["price_date_basis"].tolist()
    assert "not-before" in set(csv["price_date_basis"])
    ranked_dates = set(re.findall(r"<td>(≥ \d{4}-\d{2}-\d{2})</td>", page))
    assert ranked_dates  # the report's tables show the bound, not a bare date
    assert csv["price_source"].tolist() == plan.rows["price_source"].tolist()


def test_precision_changes_the_numbers(open_page: Open) -> None:
    at = open_page("plan")
    before = ranked(at)
    at.radio(key="plan.precision").set_value("tf32").run()
    after = ranked(at)
    assert not at.exception
    assert before["throughput"].max() != after["throughput"].max()
    assert at.query_params["precision"] == "tf32"


def test_the_onprem_pages_inputs_carry_over_in_the_session(results_dir: Path) -> None:
    from tests.app.conftest import page_script
    from tests.conftest import ROOT

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.switch_page(str(page_script("onprem").relative_to(ROOT))).run()
    at.number_input(key="onprem.servers").set_value(2).run()
    at.number_input(key="onprem.utilization").set_value(0.5).run()
    at.switch_page(str(page_script("plan").relative_to(ROOT))).run()
    at.toggle(key="plan.onprem").set_value(True).run()
    at.radio(key="plan.onprem_config").set_value("onprem_page").run()
    assert not at.exception and not at.info
    row = ranked(at).query("provider == 'on-prem'").iloc[0]
    assert "(2 x 8-GPU server)" in row["instance_type"]
    assert "50% utilization" in row["price_source"]


def test_own_results_name_the_folder_and_leave_the_samples_out(
    open_page: Callable[..., AppTest], results_dir: Path
) -> None:
    at = open_page("plan")
    (own,) = [e for e in at.expander if e.label == "Own results: used and skipped"]
    said = plain(" ".join(m.value for m in own.markdown))
    assert f"Own results are read from {results_dir.resolve()}" in said
    assert "No own results there" in said  # the bundled samples are not the user's
    assert "skipped" not in said and "other workloads" not in said


def test_filters_that_leave_only_the_onprem_option_plan_it(open_page: Open) -> None:
    """Azure among the neoclouds only (it is a hyperscaler) beside the on-prem example: the
    on-prem option plans (it has no vCPUs, which once raised a KeyError)."""
    at = open_page("plan", {"onprem": "true", "providers": "azure", "tiers": "neocloud"})
    assert set(ranked(at)["provider"]) == {"on-prem"}
    assert not at.error


def test_the_chart_holds_every_point_and_ticks_at_every_unit_read(results_dir: Path) -> None:
    """The fastest star (a frontier option at many GPUs) sat above the cost axis's top tick
    when the axes were fitted to the ranked rows alone; the axes now hold every trace, and
    the time axis ticks at each of 1 h, 1 day, 1 week, 1 month, 3 months and 1 year that
    falls on it."""
    from planner.ui.plan_view import plan_figure

    for plan in (direct(results_dir), direct(results_dir, deadline_hours=200.0)):
        figure = plan_figure(plan).to_plotly_json()
        xaxis, yaxis = figure["layout"]["xaxis"], figure["layout"]["yaxis"]
        (x_low, x_high), (y_low, y_high) = xaxis["range"], yaxis["range"]
        for item in figure["data"]:
            xs = np.asarray(values(item["x"]), float)
            ys = np.asarray(values(item["y"]), float)
            assert (np.log10(xs) >= x_low).all() and (np.log10(xs) <= x_high).all(), item["name"]
            assert (np.log10(ys) >= y_low).all() and (np.log10(ys) <= y_high).all(), item["name"]
        fastest = plan.pick("fastest_within_budget")
        assert fastest is not None
        # a tick above the fastest (most expensive) star, and below the cheapest
        assert max(yaxis["tickvals"]) >= fastest["cost_usd"] / 10**0.25
        on_axis = {"1 h": 1, "1 day": 24, "1 week": 168, "1 month": 720, "3 months": 2160,
                   "1 year": 8760}  # fmt: skip
        expected = [t for t, h in on_axis.items() if x_low <= np.log10(h) <= x_high]
        assert set(expected) <= set(xaxis["ticktext"]), (expected, xaxis["ticktext"])
        assert all(x_low <= np.log10(v) <= x_high for v in xaxis["tickvals"])
