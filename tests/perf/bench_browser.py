"""What a user waits for in the browser: each page's first render and a widget change.

    python tests/perf/bench_browser.py [--runs 5]

Starts `streamlit run app.py` on a free loopback port (bundled data, an empty results
folder) and drives Debian's chromium through Playwright. Per page, each from navigation
until the script has finished (stApp's data-test-script-state is notRunning) and the
page's title and first chart are drawn:
  cold     the first visit after the server started (data loaded, models fitted)
  new      a new browser profile opening the page once the server is warm: Streamlit's
           and plotly's scripts are fetched and compiled again (median of runs)
  tab      a new tab in a browser that has opened the app before (its HTTP and code
           caches warm): what a returning user waits for (median of runs)
  nav      the page chosen in the sidebar of an open app (median of runs)
Widget changes, on a warm page (median of runs,
alternating two values): the Plan page's precision radio, and the on-prem page's
utilization, from the click until the rerun has finished and the URL carries the new value.
The floor is the same measurement on a one-chart, one-table Streamlit page (FLOOR_APP):
what Streamlit and plotly.js cost in this browser on this machine, whatever the page does.
Aims: first render <= 2 s per page on a running server, widget change <= 1 s.
Other work shares this machine's cores: compare figures taken in one run. Not a test.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, free_port, wait_healthy  # noqa: E402

PAGES = ("", "scaling", "onprem", "benchmarks", "prices")
FLOOR_APP = """
import plotly.graph_objects as go
import streamlit as st

st.title("floor")
st.plotly_chart(go.Figure(go.Scatter(x=[1, 2, 3], y=[1, 3, 2])))
st.dataframe({"a": [1, 2, 3]})
"""
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'


TITLES = {
    "": "Plan",
    "scaling": "Scaling",
    "onprem": "Cloud vs on-prem",
    "benchmarks": "Benchmarks",
    "prices": "Prices",
}


# Each page's h1 begins with these words.
HEADINGS = {
    "": "gpuplan: where to train",
    "scaling": "Scaling:",
    "onprem": "Cloud vs on-prem",
    "benchmarks": "Benchmarks:",
    "prices": "Prices:",
}


def wait_rendered(page: Page, title: str | None = None, timeout_ms: float = 120_000) -> None:
    """Until the script run is over and the page's h1 (beginning with `title`, when
    given) and first chart are drawn."""
    page.locator(IDLE).wait_for(timeout=timeout_ms)
    if title:
        heading = page.locator("h1").filter(has_text=re.compile("^" + re.escape(title)))
        heading.first.wait_for(timeout=timeout_ms)
    page.locator(".js-plotly-plot").first.wait_for(timeout=timeout_ms)
    page.locator(IDLE).wait_for(timeout=timeout_ms)


def first_render(browser: Browser, url: str) -> float:
    """A new browser profile (empty caches) opening `url`."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    elapsed = open_in_tab(context, url)
    context.close()
    return elapsed


def open_in_tab(context: BrowserContext, url: str) -> float:
    """A new tab of `context` opening `url`."""
    page = context.new_page()
    start = time.perf_counter()
    page.goto(url, wait_until="commit")
    wait_rendered(page)
    elapsed = time.perf_counter() - start
    page.close()
    return elapsed


def navigate(page: Page, path: str) -> float:
    """Choose the page in the sidebar of the open app; seconds until it is drawn."""
    link = page.locator('[data-testid="stSidebarNav"] a').filter(has_text=TITLES[path])
    start = time.perf_counter()
    link.first.click()
    on_page = re.compile(r"^https?://[^/?]+/" + re.escape(path) + r"(\?|$)")
    page.wait_for_url(on_page, wait_until="commit")
    wait_rendered(page, HEADINGS[path])
    return time.perf_counter() - start


def click_radio(value: str) -> Callable[[Page], None]:
    def change(page: Page) -> None:
        page.locator('[data-testid="stRadio"]').get_by_text(value, exact=True).first.click()

    return change


def type_number(label: str, value: str) -> Callable[[Page], None]:
    def change(page: Page) -> None:
        box = page.get_by_label(label, exact=True).first
        box.fill(value)
        box.press("Enter")

    return change


Change = tuple[Callable[[Page], None], str]


def widget_changes(
    browser: Browser, url: str, path: str, changes: list[Change], runs: int
) -> list[float]:
    """Seconds from each change until its rerun is over and the URL matches its pattern."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.goto(f"{url}/{path}", wait_until="commit")
    wait_rendered(page)
    seconds = []
    for i in range(runs):
        make_change, pattern = changes[i % 2]
        start = time.perf_counter()
        make_change(page)
        page.wait_for_url(re.compile(pattern), timeout=120_000)
        page.locator(IDLE).wait_for(timeout=120_000)
        seconds.append(time.perf_counter() - start)
    context.close()
    return seconds


def serve(script: str, env: dict[str, str], servers: list[subprocess.Popen[bytes]]) -> str:
    """`streamlit run script` on a free loopback port (added to `servers`); its URL once
    healthy."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", script, "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    servers.append(server)
    wait_healthy(url, server)
    return url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per median")
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="gpuplan-perf-browser-")
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "GPUPLAN_RESULTS_DIR": os.path.join(scratch, "results"),
        "XDG_DATA_HOME": os.path.join(scratch, "data"),
        "XDG_CACHE_HOME": os.path.join(scratch, "cache"),
    }
    env.pop("GPUPLAN_SNAPSHOT_DIR", None)
    floor_script = Path(scratch) / "floor.py"
    floor_script.write_text(FLOOR_APP)
    servers: list[subprocess.Popen[bytes]] = []
    try:
        url = serve("app.py", env, servers)
        floor_url = serve(str(floor_script), env, servers)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            floor = [first_render(browser, floor_url) for _ in range(args.runs + 1)][1:]
            warm = browser.new_context(viewport={"width": 1400, "height": 1000})
            floor_tab = [open_in_tab(warm, floor_url) for _ in range(args.runs + 1)][1:]
            print(
                f"floor (one chart, one table): new {statistics.median(floor):.2f} s, "
                f"tab {statistics.median(floor_tab):.2f} s; load average "
                f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {args.runs} runs"
            )
            print(f"{'page':<11} {'cold s':>7} {'new s':>6} {'tab s':>6} {'nav s':>6}"
                  "  (max of runs in brackets)  aim <= 2 s")  # fmt: skip
            app = warm.new_page()
            app.goto(url, wait_until="commit")
            wait_rendered(app)
            for path in PAGES:
                cold = first_render(browser, f"{url}/{path}")
                new = [first_render(browser, f"{url}/{path}") for _ in range(args.runs)]
                tab = [open_in_tab(warm, f"{url}/{path}") for _ in range(args.runs)]
                nav = []
                for _ in range(args.runs):
                    navigate(app, "benchmarks" if path != "benchmarks" else "prices")
                    nav.append(navigate(app, path))
                print(
                    f"{path or 'plan':<11} {cold:7.2f} "
                    + " ".join(
                        f"{statistics.median(t):6.2f} ({max(t):.2f})" for t in (new, tab, nav)
                    )
                )
            warm.close()
            print(f"{'change':<30} {'median s':>8} {'min':>6} {'max':>6}  aim <= 1 s")
            utilization = "Utilization (share of the year used)"
            plan = [
                (click_radio("tf32"), "precision=tf32"),
                (click_radio("fp16"), "precision=fp16"),
            ]
            onprem = [
                (type_number(utilization, "0.90"), r"utilization=0\.9"),
                (type_number(utilization, "0.70"), r"utilization=0\.7"),
            ]
            for label, path, changes in (
                ("plan: precision fp16 <-> tf32", "", plan),
                ("onprem: utilization 0.7<->0.9", "onprem", onprem),
            ):
                s = widget_changes(browser, url, path, changes, args.runs)
                print(f"{label:<30} {statistics.median(s):8.2f} {min(s):6.2f} {max(s):6.2f}")
            browser.close()
    finally:
        for process in servers:
            process.terminate()
            process.wait(timeout=20)


if __name__ == "__main__":
    main()
