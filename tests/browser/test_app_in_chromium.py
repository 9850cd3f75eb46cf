"""Open the running app in chromium: the ranked table, chart and metrics render, no errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]


def test_plan_page_shows_the_ranked_table(app_url: str, page: Page, screenshots: Path) -> None:
    assert page.context.browser is not None
    page.goto(app_url, wait_until="domcontentloaded")
    page.get_by_text("Ranked by cost to train").wait_for(timeout=90_000)
    grid = page.locator('[data-testid="stDataFrame"]')
    grid.first.wait_for(timeout=30_000)
    assert grid.count() == 1
    cells = grid.first.locator("[role=gridcell]")
    cells.first.wait_for(state="attached", timeout=30_000)
    first_row = [cells.nth(i).inner_text() for i in range(9)]
    assert first_row[0] == "1"  # rank
    assert first_row[1] in {
        "aws",
        "gcp",
        "azure",
        "lambda",
        "nebius",
        "vast",
        "fluidstack",
        "paperspace",
    }
    assert first_row[8] in {"measured", "published", "scaled", "estimated"}
    headers = grid.first.locator("[role=columnheader]").all_inner_texts()
    assert {"rank", "provider", "instance_type", "gpu_name"} <= set(headers)
    page.locator(".js-plotly-plot").first.wait_for(timeout=30_000)
    metrics = page.locator('[data-testid="stMetric"]')
    assert metrics.count() == 2
    assert re.search(r"\$[\d,]+", metrics.first.inner_text())
    assert "Prices as of" in page.content()
    page.screenshot(path=str(screenshots / "plan.png"), full_page=True)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert "Traceback" not in page.inner_text("body")


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
    metrics.first.wait_for(timeout=30_000)
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
    alert = page.locator('[data-testid="stAlert"]').filter(
        has_text="(field utilization): 0.0 is out of range; it must be > 0"
    )
    alert.first.wait_for(timeout=90_000)
    page.screenshot(path=str(screenshots / "onprem-zero-utilization.png"), full_page=True)
    no_error_on(page)


def test_downloads_carry_rows_and_sources(app_url: str, page: Page, tmp_path: Path) -> None:
    page.goto(f"{app_url}/prices?providers=lambda", wait_until="domcontentloaded")
    button = page.get_by_role("button", name="Download CSV")
    button.wait_for(timeout=90_000)
    with page.expect_download(timeout=30_000) as download:
        button.click()
    csv = tmp_path / "offers.csv"
    download.value.save_as(csv)
    lines = csv.read_text().splitlines()
    assert lines[0].startswith("provider,region,instance_type,gpu_name")
    assert len(lines) > 1 and all(line.startswith("lambda,") for line in lines[1:])
    assert "priced_at" in lines[0] and "skypilot-catalog" in lines[1]

    page.goto(f"{app_url}/onprem", wait_until="domcontentloaded")
    button = page.get_by_role("button", name="Download HTML report")
    button.wait_for(timeout=90_000)
    with page.expect_download(timeout=60_000) as download:
        button.click()
    report = tmp_path / "report.html"
    download.value.save_as(report)
    html = report.read_text()
    assert "Cloud vs on-prem: 8 x H100-SXM" in html
    assert "Against the cloud" in html and "lambda:" in html and "priced " in html
    assert "Uptime Institute" in html  # a default's source
    assert html.count("Plotly.newPlot") == 2 and "<script src=" not in html


def test_the_scaling_report_has_its_charts_tables_and_figures(
    app_url: str, page: Page, tmp_path: Path
) -> None:
    page.goto(f"{app_url}/scaling?gpu=A100-SXM-40GB", wait_until="domcontentloaded")
    button = page.get_by_role("button", name="Download HTML report")
    button.wait_for(timeout=90_000)
    with page.expect_download(timeout=60_000) as download:
        button.click()
    report = tmp_path / "scaling.html"
    download.value.save_as(report)
    html = report.read_text()
    assert "Scaling: A100-SXM-40GB, resnet50 fp16" in html
    assert html.count("Plotly.newPlot") == 2
    assert "Interconnect assumed" in html and "Extrapolation" in html
    assert "published (v0): Lambda v0 A100 40GB SXM4" in html  # each figure's source
    assert "/scaling?" in html and "gpu=A100-SXM-40GB" in html  # the link to this view
