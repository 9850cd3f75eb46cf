"""CSV and self-contained HTML report downloads."""

from __future__ import annotations

import datetime as dt
import io
import re

import pandas as pd
import plotly.graph_objects as go

from planner.ui.export import Report, csv_bytes, report_html

TABLE = pd.DataFrame(
    {
        "provider": ["aws", "lambda"],
        "instance_type": ["p5.48xlarge", "gpu_8x_h100 <sxm5>"],
        "usd_per_hour": [55.04, float("nan")],
        "price_date": ["2025-06-01", "2025-01-01"],
    }
)


def report() -> Report:
    figure = go.Figure(go.Scatter(x=[1, 2], y=[3, 4], name="line"))
    return Report(
        title="Cloud vs on-prem & more",
        summary=["On-prem $2.42 per GPU-hour"],
        figures=[("First chart", figure), ("Second chart", go.Figure(go.Bar(x=[1], y=[2])))],
        tables=[("Offers", TABLE)],
        assumptions=["A year is 8760 h"],
        sources=["aws: skypilot-catalog v8, priced 2025-06-01"],
        link="http://127.0.0.1:8501/onprem?utilization=0.7&gpu=H100-SXM",
    )


def test_csv_holds_the_rows_with_missing_values_blank() -> None:
    text = csv_bytes(TABLE).decode()
    assert text.splitlines()[0] == "provider,instance_type,usd_per_hour,price_date"
    assert "lambda,gpu_8x_h100 <sxm5>,,2025-01-01" in text
    back = pd.read_csv(io.BytesIO(csv_bytes(TABLE)))
    assert back["instance_type"].tolist() == TABLE["instance_type"].tolist()


def test_the_report_is_one_self_contained_file() -> None:
    page = report_html(report(), now=dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC))
    assert page.startswith("<!DOCTYPE html>")
    assert "generated 2026-11-30 12:00 UTC" in page
    # plotly.js is inlined once (no script fetched from the network), both charts drawn.
    assert not re.search(r"<script[^>]*\bsrc=", page)
    assert page.count("window.PlotlyConfig") == 1 and len(page) > 1_000_000
    assert page.count("Plotly.newPlot") == 2


def test_the_report_lists_rows_assumptions_sources_and_the_link() -> None:
    page = report_html(report())
    assert "<h1>Cloud vs on-prem &amp; more</h1>" in page
    assert "p5.48xlarge" in page and "gpu_8x_h100 &lt;sxm5&gt;" in page  # escaped
    assert "2025-06-01" in page and "55.04" in page
    assert "<li>A year is 8760 h</li>" in page
    assert "<li>aws: skypilot-catalog v8, priced 2025-06-01</li>" in page
    assert 'href="http://127.0.0.1:8501/onprem?utilization=0.7&amp;gpu=H100-SXM"' in page
    empty = report_html(Report(title="t"))
    assert empty.count("<p>None.</p>") == 2  # no assumptions, no sources: said, not hidden
