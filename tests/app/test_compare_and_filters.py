"""The Plan page's GPU filter, exact GPU count and Compare view, and fitted table widths."""

from __future__ import annotations

import io
import json
import math
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
from streamlit.testing.v1 import AppTest

from planner.codes import Miss
from planner.onprem.tco import OnPremConfig
from planner.plan import make_plan
from planner.render.rows import worded_rows
from planner.request import PlanRequest
from planner.throughput import own_and_published_results
from planner.ui.compare import FIELDS, candidates, side_by_side
from planner.ui.plan_view import plan_sources, ranked_table
from planner.ui.tables import cell_text, fitted, text_px
from planner.workloads.catalog import WORKLOADS
from pricing.catalog import load_offers
from pricing.tiers import DEFAULT_TIERS
from tests.app.conftest import chart, table_with

Open = Callable[..., AppTest]


def _ranked(at: AppTest) -> pd.DataFrame:
    return table_with(at, "rank", "pick", "provider")


def test_gpu_filter_and_exact_count_narrow_the_rows(open_page: Open) -> None:
    at = open_page("plan", {"gpus": ["H100-SXM"], "gpu_count": "8"})
    rows = _ranked(at)
    assert set(rows["gpu_name"]) == {"H100-SXM"}
    assert set(rows["total_gpus"]) == {8}
    assert {"aws", "gcp", "azure"} <= set(rows["provider"])
    assert at.query_params["gpu_count"] == "8"
    at.number_input(key="plan.gpu_count").set_value(16).run()
    assert set(_ranked(at)["total_gpus"]) == {16}


def test_an_exact_count_above_the_maximum_is_an_inline_error(open_page: Open) -> None:
    at = open_page("plan", {"gpu_count": "64", "max_gpus": "8"})
    assert "**Exact GPU count**: GPU count 64 is more than the 8 GPUs allowed" in at.error[0].value
    assert not at.dataframe


def test_compare_view_puts_chosen_options_side_by_side(open_page: Open, results_dir: Path) -> None:
    at = open_page("plan", {"gpus": ["H100-SXM"], "gpu_count": "8"})
    choice = at.multiselect(key="plan.compare")
    assert 2 <= len(choice.value) <= 4  # the picks by default
    labels = [o for o in choice.options if o.startswith(("aws ", "gcp ", "azure "))][:3]
    choice.set_value(labels).run()
    (table,) = at.table  # a static table: it wraps to the page, four options fit
    shown = table.value
    assert len(shown.columns) == 1 + len(labels)
    assert all(c.startswith(("aws ", "gcp ", "azure ")) for c in shown.columns[1:])
    assert list(shown[""]) == list(FIELDS)
    # the same figures as the planner's own rows, worded
    offers = load_offers()
    table, _ = own_and_published_results([str(results_dir)])
    buyable = offers.loc[offers["tier"].isin(DEFAULT_TIERS)]  # the page's default providers
    providers = tuple(sorted(set(buyable["provider"])))
    request = PlanRequest(WORKLOADS["resnet50-imagenet-90ep"], providers=providers,
                          tiers=tuple(DEFAULT_TIERS),
                          gpus=("H100-SXM",), gpu_count=8)  # fmt: skip
    expected = candidates(make_plan(request, offers, table)).set_index("label").loc[labels]
    words = side_by_side(expected.reset_index())
    assert shown.equals(words)
    assert all(v.startswith("$") for v in shown.set_index("").loc["$/GPU-hour"])
    assert all(len(d) == 10 for d in shown.set_index("").loc["price date"])


def test_compare_csv_has_the_chosen_rows() -> None:
    plan = make_plan(
        PlanRequest(WORKLOADS["resnet50-imagenet-90ep"], max_gpus=8),
        load_offers(),
        own_and_published_results([])[0],
    )
    table = candidates(plan)
    chosen = table.head(2)
    csv = chosen.drop(columns="label").to_csv(index=False)
    back = pd.read_csv(io.StringIO(csv))
    assert back["option_id"].tolist() == chosen["option_id"].tolist()
    assert {"hours_p10", "cost_p90_usd", "usd_per_gpu_hour", "price_date"} <= set(back.columns)


def test_every_column_is_wide_enough_for_its_longest_cell(open_page: Open) -> None:
    at = open_page("plan")
    configs = [json.loads(e.proto.columns) for e in at.dataframe]
    grid = next(c for c in configs if "rank" in c and "pick" in c)
    widths = {c: spec.get("width") for c, spec in grid.items()}
    rows = _ranked(at)
    config: dict[str, Any] = {
        "cost_usd": {"label": "cost", "type_config": {"type": "number", "format": "dollar"}},
        "gpu_name": {"label": "GPU"},
    }
    sized = fitted(pd.DataFrame({"cost_usd": [4381.2]}), config)
    for column in ("cost_usd", "gpu_name", "instance_type", "region"):
        widest = max(text_px(cell_text(v, "dollar" if column == "cost_usd" else None))
                     for v in rows[column])  # fmt: skip
        assert widths[column] >= math.ceil(widest) + 16, column  # the grid's padding
    assert sized["cost_usd"]["width"] >= text_px("$4,381.20") + 16


def test_log_axes_read_as_money_and_durations(open_page: Open) -> None:
    at = open_page("plan")
    figure = chart(at, "plan.chart")
    x, y = figure["layout"]["xaxis"], figure["layout"]["yaxis"]
    assert x["type"] == "log" == y["type"]
    assert set(x["ticktext"]) & {"1 min", "1 h", "1 day"}
    assert len(y["ticktext"]) >= 2
    assert all(re.fullmatch(r"\$(\d+(k|M)?|0\.\d\d)", t) for t in y["ticktext"]), y["ticktext"]


def test_prices_table_has_readable_headers_dollars_and_fitted_widths(open_page: Open) -> None:
    at = open_page("prices")
    configs = [json.loads(e.proto.columns) for e in at.dataframe]
    offers = next(c for c in configs if "instance_type" in c)
    assert offers["instance_type"]["label"] == "instance"
    assert offers["spot_usd_per_gpu_hour"]["label"] == "spot $/GPU-h"
    assert offers["usd_per_hour"]["type_config"]["format"] == "dollar"
    frame = table_with(at, "instance_type", "usd_per_hour")
    widest = max(text_px(str(v)) for v in frame["instance_type"])
    assert offers["instance_type"]["width"] >= widest + 16


def test_compare_words_the_price_source_and_misses_from_their_codes() -> None:
    config = OnPremConfig(name="lab", gpu_name="H100-SXM", servers=1, gpus_per_server=8)
    plan = make_plan(
        PlanRequest(
            WORKLOADS["resnet50-imagenet-90ep"], max_gpus=8, deadline_hours=0.01, budget_usd=0.5,
            onprem=(config,), onprem_sources=("lab.toml",),
        ),
        load_offers(),
        own_and_published_results([])[0],
    )  # fmt: skip
    table = candidates(plan)
    onprem = table.loc[table["kind"] == "on-prem"].head(1)
    cloud = table.loc[table["kind"] == "cloud"].head(1)
    chosen = pd.concat([onprem, cloud], ignore_index=True)
    assert chosen["price_source"].tolist()[0] == "lab.toml"  # the engine keeps the source id
    words = side_by_side(chosen).set_index("")
    rate = float(onprem["amortized_usd_per_gpu_hour"].iloc[0])
    assert words.iloc[:, 0]["price source"] == (
        f"lab.toml: amortized ${rate:.2f}/GPU-h at {config.utilization:.0%} utilization"
    )
    assert words.iloc[:, 1]["price source"] == str(cloud["price_source"].iloc[0]).split(" (")[0]
    assert set(words.loc["meets deadline and budget"]) == {"no: misses deadline, budget"}
    # The figures decide, not a text: another utilization reads as such, and a row that
    # misses only the budget says so whatever its text column held before.
    changed = chosen.assign(
        utilization=[0.5, float("nan")],
        misses=[(Miss.BUDGET,), (Miss.DEADLINE,)],
    )
    words = side_by_side(changed).set_index("")
    assert "at 50% utilization" in words.iloc[:, 0]["price source"]
    assert words.loc["meets deadline and budget"].tolist() == [
        "no: misses budget", "no: misses deadline",
    ]  # fmt: skip
    # The CSV of the chosen rows is written in words, without the figures behind them.
    csv = pd.read_csv(io.StringIO(worded_rows(chosen.drop(columns="label")).to_csv(index=False)))
    assert csv["misses"].tolist() == ["deadline, budget"] * 2
    assert csv["price_source"].iloc[0].startswith("lab.toml: amortized $")
    assert not {"price_basis", "utilization", "amortized_usd_per_gpu_hour"} & set(csv.columns)


def test_the_ranked_table_and_sources_word_on_prem_prices_from_their_figures() -> None:
    config = OnPremConfig(name="lab", gpu_name="H100-SXM", servers=1, gpus_per_server=8)
    plan = make_plan(
        PlanRequest(
            WORKLOADS["resnet50-imagenet-90ep"], max_gpus=8, deadline_hours=0.01,
            onprem=(config,), onprem_sources=("lab.toml",),
        ),
        load_offers(),
        own_and_published_results([])[0],
    )  # fmt: skip
    local = plan.rows["kind"] == "on-prem"
    rate = float(plan.rows.loc[local, "amortized_usd_per_gpu_hour"].iloc[0])
    words = f"lab.toml: amortized ${rate:.2f}/GPU-h at 70% utilization (planner.onprem.tco)"
    shown = ranked_table(plan)
    assert shown.loc[local.to_numpy(), "price_source"].tolist() == [words]
    assert set(shown["misses"]) == {"deadline"}
    assert words in plan_sources(plan, [])
    # Another utilization in the figures reads as such: nothing parses the words back.
    half = replace(plan, rows=plan.rows.assign(utilization=plan.rows["utilization"] * 0.5))
    assert any("at 35% utilization" in line for line in plan_sources(half, []))
