"""How a Plan is shown: figures in words, the time-vs-cost chart, the tables and the report.

No figure is computed here: everything comes from the Plan (planner.plan.make_plan); this
module formats it for the Plan page and its downloads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from edge.format import duration, duration_range, money, money_range
from planner.choose.pareto import PICKS
from planner.plan import Plan
from planner.render.axes import duration_ticks, log_range, money_ticks
from planner.render.notes import APP_CONTROLS, OWN_CODES, notes_text
from planner.render.plan_words import assumption_lines, pick_reason, worded_picks, worded_status
from planner.render.rows import price_source_text, worded_rows
from planner.ui.export import Report
from planner.ui.tables import banded, cell_text, shared_columns
from pricing.catalog import (
    SnapshotInfo,
    price_date_basis,
    price_date_label,
    price_date_labels,
)

PICK_TITLES = {
    "cheapest_within_deadline": "Cheapest within deadline",
    "fastest_within_budget": "Fastest within budget",
    "best_cost_per_hour_saved": "Best cost per hour saved",
}
PICK_TEXT_POSITION = {
    "cheapest_within_deadline": "bottom center",
    "fastest_within_budget": "top center",
    "best_cost_per_hour_saved": "top left",
}
CONSTRAINT_NAMES = {
    "deadline_hours": "Deadline",
    "budget_usd": "Budget",
    "max_gpus": "Max GPUs",
    "gpu_count": "Exact GPU count",
    "onprem_gpus": "On-prem cluster size",
}
PICK_SHORT = {
    "cheapest_within_deadline": "cheapest",
    "fastest_within_budget": "fastest",
    "best_cost_per_hour_saved": "best value",
}
SOURCE_WORDS = (
    "measured: your own benchmark run; published: Lambda's PyTorch benchmarks; sibling: a "
    "figure of the same chip with another memory or power limit, scaled by bandwidth and "
    "power (planner.throughput.siblings); scaled: a "
    "published or measured figure moved to this GPU count by the scaling law fitted to that "
    "GPU; estimated: from the GPU's specs (spec regression) or, for LLMs, an MFU"
)
# The ranked table's columns, left to right: what a reader compares first (which option,
# how long, how much, how sure, at what price, from what figure and price date) fits the
# grid at 1280 px with the sidebar open; the rest follow.
TABLE_COLUMNS: tuple[str, ...] = (
    "rank", "pick", "provider", "gpus", "hours_to_train", "cost_usd", "p10_p90",
    "usd_per_gpu_hour", "throughput_source", "price_date",
    "instance_type", "region", "total_gpus", "gpu_name",
    "hours_p10", "hours_p90", "cost_p10_usd", "cost_p90_usd",
    "compute_hours", "setup_hours", "staging_hours", "billed_hours", "billing_basis",
    "limit_code", "throughput", "throughput_unit",
    "usd_per_hour", "option_usd_per_hour", "instances", "gpu_count", "pricing",
    "price_source", "on_pareto", "feasible", "misses", "throughput_detail",
)  # fmt: skip
SPOT_COLUMNS: tuple[str, ...] = (
    "interruptions_per_hour",
    "interruption_rate_source",
    "spot_overhead_factor",
)
LLM_COLUMNS: tuple[str, ...] = ("mfu", "memory_per_gpu_gb", "sharding")
PICK_TABLE_COLUMNS: tuple[str, ...] = (
    "pick", "provider", "instance_type", "region", "gpu_name", "instances", "total_gpus",
    "hours_to_train", "hours_p10", "hours_p90", "cost_usd", "cost_p10_usd", "cost_p90_usd",
    "throughput", "throughput_unit", "throughput_source", "price_date", "price_source",
    "throughput_detail", "why",
)  # fmt: skip
PROVIDER_COLORS = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
    "#7f7f7f",
)  # fmt: skip
ONPREM_COLOR = "#d62728"


def warning_lines(plan: Plan) -> list[str]:
    """The plan's notes other than own results, in this app's words."""
    return notes_text([n for n in plan.notes if n.code not in OWN_CODES], APP_CONTROLS)


# ---------------------------------------------------------------- words


def headline(row: pd.Series) -> str:
    """A pick's cost and time, short enough for a metric: '$18.4k · 11.3 d'."""
    return f"{money(row['cost_usd'], short=True)} · {duration(row['hours_to_train'], short=True)}"


def sentence(text: str) -> str:
    """A planner note as a sentence: capital first letter, one full stop."""
    text = text.strip().rstrip(".")
    return text[:1].upper() + text[1:] + "."


def option_text(row: pd.Series) -> str:
    """Which option a row is: 'vast 8x-Tesla_V100-32-65536 x 2 in Sweden, SE, EU'."""
    if row["kind"] == "on-prem":
        return f"on-prem {row['region']} {row['instance_type']}"
    count = f" x {row['instances']:g}" if row["instances"] > 1 else ""
    return f"{row['provider']} {row['instance_type']}{count} in {row['region']}"


def gpus_text(row: pd.Series) -> str:
    """'16 x H100-SXM' (all instances together)."""
    return f"{row['total_gpus']:g} x {row['gpu_name']}"


def throughput_text(row: pd.Series) -> str:
    """'6,214 images/s (scaled)'."""
    value = float(row["throughput"])
    shown = f"{value:,.0f}" if value >= 100 else f"{value:.3g}"
    return f"{shown} {row['throughput_unit']} ({row['throughput_source']})"


def band_text(row: pd.Series) -> str:
    """'P10-P90: 5.1 h-5.3 h, $4.37-$4.46'."""
    return (
        f"P10–P90: {duration(row['hours_p10'])}–{duration(row['hours_p90'])}, "
        f"{money(row['cost_p10_usd'])}–{money(row['cost_p90_usd'])}"
    )


def price_text(row: pd.Series) -> str:
    """The price a row uses and its date (on-prem: how it was amortized)."""
    if row["kind"] == "on-prem":
        return price_source_text(row)
    date = price_date_label(row["price_date"], row.get("price_date_basis", "exact"))
    return f"{row['pricing']} {money(row['usd_per_hour'])}/h per instance, priced {date}"


def price_dates(manifest: Sequence[SnapshotInfo], providers: Sequence[str]) -> str:
    """'Prices as of: aws 2026-11-30, gcp (catalog extract, not before 2025)' for the
    providers chosen: a bounded date is shown as the bound it is."""
    parts = [
        f"{m.provider} ({m.date_label})" if m.date_bound else f"{m.provider} {m.priced_at}"
        for m in manifest
        if m.provider in providers
    ]
    return "Prices as of: " + ", ".join(parts)


def no_pick_reason(plan: Plan, name: str) -> str:
    """Why a pick is missing (the constraint note that says what is closest)."""
    constraint = {"cheapest_within_deadline": "deadline_hours", "fastest_within_budget":
                  "budget_usd"}.get(name)  # fmt: skip
    status = worded_status(plan)
    if constraint is not None and len(status):
        notes = status.loc[status["constraint"] == constraint, "note"]
        if len(notes):
            return str(notes.iloc[0])
    if name == "best_cost_per_hour_saved":
        if not plan.rows["feasible"].any():
            return "nothing meets both the deadline and the budget"
        return "no option within the deadline and budget is faster than the cheapest one"
    return "nothing qualifies"


# ---------------------------------------------------------------- the chart


def _hover(rows: pd.DataFrame) -> np.ndarray:
    """Per row: option, GPUs, throughput and its source, detail, price, P10-P90 texts."""
    detail = rows["throughput_detail"].astype(str)
    detail = detail.where(detail.str.len() <= 110, detail.str.slice(0, 107) + "...")
    records = [
        (
            option_text(row),
            f"{gpus_text(row)} ({row['instances']:g} x {row['gpu_count']:g})",
            throughput_text(row),
            d,
            price_text(row),
            f"{duration(row['hours_p10'])}–{duration(row['hours_p90'])}",
            f"{money(row['cost_p10_usd'])}–{money(row['cost_p90_usd'])}",
            f"{duration(row['hours_to_train'])}",
        )
        for (_, row), d in zip(rows.iterrows(), detail, strict=True)
    ]
    return np.array(records, dtype=object).reshape(len(rows), 8)


HOVER = (
    "<b>%{customdata[0]}</b><br>%{customdata[1]}<br>throughput %{customdata[2]}"
    "<br><i>%{customdata[3]}</i><br>%{customdata[4]}"
    "<br>%{customdata[7]} (P10–P90 %{customdata[5]}), "
    "$%{y:,.2f} (P10–P90 %{customdata[6]})<extra></extra>"
)


def _whiskers(rows: pd.DataFrame, column: str, low: str, high: str) -> dict[str, Any]:
    centre = rows[column].to_numpy(float)
    return {
        "type": "data",
        "symmetric": False,
        "array": np.nan_to_num(rows[high].to_numpy(float) - centre),
        "arrayminus": np.nan_to_num(centre - rows[low].to_numpy(float)),
        "thickness": 1,
        "width": 0,
    }


def plan_figure(plan: Plan) -> go.Figure:
    """Hours vs cost to train (log axes): every row with P10-P90 whiskers, the frontier as
    a line, the picks as stars, the deadline and budget as dashed lines."""
    fig = go.Figure()
    _provider_traces(fig, plan.rows)
    _frontier_trace(fig, plan.frontier)
    _pick_traces(fig, plan.picks)
    _limits(fig, plan)
    _layout(fig, plan)
    return fig


def _provider_traces(fig: go.Figure, rows: pd.DataFrame) -> None:
    """One marker trace per provider (on-prem as large red diamonds), with whiskers."""
    for i, (provider, group) in enumerate(rows.groupby("provider", sort=True)):
        onprem = provider == "on-prem"
        color = ONPREM_COLOR if onprem else PROVIDER_COLORS[i % len(PROVIDER_COLORS)]
        fig.add_trace(
            go.Scatter(
                x=group["hours_to_train"],
                y=group["cost_usd"],
                mode="markers",
                name=str(provider),
                marker={
                    "size": 11 if onprem else 7,
                    "color": color,
                    "symbol": "diamond" if onprem else "circle",
                    "opacity": 0.8,
                },
                error_x={**_whiskers(group, "hours_to_train", "hours_p10", "hours_p90"),
                         "color": color},
                error_y={**_whiskers(group, "cost_usd", "cost_p10_usd", "cost_p90_usd"),
                         "color": color},
                customdata=_hover(group),
                hovertemplate=HOVER,
            )
        )  # fmt: skip


def _frontier_trace(fig: go.Figure, frontier: pd.DataFrame) -> None:
    """The time/cost frontier as a black line, fastest first (nothing when empty)."""
    frontier = frontier.sort_values("hours_to_train")
    if not len(frontier):
        return
    fig.add_trace(
        go.Scatter(
            x=frontier["hours_to_train"],
            y=frontier["cost_usd"],
            mode="lines+markers",
            name="time/cost frontier (every GPU count)",
            line={"color": "black", "width": 1.5},
            marker={"size": 5, "color": "black"},
            customdata=_hover(frontier),
            hovertemplate=HOVER,
        )
    )


def _pick_traces(fig: go.Figure, picks: pd.DataFrame) -> None:
    """A gold star per picked option, labelled with every pick it is."""
    for _, group in picks.groupby("option_id", sort=False):
        row = group.iloc[0]
        label = " + ".join(PICK_SHORT[p] for p in group["pick"])
        fig.add_trace(
            go.Scatter(
                x=[row["hours_to_train"]],
                y=[row["cost_usd"]],
                mode="markers+text",
                name=f"pick: {label}",
                text=[label],
                textposition=PICK_TEXT_POSITION[str(group["pick"].iloc[0])],
                textfont={"size": 13},
                marker={
                    "symbol": "star",
                    "size": 20,
                    "color": "#ffd700",
                    "line": {"width": 1.5, "color": "black"},
                },
                customdata=_hover(group),
                hovertemplate=HOVER,
            )
        )


def _extent(frames: Sequence[pd.DataFrame], columns: Sequence[str], *more: Any) -> list[float]:
    """The smallest and largest positive finite value of `columns` in `frames` and `more`."""
    found = [f[c].to_numpy(float) for f in frames for c in columns if c in f]
    found.append(np.array([m for m in more if m is not None], dtype=float))
    values = np.concatenate(found)
    values = values[np.isfinite(values) & (values > 0)]
    return [float(values.min()), float(values.max())] if len(values) else [1.0, 10.0]


def _log_axis(
    title: str, extent: list[float], ticks: tuple[list[float], list[str]]
) -> dict[str, Any]:
    """A log axis holding `extent` (low, high), ticked at `ticks` (values, labels)."""
    values, labels = ticks
    return {
        "title": f"{title} (log scale)",
        "type": "log",
        "range": log_range(*extent),
        "tickvals": values,
        "ticktext": labels,
    }


def _layout(fig: go.Figure, plan: Plan) -> None:
    """The title and both log axes, their ticks read as durations and money: each axis
    holds every row with its P10-P90, the frontier's other GPU counts, the picks and the
    deadline and budget lines."""
    shown = [plan.rows, plan.frontier, plan.picks]
    limits = plan.constraints
    hours = _extent(shown, ("hours_p10", "hours_p90", "hours_to_train"), limits.deadline_hours)
    cost = _extent(shown, ("cost_p10_usd", "cost_p90_usd", "cost_usd"), limits.budget_usd)
    fig.update_layout(
        title=f"Time vs cost to train: {plan.workload.name} ({plan.precision}, {plan.pricing})",
        xaxis=_log_axis("time to train", hours, duration_ticks(*hours)),
        yaxis=_log_axis("cost to train", cost, money_ticks(*cost)),
        legend={"orientation": "h", "y": -0.18},
        height=560,
        margin={"t": 60, "b": 10},
        hoverlabel={"align": "left"},
    )


def _limits(fig: go.Figure, plan: Plan) -> None:
    """The deadline (vertical) and budget (horizontal) as dashed lines across the data."""
    rows = plan.rows
    hours = rows["hours_to_train"].to_numpy(float)
    cost = rows["cost_usd"].to_numpy(float)
    deadline = plan.constraints.deadline_hours
    budget = plan.constraints.budget_usd
    if deadline is not None:
        y = [np.nanmin([*cost, budget or np.inf]), np.nanmax(cost)]
        fig.add_trace(
            go.Scatter(
                x=[deadline, deadline],
                y=y,
                mode="lines",
                name=f"deadline {deadline:g} h",
                line={"color": "#d62728", "dash": "dash", "width": 2},
                hoverinfo="name",
            )
        )
    if budget is not None:
        x = [np.nanmin([*hours, deadline or np.inf]), np.nanmax(hours)]
        fig.add_trace(
            go.Scatter(
                x=x,
                y=[budget, budget],
                mode="lines",
                name=f"budget {money(budget)}",
                line={"color": "#2ca02c", "dash": "dash", "width": 2},
                hoverinfo="name",
            )
        )


# ---------------------------------------------------------------- tables


def _pick_labels(picks: pd.Series) -> list[str]:
    return [", ".join(PICK_SHORT.get(p, p) for p in str(v).split(",") if p) for v in picks]


def ranked_table(plan: Plan) -> pd.DataFrame:
    """The rows as shown: picks in words, spot and LLM columns where they apply."""
    columns = list(TABLE_COLUMNS)
    if plan.pricing == "spot":
        columns += SPOT_COLUMNS
    if plan.workload.is_llm:
        columns += LLM_COLUMNS
    rows = worded_rows(plan.rows)
    rows["gpus"] = [gpus_text(row) for _, row in rows.iterrows()]
    rows["p10_p90"] = [
        f"{duration_range(r.hours_p10, r.hours_p90)}, {money_range(r.cost_p10_usd, r.cost_p90_usd)}"
        for r in rows.itertuples()
    ]
    shown = rows.loc[:, columns].copy()
    shown["pick"] = _pick_labels(shown["pick"])
    shown["price_date"] = price_date_labels(plan.rows)
    return shown


def pick_table(plan: Plan) -> pd.DataFrame:
    """The picks, why each was picked, its P10-P90 and sources."""
    shown = worded_picks(plan).loc[:, list(PICK_TABLE_COLUMNS)].copy()
    shown["pick"] = shown["pick"].map(PICK_TITLES)
    shown["price_date"] = price_date_labels(plan.picks)
    return shown


def column_config() -> dict[str, Any]:
    """Readable headers and number formats for the ranked table (values stay raw)."""
    col = st.column_config
    hours = "%.3g"
    return {
        "rank": col.NumberColumn("rank", format="%d"),
        "pick": col.TextColumn("pick"),
        "on_pareto": col.CheckboxColumn("frontier", help="on the time/cost frontier"),
        **shared_columns("provider", "instance_type", "region", "gpu_name", "pricing"),
        "gpu_count": col.NumberColumn("GPUs/instance", format="%g"),
        "instances": col.NumberColumn("instances", format="%g"),
        "gpus": col.TextColumn("GPUs", help="all instances together"),
        "p10_p90": col.TextColumn(
            "P10–P90", help="hours and cost: the 10th and 90th percentiles (columns further right)"
        ),
        "total_gpus": col.NumberColumn("GPU count", format="%g"),
        "throughput": col.NumberColumn("throughput", format="%.4g"),
        "throughput_unit": col.TextColumn("unit"),
        "throughput_source": col.TextColumn("source", help="throughput: " + SOURCE_WORDS),
        **banded("hours", hours, "hours_to_train", "hours_p10", "hours_p90"),
        "compute_hours": col.NumberColumn("compute hours", format=hours),
        "setup_hours": col.NumberColumn(
            "start-up hours", format=hours, help="provisioning + environment start"
        ),
        "staging_hours": col.NumberColumn(
            "staging hours", format=hours, help="copying the dataset to each instance"
        ),
        "billed_hours": col.NumberColumn(
            "billed hours", format=hours, help="wall time in the provider's billing increments"
        ),
        "billing_basis": col.TextColumn("billing", width="medium"),
        "limit_code": col.TextColumn(
            "limit",
            help="cpu-bound: the vCPUs cannot decode images as fast as the GPUs train; "
            "batch-bound: the global batch cap leaves each GPU a small batch",
        ),
        **banded("cost", "dollar", "cost_usd", "cost_p10_usd", "cost_p90_usd"),
        "usd_per_hour": col.NumberColumn("$/h per instance", format="dollar"),
        "option_usd_per_hour": col.NumberColumn("$/h all instances", format="dollar"),
        "usd_per_gpu_hour": col.NumberColumn(
            "$/GPU-h", format="dollar", help="the price per GPU-hour"
        ),  # short: the ranked table's first columns fit 1280 px
        **shared_columns("price_source"),
        "price_date": col.TextColumn(
            "price date", help="≥: only a lower bound is known (a catalog extract)"
        ),
        "throughput_detail": col.TextColumn("throughput detail"),
        "feasible": col.CheckboxColumn("meets limits"),
        "misses": col.TextColumn("misses"),
        "why": col.TextColumn("why"),
        "interruptions_per_hour": col.NumberColumn("interruptions/h", format="%.3g"),
        "interruption_rate_source": col.TextColumn("interruption rate source"),
        "spot_overhead_factor": col.NumberColumn("spot overhead", format="%.3f"),
        "mfu": col.NumberColumn("MFU", format="percent"),
        "memory_per_gpu_gb": col.NumberColumn("memory/GPU (GB)", format="%.1f"),
        "sharding": col.TextColumn("layout (tp pp dp ZeRO micro-batch)"),
    }


# ---------------------------------------------------------------- the report


def plan_sources(plan: Plan, manifest: Sequence[SnapshotInfo]) -> list[str]:
    """Where the prices and throughputs came from: each price list with its date, on-prem
    configurations, how many rows rest on each throughput source, and the picks' figures."""
    rows = plan.rows
    providers = set(rows["provider"])
    lines = [
        f"{m.provider} prices of {price_date_label(m.priced_at, price_date_basis(m.date_bound))}"
        + (f" ({m.date_label})" if m.date_bound else "")
        + f" ({m.source})"
        for m in manifest
        if m.provider in providers
    ]
    onprem = rows.loc[rows["kind"] == "on-prem"]
    lines += sorted({price_source_text(r) for r in onprem.to_dict(orient="records")})
    counts = rows["throughput_source"].value_counts()
    lines.append(
        "Throughput sources: "
        + ", ".join(f"{source} {n} rows" for source, n in counts.items())
        + f" ({SOURCE_WORDS}); each row's throughput_detail names its figure, law or method"
    )
    for _, row in plan.picks.iterrows():
        lines.append(
            f"{PICK_TITLES[row['pick']]}: throughput {row['throughput_source']} "
            f"({row['throughput_detail']}); price {price_text(row)} ({price_source_text(row)})"
        )
    return lines


def pick_lines(plan: Plan) -> list[str]:
    """One line per pick: what, cost and time, the P10-P90 band and why (or why none)."""
    lines = []
    for name in PICKS:
        row = plan.pick(name)
        if row is None:
            lines.append(f"{PICK_TITLES[name]}: none ({no_pick_reason(plan, name)})")
            continue
        lines.append(
            f"{PICK_TITLES[name]}: {option_text(row)}, {gpus_text(row)}: "
            f"{money(row['cost_usd'])} in {duration(row['hours_to_train'])} "
            f"({band_text(row)}); {pick_reason(row, plan.request)}"
        )
    return lines


# The report's tables: the columns that fit an A4 or Letter page across (the CSV has all).
REPORT_RANKED: tuple[str, ...] = (
    "rank", "pick", "provider", "instance_type", "region", "total_gpus", "gpu_name",
    "hours_to_train", "hours_p10", "hours_p90", "cost_usd", "cost_p10_usd", "cost_p90_usd",
    "usd_per_gpu_hour", "throughput_source", "price_date",
)  # fmt: skip
REPORT_PICKS: tuple[str, ...] = (
    "pick",
    "provider",
    "instance_type",
    "region",
    "total_gpus",
    "gpu_name",
    "hours_to_train",
    "hours_p10",
    "hours_p90",
    "cost_usd",
    "cost_p10_usd",
    "cost_p90_usd",
    "throughput_source",
    "price_date",
)  # fmt: skip  (why each was picked: the summary's pick lines)
HOUR_COLUMNS = frozenset(
    {"hours_to_train", "hours_p10", "hours_p90", "compute_hours", "setup_hours",
     "staging_hours", "billed_hours"}
)  # fmt: skip


def report_table(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """`columns` of `frame` as the app shows them, for a report: the ranked table's headers
    (column_config labels) and each value in words (edge.format durations and dollars, the
    column's number format otherwise)."""
    config = column_config()
    shown = {}
    for column in (c for c in columns if c in frame.columns):
        spec = config.get(column) or {}
        fmt = (spec.get("type_config") or {}).get("format")
        if column in HOUR_COLUMNS:
            words = [_blank_or(v, duration) for v in frame[column]]
        elif fmt == "dollar":
            words = [_blank_or(v, money) for v in frame[column]]
        elif fmt:
            words = [cell_text(v, fmt) for v in frame[column]]
        else:  # a break opportunity after each "_": "NORTH_DAKOTA_USA" wraps in a column
            words = [cell_text(v, fmt).replace("_", "_\u200b") for v in frame[column]]
        shown[str(spec.get("label") or column)] = words
    return pd.DataFrame(shown)


def constraints_table(plan: Plan) -> pd.DataFrame:
    """Each constraint for a report: its name as the sidebar says it, the value asked, whether
    it binds and why, in words."""
    status = worded_status(plan)
    return pd.DataFrame(
        {
            "constraint": [CONSTRAINT_NAMES.get(str(c), str(c)) for c in status["constraint"]],
            "value": [cell_text(v, "%g") for v in status["value"]],
            "binds": ["binds" if b else "does not bind" for b in status["binds"]],
            "why": [str(n) for n in status["note"]],
        }
    )


def _blank_or(value: Any, word: Any) -> str:
    return "" if value is None or pd.isna(value) else str(word(float(value)))


def plan_report(plan: Plan, manifest: Sequence[SnapshotInfo], link: str = "") -> Report:
    """The page's HTML report: picks, the chart, the picks and ranked tables, constraints,
    assumptions with the planner's warnings, and every price and throughput source."""
    workload = plan.workload
    status = [
        f"{CONSTRAINT_NAMES.get(str(row.constraint), str(row.constraint))} "
        f"{'binds' if row.binds else 'does not bind'}: {sentence(str(row.note))}"
        for row in worded_status(plan).itertuples()
    ]
    return Report(
        title=f"Plan: {workload.name} ({plan.precision}, {plan.pricing})",
        summary=[
            f"{workload.description}: {workload.samples:,.0f} {workload.sample_unit}.",
            *pick_lines(plan),
            *status,
            price_dates(manifest, sorted(set(plan.rows["provider"]))),
        ],
        figures=[("Time vs cost to train", plan_figure(plan))],
        tables=[
            ("Picks", report_table(pick_table(plan), REPORT_PICKS)),
            (
                f"Ranked options ({len(plan.rows)}; every column in the CSV)",
                report_table(ranked_table(plan), REPORT_RANKED),
            ),
            ("Constraints", constraints_table(plan)),
        ],
        assumptions=[
            *assumption_lines(plan),
            *(f"Own results: {w}" for w in notes_text(plan.notes_of(*OWN_CODES), APP_CONTROLS)),
            *(f"Warning: {w}" for w in warning_lines(plan)),
        ],
        sources=plan_sources(plan, manifest),
        link=link,
    )
