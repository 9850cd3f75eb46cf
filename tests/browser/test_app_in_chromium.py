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
