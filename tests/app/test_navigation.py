"""The multipage app under AppTest: every page renders from app.py, with no exception."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import PAGES, page_script
from tests.conftest import ROOT

TITLES = {
    "plan": "gpuplan: where to train",
    "scaling": "Scaling:",
    "onprem": "Cloud vs on-prem:",
    "benchmarks": "Benchmarks:",
    "prices": "Prices:",
}


def test_every_page_renders_through_the_navigation(results_dir: Path) -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    assert at.title[0].value.startswith(TITLES["plan"])
    for name in [*PAGES[1:], "plan"]:
        at.switch_page(str(page_script(name).relative_to(ROOT))).run()
        assert not at.exception, (name, at.exception)
        assert at.title[0].value.startswith(TITLES[name]), name
        assert len(at.metric) >= 2, name
        assert at.get("plotly_chart"), name
        assert at.dataframe, name
        assert at.query_params, f"{name} keeps its inputs in the URL"
    # Back on the Plan page, the URL holds its inputs only (another page's are dropped).
    assert at.query_params["workload"] == "resnet50-imagenet-90ep"
    assert "utilization" not in at.query_params


@pytest.mark.parametrize("name", PAGES)
def test_page_keys_are_stable_and_prefixed(name: str, results_dir: Path) -> None:
    at = AppTest.from_file(str(page_script(name)), default_timeout=120).run()
    assert not at.exception, at.exception
    widgets = [*at.selectbox, *at.multiselect, *at.radio, *at.number_input, *at.slider]
    assert widgets
    keys = [w.key for w in widgets]
    assert all(keys), f"{name}: every widget has a key"
    assert all(k.startswith(f"{name}.") for k in keys), keys
