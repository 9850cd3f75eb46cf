"""The Cloud vs on-prem page: the verdict and band of the CLI, inputs that move them, the
work's utilization, the plan's tiers, and bad inputs named."""

from __future__ import annotations

import io
import math
from collections.abc import Callable

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from planner.onprem.answer import tco_answer
from planner.onprem.compare import compared_offers
from planner.onprem.config import DEFAULTS, OnPremConfig
from planner.render.tco_words import verdict_sentence, worded_tco
from planner.ui.export import csv_bytes, report_html
from planner.ui.onprem_page import NUMBER_FIELDS, config_from_inputs, onprem_report
from pricing.catalog import load_offers
from pricing.tiers import tier_of
from tests.app.conftest import chart, metrics, plain, table_with, trace

Open = Callable[..., AppTest]
METRICS = [
    "On-prem $/GPU-hour",
    "Utilization",
    "Cheapest cloud $/GPU-hour",
    "Buying cheaper than it",
]


def dollars(text: str) -> float:
    return float(text.lstrip("$").replace(",", ""))


def test_default_view_says_the_verdict_with_its_band(open_page: Open) -> None:
    at = open_page("onprem")
    shown = metrics(at)
    assert list(shown) == METRICS
    compared = table_with(at, "offer", "p_buy_cheaper", "payback_band", "price_date")
    assert len(compared) == len(at.query_params["offers"])
    assert compared["pricing"].eq("on-demand").all()
    assert not compared["tier"].eq("marketplace").any()  # the Plan page's default tiers
    assert dollars(shown["Cheapest cloud $/GPU-hour"]) == round(
        compared["usd_per_gpu_hour"].min(), 2
    )
    # The sentence is the CLI's: the same engine, the same words.
    offers = compared_offers(load_offers(), "H100-SXM", at.query_params["offers"], "on-demand")
    config = config_from_inputs({})
    answer = tco_answer(config.config, offers, config.defaulted)
    assert plain(at.markdown[0].value).strip("*") == plain(verdict_sentence(answer))
    assert "P10-P90" in plain(at.markdown[0].value)
    figure = chart(at, "onprem.curve_chart")
    assert trace(figure, "on-prem 8 x H100-SXM (amortized)")["x"][-1] <= 0.97 + 1e-9
    tornado = chart(at, "onprem.tornado_chart")
    assert "server price" in trace(tornado, "input at its low end")["y"]
    lines = table_with(at, "component", "source", "basis")
    assert {"network fabric", "financing", "resale (credit)", "staff"} <= set(lines["component"])
    assert "typical default" in set(lines["source"])


def test_the_work_sets_the_utilization(open_page: Open) -> None:
    at = open_page("onprem", {"servers": "4", "monthly_gpu_hours": "10000"})
    shown = metrics(at)
    assert shown["Utilization"] == "42.8%"
    assert "At 43% utilization (10,000 GPU-hours a month on 32 H100-SXM)" in plain(
        at.markdown[0].value
    )
    more = open_page("onprem", {"servers": "4", "monthly_gpu_hours": "30000"})
    assert any("need 6 servers" in plain(w.value) for w in more.warning)
    assert "on 48 H100-SXM" in plain(more.markdown[0].value)


def test_higher_utilization_lowers_the_cost(open_page: Open) -> None:
    at = open_page("onprem")
    before = metrics(at)
    at.number_input(key="onprem.utilization").set_value(0.95).run()
    after = metrics(at)
    assert dollars(after["On-prem $/GPU-hour"]) < dollars(before["On-prem $/GPU-hour"])
    assert at.query_params["utilization"] == "0.95"


def test_marketplace_offers_only_when_their_tier_is_chosen(open_page: Open) -> None:
    at = open_page("onprem")
    assert all(tier_of(ref.split(":")[0]) != "marketplace" for ref in at.query_params["offers"])
    at.multiselect(key="onprem.tiers").set_value(["hyperscaler", "neocloud", "marketplace"]).run()
    assert any(ref.startswith("vast:") for ref in at.query_params["offers"])


def test_zero_utilization_is_an_inline_message(open_page: Open) -> None:
    at = open_page("onprem")
    at.number_input(key="onprem.utilization").set_value(0.0).run()
    assert not at.exception
    assert len(at.error) == 1
    message = plain(at.error[0].value)
    assert "**Utilization (share of the year used)** (field `utilization`)" in message
    assert "0.0 is out of range; it must be >= 1e-06 and <= 1" in plain(message)
    assert not at.metric and not at.get("plotly_chart")
    at.number_input(key="onprem.utilization").set_value(0.5).run()
    assert not at.error and len(at.metric) == 4


def test_other_bad_inputs_name_their_field(open_page: Open) -> None:
    at = open_page("onprem")
    at.number_input(key="onprem.capex_usd_per_server").set_value(0.0).run()
    assert "capex_usd_per_server" in plain(at.error[0].value)
    at.number_input(key="onprem.capex_usd_per_server").set_value(None).run()
    assert not at.error
    at.selectbox(key="onprem.gpu").set_value("L4").run()
    assert "set capex_usd_per_server" in plain(at.error[0].value)
    assert not at.exception


def test_pricing_kind_and_no_offer(open_page: Open) -> None:
    at = open_page("onprem")
    at.radio(key="onprem.pricing").set_value("spot").run()
    compared = table_with(at, "offer", "p_buy_cheaper")
    assert compared["pricing"].eq("spot").all()
    at.multiselect(key="onprem.offers").set_value([]).run()
    assert "Pick at least one cloud offer" in plain(at.info[0].value)
    assert len(at.metric) == 2


def test_a_link_reproduces_the_view(open_page: Open) -> None:
    clicked = open_page("onprem")
    clicked.selectbox(key="onprem.gpu").set_value("A100-SXM-80GB").run()
    clicked.number_input(key="onprem.servers").set_value(4).run()
    clicked.number_input(key="onprem.usd_per_kwh").set_value(0.0779).run()
    clicked.number_input(key="onprem.utilization").set_value(0.85).run()
    linked = open_page("onprem", dict(clicked.query_params))
    assert metrics(linked) == metrics(clicked)
    assert linked.query_params == clicked.query_params
    assert linked.query_params["usd_per_kwh"] == "0.0779"


def test_inputs_left_at_their_defaults_are_defaulted() -> None:
    loaded = config_from_inputs({"servers": 2, "pue": DEFAULTS["pue"].value, "usd_per_kwh": 0.2})
    assert "pue" in loaded.defaulted and "usd_per_kwh" not in loaded.defaulted
    assert loaded.config.servers == 2 and loaded.config.usd_per_kwh == 0.2


def test_the_report_and_csv_carry_the_verdict_rows_and_sources() -> None:
    config = OnPremConfig(utilization=0.6)
    offers = compared_offers(load_offers(), "H100-SXM", None, "on-demand")
    answer = tco_answer(config, offers)
    page = report_html(onprem_report(answer, "http://x/onprem"))
    assert verdict_sentence(answer).replace("'", "&#x27;") in page
    for row in answer.cloud.itertuples():
        assert row.ref in page
        date = f"≥ {row.price_date}" if row.price_date_basis == "not-before" else row.price_date
        assert f"priced {date} ({row.price_source})" in page
    assert DEFAULTS["pue"].source.split(",")[0].split(": ", 1)[1] in page  # a default's source
    assert "TDP-derived: 8 x 700 W" in page  # how power was derived
    assert "financing" in page and "network fabric" in page
    assert page.count("Plotly.newPlot") == 2  # both charts
    csv = pd.read_csv(io.BytesIO(csv_bytes(worded_tco(answer))))
    assert csv["ref"].iloc[1:].tolist() == offers["ref"].tolist()
    assert csv["price_source"].iloc[1:].tolist() == offers["source"].tolist()
    assert set(csv["price_date_basis"].iloc[1:]) == {"not-before"}
    assert csv["p_buy_cheaper"].iloc[1:].between(0, 1).all()


def _bounds(field: str) -> tuple[float, float]:
    """The smallest and largest value the page and the configuration both accept for
    `field` (an exclusive lower bound of the configuration: a hair above it)."""
    from annotated_types import Ge, Gt, Le

    spec = NUMBER_FIELDS[field]
    low, high = float(spec.get("min_value", -math.inf)), math.inf
    for bound in OnPremConfig.model_fields[field].metadata:
        if isinstance(bound, Ge):
            low = max(low, float(bound.ge))
        elif isinstance(bound, Gt):
            low = max(low, float(bound.gt) + 1e-9)
        elif isinstance(bound, Le):
            high = min(high, float(bound.le))
    return low, min(high, float(spec.get("max_value", math.inf)))


EDGES = [
    pytest.param(field, side, id=f"{field}-{side}")
    for field in NUMBER_FIELDS
    for side in ("min", "max")
]


@pytest.mark.parametrize(("field", "side"), EDGES)
def test_every_input_at_its_bounds_renders_or_names_the_input(
    open_page: Open, field: str, side: str
) -> None:
    """A shared link with one input at the smallest or largest value the page takes: the
    page draws its verdict and charts, or says which input to change; never an exception."""
    low, high = _bounds(field)
    value = low if side == "min" else high
    text = str(int(value)) if field in ("servers", "gpus_per_server") else f"{value:.12g}"
    at = open_page("onprem", {field: text})  # open_page: no exception
    if at.error:
        assert NUMBER_FIELDS[field]["label"] in plain(at.error[0].value)
    else:
        assert list(metrics(at)) == METRICS
        figure = chart(at, "onprem.curve_chart")
        top = figure["layout"]["yaxis"]["range"][1]
        assert math.isfinite(top) and top > 0


def test_a_link_with_every_hour_lost_to_failures_but_full_use_renders(open_page: Open) -> None:
    """Failures at their most leave a tenth of the year: the chart's grid stops there (it
    looked up the cost at 20% utilization, past the grid's end)."""
    at = open_page("onprem", {"utilization": "1", "failure_downtime_fraction": "0.9"})
    assert at.error or list(metrics(at)) == METRICS
    if not at.error:
        curve = trace(chart(at, "onprem.curve_chart"), "on-prem 8 x H100-SXM (amortized)")
        assert max(curve["x"]) <= 0.1 + 1e-9
