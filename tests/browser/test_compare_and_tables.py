"""In chromium: the GPU filter and exact count, the Compare view and its CSV, and table
columns wide enough for the text the grid draws (measured in the browser's own font)."""

from __future__ import annotations

from csv import DictReader
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect

from planner.plan import Plan
from planner.ui.tables import cell_text
from tests.browser.conftest import CELL_FONT, HEADER_FONT, download, page_plan, text_px

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

QUERY = "gpus=H100-SXM&gpu_count=8"


def grid_columns(grid: Locator) -> dict[str, list[str]]:
    """The grid's accessible cells, column by column (header -> texts of the rows drawn)."""
    headers = grid.locator("[role=columnheader]").all_inner_texts()
    cells = grid.locator("[role=gridcell]").all_inner_texts()
    rows = [cells[i : i + len(headers)] for i in range(0, len(cells), len(headers))]
    return {h: [r[i] for r in rows if len(r) == len(headers)] for i, h in enumerate(headers)}


def _number(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text


def query_plan() -> Plan:
    """The plan the Plan page makes for QUERY."""
    return page_plan(gpus=("H100-SXM",), gpu_count=8)


def default_compared() -> list[str]:
    """The column headers the Compare view starts with for QUERY's plan (the picks)."""
    from planner.ui.compare import candidates, default_labels, short_names

    plan = query_plan()
    table = candidates(plan)
    return short_names(table.set_index("label").loc[default_labels(plan, table)])


def configured_widths() -> tuple[dict[str, int], dict[str, str | None]]:
    """The pixel width and number format the Plan page gives each ranked-table column
    (by header) for QUERY's plan."""
    from planner.ui.plan_view import column_config, ranked_table
    from planner.ui.tables import fitted

    config = fitted(ranked_table(query_plan()), column_config())
    specs = [spec for spec in config.values() if spec and spec.get("width")]
    widths = {str(spec["label"]): int(spec["width"]) for spec in specs}
    formats = {str(spec["label"]): (spec.get("type_config") or {}).get("format") for spec in specs}
    return widths, formats


def test_gpu_filter_exact_count_and_unclipped_columns(
    app_url: str, page: Page, screenshots: Path
) -> None:
    page.goto(f"{app_url}/?{QUERY}", wait_until="domcontentloaded")
    page.get_by_text("Ranked options:").wait_for(timeout=120_000)
    grid = page.locator('[data-testid="stDataFrame"]').first
    grid.locator("[role=gridcell]").first.wait_for(state="attached", timeout=90_000)
    columns = grid_columns(grid)
    assert columns["GPUs"] and set(columns["GPUs"]) == {"8 x H100-SXM"}
    # rows are drawn as they scroll into view: the first ones are there, ranked
    assert columns["rank"][:3] == ["1", "2", "3"] and all(columns["provider"])
    widths, formats = configured_widths()
    # The accessible cells hold raw values; the canvas draws them in the column's format.
    # the columns in view: the figures a reader compares come first
    leading = ("provider", "GPUs", "hours", "cost", "P10–P90", "$/GPU-h", "source", "price date")
    measured = [h for h in leading if h in columns]
    assert len(measured) == len(leading), list(columns)
    for header in measured:
        drawn = [cell_text(_number(v), formats[header]) for v in columns[header]]
        needed = max(text_px(page, drawn, CELL_FONT), text_px(page, [header], HEADER_FONT))
        # 16 px: the grid's cell padding (8 px each side)
        assert widths[header] >= needed + 16, (header, widths[header], needed, drawn)
    grid.scroll_into_view_if_needed()
    grid.screenshot(path=str(screenshots / "plan-table-h100x8.png"))


def test_compare_view_side_by_side_and_its_csv(
    app_url: str, page: Page, screenshots: Path, tmp_path: Path
) -> None:
    page.goto(f"{app_url}/?{QUERY}", wait_until="domcontentloaded")
    page.get_by_text("Compare options").wait_for(timeout=120_000)
    compare = page.locator('[data-testid="stTable"]')
    compare.locator("tbody tr").first.wait_for(timeout=30_000)
    headers = compare.locator("thead th").all_inner_texts()
    rows = [r.locator("td, th").all_inner_texts() for r in compare.locator("tbody tr").all()]
    chosen = default_compared()
    assert 2 <= len(chosen) <= 4  # the picks by default
    options = headers[1:]
    assert options == chosen  # every option is drawn: the table wraps to the page
    figures = [r[0] for r in rows]
    for field in ("time to train", "cost P10–P90", "$/GPU-hour", "throughput source",
                  "price date"):  # fmt: skip
        assert field in figures
    row = rows[figures.index("$/GPU-hour")]
    assert all(cell.startswith("$") for cell in row[1:]) and len(row) == len(headers)
    compare.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / "plan-compare.png"), full_page=True)
    csv = download(page, "Download comparison CSV", tmp_path / "compare.csv")
    with csv.open() as handle:
        lines = list(DictReader(handle))
    assert len(lines) == len(chosen)
    assert {r["total_gpus"] for r in lines} == {"8.0"}
    assert all(r["price_date"] and r["throughput_source"] for r in lines)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
