"""Helpers for driving the app's pages under Streamlit's AppTest."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from planner.ui.text import WORD_JOINER
from tests.conftest import ROOT

PAGES = ("plan", "scaling", "onprem", "benchmarks", "prices")


def page_script(name: str) -> Path:
    """The st.navigation script of a page (what app.py runs for it)."""
    return ROOT / "planner" / "ui" / "pages" / f"page_{name}.py"


def run_page(name: str, query: dict[str, Any] | None = None, timeout: float = 90) -> AppTest:
    """Run one page's script with the given URL query parameters; no exception allowed."""
    at = AppTest.from_file(str(page_script(name)), default_timeout=timeout)
    at.query_params.update(query or {})
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.fixture()
def open_page(results_dir: Path) -> Callable[..., AppTest]:
    """run_page, with the results folder in place."""
    return run_page


def chart(at: AppTest, key: str) -> dict[str, Any]:
    """The plotly figure (as JSON) of the chart drawn with `key`."""
    for element in at.get("plotly_chart"):
        if element.proto.id.endswith(f"-{key}"):
            return json.loads(element.proto.spec)
    raise KeyError(f"no chart {key!r}")


def values(array: Any) -> list[Any]:
    """A figure's data array as a list (plotly writes numpy arrays as base64 'bdata')."""
    if isinstance(array, dict) and "bdata" in array:
        decoded = np.frombuffer(base64.b64decode(array["bdata"]), dtype=np.dtype(array["dtype"]))
        return decoded.tolist()
    return list(array)


def trace(figure: dict[str, Any], name: str) -> dict[str, Any]:
    """The trace called `name` in a plotly figure, its x and y arrays as lists."""
    for item in figure["data"]:
        if item.get("name") == name:
            return {**item, **{k: values(item[k]) for k in ("x", "y") if k in item}}
    raise KeyError(f"no trace {name!r} in {[t.get('name') for t in figure['data']]}")


def metrics(at: AppTest) -> dict[str, str]:
    """Headline metrics: label -> value, as the text they show (plain)."""
    return {plain(m.label): plain(m.value) for m in at.metric}


def table_with(at: AppTest, *columns: str) -> pd.DataFrame:
    """The first table on the page that has all of `columns`."""
    for frame in at.dataframe:
        value = frame.value
        if set(columns) <= set(value.columns):
            return value
    raise KeyError(f"no table with columns {columns}")


def plain(markdown: str) -> str:
    """Markdown made by planner.ui.text.md_text back to the text it shows (escapes read,
    word joiners dropped)."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown).replace(WORD_JOINER, "")
