"""The Cloud vs on-prem page: inputs move the $/GPU-hour and break-even; bad inputs are named."""

from __future__ import annotations

import io
from collections.abc import Callable

import pandas as pd
from streamlit.testing.v1 import AppTest

from planner.onprem.tco import DEFAULTS, OnPremConfig, tco_table
from planner.ui.export import csv_bytes, report_html
from planner.ui.onprem_page import onprem_report
from pricing.catalog import load_offers
from pricing.refs import cheapest_per_provider
from tests.app.conftest import chart, metrics, plain, table_with, trace

Open = Callable[..., AppTest]


def dollars(text: str) -> float:
    return float(text.lstrip("$").replace(",", ""))


def test_default_view(open_page: Open) -> None:
    at = open_page("onprem")
    shown = metrics(at)
    assert list(shown) == [
        "On-prem $/GPU-hour",
        "Cheapest cloud $/GPU-hour",
        "Break-even utilization",
        "Break-even months",
    ]
    compared = table_with(at, "ref", "break_even_utilization", "price_date", "price_source")
    offers = at.query_params["offers"]
    assert compared["ref"].tolist() == offers
    assert compared["pricing"].eq("on-demand").all()
    assert dollars(shown["Cheapest cloud $/GPU-hour"]) == round(
        compared["usd_per_gpu_hour"].min(), 2
    )
    figure = chart(at, "onprem.curve_chart")
    assert trace(figure, "on-prem 8 x H100-SXM (amortized)")["x"][-1] == 1.0
    tornado = chart(at, "onprem.tornado_chart")
    assert "Utilization (share of the year used)" in trace(tornado, "input -20%")["y"]
    assert at.query_params["utilization"] == "0.7"
    assert at.query_params["capex_usd_per_server"] == "199000"


def test_higher_utilization_lowers_the_cost_and_shortens_the_payback(open_page: Open) -> None:
    at = open_page("onprem")
    before = metrics(at)
    at.number_input(key="onprem.utilization").set_value(0.95).run()
    after = metrics(at)
    assert dollars(after["On-prem $/GPU-hour"]) < dollars(before["On-prem $/GPU-hour"])
    # Break-even utilization is a property of the prices, not of the utilization...
    assert after["Break-even utilization"] == before["Break-even utilization"]
    # ...but more use means more cloud spend avoided per month: payback comes sooner.
    assert float(after["Break-even months"]) < float(before["Break-even months"])
    assert at.query_params["utilization"] == "0.95"


def test_zero_utilization_is_an_inline_message(open_page: Open) -> None:
    at = open_page("onprem")
    at.number_input(key="onprem.utilization").set_value(0.0).run()
    assert not at.exception
    assert len(at.error) == 1
    message = plain(at.error[0].value)
    assert "**Utilization (share of the year used)** (field `utilization`)" in message
    assert "0.0 is out of range; it must be > 0 and <= 1" in plain(message)
    assert not at.metric and not at.get("plotly_chart")
    at.number_input(key="onprem.utilization").set_value(0.5).run()
    assert not at.error and len(at.metric) == 4


def test_zero_utilization_in_a_link_is_the_same_message(open_page: Open) -> None:
    at = open_page("onprem", {"utilization": "0"})
    assert "must be > 0 and <= 1" in plain(at.error[0].value)


def test_other_bad_inputs_name_their_field(open_page: Open) -> None:
    at = open_page("onprem")
    at.number_input(key="onprem.capex_usd_per_server").set_value(0.0).run()
    assert "capex_usd_per_server" in plain(at.error[0].value)
    at.number_input(key="onprem.capex_usd_per_server").set_value(199000.0).run()
    at.number_input(key="onprem.monthly_gpu_hours").set_value(100_000.0).run()
    assert "exceeds what on-prem delivers" in plain(at.error[0].value)
    assert "monthly_gpu_hours" in plain(at.error[0].value)
    assert not at.exception


def test_pricing_kind_picks_new_offers(open_page: Open) -> None:
    at = open_page("onprem")
    on_demand = at.query_params["offers"]
    at.radio(key="onprem.pricing").set_value("spot").run()
    spot = cheapest_per_provider(load_offers(), "H100-SXM", "spot")["ref"].tolist()
    assert at.query_params["offers"] == spot != on_demand
    compared = table_with(at, "ref", "break_even_utilization")
    assert compared["pricing"].eq("spot").all()
    at.multiselect(key="onprem.offers").set_value([]).run()
    assert "Pick at least one cloud offer" in plain(at.info[0].value)
    assert len(at.metric) == 1


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


def test_the_report_and_csv_carry_the_rows_and_their_sources() -> None:
    config = OnPremConfig(utilization=0.6)
    compared = cheapest_per_provider(load_offers(), "H100-SXM", "on-demand")
    page = report_html(onprem_report(config, "on-demand", compared, None, 0.2, "http://x/onprem"))
    for row in compared.itertuples():
        assert row.ref in page
        # A catalog extract's date is a lower bound: shown as one, never as exact.
        date = f"≥ {row.priced_at}" if row.date_bound else row.priced_at
        assert f"priced {date} ({row.source})" in page
        assert f"<td>{date}</td>" in page  # the comparison table
    assert DEFAULTS["pue"].source.split(",")[0] in page  # a default's source
    assert "TDP-derived: 8 x 700 W" in page  # how power was derived
    assert "break_even_months" in page and "capex" in page
    assert page.count("<div id=") >= 2  # both charts
    csv = pd.read_csv(io.BytesIO(csv_bytes(tco_table(config, compared))))
    assert csv["ref"].iloc[1:].tolist() == compared["ref"].tolist()
    assert csv["price_source"].iloc[1:].tolist() == compared["source"].tolist()
    assert csv["price_date"].iloc[1:].tolist() == compared["priced_at"].tolist()
    assert set(csv["price_date_basis"].iloc[1:]) == {"not-before"}


def test_break_even_after_the_servers_life_is_said_so(open_page: Open) -> None:
    short = open_page("onprem", {"lifetime_years": "1"})
    months = metrics(short)["Break-even months"]
    assert float(months.replace(",", "")) > 12
    assert any("after the server's 1-year life" in plain(w.value) for w in short.warning)
    shown = table_with(short, "break_even_months")
    late = shown["break_even_months"].str.endswith("(after life)")
    assert late.any()
    months_of = shown["break_even_months"].str.extract(r"([\d,.]+) months")[0]
    assert (months_of[late].str.replace(",", "").astype(float) > 12).all()
    long = open_page("onprem", {"lifetime_years": "30"})
    assert not any("after the server's" in plain(w.value) for w in long.warning)
    assert "break_even_utilization" in table_with(long, "break_even_utilization").columns
