"""The Prices page: offers across providers and regions, per GPU-hour, with their dates."""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from edge.format import money
from planner.ui import data
from planner.ui.cache import MAX_ENTRIES, MAX_FIGURES, TTL_S, drawn
from planner.ui.export import Report, download_csv, download_report
from planner.ui.inputs import OfferFilters, offer_filters
from planner.ui.state import PageState
from planner.ui.tables import shared_columns, show_table
from planner.ui.text import md_text
from pricing.catalog import (
    PRICING_KINDS,
    STALE_AFTER_DAYS,
    filter_offers,
    price_date_bases,
    price_date_labels,
)
from pricing.refs import GPU_HOUR_COLUMNS, gpu_hour_prices
from pricing.status import stale_text
from pricing.tiers import TIERS

PAGE = "prices"
KIND_COLORS = {
    "on-demand": "#1f77b4",
    "spot": "#2ca02c",
    "reserved-1y": "#ff7f0e",
    "reserved-3y": "#d62728",
}
# Which offer and its price per GPU-hour at every pricing kind first: they fit the grid at
# 1280 px; the rest (region, memory, instance prices, dates) follow.
TABLE_COLUMNS: tuple[str, ...] = (
    "provider", "instance_type", "gpu_name", "gpu_count", *GPU_HOUR_COLUMNS.values(),
    "region", "gpu_memory_gib",
    "usd_per_hour", "spot_usd_per_hour", "reserved_1y_usd_per_hour", "reserved_3y_usd_per_hour",
    "interconnect", "price_date", "source", "priced_at", "price_date_basis",
)  # fmt: skip
STATUS_SHOWN = ["provider", "origin", "price_date", "age", "stale", "rows", "date_basis"]
RETIRED_HELP = (
    "Sizes the provider no longer sells (pricing/retired.py lists them, with sources), such as "
    "Azure's K80 Promo sizes."
)


def offer_config() -> dict[str, Any]:
    """Readable headers and dollar formats for the offers table."""
    col = st.column_config
    dollars = {
        c: col.NumberColumn(c.replace("_usd_per_gpu_hour", " $/GPU-h").replace("_", " ")
                            .replace("usd per hour", "$/h"), format="dollar")
        for c in TABLE_COLUMNS
        if "usd" in c
    }  # fmt: skip
    return {
        **shared_columns("provider", "region", "instance_type", "gpu_name"),
        "gpu_count": col.NumberColumn("GPUs", format="%g"),
        "gpu_memory_gib": col.NumberColumn("memory/GPU (GiB)", format="%g"),
        "interconnect": col.TextColumn("interconnect"),
        "priced_at": col.TextColumn("price date"),
        "source": col.TextColumn("source"),
        **dollars,
    }


def _inputs(ps: PageState) -> tuple[OfferFilters, str, int]:
    """The sidebar: which offers (GPUs from every offer), then what the chart shows."""
    with st.sidebar:
        st.header("Filter offers")
        filters = offer_filters(ps, RETIRED_HELP, every_gpu=True)
        st.header("Chart")
        sort_kind = ps.radio(
            "Cheapest by",
            list(PRICING_KINDS),
            name="sort",
            default="on-demand",
            help="Which price orders the offers in the chart.",
        )
        top = ps.slider("Offers in the chart", name="top", default=25, min_value=5, max_value=80)
    return filters, sort_kind, top


def _label(rows: pd.DataFrame) -> pd.Series:
    return rows["provider"] + " " + rows["instance_type"] + " (" + rows["region"] + ")"


def chart(rows: pd.DataFrame, sort_kind: str, top: int) -> go.Figure:
    """The `top` cheapest offers by `sort_kind`, each kind's USD per GPU-hour as a dot."""
    column = GPU_HOUR_COLUMNS[sort_kind]
    shown = rows.loc[rows[column].notna()].sort_values(column, kind="stable").head(top)
    shown = shown.iloc[::-1]
    labels = _label(shown) + " · " + shown["gpu_name"]
    fig = go.Figure()
    for kind, price in GPU_HOUR_COLUMNS.items():
        if shown[price].notna().any():
            fig.add_trace(
                go.Scatter(
                    x=shown[price],
                    y=labels,
                    mode="markers",
                    name=kind,
                    marker={"size": 10, "color": KIND_COLORS[kind]},
                    customdata=shown[["price_date", "source"]],
                    hovertemplate="%{y}<br>" + kind + ": $%{x:.3f} per GPU-hour<br>"
                    "priced %{customdata[0]}<extra></extra>",
                )
            )
    fig.update_layout(
        title=f"USD per GPU-hour: the {len(shown)} cheapest offers by {sort_kind} price",
        xaxis={"title": "USD per GPU-hour", "rangemode": "tozero"},
        yaxis={"title": None},
        height=max(320, 22 * len(shown) + 140),
        legend={"orientation": "h", "y": 1.02, "x": 0},
        margin={"t": 80, "b": 10},
    )
    return fig


def prices_report(
    table: pd.DataFrame,
    status: pd.DataFrame,
    providers: list[str],
    regions: list[str],
    gpus: list[str],
    fig: go.Figure | None,
    link: str = "",
) -> Report:
    """The page's HTML report: the chart, the offers shown, and each source's date."""
    status = status.loc[status["provider"].isin(providers)]
    stale = stale_text(status)
    return Report(
        title="GPU prices",
        summary=[
            f"{len(table):,} offers from {', '.join(providers)}"
            + (f" in {', '.join(regions)}" if regions else "")
            + (f" for {', '.join(gpus)}" if gpus else ""),
            *([f"Prices older than {STALE_AFTER_DAYS} days: {stale}"] if stale else []),
        ],
        figures=[("USD per GPU-hour", fig)] if fig is not None else [],
        tables=[("Offers", table), ("Price sources", status.loc[:, STATUS_SHOWN])],
        assumptions=[
            "USD per GPU-hour = the instance's hourly price / its GPU count.",
            "Spot prices are regional medians and can change hourly; a missing price is "
            "missing, never 0.",
        ],
        sources=[
            f"{r.provider}: {r.source}, priced {r.price_date} ({r.age} old; "
            f"{r.date_basis or 'date as given'})"
            for r in status.itertuples()
        ],
        link=link,
    )


def offers_table(
    offers: pd.DataFrame,
    providers: list[str],
    regions: list[str],
    gpus: list[str],
    tiers: list[str] | None = None,
    include_retired: bool = False,
) -> pd.DataFrame:
    """Offers matching the filters with USD per GPU-hour at every pricing kind, cheapest
    on-demand first (TABLE_COLUMNS). Retired sizes only with `include_retired`."""
    chosen = filter_offers(
        offers,
        providers,
        regions or None,
        gpus or None,
        tiers=tiers or list(TIERS),
        include_retired=include_retired,
    )
    rows = pd.concat([chosen, gpu_hour_prices(chosen)], axis=1)
    # price_date reads "≥ 2025-06-01" where priced_at is only a lower bound.
    rows["price_date_basis"] = price_date_bases(rows)
    rows["price_date"] = price_date_labels(rows, date="priced_at")
    rows = rows.sort_values(
        [GPU_HOUR_COLUMNS["on-demand"], "provider", "region"], kind="stable"
    ).reset_index(drop=True)
    return rows.loc[:, list(TABLE_COLUMNS)]


def _stale_warning(status: pd.DataFrame) -> None:
    """A warning naming the price lists older than STALE_AFTER_DAYS, with how to refresh."""
    stale = stale_text(status)
    if stale:
        st.warning(
            f"Prices older than {STALE_AFTER_DAYS} days, or of unknown age: {md_text(stale)}. "
            "Refresh without credentials with `gpuplan pricing refresh skypilot` (or "
            "`aws-public`, `azure`), or add your own price list with `gpuplan pricing "
            "add-custom`.",
            icon=":material/warning:",
        )


def _metrics(rows: pd.DataFrame, status: pd.DataFrame) -> None:
    """How many offers, the cheapest on-demand and spot GPU-hour, the oldest price list: two
    rows of two, so each offer's name fits beside its figure at 1280 px."""
    top, bottom = st.columns(2), st.columns(2)
    cols = [*top, *bottom]
    cols[0].metric("Offers", f"{len(rows):,}", f"{rows['provider'].nunique()} providers",
                   delta_color="off")  # fmt: skip
    for col, kind in zip(cols[1:3], ("on-demand", "spot"), strict=True):
        column = GPU_HOUR_COLUMNS[kind]
        priced = rows.loc[rows[column].notna()]
        if priced.empty:
            col.metric(f"Cheapest {kind}", "none", "no such price here", delta_color="off")
            continue
        best = priced.loc[priced[column].idxmin()]
        col.metric(
            f"Cheapest {kind} $/GPU-hour",
            money(best[column]),
            md_text(
                f"{best['provider']} {best['instance_type']} ({best['gpu_name']}), "
                f"{best['price_date']}"
            ),
            delta_color="off",
        )
    oldest = status.sort_values("age_days").iloc[-1]
    cols[3].metric(
        "Oldest price source",
        md_text(oldest["age"]),
        md_text(f"{oldest['provider']}, priced {oldest['price_date']}"),
        delta_color="off",
    )


Chosen = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...], bool]


@st.cache_data(show_spinner=False, max_entries=MAX_ENTRIES, ttl=TTL_S)
def _table(
    providers: tuple[str, ...],
    regions: tuple[str, ...],
    gpus: tuple[str, ...],
    tiers: tuple[str, ...],
    include_retired: bool,
) -> pd.DataFrame:
    """offers_table of the snapshot in use, once for every session that asks the same."""
    return offers_table(
        data.offers(), list(providers), list(regions), list(gpus), list(tiers), include_retired
    )


@st.cache_resource(show_spinner=False, max_entries=MAX_FIGURES, ttl=TTL_S)
def _chart_of(chosen: Chosen, sort_kind: str, top: int) -> go.Figure:
    """chart of _table(*chosen), built once, shared read-only."""
    return chart(_table(*chosen), sort_kind, top)


def _chart_section(
    rows: pd.DataFrame, sort_kind: str, top: int, chosen: Chosen
) -> go.Figure | None:
    """A note where no offer has a reserved price; the chart of the cheapest offers (None,
    and a message, where no offer matches). `rows`: _table(*chosen)."""
    reserved = [
        k for k in ("reserved-1y", "reserved-3y") if rows[GPU_HOUR_COLUMNS[k]].notna().any()
    ]
    if not reserved:
        st.caption(
            "No reserved prices among these offers: the bundled snapshots carry on-demand and "
            "spot only; `gpuplan pricing refresh aws-public` or `azure` (no credentials), or "
            "`aws` / `gcp`, adds 1- and 3-year prices."
        )
    if rows.empty:
        st.info("No offer matches these filters.")
        return None
    fig = _chart_of(chosen, sort_kind, top)
    st.plotly_chart(fig, key=f"{PAGE}.chart")
    return fig


def render() -> None:
    """Draw the Prices page: filters, metrics, the chart, the offers and their sources."""
    ps = PageState(PAGE)
    st.title("Prices: what a GPU-hour costs, and how old the price is")
    filters, sort_kind, top = _inputs(ps)
    providers, regions, gpus = filters.providers, filters.regions, filters.gpus
    chosen = (tuple(providers), tuple(regions), tuple(gpus), tuple(filters.tiers),
              filters.include_retired)  # fmt: skip
    # Every session asking the same is shown the same outputs: drawn once, replayed.
    if not drawn(f"{PAGE}.offers", (chosen, sort_kind, top),
                 lambda: _offers_drawn(chosen, sort_kind, top)):  # fmt: skip
        ps.sync()
        return
    buttons = st.columns(2)
    with buttons[0]:
        download_csv(lambda: _table(*chosen), "gpuplan-offers.csv", key=f"{PAGE}.csv")
    with buttons[1]:
        link = ps.link()
        download_report(
            lambda: _report(chosen, sort_kind, top, link),
            "gpuplan-prices.html",
            key=f"{PAGE}.report",
        )
    ps.sync()
    ps.share_box()


def _offers_drawn(chosen: Chosen, sort_kind: str, top: int) -> bool:
    """The stale-price warning, the metrics, the chart, the offers and the price sources;
    False (and a note) where no provider is chosen."""
    status = data.price_status()
    shown_status = status.loc[status["provider"].isin(chosen[0])]
    _stale_warning(shown_status)
    if not chosen[0]:
        st.info("Pick at least one provider in the sidebar.")
        return False
    table = _table(*chosen)
    _metrics(table, shown_status)
    _chart_section(table, sort_kind, top, chosen)
    st.subheader(f"{len(table):,} offers, cheapest on-demand per GPU-hour first")
    show_table(table, offer_config(), key=f"{PAGE}.table")
    st.subheader("Price sources")
    show_table(status.loc[:, STATUS_SHOWN], {}, key=f"{PAGE}.status")
    return True


def _report(chosen: Chosen, sort_kind: str, top: int, link: str) -> Report:
    """The page's HTML report of these filters (built on click)."""
    table = _table(*chosen)
    fig = None if table.empty else _chart_of(chosen, sort_kind, top)
    providers, regions, gpus = (list(c) for c in chosen[:3])
    return prices_report(table, data.price_status(), providers, regions, gpus, fig, link)
