"""`gpuplan tco` as tables that fit the terminal: the verdict sentence, every cost line,
the offers side by side with the share of cases buying is cheaper and the payback band,
the inputs that decide it, and a short footer (`--explain` for every assumption and
defaulted field). Words from planner.render.tco_words."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from rich.markup import escape

from edge.format import money, percent
from edge.tables import (
    Col,
    console_width,
    cut,
    fit_table,
    left_out_columns,
    make_console,
    print_wide,
    wrap_words,
)
from planner.onprem.answer import TcoAnswer
from planner.onprem.verdict import Verdict
from planner.render.tco_words import (
    VERDICT_WORDS,
    after_life,
    assumptions,
    defaulted_text,
    months_band,
    months_short,
    months_text,
    offer_label,
    sizing_note,
    verdict_sentence,
    worded_breakdown,
    worded_tco,
)
from pricing.catalog import price_date_labels

__all__ = ["after_life", "months_text", "print_tco", "worded_tco"]


def _usd(value: object) -> str:
    return money(float(value))  # type: ignore[arg-type]


def _usd_short(value: object) -> str:
    return money(float(value), short=True)  # type: ignore[arg-type]


BREAKDOWN_COLUMNS: tuple[Col, ...] = (
    Col("component", "line"),
    Col("usd_per_year", "$/year", _usd_short, right=True),
    Col("usd_per_gpu_hour", "$/GPU-h", _usd, right=True),
    Col("share", "share", lambda v: percent(v, 0), right=True),
    Col("source", "from"),
    Col("basis", "how", shrink_to=16, wrap=True),
)
# Where the offers do not fit, left out in this order (highest `drop` first): the reserved
# prices, the price date (then said per provider under the table) and the break-even
# utilization; the offer's name (17 columns at least) is cut after a whole name part.
RESERVED_COLUMNS: tuple[Col, ...] = (
    Col("reserved_1y_usd_per_gpu_hour", "1y", _usd, right=True, drop=3),
    Col("reserved_3y_usd_per_gpu_hour", "3y", _usd, right=True, drop=4),
)
PRICE_DATE_COLUMN = Col("price_date", "priced", drop=2)
COMPARE_COLUMNS: tuple[Col, ...] = (
    Col("offer", "cloud offer", shrink_to=17),
    Col("usd_per_gpu_hour", "$/GPU-h", _usd, right=True),
    Col("p_buy_cheaper", "buy wins", lambda v: percent(v, 0), right=True),
    Col("break_even_utilization", "break-even", lambda v: percent(v, 1), right=True, drop=1),
    Col("pays_back", "pays back"),
    Col("payback_band", "P10-P90", shrink_to=9),
    PRICE_DATE_COLUMN,
)


def compare_columns(cloud: pd.DataFrame) -> tuple[Col, ...]:
    """COMPARE_COLUMNS, with the reserved prices beside the price where any is listed."""
    shown = [c for c in RESERVED_COLUMNS if c.key in cloud and cloud[c.key].notna().any()]
    return (*COMPARE_COLUMNS[:2], *shown, *COMPARE_COLUMNS[2:])


def price_dates_line(cloud: pd.DataFrame) -> str:
    """'priced: aws ≥ 2025-06-01, lambda ≥ 2025-01-01' (each provider's oldest price date,
    oldest first): what the table's `priced` column says, where it is left out."""
    labels = cloud["price_date"].fillna("").astype(str)
    dated = cloud.assign(label=labels, date=labels.str.lstrip("≥ "))
    dated = dated.loc[dated["label"] != ""].sort_values("date", kind="stable")
    oldest = dated.drop_duplicates("provider")
    listed = ", ".join(f"{p} {d}" for p, d in zip(oldest["provider"], oldest["label"], strict=True))
    return f"priced: {listed}" if listed else ""


def cloud_table(answer: TcoAnswer) -> pd.DataFrame:
    """The offers' rows as the CLI and the app show them (offer, verdict, payback words)."""
    cloud = answer.cloud.copy()
    life = answer.config.lifetime_years
    cloud["offer"] = [offer_label(r) for _, r in cloud.iterrows()]
    cloud["verdict_text"] = [VERDICT_WORDS[v] for v in cloud["verdict"].map(Verdict)]
    cloud["pays_back"] = [months_short(m, life) for m in cloud["break_even_months"].fillna(np.inf)]
    cloud["payback_band"] = [
        months_band(lo, hi, "mo")
        for lo, hi in zip(cloud["payback_months_p10"], cloud["payback_months_p90"], strict=True)
    ]
    cloud["price_date"] = price_date_labels(cloud)
    return cloud


def title(answer: TcoAnswer) -> str:
    """'On-prem dgx-h100-x4: 4 x 8-GPU H100-SXM servers, 4-year life: $4.66 per GPU-hour
    (P10-P90 $4.20-$5.30)'."""
    c = answer.config
    p10, _, p90 = answer.band
    return (
        f"On-prem {c.name}: {c.servers} x {c.gpus_per_server}-GPU {c.gpu_name} servers, "
        f"{c.lifetime_years:g}-year life: {money(answer.onprem['usd_per_gpu_hour'])} per "
        "GPU-hour (P10-P90 "
        f"{money(p10)}-{money(p90)})"
    )


def print_tco(
    answer: TcoAnswer,
    deciding: Sequence[str],
    defaulted: Sequence[str],
    warnings: Sequence[str],
    wide: bool = False,
    explain: bool = False,
) -> None:
    """The verdict, the cost lines and the cloud comparison on stdout; notes on stderr."""
    width = console_width()
    out = make_console(width)
    breakdown = worded_breakdown(answer)
    cloud = cloud_table(answer)
    demand = answer.monthly_gpu_hours
    compare_title = (
        f"Against the cloud ({answer.pricing}; 1y/3y reserved where listed), at "
        f"{demand:,.0f} GPU-hours a month"
    )
    life = answer.config.lifetime_years
    for line in wrap_words(verdict_sentence(answer), width):
        out.print(escape(line), highlight=False)
    note = sizing_note(answer)
    if note:
        for line in wrap_words(note, width):
            out.print(escape(line), highlight=False)
    if wide:
        print_wide(breakdown, title(answer))
        print_wide(cloud, compare_title)
    else:
        out.print(fit_table(breakdown, BREAKDOWN_COLUMNS, width, title(answer)))
        if len(cloud):
            columns = compare_columns(cloud)
            out.print(fit_table(cloud, columns, width, compare_title))
            left_out = left_out_columns(cloud, columns, width)
            if PRICE_DATE_COLUMN.key in left_out and price_dates_line(cloud):
                for line in wrap_words(price_dates_line(cloud), width):
                    out.print(escape(line), highlight=False)
        late = [after_life(m, life) for m in cloud["break_even_months"].fillna(np.inf)]
        if any(late):
            out.print(
                escape(
                    f"after life: payback after the server's {life * 12:g}-month life; "
                    "buying does not pay back against that offer"
                ),
                highlight=False,
            )
    if deciding:
        out.print("Decided most by (each input over its range, the others typical):",
                  highlight=False)  # fmt: skip
        for line in deciding:
            out.print(escape(f"  {line}"), highlight=False)
    err = make_console(width, stderr=True)
    err.print(escape(cut(defaulted_text(answer), width * 3)), highlight=False)
    if explain or wide:
        for line in assumptions(answer):
            err.print(f"[dim]assumption:[/] {escape(line)}", highlight=False)
        for line in defaulted:
            err.print(f"[yellow]defaulted:[/] {escape(line)}", highlight=False)
    for line in warnings:
        err.print(f"[yellow]warning:[/] {escape(line)}", highlight=False)
    if not (explain or wide):
        err.print("--explain for every assumption and defaulted field", highlight=False)
