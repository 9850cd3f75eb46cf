"""The app under Streamlit's AppTest: renders, and its outputs follow its inputs."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT


@pytest.fixture()
def app(results_dir: Path) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    return at


def test_renders_ranked_table_metrics_chart_and_price_dates(app: AppTest) -> None:
    frame = app.dataframe[0].value
    for column in (
        "provider",
        "region",
        "instance_type",
        "gpu_name",
        "gpu_count",
        "throughput",
        "throughput_source",
        "hours_to_train",
        "cost_usd",
        "usd_per_hour",
        "price_date",
    ):
        assert column in frame.columns
    assert frame["cost_usd"].is_monotonic_increasing
    assert [m.label for m in app.metric] == ["Cheapest", "Fastest"]
    assert "Prices as of: aws 2025-06-01" in app.caption[0].value
    assert app.get("plotly_chart")


def test_precision_changes_the_numbers(app: AppTest) -> None:
    before = app.dataframe[0].value
    app.radio(key="precision").set_value("tf32").run()
    after = app.dataframe[0].value
    assert not app.exception
    assert before["throughput"].max() != after["throughput"].max()


def test_provider_filter_and_spot(app: AppTest) -> None:
    app.multiselect(key="providers").set_value(["aws"]).run()
    assert set(app.dataframe[0].value["provider"]) == {"aws"}
    on_demand = app.dataframe[0].value["usd_per_hour"].min()
    app.toggle(key="spot").set_value(True).run()
    assert app.dataframe[0].value["usd_per_hour"].min() < on_demand


def test_workload_switch_changes_units(app: AppTest) -> None:
    app.selectbox(key="workload").set_value("llm-1.3b-26b").run()
    assert not app.exception
    assert set(app.dataframe[0].value["throughput_unit"]) == {"tokens/s"}


def test_no_provider_is_a_message_not_an_error(app: AppTest) -> None:
    app.multiselect(key="providers").set_value([]).run()
    assert not app.exception
    assert "Pick at least one provider" in app.info[0].value
