"""The Plan page's Compare view: two to four options side by side (one column each, in a
table that wraps to the page's width), exportable as CSV.

The options are the plan's rows (each offer at its chosen count, and on-prem configs), its
frontier and its picks: every one carries P10-P90, price date and throughput source. With
the sidebar's GPU filter and exact GPU count this answers "AWS vs GCP vs Azure for 8 x H100".
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

from edge.format import duration, money
from planner.choose.pareto import PICK_COLUMNS
from planner.plan import Plan
from planner.render.rows import misses_text, price_source_text, worded_rows
from planner.ui.cache import drawn
from planner.ui.export import download_csv
from planner.ui.plan_view import option_text
from planner.ui.text import md_text

MAX_COMPARED = 4
# What the comparison shows, one line per field (label, how to word the row).
FIELDS: tuple[str, ...] = (
    "region",
    "GPUs",
    "time to train",
    "time P10–P90",
    "cost to train",
    "cost P10–P90",
    "$/GPU-hour",
    "$/hour, all instances",
    "throughput",
    "throughput source",
    "pricing",
    "price date",
    "price source",
    "meets deadline and budget",
)


def candidates(plan: Plan) -> pd.DataFrame:
    """Options that can be compared, one per option id, with a `label` for choosing them."""
    figures = [c for c in PICK_COLUMNS if c != "position"]  # pick and why it was picked
    frames = [plan.rows, plan.frontier, plan.picks.drop(columns=figures, errors="ignore")]
    table = pd.concat([f for f in frames if len(f)], ignore_index=True)
    if table.empty:
        return table.assign(label=pd.Series(dtype=str))
    table = table.drop_duplicates("option_id").reset_index(drop=True)
    table["label"] = [
        f"{option_text(row)} · {row['total_gpus']:g} x {row['gpu_name']}"
        for _, row in table.iterrows()
    ]
    return table.drop_duplicates("label").reset_index(drop=True)


def default_labels(plan: Plan, table: pd.DataFrame) -> list[str]:
    """The picks (at most MAX_COMPARED), else the best-ranked rows."""
    ids = list(dict.fromkeys(plan.picks["option_id"])) if len(plan.picks) else []
    if len(ids) < 2:
        ids += [i for i in plan.rows["option_id"].head(3) if i not in ids]
    by_id = table.set_index("option_id")["label"]
    return [str(by_id[i]) for i in ids[:MAX_COMPARED] if i in by_id.index]


def short_names(chosen: pd.DataFrame) -> list[str]:
    """Column headers: 'aws p5.48xlarge', 'aws p5.48xlarge x 2', with the region where two
    would read the same."""
    names = [
        f"{row['provider']} {row['instance_type']}"
        + (f" x {row['instances']:g}" if row["instances"] > 1 else "")
        for _, row in chosen.iterrows()
    ]
    return [
        f"{n} ({r})" if names.count(n) > 1 else n
        for n, r in zip(names, chosen["region"].astype(str), strict=True)
    ]


def side_by_side(chosen: pd.DataFrame) -> pd.DataFrame:
    """One column per option (short_names), one row per FIELDS entry, in words."""
    columns = {}
    for name, (_, row) in zip(short_names(chosen), chosen.iterrows(), strict=True):
        columns[name] = [
            str(row["region"]) or "-",
            f"{row['total_gpus']:g} x {row['gpu_name']}"
            + (f" ({row['instances']:g} instances)" if row["instances"] > 1 else ""),
            duration(row["hours_to_train"]),
            f"{duration(row['hours_p10'])} – {duration(row['hours_p90'])}",
            money(row["cost_usd"]),
            f"{money(row['cost_p10_usd'])} – {money(row['cost_p90_usd'])}",
            money(row["usd_per_gpu_hour"]),
            money(row["option_usd_per_hour"]),
            f"{float(row['throughput']):,.0f} {row['throughput_unit']}",
            str(row["throughput_source"]),
            str(row["pricing"]),
            str(row["price_date"]) or "-",
            price_source_text(row, short=True),
            "yes" if row["feasible"] else f"no: misses {misses_text(row['misses'])}",
        ]
    return pd.DataFrame({"": list(FIELDS), **columns})


# Cells and headers wrap anywhere (instance names have no spaces to break at).
WRAP_CSS = (("white-space", "normal"), ("overflow-wrap", "anywhere"))


def wrapped(shown: pd.DataFrame) -> Styler:
    """`shown` (side_by_side) styled to wrap within the page: no index, the figure names in
    the first column, headers and cells broken where they do not fit, every text literal."""
    return (
        shown.style.hide(axis="index")
        # the table draws each cell as Markdown: shown as literal text
        .format(md_text)
        .format_index(md_text, axis=1)
        .set_table_styles(
            [
                # columns share the page's width: a long cell wraps, it never widens the table
                {"selector": "", "props": [("table-layout", "fixed"), ("width", "100%")]},
                {"selector": "th", "props": list(WRAP_CSS)},
                # each cell's text is a paragraph of its own
                {"selector": "p", "props": list(WRAP_CSS)},
                {"selector": "th:first-child", "props": [("width", "9rem")]},
            ]
        )
        .set_properties(**dict(WRAP_CSS))
    )


def compare_choices(plan: Plan, table: pd.DataFrame | None = None) -> tuple[list[str], list[str]]:
    """The options' labels (candidates) and those chosen at first (default_labels).
    `table`: candidates(plan), when the caller has it already."""
    table = candidates(plan) if table is None else table
    if table.empty:
        return [], []
    return list(table["label"]), default_labels(plan, table)


def chosen_options(table: pd.DataFrame, labels: Sequence[str]) -> pd.DataFrame:
    """The rows of `table` (candidates) with `labels`, in that order."""
    return table.set_index("label").loc[list(labels)].reset_index()


def compare_section(
    page: str,
    choices: tuple[list[str], list[str]],
    chosen_of: Callable[[list[str]], pd.DataFrame],
    file_stem: str,
    asked: Hashable = None,
) -> None:
    """Choose two to four options; their figures side by side and a CSV of their rows.
    `choices`: compare_choices of the plan; `chosen_of(labels)`: those options' rows
    (chosen_options), asked for only when they are drawn or downloaded; `asked`: the plan's
    request (with its results folder), when given the side-by-side table of each choice is
    drawn once for every session (planner.ui.cache.drawn)."""
    st.subheader("Compare options")
    every, default = choices
    if len(every) < 2:
        st.caption("Fewer than two options to compare with these inputs.")
        return
    st.caption(
        "Choose two to four: offers at their count, frontier options at other counts, or "
        "on-prem. Narrow the list with the sidebar's GPUs and Exact GPU count (e.g. 8 x H100 "
        "on every cloud)."
    )
    labels = st.multiselect(
        "Options to compare",
        every,
        default=default,
        max_selections=MAX_COMPARED,
        key=f"{page}.compare",
        placeholder="Choose two to four options",
    )
    if len(labels) < 2:
        st.info("Choose at least two options to compare.", icon=":material/info:")
        return

    # A static table sized to the page: cells wrap, so four options fit at 1280 px and no
    # cell is cut (a data grid scrolls its third and fourth options out of view).
    def draw() -> None:
        st.table(wrapped(side_by_side(chosen_of(labels))))

    if asked is None:
        draw()
    else:
        drawn(f"{page}.compare", (asked, tuple(labels)), draw)
    download_csv(
        lambda: worded_rows(chosen_of(labels).drop(columns="label")),
        f"compare-{file_stem}.csv",
        key=f"{page}.compare_csv",
        label="Download comparison CSV",
    )
