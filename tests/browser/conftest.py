"""A real Streamlit server on 127.0.0.1 and Debian's chromium driven by Playwright."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import Page

if TYPE_CHECKING:
    from planner.plan import Plan

from tests.conftest import ROOT
from tests.loopback import free_port

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
ARTIFACTS = ROOT / "test-artifacts"
# `GPUPLAN_UPDATE_SCREENSHOTS=1 pytest tests/browser` (make screenshots) also writes the
# README's images here; commit them.
DOCS_IMAGES = ROOT / "docs" / "img"


def wait_healthy(url: str, process: subprocess.Popen[bytes], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read().decode().strip() == "ok":
                    return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"{url} not healthy after {timeout_s} s")


@pytest.fixture(scope="session")
def app_results_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The served app's results folder ($GPUPLAN_RESULTS_DIR), empty at the start."""
    return tmp_path_factory.mktemp("results")


@pytest.fixture(scope="session")
def app_url(tmp_path_factory: pytest.TempPathFactory, app_results_dir: Path) -> Iterator[str]:
    """URL of `streamlit run app.py` on a free loopback port (stopped after the session)."""
    port = free_port()
    env = {**os.environ, "GPUPLAN_RESULTS_DIR": str(app_results_dir)}
    log = tmp_path_factory.mktemp("streamlit") / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                "app.py",
                "--server.port",
                str(port),
                "--server.address",
                "127.0.0.1",
                "--server.headless",
                "true",
                "--browser.gatherUsageStats",
                "false",
            ],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, object]) -> dict[str, object]:
    """pytest-playwright launches Debian's chromium, never a downloaded browser."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"chromium not found at {CHROMIUM}: `make test` installs Debian's chromium")
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": CHROMIUM_ARGS,
        "headless": True,
    }


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict[str, object]) -> dict[str, object]:
    """A desktop-sized viewport for the app's wide layout."""
    return {**browser_context_args, "viewport": {"width": 1400, "height": 1000}}


@pytest.fixture(scope="session")
def screenshots() -> Path:
    """Folder for page screenshots (test-artifacts/, ignored by git)."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


def update_docs_image(page: Page, name: str, height: int) -> None:
    """With GPUPLAN_UPDATE_SCREENSHOTS=1, save the top `height` pixels of the page as
    docs/img/`name` (the README shows it); otherwise nothing."""
    if os.environ.get("GPUPLAN_UPDATE_SCREENSHOTS") != "1":
        return
    DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
    width = page.viewport_size["width"] if page.viewport_size else 1400
    page.screenshot(
        path=str(DOCS_IMAGES / name), clip={"x": 0, "y": 0, "width": width, "height": height}
    )


def download(page: Page, button: str, path: Path, timeout_ms: int = 30_000) -> Path:
    """Wait for the page's `button` (up to 90 s), click it and save what it downloads
    (within `timeout_ms`) as `path`."""
    locator = page.get_by_role("button", name=button)
    locator.wait_for(timeout=90_000)
    with page.expect_download(timeout=timeout_ms) as started:
        locator.click()
    started.value.save_as(path)
    return path


def page_plan(**kwargs: Any) -> Plan:
    """The plan the Plan page makes for its defaults changed by `kwargs`: the
    resnet50-imagenet-90ep workload, the default tiers' providers (no marketplace hosts),
    and, as the served app's results folder is empty, bundled and published figures only."""
    from planner.plan import make_plan
    from planner.request import PlanRequest
    from planner.throughput import own_and_published_results
    from planner.workloads.catalog import WORKLOADS
    from pricing.catalog import load_offers, unique_values
    from pricing.tiers import DEFAULT_TIERS

    offers = load_offers()
    with tempfile.TemporaryDirectory() as empty:
        table, _ = own_and_published_results([empty])
    buyable = offers.loc[offers["tier"].isin(DEFAULT_TIERS)]
    kwargs.setdefault("providers", unique_values(buyable, "provider"))
    kwargs.setdefault("tiers", DEFAULT_TIERS)
    return make_plan(PlanRequest(WORKLOADS["resnet50-imagenet-90ep"], **kwargs), offers, table)


# The grid's cell font (Streamlit's theme: Source Sans, 14 px; headers semibold).
CELL_FONT = "14px 'Source Sans', sans-serif"
HEADER_FONT = "600 14px 'Source Sans', sans-serif"


def text_px(page: Page, texts: list[str], font: str) -> float:
    """The widest of `texts` drawn in `font`, in CSS pixels (the page's own canvas)."""
    return float(
        page.evaluate(
            """([texts, font]) => {
                const ctx = document.createElement('canvas').getContext('2d');
                ctx.font = font;
                return Math.max(0, ...texts.map(t => ctx.measureText(t).width));
            }""",
            [texts, font],
        )
    )
