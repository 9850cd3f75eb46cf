"""A hostile upload and a hostile shared link against the served app, in chromium."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import quote, urlparse

import pytest
from playwright.sync_api import Page, Request, expect

from planner.ui.text import WORD_JOINER
from tests.test_hostile_inputs import AUTOLINKED, GOOD, tree

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

EVIL_LINK = "[click](http://evil)"
EVIL_IMAGE = "![x](http://evil/img.png)"
# Far over the app's limit (planner.ui.state.MAX_PARAM_CHARS) yet under what the server's
# HTTP parser takes in a request line: httptools (uvicorn[standard], which the skypilot extra
# brings) refuses a 100,000-character URL with 400 before the app sees it.
LONG_VALUE = "x" * 40_000
EVIL_HOSTS = ("evil", "evil.example.com", "www.evil.example.com", "host.example.com")


def shown_as(text: str) -> re.Pattern[str]:
    """`text` as the page shows it: planner.ui.text puts invisible word joiners between
    some characters (so that Markdown links none of it)."""
    return re.compile(f"{WORD_JOINER}?".join(re.escape(c) for c in text))


def test_a_hostile_upload_writes_nothing_outside(
    app_url: str, page: Page, app_results_dir: Path
) -> None:
    before = tree(app_results_dir)
    page.goto(f"{app_url}/benchmarks", wait_until="domcontentloaded")
    page.get_by_text("Add result files").wait_for(timeout=90_000)
    content = json.dumps({**GOOD, "id": "../../evil"}).encode()
    page.locator('input[type="file"]').set_input_files(
        files=[{"name": "evil.json", "mimeType": "application/json", "buffer": content}]
    )
    alert = page.get_by_text("is not a valid result id")
    alert.first.wait_for(timeout=60_000)
    expect(page.get_by_text("Nothing was saved")).to_be_visible()
    expect(page.get_by_role("button", name="Save")).to_have_count(0)
    assert tree(app_results_dir) == before
    for folder in (app_results_dir.parent, app_results_dir.parent.parent):
        assert not (folder / "evil.json").exists()


def test_a_hostile_shared_link_renders_as_plain_text(app_url: str, page: Page) -> None:
    fetched: list[str] = []

    def record(request: Request) -> None:
        if urlparse(request.url).hostname in EVIL_HOSTS:
            fetched.append(request.url)

    page.on("request", record)
    query = "&".join(
        [
            f"providers={quote(EVIL_LINK)}",
            f"providers={quote(EVIL_IMAGE)}",
            *(f"providers={quote(value)}" for value in AUTOLINKED),
            f"regions={quote('<img src=http://evil/tag.png>')}",
            f"gpus={quote(AUTOLINKED[1])}",
            f"top={LONG_VALUE}",
        ]
    )
    page.goto(f"{app_url}/prices?{query}", wait_until="domcontentloaded")
    warning = page.locator('[data-testid="stAlertContentWarning"]')
    warning.first.wait_for(timeout=90_000)
    expect(
        page.get_by_text(shown_as(f"providers='{EVIL_LINK}' is not a choice")).first
    ).to_be_visible(timeout=30_000)
    # The page's warnings arrive one by one: wait for each rather than read them once.
    for expected in (
        f"providers='{EVIL_IMAGE}' is not a choice",
        *(f"providers='{value}' is not a choice" for value in AUTOLINKED),
        f"gpus='{AUTOLINKED[1]}' is not a choice",
        "URL parameter top is 40,000 characters long",
    ):
        expect(page.get_by_text(shown_as(expected)).first).to_be_visible(timeout=30_000)
    assert LONG_VALUE[:300] not in page.content()
    for host in EVIL_HOSTS:
        assert page.locator(f'a[href*="{host}"]').count() == 0, host
    assert page.locator('a[href^="mailto:"]').count() == 0
    assert page.locator('img[src*="evil"]').count() == 0
    assert fetched == []
