"""Downloads: a table as CSV, and a self-contained HTML report of a view.

    report = Report(
        title="Cloud vs on-prem: 8 x H100-SXM",
        summary=["On-prem $2.51 per GPU-hour at 70% utilization", ...],
        figures=[("Amortized $/GPU-hour vs utilization", fig)],
        tables=[("Against the cloud", table)],
        assumptions=["Capex straight-line over 4 years", ...],
        sources=["aws prices of 2025-06-01 (skypilot-catalog ...)", ...],
        link="http://host/onprem?utilization=0.7",
    )
    download_csv(table, "onprem-vs-cloud.csv", key="onprem.csv")
    download_report(lambda: report, "onprem-report.html", key="onprem.report")

`report_html` embeds plotly.js inline (no network needed to open the file) and escapes
every text; both buttons build their file only when clicked.
"""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import pandas as pd
import streamlit as st

CSV_MIME = "text/csv"
HTML_MIME = "text/html"

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 75rem; color: #222; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
table { border-collapse: collapse; font-size: 0.7rem; }
th, td { border: 1px solid #ccc; padding: 0.15rem 0.3rem; text-align: left; vertical-align: top;
  overflow-wrap: break-word; }
th { background: #f3f3f3; } .meta { color: #666; font-size: 0.85rem; }
@page { size: A4 landscape; margin: 12mm; }
@media print {
  body { margin: 0; max-width: none; } h2 { break-after: avoid; } tr { break-inside: avoid; }
}
"""


@dataclass(frozen=True)
class Report:
    """What a report shows: headline lines, charts, tables, assumptions and sources."""

    title: str
    summary: list[str] = field(default_factory=list)
    figures: list[tuple[str, Any]] = field(default_factory=list)
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    link: str = ""


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """The table as UTF-8 CSV (no index; missing values blank; spreadsheet-safe: no cell
    runs as a formula, edge.spreadsheet)."""
    from edge.spreadsheet import csv_text

    return csv_text(frame).encode("utf-8")


def _gpuplan_version() -> str:
    try:
        return version("gpuplan")
    except PackageNotFoundError:  # pragma: no cover - running from a plain checkout
        return "unknown"


def _list(items: list[str]) -> str:
    if not items:
        return "<p>None.</p>"
    return "<ul>" + "".join(f"<li>{html.escape(i)}</li>" for i in items) + "</ul>"


def report_html(report: Report, now: dt.datetime | None = None) -> str:
    """The report as one HTML file: plotly.js inline, tables as HTML, text escaped."""
    now = now or dt.datetime.now(dt.UTC)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(report.title)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(report.title)}</h1>",
        f'<p class="meta">gpuplan {html.escape(_gpuplan_version())}, generated '
        f"{now:%Y-%m-%d %H:%M} UTC",
    ]
    if report.link:
        link = html.escape(report.link, quote=True)
        parts.append(f' &middot; view: <a href="{link}">{link}</a>')
    parts.append("</p>")
    if report.summary:
        parts += ["<h2>Summary</h2>", _list(report.summary)]
    for i, (caption, figure) in enumerate(report.figures):
        parts.append(f"<h2>{html.escape(caption)}</h2>")
        parts.append(
            figure.to_html(
                full_html=False,
                include_plotlyjs="inline" if i == 0 else False,
                config={"displaylogo": False},
            )
        )
    for caption, table in report.tables:
        parts.append(f"<h2>{html.escape(caption)}</h2>")
        parts.append(table.to_html(index=False, na_rep="", escape=True, border=0))
    parts += ["<h2>Assumptions</h2>", _list(report.assumptions)]
    parts += ["<h2>Sources</h2>", _list(report.sources)]
    parts.append("</body></html>")
    return "\n".join(parts)


def download_csv(
    frame: pd.DataFrame | Callable[[], pd.DataFrame],
    file_name: str,
    key: str,
    label: str = "Download CSV",
) -> None:
    """A download button for the table as CSV, written only when it is clicked (a page's
    rerun does not pay for a file nobody asked for). `frame` may be a function that builds
    the table (run on click, outside the script run, like download_report's `build`)."""
    st.download_button(
        label,
        data=lambda: csv_bytes(frame() if callable(frame) else frame),
        file_name=file_name,
        mime=CSV_MIME,
        key=key,
        on_click="ignore",
        icon=":material/download:",
    )


def download_report(
    build: Callable[[], Report],
    file_name: str,
    key: str,
    label: str = "Download HTML report",
) -> None:
    """A download button for the HTML report; `build` runs only when it is clicked.

    `build` runs outside the script run (Streamlit calls it on click): read everything it
    needs from the page first (PageState.link(), session state), not inside it.
    """
    st.download_button(
        label,
        data=lambda: report_html(build()).encode("utf-8"),
        file_name=file_name,
        mime=HTML_MIME,
        key=key,
        on_click="ignore",
        icon=":material/description:",
    )
