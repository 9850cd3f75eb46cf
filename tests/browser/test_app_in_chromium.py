"""Open the running app in chromium: the ranked table, chart and metrics render, no errors."""

from __future__ import annotations

import re
from csv import DictReader
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import download, page_plan, update_docs_image

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]


PROVIDERS = {"aws", "gcp", "azure", "lambda", "nebius", "vast", "fluidstack", "paperspace"}
PICK_LABELS = ["Cheapest within deadline", "Fastest within budget", "Best cost per hour saved"]


def planner_picks(**kwargs: Any) -> list[str]:
    """What make_plan picks for the Plan page's defaults changed by `kwargs`, as the page
    names the options."""
    from planner.ui.plan_view import option_text

    plan = page_plan(**kwargs)
    return [option_text(plan.pick(name)) for name in plan.picks["pick"]]


def test_plan_page_answers_first_then_chart_then_table(
    app_url: str, page: Page, screenshots: Path
) -> None:
    assert page.context.browser is not None
    page.goto(app_url, wait_until="domcontentloaded")
    page.get_by_text("Ranked options:").wait_for(timeout=90_000)
    chart = page.locator(".js-plotly-plot")
    chart.first.wait_for(timeout=90_000)  # a busy machine draws it late
    legend = chart.first.locator(".legendtext", has_text="time/cost frontier")
    legend.first.wait_for(timeout=30_000)
    metrics = page.locator('[data-testid="stMetric"]')
    expect(metrics).to_have_count(3, timeout=30_000)
    for i, (label, option) in enumerate(zip(PICK_LABELS, planner_picks(), strict=True)):
        expect(metrics.nth(i)).to_contain_text(label, timeout=30_000)
        text = metrics.nth(i).inner_text()
        assert re.search(r"\$[\d,.]+[kM]? · [\d.,]+ (s|min|h|d)", text), text
        expect(page.get_by_text(option, exact=True)).to_be_visible(timeout=30_000)
    body = page.inner_text("body")
    grid = page.locator('[data-testid="stDataFrame"]')
    grid.first.wait_for(timeout=30_000)
    # the ranked table comes first; the Compare view is a static table (it wraps to the page)
    expect(page.locator('[data-testid="stTable"]')).to_have_count(1, timeout=30_000)
    cells = grid.first.locator("[role=gridcell]")
    cells.first.wait_for(state="attached", timeout=30_000)
    first_row = [cells.nth(i).inner_text() for i in range(4)]
    assert first_row[0] == "1"  # rank
    assert first_row[1] == "cheapest"
    assert first_row[2] in PROVIDERS
    headers = grid.first.locator("[role=columnheader]").all_inner_texts()
    # the grid draws the columns in view: the figures a reader compares, at 1400 px
    assert {"rank", "pick", "provider", "GPUs", "hours", "cost", "P10–P90", "$/GPU-h",
            "source", "price date"} <= set(headers)  # fmt: skip
    # The answer comes first, then the chart, then the table.
    top = [
        box["y"]
        for box in (metrics.first.bounding_box(), chart.first.bounding_box(),
                    grid.first.bounding_box())
        if box is not None
    ]  # fmt: skip
    assert len(top) == 3 and top == sorted(top)
    assert "Prices as of: aws (catalog extract, not before 2025-06)" in body
    page.wait_for_url(re.compile(r"/\?.*workload=resnet50-imagenet-90ep"), timeout=30_000)
    # Streamlit scrolls inside the page: a tall window shows picks, chart and table at once.
    page.set_viewport_size({"width": 1400, "height": 2300})
    page.wait_for_timeout(1_000)
    page.screenshot(path=str(screenshots / "plan.png"), full_page=True)
    update_docs_image(page, "plan-page.png", height=1300)
    no_error_on(page)


def test_a_shared_plan_link_gives_the_planners_picks(app_url: str, page: Page) -> None:
    deadline, providers = 2.5, ["aws", "gcp", "azure"]
    query = f"deadline_hours={deadline}&" + "&".join(f"providers={p}" for p in providers)
    page.goto(f"{app_url}/?{query}", wait_until="domcontentloaded")
    page.get_by_text("Ranked options:").wait_for(timeout=90_000)
    expected = planner_picks(deadline_hours=deadline, providers=providers)
    names = ["cheapest_within_deadline", "fastest_within_budget", "best_cost_per_hour_saved"]
    assert len(expected) == 3
    for name, label, option in zip(names, PICK_LABELS, expected, strict=True):
        box = page.locator(f".st-key-plan_pick_{name}")
        expect(box).to_contain_text(label, timeout=30_000)
        expect(box).to_contain_text(option, timeout=30_000)
    legend = page.locator(".js-plotly-plot .legendtext", has_text="deadline 2.5 h")
    legend.first.wait_for(timeout=30_000)
    no_error_on(page)


def test_plan_downloads_carry_the_ranked_rows_and_sources(
    app_url: str, page: Page, tmp_path: Path
) -> None:
    page.goto(f"{app_url}/?providers=lambda&providers=aws", wait_until="domcontentloaded")
    csv = download(page, "Download CSV", tmp_path / "plan.csv")
    with csv.open() as handle:
        rows = list(DictReader(handle))
    assert rows and {row["provider"] for row in rows} == {"aws", "lambda"}
    assert [row["rank"] for row in rows[:3]] == ["1", "2", "3"]
    assert {row["throughput_source"] for row in rows} <= {
        "measured", "published", "scaled", "estimated"
    }  # fmt: skip
    assert all(re.fullmatch(r"\d{4}-\d{2}-\d{2}", row["price_date"]) for row in rows)
    assert {row["price_date_basis"] for row in rows} == {"not-before"}  # bundled extracts
    assert all(row["price_source"].startswith("skypilot-catalog") for row in rows)

    html = download(page, "Download HTML report", tmp_path / "plan.html", 60_000).read_text()
    html = html.replace("\u200b", "")  # the break opportunities after "_" in table cells
    assert "Plan: resnet50-imagenet-90ep (fp16, on-demand)" in html
    for option in planner_picks(providers=["lambda", "aws"]):
        assert option in html
    for row in rows[:10]:
        assert f"<td>{row['instance_type']}</td>" in html
    # The extract's date is a lower bound and the report says so, never "of 2025-06-01".
    assert "aws prices of ≥ 2025-06-01 (catalog extract, not before 2025-06) (skypilot" in html
    assert "aws prices of 2025-06-01" not in html
    assert "Throughput sources: " in html
    assert html.count("Plotly.newPlot") == 1 and "<script src=" not in html
    assert "providers=lambda" in html  # the link to this view


PAGES = {
    # url path: (title text, metrics at least, a text the page must show)
    "scaling": ("Scaling: throughput from 1 to 1,024 GPUs", 4, "Interconnect assumed"),
    "onprem": ("Cloud vs on-prem: rent or buy?", 4, "Against the cloud"),
    "benchmarks": ("Benchmarks: own measurements and published figures", 3, "Add result files"),
    "prices": ("Prices: what a GPU-hour costs", 4, "Price sources"),
}


def no_error_on(page: Page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0
    assert "Traceback" not in page.inner_text("body")


@pytest.mark.parametrize("path", list(PAGES))
def test_every_page_shows_its_chart_table_and_metrics(
    app_url: str, page: Page, screenshots: Path, path: str
) -> None:
    title, n_metrics, text = PAGES[path]
    page.goto(f"{app_url}/{path}", wait_until="domcontentloaded")
    page.get_by_text(title).first.wait_for(timeout=90_000)
    page.get_by_text(text).first.wait_for(timeout=30_000)
    page.locator(".js-plotly-plot").first.wait_for(timeout=30_000)
    page.locator('[data-testid="stDataFrame"]').first.wait_for(timeout=30_000)
    metrics = page.locator('[data-testid="stMetric"]')
    metrics.nth(n_metrics - 1).wait_for(timeout=30_000)  # drawn one after another
    assert metrics.count() >= n_metrics
    # The page's inputs are in the URL (a link reproduces the view).
    page.wait_for_url(re.compile(rf"/{path}\?.+"), timeout=30_000)
    page.screenshot(path=str(screenshots / f"{path}.png"), full_page=True)
    no_error_on(page)


def test_a_link_reproduces_a_scaling_view(app_url: str, page: Page) -> None:
    page.goto(
        f"{app_url}/scaling?gpu=A100-SXM-40GB&network_gbps=100", wait_until="domcontentloaded"
    )
    page.get_by_text("A100-SXM-40GB · resnet50 · fp16").wait_for(timeout=90_000)
    assert "100 Gb/s per node" in page.inner_text("body")
    no_error_on(page)


def test_zero_utilization_is_an_inline_message(app_url: str, page: Page, screenshots: Path) -> None:
    page.goto(f"{app_url}/onprem?utilization=0", wait_until="domcontentloaded")
    # the page's markdown typesets ">=" as "≥"
    alert = page.locator('[data-testid="stAlert"]').filter(
        has_text="(field utilization): 0.0 is out of range; it must be ≥ 1e-06"
    )
    alert.first.wait_for(timeout=90_000)
    page.screenshot(path=str(screenshots / "onprem-zero-utilization.png"), full_page=True)
    no_error_on(page)


def test_downloads_carry_rows_and_sources(app_url: str, page: Page, tmp_path: Path) -> None:
    page.goto(f"{app_url}/prices?providers=lambda", wait_until="domcontentloaded")
    lines = download(page, "Download CSV", tmp_path / "offers.csv").read_text().splitlines()
    # the columns the table leads with (provider, instance, GPU), then every other one
    assert lines[0].startswith("provider,instance_type,gpu_name") and ",region," in lines[0]
    assert len(lines) > 1 and all(line.startswith("lambda,") for line in lines[1:])
    assert "priced_at" in lines[0] and "skypilot-catalog" in lines[1]

    page.goto(f"{app_url}/onprem", wait_until="domcontentloaded")
    html = download(page, "Download HTML report", tmp_path / "report.html", 60_000).read_text()
    assert "Cloud vs on-prem: 8 x H100-SXM" in html
    assert "Against the cloud" in html and "lambda:" in html and "priced " in html
    assert "Uptime Institute" in html  # a default's source
    assert html.count("Plotly.newPlot") == 2 and "<script src=" not in html


def test_the_scaling_report_has_its_charts_tables_and_figures(
    app_url: str, page: Page, tmp_path: Path
) -> None:
    page.goto(f"{app_url}/scaling?gpu=A100-SXM-40GB", wait_until="domcontentloaded")
    html = download(page, "Download HTML report", tmp_path / "scaling.html", 60_000).read_text()
    assert "Scaling: A100-SXM-40GB, resnet50 fp16" in html
    assert html.count("Plotly.newPlot") == 2
    assert "Interconnect assumed" in html and "Extrapolation" in html
    assert "published (v0): Lambda v0 A100 40GB SXM4" in html  # each figure's source
    assert "/scaling?" in html and "gpu=A100-SXM-40GB" in html  # the link to this view
