"""In chromium at 1280 and 1440 px: the Compare view shows four options without scrolling,
and no page cuts a cell or a label (text drawn with an ellipsis, a table wider than the
page). Screenshots go to test-artifacts/."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from playwright.sync_api import Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from tests.browser.conftest import CELL_FONT, HEADER_FONT, page_plan, text_px

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

WIDTHS = (1280, 1440)
QUERY = "gpus=H100-SXM&gpu_count=8"
FOUR = ("lambda", "aws", "gcp", "azure")
# Every page with what it shows once it has drawn (the on-prem page is tested on its own).
PAGES = {
    f"?{QUERY}": "Ranked options:",
    "scaling": "Scaling",
    "benchmarks": "Measured vs published",
    "prices": "Price sources",
    "onprem": "On-prem cost lines",
}
# Elements in the main area whose text is wider than the element (drawn cut, with an
# ellipsis or clipped), and tables wider than their container.
CUT_TEXT_JS = """() => {
    const main = document.querySelector('[data-testid="stMain"]');
    const cut = [];
    for (const el of main.querySelectorAll('*')) {
        const style = getComputedStyle(el);
        if (!el.innerText || el.children.length > 3 || style.display === 'none') continue;
        const clips = style.textOverflow === 'ellipsis' || style.overflowX === 'hidden';
        if (clips && el.scrollWidth > el.clientWidth + 1) cut.push(el.innerText.slice(0, 80));
    }
    for (const t of main.querySelectorAll('[data-testid="stTable"]')) {
        if (t.scrollWidth > t.clientWidth + 1) cut.push('table: ' + t.innerText.slice(0, 80));
        for (const cell of t.querySelectorAll('th, td')) {
            if (cell.scrollWidth > cell.clientWidth + 1) cut.push(cell.innerText.slice(0, 80));
        }
    }
    return cut;
}"""


def four_labels() -> list[str]:
    """One 8 x H100-SXM option on each of FOUR's clouds, as the Compare view names them."""
    from planner.ui.compare import candidates

    table = candidates(page_plan(gpus=("H100-SXM",), gpu_count=8))
    return [str(table.loc[table["provider"] == p, "label"].iloc[0]) for p in FOUR]


# The page's script runs: stApp's data-test-script-state is "running" while one runs.
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
COUNT_RUNS_JS = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    window.gpuplanRunsDone = 0;
    new MutationObserver(records => {
        window.gpuplanRunsDone += records.filter(r => r.oldValue === 'running').length;
    }).observe(app, {attributeFilter: ['data-test-script-state'], attributeOldValue: true});
}"""
RAN_SINCE_JS = """(before) => window.gpuplanRunsDone > before && document.querySelector(
    '[data-testid="stApp"]').getAttribute('data-test-script-state') === 'notRunning'"""


def rerun_after(page: Page, action: Callable[[], None], drawn: Callable[[], None]) -> None:
    """Do `action` once no script run is under way, wait until the page shows what the run
    it started draws (`drawn`, an expect), then until that run has finished. A run too
    quick to be seen by the counter is not waited for beyond RUN_SEEN_MS: `drawn` and
    the idle page already say it is over."""
    page.locator(IDLE).wait_for(timeout=120_000)
    before = page.evaluate("() => window.gpuplanRunsDone")
    action()
    drawn()
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function(RAN_SINCE_JS, arg=before, timeout=RUN_SEEN_MS)
    page.locator(IDLE).wait_for(timeout=120_000)


RUN_SEEN_MS = 15_000


PICK_TRIES = 3


def pick_option(page: Page, box: Locator, label: str) -> None:
    """Type `label` into the box and click it in the dropdown, until its chip shows. A box
    redrawn by a run that was still finishing loses the typed text, closes its list or
    drops the choice just made, so typing and choosing are repeated (PICK_TRIES times,
    30 s for each wait) before the wait fails."""
    option = page.get_by_role("option", name=label, exact=True)
    # The chip, by its title: while the list is open its group is aria-hidden (no role).
    chip = box.get_by_title(label, exact=True)
    for attempt in range(1, PICK_TRIES + 1):
        page.locator(IDLE).wait_for(timeout=120_000)
        if chip.count():
            break
        try:
            box.locator("input").fill(label)
            option.wait_for(timeout=30_000)
            option.click()
            chip.wait_for(timeout=30_000)  # its chip (slow under load)
            break
        except PlaywrightTimeout:
            if attempt == PICK_TRIES:
                raise
    page.keyboard.press("Escape")


def choose(page: Page, labels: list[str]) -> None:
    """Clear the Compare view's choice, then pick `labels` one by one, each once the page
    has run with the last: a run still drawing the last choice redraws the box and drops
    the filter being typed."""
    page.evaluate(COUNT_RUNS_JS)
    box = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Options to compare")
    headers = page.locator('[data-testid="stTable"] thead th')
    prompt = page.get_by_text("Choose at least two options to compare.")
    rerun_after(
        page,
        lambda: box.get_by_role("button", name="Clear all").click(),
        lambda: expect(prompt).to_be_visible(timeout=120_000),
    )
    for picked, label in enumerate(labels, start=1):

        def pick(label: str = label) -> None:
            pick_option(page, box, label)

        def drawn(picked: int = picked) -> None:
            if picked >= 2:  # the comparison table: a label column and one per option
                expect(headers).to_have_count(picked + 1, timeout=120_000)

        rerun_after(page, pick, drawn)


@pytest.mark.parametrize("width", WIDTHS)
def test_compare_shows_four_options_side_by_side(
    app_url: str, page: Page, screenshots: Path, width: int
) -> None:
    from planner.ui.compare import short_names

    page.set_viewport_size({"width": width, "height": 1000})
    page.goto(f"{app_url}/?{QUERY}", wait_until="domcontentloaded")
    page.get_by_text("Options to compare").wait_for(timeout=120_000)
    labels = four_labels()
    choose(page, labels)
    table = page.locator('[data-testid="stTable"]')
    expect(table.locator("thead th")).to_have_count(5, timeout=60_000)
    table.scroll_into_view_if_needed()
    headers = table.locator("thead th").all_inner_texts()
    from planner.ui.compare import candidates

    chosen = candidates(page_plan(gpus=("H100-SXM",), gpu_count=8)).set_index("label")
    assert headers[1:] == short_names(chosen.loc[labels])
    main = page.locator('[data-testid="stMain"]').bounding_box()
    assert main is not None
    for header in table.locator("thead th").all():
        box = header.bounding_box()
        # every option's column is on screen, inside the page: nothing to scroll to
        assert box and box["width"] > 60 and box["x"] + box["width"] <= main["x"] + main["width"]
    assert page.evaluate(CUT_TEXT_JS) == []
    table.screenshot(path=str(screenshots / f"compare-four-{width}px.png"))


# The grid's cell padding (8 px each side).
CELL_PADDING_PX = 16


def open_with_grids(page: Page, url: str, width: int, heading: str) -> list[bytes]:
    """Open `url` `width` px wide and wait for `heading` and a first table; the websocket
    messages the page receives, collected as they come (for grids)."""
    frames: list[bytes] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(f)))
    page.set_viewport_size({"width": width, "height": 1000})
    page.goto(url, wait_until="domcontentloaded")
    page.get_by_text(heading).first.wait_for(timeout=120_000)
    page.locator('[data-testid="stDataFrame"]').first.wait_for(timeout=60_000)
    return frames


def grids(frames: list[bytes]) -> list[tuple[dict[str, Any], pa.Table]]:
    """Each st.dataframe the server sent (its column config, its data), from the page's
    websocket messages (the grid draws on a canvas: its DOM holds no widths)."""
    found = []
    for frame in frames:
        if isinstance(frame, str):
            continue
        message = ForwardMsg()
        message.ParseFromString(frame)
        if message.WhichOneof("type") != "delta":
            continue
        delta = message.delta
        if delta.WhichOneof("type") != "new_element":
            continue
        element = delta.new_element
        if element.WhichOneof("type") != "dataframe":
            continue
        grid = element.dataframe
        data = pa.ipc.open_stream(grid.arrow_data.data).read_all()
        found.append((json.loads(grid.columns or "{}"), data))
    return found


def cut_columns(page: Page, config: dict[str, Any], data: pa.Table) -> list[str]:
    """Columns of one grid narrower than their header or longest cell as drawn."""
    from planner.ui.tables import cell_text

    cut = []
    for name in data.column_names:
        if name.startswith("__index_level") or name == "_index" or name not in config:
            if not name.startswith("__index_level"):
                cut.append(f"{name}: no width set")
            continue
        spec = config[name] or {}
        fmt = (spec.get("type_config") or {}).get("format")
        texts = sorted({cell_text(v, fmt) for v in data.column(name).to_pylist()}, key=len)
        needed = max(
            text_px(page, texts[-20:], CELL_FONT),
            text_px(page, [str(spec.get("label") or name)], HEADER_FONT),
        )
        if int(spec.get("width") or 0) < needed + CELL_PADDING_PX:
            cut.append(f"{name}: {spec.get('width')} px < {needed + CELL_PADDING_PX:.0f} px")
    return cut


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", list(PAGES))
def test_no_page_cuts_a_cell_or_label(
    app_url: str, page: Page, screenshots: Path, width: int, path: str
) -> None:
    frames = open_with_grids(page, f"{app_url}/{path}", width, PAGES[path])
    cut = page.evaluate(CUT_TEXT_JS)
    assert cut == [], cut
    shown = grids(frames)
    assert shown  # every page has a table
    for config, data in shown:
        assert cut_columns(page, config, data) == [], data.column_names
    name = path.split("?")[0] or "plan"
    page.screenshot(path=str(screenshots / f"page-{name}-{width}px.png"))


# A Letter page across, landscape, less 12 mm margins, in CSS pixels (96 per inch); A4 is
# wider (1032 px).
PRINT_WIDTH_PX = 965


def test_the_plan_report_tables_fit_a_printed_page(page: Page, screenshots: Path) -> None:
    from planner.ui.export import report_html
    from planner.ui.plan_view import plan_report
    from pricing.catalog import read_manifest

    html = report_html(plan_report(page_plan(), read_manifest()))
    page.set_viewport_size({"width": PRINT_WIDTH_PX, "height": 1000})
    page.emulate_media(media="print")
    page.set_content(html, wait_until="domcontentloaded")
    tables = page.evaluate(
        """() => [...document.querySelectorAll('table')].map(t => ({
            width: t.getBoundingClientRect().width,
            headers: [...t.querySelectorAll('th')].map(h => h.innerText),
            tallest: Math.max(...[...t.querySelectorAll('tbody tr')].map(
                r => r.getBoundingClientRect().height)),
        }))"""
    )
    assert len(tables) >= 3  # picks, ranked options, constraints
    for table in tables:
        assert table["width"] <= PRINT_WIDTH_PX, table["headers"]
        # a row is a line or three, not a column of words (~260 px before)
        assert table["tallest"] < 80, (table["headers"], table["tallest"])
        # the app's labels, never a raw column name
        assert not any("_" in h for h in table["headers"]), table["headers"]
    assert {"hours", "cost P10", "$/GPU-h", "price date"} <= set(tables[1]["headers"])
    page.screenshot(path=str(screenshots / "plan-report-print.png"), full_page=True)


# Per page, tables (known by a column only they have) whose first columns must show whole,
# without scrolling the grid sideways: the figures a reader compares.
KEY_COLUMNS: dict[str, dict[str, tuple[str, ...]]] = {
    "": {
        "rank": ("rank", "pick", "provider", "gpus", "hours_to_train", "cost_usd", "p10_p90",
                 "usd_per_gpu_hour", "throughput_source", "price_date"),
    },
    "prices": {
        "spot_usd_per_gpu_hour": ("provider", "instance_type", "gpu_name", "gpu_count",
                                  "on_demand_usd_per_gpu_hour", "spot_usd_per_gpu_hour"),
    },
    "onprem": {
        "p_buy_cheaper": ("offer", "usd_per_gpu_hour", "p_buy_cheaper"),
        "component": ("component", "usd_per_year", "usd_per_gpu_hour", "share"),
    },
}  # fmt: skip
HEADINGS = {"": "Ranked options:", "prices": "Price sources", "onprem": "On-prem cost lines"}


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", list(KEY_COLUMNS))
def test_each_tables_key_columns_show_without_scrolling(
    app_url: str, page: Page, screenshots: Path, width: int, path: str
) -> None:
    """The Prices table cut "$4.09" to "$4.0" at the grid's edge with spot past it, the
    Plan page's ranked table hid cost, P10-P90, $/GPU-hour, source and date at 1280 px,
    and the on-prem tables showed "$" and "$1": each key column now ends inside its grid."""
    frames = open_with_grids(page, f"{app_url}/{path}", width, HEADINGS[path])
    least = 900 if width == 1280 else 1000
    grid_px = 0.0
    for _ in range(60):  # the page draws its tables one after another: wait for the key ones
        boxes = [g.bounding_box() for g in page.locator('[data-testid="stDataFrame"]').all()]
        grid_px = max((box["width"] for box in boxes if box), default=0.0)
        names = {n for _, d in grids(frames) for n in d.column_names}
        if grid_px >= least and set(KEY_COLUMNS[path]) <= names:
            break
        page.wait_for_timeout(500)
    assert grid_px >= least  # the key tables span the page
    shown = grids(frames)
    for marker, key in KEY_COLUMNS[path].items():
        config, data = [(c, d) for c, d in shown if marker in d.column_names][-1]
        order = [c for c in data.column_names if c in config]
        assert order[: len(key)] == list(key)
        ends = sum(int(config[c]["width"]) for c in key)
        assert ends <= grid_px - 2, f"{marker}: {ends} px of columns in a {grid_px} px grid"
        assert cut_columns(page, config, data.select(list(key))) == []
    for i, grid in enumerate(page.locator('[data-testid="stDataFrame"]').all()[:2]):
        if grid.is_visible():
            grid.screenshot(
                path=str(screenshots / f"key-columns-{path or 'plan'}-{i}-{width}px.png")
            )
