"""The Prices page: filters change the offers; every source shows its date and age."""

from __future__ import annotations

import io
from collections.abc import Callable

import pandas as pd
from streamlit.testing.v1 import AppTest

from planner.ui.export import csv_bytes, report_html
from planner.ui.prices_page import chart as prices_chart
from planner.ui.prices_page import offers_table, prices_report
from pricing.catalog import filter_offers, load_offers
from pricing.status import status_frame
from tests.app.conftest import chart, metrics, plain, table_with, trace

Open = Callable[..., AppTest]


def offers(at: AppTest) -> pd.DataFrame:
    return table_with(at, "instance_type", "on_demand_usd_per_gpu_hour", "priced_at")


def test_default_view_lists_every_buyable_offer_and_warns_about_old_prices(
    open_page: Open,
) -> None:
    at = open_page("prices")
    buyable = filter_offers(load_offers())  # default tiers, no retired sizes
    assert len(offers(at)) == len(buyable)
    assert metrics(at)["Offers"] == f"{len(buyable):,}"
    assert "vast" not in set(offers(at)["provider"])
    assert not offers(at)["instance_type"].str.contains("_Promo").any()
    # Each row's date as known: the bundled extracts' dates are lower bounds.
    shown = offers(at)
    assert set(shown["price_date_basis"]) == {"not-before"}
    assert (shown["price_date"] == "≥ " + shown["priced_at"]).all()
    hover = trace(chart(at, "prices.chart"), "on-demand")["customdata"]
    assert all(str(d[0]).startswith("≥ 20") for d in hover)
    status = table_with(at, "provider", "price_date", "age", "stale")
    assert set(status["provider"]) == set(load_offers()["provider"])  # every source
    warning = plain(at.warning[0].value)
    assert "Prices older than 30 days, or of unknown age" in warning
    assert "gpuplan pricing refresh skypilot" in warning
    for row in status.loc[status["provider"].isin(buyable["provider"])].itertuples():
        assert f"{row.provider} ({row.price_date})" in warning
        assert row.price_date.startswith("catalog extract, not before")
    figure = chart(at, "prices.chart")
    assert len(trace(figure, "on-demand")["x"]) == 25
    assert "reserved" in plain(
        at.caption[0].value
    )  # the bundle has no reserved prices, and says so


def test_a_provider_filter_changes_the_rows(open_page: Open) -> None:
    at = open_page("prices")
    at.multiselect(key="prices.providers").set_value(["aws"]).run()
    rows = offers(at)
    assert set(rows["provider"]) == {"aws"}
    assert len(rows) == len(filter_offers(load_offers(), ["aws"]))
    assert metrics(at)["Offers"] == f"{len(rows):,}"
    assert "aws (" in plain(at.warning[0].value) and "gcp (" not in plain(at.warning[0].value)
    at.multiselect(key="prices.gpus").set_value(["H100-SXM"]).run()
    rows = offers(at)
    assert set(rows["gpu_name"]) == {"H100-SXM"} and len(rows) > 0
    assert rows["on_demand_usd_per_gpu_hour"].is_monotonic_increasing
    at.multiselect(key="prices.regions").set_value(["us-west-2"]).run()
    assert set(offers(at)["region"]) == {"us-west-2"}
    at.multiselect(key="prices.providers").set_value([]).run()
    assert "Pick at least one provider" in plain(at.info[0].value)


def test_a_link_reproduces_the_view(open_page: Open) -> None:
    at = open_page("prices", {"providers": ["aws", "gcp"], "gpus": "A100-SXM-40GB", "top": "10"})
    rows = offers(at)
    assert set(rows["provider"]) <= {"aws", "gcp"} and set(rows["gpu_name"]) == {"A100-SXM-40GB"}
    assert at.query_params["providers"] == ["aws", "gcp"]
    assert at.slider(key="prices.top").value == 10


def test_an_unknown_provider_in_a_link_is_named(open_page: Open) -> None:
    at = open_page("prices", {"providers": ["awz", "gcp"]})
    warnings = plain(" ".join(w.value for w in at.warning))
    assert "providers='awz' is not a choice; did you mean 'aws'?" in warnings
    assert set(offers(at)["provider"]) == {"gcp"}


def test_the_csv_and_report_carry_the_rows_and_their_sources() -> None:
    table = offers_table(load_offers(), ["lambda", "aws"], [], ["H100-SXM"])
    csv = pd.read_csv(io.BytesIO(csv_bytes(table)))
    assert csv["instance_type"].tolist() == table["instance_type"].tolist()
    assert {"priced_at", "source"} <= set(csv.columns) and csv["source"].notna().all()
    status = status_frame()
    page = report_html(
        prices_report(
            table, status, ["lambda", "aws"], [], ["H100-SXM"], prices_chart(table, "spot", 5)
        )
    )
    for row in table.itertuples():
        assert row.instance_type in page
    for row in status.loc[status["provider"].isin(["lambda", "aws"])].itertuples():
        assert f"{row.provider}: {row.source}, priced {row.price_date}" in page
    assert "gcp:" not in page
    assert "Prices older than 30 days" in page


def test_the_tier_filter_and_the_retired_toggle_bring_the_others_back(open_page: Open) -> None:
    at = open_page("prices")
    at.multiselect(key="prices.tiers").set_value(["marketplace"]).run()
    assert at.multiselect(key="prices.providers").value == ["vast"]
    assert set(offers(at)["provider"]) == {"vast"}
    at.multiselect(key="prices.tiers").set_value(["hyperscaler"]).run()
    at.multiselect(key="prices.providers").set_value(["azure"]).run()
    assert not offers(at)["instance_type"].str.contains("_Promo").any()
    at.toggle(key="prices.retired").set_value(True).run()
    assert offers(at)["instance_type"].str.contains("_Promo").any()
