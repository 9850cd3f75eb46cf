"""Buy or rent as a new user asks it in chromium: 4 DGX H100, 10,000 GPU-hours a month,
against AWS p5 and Lambda; the page answers in the CLI's one sentence with its band."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

OFFERS = ("aws:us-east-1:p5.48xlarge", "lambda:us-west-2:gpu_8x_h100_sxm5")


def expected_sentence() -> str:
    """What `gpuplan tco` says for the same question (the engine and words the page uses)."""
    from planner.onprem.answer import tco_answer
    from planner.onprem.compare import compared_offers
    from planner.render.tco_words import verdict_sentence
    from planner.ui.onprem_page import config_from_inputs
    from pricing.catalog import load_offers

    loaded = config_from_inputs({"servers": 4})
    offers = compared_offers(load_offers(), "H100-SXM", list(OFFERS), "on-demand")
    return verdict_sentence(tco_answer(loaded.config, offers, loaded.defaulted, 10_000))


def set_number(page: Page, label: str, value: str) -> None:
    """Type a value into the number input labelled `label` and commit it (Enter)."""
    box = page.get_by_label(label, exact=True)
    box.wait_for(timeout=60_000)
    box.fill(value)
    box.press("Enter")


def test_four_dgx_h100_at_ten_thousand_gpu_hours_against_aws_and_lambda(
    app_url: str, page: Page, screenshots: Path
) -> None:
    query = "&".join(f"offers={ref}" for ref in OFFERS)
    page.goto(f"{app_url}/onprem?{query}", wait_until="domcontentloaded")
    page.get_by_text("Cloud vs on-prem: rent or buy?").wait_for(timeout=90_000)
    set_number(page, "Servers", "4")
    page.get_by_text("on 32 H100-SXM").first.wait_for(timeout=60_000)
    set_number(page, "Work (GPU-hours per month)", "10000")
    sentence = expected_sentence()
    assert sentence.startswith("At 43% utilization (10,000 GPU-hours a month on 32 H100-SXM)")
    answer = page.get_by_text(sentence, exact=True)
    expect(answer).to_be_visible(timeout=60_000)
    assert "P10-P90" in sentence and "aws p5.48xlarge on-demand ($6.88)" in sentence
    assert "lambda gpu_8x_h100_sxm5 on-demand ($3.99)" in sentence
    metrics = page.locator('[data-testid="stMetric"]')
    expect(metrics.nth(1)).to_contain_text("42.8%", timeout=30_000)
    page.wait_for_url("**monthly_gpu_hours=10000**", timeout=30_000)
    page.locator(".js-plotly-plot").nth(1).wait_for(timeout=30_000)  # both charts drawn
    page.screenshot(path=str(screenshots / "onprem-4-dgx-h100-10000h.png"), full_page=True)
    assert page.locator('[data-testid="stException"]').count() == 0
