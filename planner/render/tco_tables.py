"""`gpuplan tco` as tables that fit the terminal, with break-even after the server's life
said so, and a short footer (`--explain` for every assumption and defaulted field)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from rich.markup import escape

from edge.format import money, percent
from edge.tables import Col, console_width, fit_table, make_console, print_wide
from planner.onprem.tco import COMPONENTS, OnPremConfig, cost_breakdown
from pricing.catalog import price_date_labels


def after_life(months: float, lifetime_years: float) -> bool:
    """Break-even later than the server's depreciation life (it never pays back in use)."""
    return bool(np.isfinite(months) and months > lifetime_years * 12)


def months_text(months: float, lifetime_years: float) -> str:
    """'8.9 months', '105 months (after life)', 'never'."""
    if months is None or not np.isfinite(months):
        return "never"
    text = f"{months:,.1f} months" if months < 100 else f"{months:,.0f} months"
    return text + (" (after life)" if after_life(months, lifetime_years) else "")


def _usd(value: object) -> str:
    return money(float(value))  # type: ignore[arg-type]


def _usd_short(value: object) -> str:
    return money(float(value), short=True)  # type: ignore[arg-type]


BREAKDOWN_COLUMNS: tuple[Col, ...] = (
    Col("component", "component"),
    Col("usd_per_year", "$/year", _usd_short, right=True),
    Col("usd_per_gpu_hour", "$/GPU-h", _usd, right=True),
    Col("share", "share", lambda v: percent(v, 0), right=True),
    Col("basis", "basis", shrink_to=16),
)
COMPARE_COLUMNS: tuple[Col, ...] = (
    Col("offer", "cloud offer", shrink_to=12),
    Col("gpu_name", "GPU", shrink_to=6),
    Col("usd_per_gpu_hour", "$/GPU-h", _usd, right=True),
    Col("cheaper", "cheaper"),
    Col("break_even_utilization", "break-even use", lambda v: percent(v, 1), right=True),
    Col("pays_back", "on-prem pays back"),
    Col("price_date", "priced"),
)


def print_tco(
    onprem: OnPremConfig,
    rows: pd.DataFrame,
    notes: Sequence[str],
    defaulted: Sequence[str],
    warnings: Sequence[str],
    wide: bool = False,
    explain: bool = False,
) -> None:
    """The cost breakdown and the cloud comparison on stdout; notes on stderr."""
    width = console_width()
    out = make_console(width)
    breakdown = cost_breakdown(onprem)
    total = rows["usd_per_gpu_hour"].iloc[0]
    title = (
        f"On-prem {onprem.name}: {onprem.gpus} x {onprem.gpu_name} at "
        f"{percent(onprem.utilization, 0)} utilization, {onprem.lifetime_years:g}-year life "
        f"-> {money(total)} per GPU-hour"
    )
    cloud = rows.iloc[1:].copy()
    cloud["price_date"] = price_date_labels(cloud)  # "≥ 2025-06-01" for a lower bound
    life = onprem.lifetime_years
    cloud["offer"] = cloud["provider"] + " " + cloud["instance_type"]
    cloud["pays_back"] = [months_text(m, life) for m in cloud["break_even_months"].fillna(np.inf)]
    demand = float(cloud["monthly_gpu_hours"].iloc[0]) if len(cloud) else 0.0
    compare_title = f"Against the cloud, at {demand:,.0f} GPU-hours a month"
    if wide:
        print_wide(breakdown, title)
        print_wide(cloud, compare_title)
    else:
        out.print(fit_table(breakdown, BREAKDOWN_COLUMNS, width, title))
        out.print(fit_table(cloud, COMPARE_COLUMNS, width, compare_title))
        late = [after_life(m, life) for m in cloud["break_even_months"].fillna(np.inf)]
        if any(late):
            out.print(
                escape(
                    f"after life: break-even after the server's {life * 12:g}-month life; "
                    "buying does not pay back against that offer"
                ),
                highlight=False,
            )
    err = make_console(width, stderr=True)
    if explain or wide:
        for line in notes:
            err.print(f"[dim]assumption:[/] {escape(line)}", highlight=False)
        for line in defaulted:
            err.print(f"[yellow]defaulted:[/] {escape(line)}", highlight=False)
    else:
        err.print(
            escape(
                f"{len(defaulted)} fields defaulted; assumptions: straight-line capex, no "
                f"salvage value, components {', '.join(COMPONENTS)}"
            )[:width],
            highlight=False,
        )
    for line in warnings:
        err.print(f"[yellow]warning:[/] {escape(line)}", highlight=False)
    if not (explain or wide):
        err.print("--explain for every assumption and defaulted field", highlight=False)


def worded_tco(rows: pd.DataFrame) -> pd.DataFrame:
    """planner.onprem.tco.tco_table's rows as written out: an on-prem row without a source is
    'on-prem config'."""
    out = rows.copy()
    bare = (out["option"] == "on-prem") & (out["price_source"].astype(str) == "")
    out.loc[bare, "price_source"] = "on-prem config"
    return out
