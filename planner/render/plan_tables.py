"""`gpuplan plan` as tables that fit the terminal: picks and binding constraints first,
then the ranked offers, then a short footer (`--explain` for every assumption and note).

Views (--view): rows (default: picks, constraints, ranked offers), picks, frontier,
options (every count weighed), constraints. `--wide` prints every column of the view.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from rich.markup import escape

from edge.format import duration, money, money_range
from edge.tables import (
    Col,
    console_width,
    cut,
    fit_table,
    left_out_columns,
    make_console,
    print_wide,
)
from planner.plan import Plan
from planner.render.notes import OWN_CODES, SKIP_SHORT, notes_text
from planner.render.plan_words import assumption_lines, worded_picks, worded_status
from planner.render.rows import worded_rows
from pricing.catalog import price_date_labels

PICK_LABELS = {
    "cheapest_within_deadline": "cheapest",
    "fastest_within_budget": "fastest",
    "best_cost_per_hour_saved": "value",
}
CONSTRAINT_WORDS = {
    "deadline_hours": "deadline",
    "budget_usd": "budget",
    "max_gpus": "max GPUs",
    "gpu_count": "GPU count",
    "onprem_gpus": "on-prem GPUs",
}
VIEWS = ("rows", "picks", "frontier", "options", "constraints")
# At most this many warnings in the footer without --explain.
FOOTER_WARNINGS = 3


def _picks_text(value: object) -> str:
    return ",".join(PICK_LABELS.get(p, p) for p in str(value).split(",") if p)


def _gpus(instances: float, gpu_count: float, vcpus: float) -> str:
    n, g = float(instances), float(gpu_count)
    if g == 0 and pd.notna(vcpus):  # a CPU baseline row: its vCPUs
        return f"{float(vcpus):g} vCPU"
    return f"{n:g}x{g:g}" if n > 1 else f"{g:g}"


def cpu_baseline_table(plan: Plan) -> pd.DataFrame:
    """The plan's CPU baseline options, fastest first, worded for a table: instance, vCPUs,
    time (edge.format.duration), cost, $/h, throughput source and what it rests on (empty
    when the plan has none)."""
    options = plan.options
    if "baseline_detail" not in options.columns:
        return pd.DataFrame()
    cpu = options.loc[options["baseline_detail"].fillna("") != ""]
    cpu = cpu.sort_values(["hours_to_train", "cost_usd"])
    return pd.DataFrame(
        {
            "provider": cpu["provider"].to_numpy(),
            "region": cpu["region"].to_numpy(),
            "instance": cpu["instance_type"].to_numpy(),
            "vCPUs": cpu["vcpus"].to_numpy(),
            "time": [duration(float(h)) for h in cpu["hours_to_train"]],
            "cost": [money(float(c)) for c in cpu["cost_usd"]],
            "$/h": [money(float(c), cents=True) for c in cpu["option_usd_per_hour"]],
            "source": cpu["throughput_source"].to_numpy(),
            "basis": cpu["baseline_detail"].to_numpy(),
        }
    )


def baseline_line(options: pd.DataFrame) -> str:
    """One line under the options table on its CPU baseline rows (GPU "CPU"): how many, and
    the basis of the fastest one ("" when there are none)."""
    if "baseline_detail" not in options.columns:
        return ""
    cpu = options.loc[options["baseline_detail"].fillna("") != ""]
    if cpu.empty:
        return ""
    fastest = cpu.sort_values("hours_to_train").iloc[0]
    return (
        f"CPU rows ({len(cpu)}, GPU 'CPU'): CPU-only instances as a baseline; fastest, "
        f"{fastest['instance_type']} in {duration(float(fastest['hours_to_train']))}: "
        f"{fastest['baseline_detail']}. Each row's: --format csv (baseline_detail)"
    )


def _with_display(frame: pd.DataFrame) -> pd.DataFrame:
    """Derived display columns: GPUs, cost P10-P90, rank with the frontier mark; the
    price date as known ("≥ 2025-06-01" where it is only a lower bound)."""
    shown = frame.copy()
    if shown.empty:
        return shown.assign(gpus="", cost_band="", rank_mark="")
    vcpus = shown["vcpus"] if "vcpus" in shown.columns else pd.Series(np.nan, shown.index)
    shown["gpus"] = [
        _gpus(n, g, v)
        for n, g, v in zip(shown["instances"], shown["gpu_count"], vcpus, strict=True)
    ]
    if "price_date" in shown.columns:
        shown["price_date"] = price_date_labels(shown)
    if "cost_p10_usd" in shown.columns:
        shown["cost_band"] = [
            money_range(a, b)
            for a, b in zip(shown["cost_p10_usd"], shown["cost_p90_usd"], strict=True)
        ]
    if "rank" in shown.columns:
        shown["rank_mark"] = [
            (f"{int(r)}" if r else "-") + ("*" if f else "")
            for r, f in zip(shown["rank"], shown["on_pareto"], strict=True)
        ]
    return shown


# What makes two ranked rows look the same in the table, the region aside.
SAME_ROW_KEYS = (
    "provider", "instance_type", "gpu_name", "gpus", "time", "cost", "cost_band", "rate",
    "throughput_source",
)  # fmt: skip


def collapse_regions(shown: pd.DataFrame) -> pd.DataFrame:
    """Neighbouring rows (from _with_display) that differ only in region as one row: its
    ranks as a range ("1-3*"), region "3 regions", the picks of all; a single row keeps its
    region. The table then shows no two rows alike; --wide and JSON keep every row."""
    if shown.empty or "region" not in shown.columns:
        return shown.assign(region_label="") if shown.empty else shown
    keys = shown.assign(
        time=[_short_hours(v) for v in shown["hours_to_train"]],
        cost=[_short_money(v) for v in shown["cost_usd"]],
        rate=[_short_money(v) for v in shown["option_usd_per_hour"]],
    ).loc[:, list(SAME_ROW_KEYS)]
    same = (keys == keys.shift()).all(axis=1).to_numpy()
    starts = np.flatnonzero(~same)
    ends = [*starts[1:].tolist(), len(shown)]
    regions = shown["region"].astype(str).tolist()
    ranks = shown["rank"].tolist()
    on_pareto = shown["on_pareto"].to_numpy(bool)
    picks = shown["pick"].astype(str).tolist()
    labels, marks, joined = (
        [],
        shown["rank_mark"].iloc[starts].tolist(),
        shown["pick"].iloc[starts].tolist(),
    )
    for i, (a, b) in enumerate(zip(starts.tolist(), ends, strict=True)):
        distinct = list(dict.fromkeys(regions[a:b]))
        labels.append(distinct[0] if len(distinct) == 1 else f"{len(distinct)} regions")
        if b - a > 1:
            ranked = [int(r) for r in ranks[a:b] if r]
            star = "*" if on_pareto[a:b].any() else ""
            span = f"{ranked[0]}-{ranked[-1]}" if len(ranked) > 1 else marks[i].rstrip("*")
            marks[i] = span + star
            joined[i] = ",".join(p for p in picks[a:b] if p)
    first = shown.iloc[starts].reset_index(drop=True)
    return first.assign(region_label=labels, rank_mark=marks, pick=joined)


def row_columns(shown: pd.DataFrame, width: int) -> tuple[Col, ...]:
    """ROW_COLUMNS, less the region where it does not fit: rows alike but for their region
    are one row already (collapse_regions), so a narrow table goes without it unsaid."""
    if "region_label" in left_out_columns(shown, ROW_COLUMNS, width):
        return tuple(c for c in ROW_COLUMNS if c.key != "region_label")
    return ROW_COLUMNS


def _short_money(v: object) -> str:
    return money(float(v), short=True)  # type: ignore[arg-type]


def _short_hours(v: object) -> str:
    return duration(float(v), short=True)  # type: ignore[arg-type]


# What an option is and what it takes: shared by the ranked rows and the picks.
OPTION_FIGURES: tuple[Col, ...] = (
    Col("provider", "provider", shrink_to=6),
    Col("instance_type", "instance", shrink_to=12),
    Col("gpus", "GPUs", right=True),
    Col("hours_to_train", "time", _short_hours, right=True),
    Col("cost_usd", "cost", _short_money, right=True),
    Col("cost_band", "P10–P90", right=True, drop=2),
)
ROW_COLUMNS: tuple[Col, ...] = (
    Col("rank_mark", "rank", right=True),
    Col("pick", "pick", _picks_text, shrink_to=8),
    *OPTION_FIGURES[:2],
    Col("region_label", "region", shrink_to=9, drop=5),
    *OPTION_FIGURES[2:],
    Col("option_usd_per_hour", "$/h", _short_money, right=True, drop=3),
    Col("throughput_source", "source", shrink_to=9, drop=4),
)
PICK_COLUMNS: tuple[Col, ...] = (
    Col("pick", "pick", _picks_text),
    *OPTION_FIGURES,
    Col("why", "why", shrink_to=20, wrap=True),
)
OPTION_COLUMNS: tuple[Col, ...] = (
    Col("provider", "provider", shrink_to=6),
    Col("instance_type", "instance", shrink_to=10),
    Col("gpu_name", "GPU", shrink_to=6),
    Col("gpus", "GPUs", right=True),
    Col("hours_to_train", "time", _short_hours, right=True),
    Col("cost_usd", "cost", _short_money, right=True),
    Col("option_usd_per_hour", "$/h", _short_money, right=True, drop=2),
    Col("throughput_source", "source", shrink_to=9, drop=4),
    Col("feasible", "ok", lambda v: "yes" if v else "no"),
    Col("on_pareto", "frontier", lambda v: "*" if v else ""),
)


def print_plan(
    plan: Plan,
    view: str = "rows",
    top: int | None = None,
    wide: bool = False,
    explain: bool = False,
    problems: Sequence[str] = (),
    width: int | None = None,
    explanations: Sequence[str] = (),
) -> None:
    """The plan's `view` on stdout; notes on stderr (short, or all with `explain`).

    `explanations` (the picks' time split, rows a limit caps) print with `explain` only.
    """
    width = width or console_width()
    out = make_console(width)
    if plan.rows.empty and not (explain or wide):
        print_nothing_left(plan, problems, out)
        return
    if view == "picks":
        frame = worded_picks(plan)
    elif view == "constraints":
        frame = worded_status(plan)
    else:
        frame = {
            "rows": worded_rows(plan.rows),
            "frontier": worded_rows(plan.frontier),
            "options": plan.options,
        }[view]
    if view in ("rows", "frontier", "options") and top is not None:
        frame = frame.head(top)
    if wide:
        if "price_date_basis" in frame.columns:  # "≥ 2025-06-01" for a lower bound
            frame = frame.assign(price_date=price_date_labels(frame))
        print_wide(frame, title=_title(plan, view))
    elif view == "rows":
        _print_summary(plan, frame, out, width)
    elif view == "picks":
        out.print(fit_table(_with_display(frame), PICK_COLUMNS, width, _title(plan, view)))
    elif view == "frontier":
        shown = collapse_regions(_with_display(frame))
        out.print(fit_table(shown, row_columns(shown, width), width, _title(plan, view)))
    elif view == "options":
        out.print(fit_table(_with_display(frame), OPTION_COLUMNS, width, _title(plan, view)))
        line = baseline_line(frame)
        if line:
            out.print(escape(line), highlight=False)
    else:
        _print_constraints(plan, out, only_binding=False)
    if explain:
        for line in explanations:
            out.print(escape(line), highlight=False)
    print_footer(plan, problems, explain, width)


def print_nothing_left(plan: Plan, problems: Sequence[str], out: object) -> None:
    """A plan with no option: why, one line per note (the last says what is left to do),
    in place of empty tables."""
    from rich.console import Console

    assert isinstance(out, Console)
    for line in [*notes_text([n for n in plan.notes if n.code not in OWN_CODES]), *problems]:
        out.print(escape(line), highlight=False, soft_wrap=True)


def _title(plan: Plan, view: str) -> str:
    head = f"{plan.workload.name} · {plan.precision} · {plan.pricing}"
    return {
        "rows": f"{head}: {len(plan.rows)} offers at their best count (* = frontier)",
        "picks": f"{head}: picks",
        "frontier": f"{head}: time/cost frontier ({len(plan.frontier)} options, every count)",
        "options": f"{head}: every option weighed ({len(plan.options):,})",
        "constraints": f"{head}: constraints",
    }[view]


def _print_summary(plan: Plan, rows: pd.DataFrame, out: object, width: int) -> None:
    from rich.console import Console

    assert isinstance(out, Console)
    if len(plan.picks):
        out.print(fit_table(_with_display(plan.picks), PICK_COLUMNS[:-1], width, "Picks"))
    _print_constraints(plan, out, only_binding=True)
    shown = collapse_regions(_with_display(rows))
    out.print(fit_table(shown, row_columns(shown, width), width, _title(plan, "rows")))
    if len(rows) < len(plan.rows):
        out.print(f"… {len(plan.rows) - len(rows)} more offers (drop --top)", highlight=False)
    out.print(escape(price_dates_line(rows)), highlight=False)


def price_dates_line(rows: pd.DataFrame) -> str:
    """The price date of each provider shown (oldest first; "≥ 2025-06-01" where it is only
    a lower bound); each row's in --wide."""
    if rows.empty:
        return ""
    dated = rows.loc[rows["price_date"].astype(str) != ""].sort_values("price_date")
    oldest = dated.drop_duplicates("provider")
    listed = ", ".join(
        f"{p} {d}" for p, d in zip(oldest["provider"], price_date_labels(oldest), strict=True)
    )
    return f"priced: {listed} (each row's date and source: --wide)"


def _print_constraints(plan: Plan, out: object, only_binding: bool) -> None:
    from rich.console import Console

    assert isinstance(out, Console)
    status = worded_status(plan)
    shown = status.loc[status["binds"].astype(bool)] if only_binding and len(status) else status
    for row in shown.itertuples():
        name = CONSTRAINT_WORDS.get(str(row.constraint), str(row.constraint))
        word = "binds" if row.binds else "does not bind"
        line = f"{name} {word}: {row.note}"
        out.print(escape(line), highlight=False, soft_wrap=False)


def _cut(text: str, width: int) -> str:
    return cut(text, width)


def print_footer(plan: Plan, problems: Sequence[str], explain: bool, width: int) -> None:
    """Assumptions, own results and warnings on stderr: one line each, or all with explain."""
    import sys

    sys.stdout.flush()
    err = make_console(width, stderr=True)
    own = plan.notes_of(*OWN_CODES)
    warnings = [*notes_text([n for n in plan.notes if n.code not in OWN_CODES]), *problems]
    if explain:
        for line in assumption_lines(plan):
            err.print(f"[dim]assumption:[/] {escape(line)}", highlight=False)
        for line in notes_text(own):
            err.print(f"[dim]own results:[/] {escape(line)}", highlight=False)
        for line in warnings:
            err.print(f"[yellow]warning:[/] {escape(line)}", highlight=False)
        return
    used = sum(n.code == "own_result_used" for n in own)
    skipped = [n for n in own if n.code == "own_result_skipped"]
    elsewhere = sum(int(n["count"]) for n in own if n.code == "own_results_elsewhere")
    lines = [
        "assumptions: throughput measured > published > sibling > scaled > estimated; dated "
        "prices; "
        "P10–P90 from the throughput band",
        f"own results: {used} used, {len(skipped)} skipped"
        + (f" ({', '.join(sorted({SKIP_SHORT[n['reason']] for n in skipped}))})" if skipped else "")
        + (f", {elsewhere} of other workloads" if elsewhere else ""),
    ]
    for line in lines:
        err.print(escape(_cut(line, width)), highlight=False)
    for line in warnings[:FOOTER_WARNINGS]:
        err.print(f"[yellow]warning:[/] {escape(_cut(line, width - 9))}", highlight=False)
    more = len(warnings) - FOOTER_WARNINGS
    hint = f"{more} more warnings; " if more > 0 else ""
    err.print(escape(f"{hint}--explain for every assumption and note in full"), highlight=False)
