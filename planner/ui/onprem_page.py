"""The Cloud vs on-prem page: buy or rent, with every cost line, the band and the verdict.

Inputs -> one OnPremConfig and the offers weighed -> planner.onprem.answer.tco_answer ->
the words of planner.render.tco_words (the same sentence, lines and band as `gpuplan tco`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from edge.format import money, percent
from planner.machines.specs import load_specs
from planner.onprem.answer import TcoAnswer
from planner.onprem.breakeven import break_even_utilization
from planner.onprem.compare import compared_offers, offers_in_tiers
from planner.onprem.config import DEFAULTS, OnPremConfig, OnPremConfigError
from planner.onprem.lines import amortized_usd_per_gpu_hour
from planner.onprem.load import LoadedConfig, config_from_mapping
from planner.onprem.ranges import FABRICS, ranges_frame
from planner.render.tco_tables import cloud_table
from planner.render.tco_words import (
    INPUT_LABELS,
    assumptions,
    deciding_inputs,
    defaulted_text,
    sizing_note,
    verdict_sentence,
    worded_breakdown,
    worded_tco,
)
from planner.ui import cache, data
from planner.ui.cache import MAX_ENTRIES, MAX_FIGURES, TTL_S, drawn
from planner.ui.export import Report, download_csv, download_report
from planner.ui.inputs import number, optional_number
from planner.ui.state import PageState
from planner.ui.tables import shared_columns, show_table
from planner.ui.text import md_text
from pricing.catalog import PRICING_KINDS, price_date_labels
from pricing.refs import priced_offers
from pricing.tiers import DEFAULT_TIERS, TIERS

PAGE = "onprem"
ANSWER_SOURCE = "inputs on this page"  # where the answer's configuration came from
OPTIONAL = ("capex_usd_per_server", "network_usd_per_server", "power_kw_per_server",
            "staff_usd_per_year")  # fmt: skip


def _usd(label: str, step: float) -> dict[str, Any]:
    """A dollar amount's input: from 0, shown in whole dollars."""
    return {"label": label, "min_value": 0.0, "step": step, "format": "%.0f"}


def _fraction(label: str, step: float) -> dict[str, Any]:
    """A fraction's input, from 0 to 1."""
    return {"label": label, "min_value": 0.0, "max_value": 1.0, "step": step}


# Widget bounds are wide on purpose: OnPremConfig checks the real ranges and says why.
NUMBER_FIELDS: dict[str, dict[str, Any]] = {
    "servers": {"label": "Servers", "min_value": 0, "max_value": 100_000, "step": 1},
    "gpus_per_server": {"label": "GPUs per server", "min_value": 0, "max_value": 1024, "step": 1},
    "capex_usd_per_server": _usd("Capex per server (USD; empty = typical for the GPU)", 1000.0),
    "network_usd_per_server": _usd(
        "Network per server (USD; empty = typical for the fabric)", 1000.0
    ),
    "storage_usd_per_server": _usd("Storage per server (USD)", 1000.0),
    "installation_usd_per_server": _usd("Installation per server (USD)", 500.0),
    "spares_fraction": _fraction("Spares (fraction of server capex)", 0.01),
    "extra_capex_usd": _usd("Site-wide capex (USD)", 10_000.0),
    "lifetime_years": {"label": "Lifetime (years)", "min_value": 0.0, "max_value": 30.0},
    "cost_of_capital_rate": _fraction("Cost of capital (per year; 0 = straight-line)", 0.01),
    "resale_fraction": _fraction("Resale (fraction of server capex)", 0.05),
    "maintenance_fraction_per_year": _fraction("Support (fraction of server capex/year)", 0.01),
    "power_kw_per_server": {
        "label": "Power per server (kW; empty = from TDP)", "min_value": 0.0, "step": 0.1,
    },
    "host_overhead_fraction": {
        "label": "Host power (fraction of GPU TDP)", "min_value": 0.0, "max_value": 10.0,
        "step": 0.01,
    },
    "idle_power_fraction": _fraction("Idle power (fraction)", 0.05),
    "pue": {"label": "PUE", "min_value": 0.0, "max_value": 5.0, "step": 0.01},
    "usd_per_kwh": {
        "label": "Electricity (USD/kWh)", "min_value": 0.0, "step": 0.005, "format": "%.4f",
    },
    "colocation_usd_per_kw_month": {
        "label": "Colocation (USD per kW-month)", "min_value": 0.0, "step": 5.0,
    },
    "facility_usd_per_year": _usd("Facility (USD/year)", 1000.0),
    "staff_usd_per_year": _usd("Staff (USD/year; empty = per engineer)", 1000.0),
    "staff_usd_per_fte_year": _usd("Cost per engineer (USD/year)", 5000.0),
    "servers_per_fte": {"label": "Servers per engineer", "min_value": 0.0, "step": 5.0},
    "failure_downtime_fraction": _fraction("Hours lost to failures (fraction)", 0.01),
    "utilization": _fraction("Utilization (share of the year used)", 0.05),
}  # fmt: skip
UTILIZATION_GRID = np.linspace(0.05, 1.0, 96)
DEMAND_LABEL = "Work (GPU-hours per month)"
TREND_LABEL = "Cloud price trend (per year)"
# Each config field in words (the inputs' labels; name, GPU and fabric besides).
FIELD_LABELS: dict[str, str] = {
    "name": "Name",
    "gpu_name": "GPU",
    "fabric": "Fabric",
    **{f: str(spec["label"]) for f, spec in NUMBER_FIELDS.items()},
}
_col = st.column_config
# The offer, its price and how owning compares first (they fit the grid at 1280 px: the
# price sat past its edge, cut to "$1"); the offer's details follow.
COMPARE_CONFIG = {
    "offer": _col.TextColumn("cloud offer"),
    **shared_columns("usd_per_gpu_hour"),
    "p_buy_cheaper": _col.NumberColumn("buying cheaper in", format="percent"),
    "break_even_utilization": _col.NumberColumn("break-even utilization", format="percent"),
    "pays_back": _col.TextColumn("owning pays back in"),
    "payback_band": _col.TextColumn("payback P10-P90"),
    "price_date": _col.TextColumn("price date"),
    "tier": _col.TextColumn("tier"),
    "gpu_count": _col.NumberColumn("GPUs", format="%g"),
    **shared_columns("gpu_name", "pricing", "price_source"),
    "on_demand_usd_per_gpu_hour": _col.NumberColumn("on-demand $/GPU-h", format="dollar"),
    "reserved_1y_usd_per_gpu_hour": _col.NumberColumn("1y reserved $/GPU-h", format="dollar"),
    "reserved_3y_usd_per_gpu_hour": _col.NumberColumn("3y reserved $/GPU-h", format="dollar"),
    "verdict_text": _col.TextColumn("verdict"),
}
COMPARE_COLUMNS: tuple[str, ...] = tuple(COMPARE_CONFIG)
BREAKDOWN_CONFIG = {
    "component": _col.TextColumn("line"),
    "usd_per_year": _col.NumberColumn("$/year", format="dollar"),
    **shared_columns("usd_per_gpu_hour"),
    "share": _col.NumberColumn("share", format="percent"),
    "source": _col.TextColumn("from"),
    "basis": _col.TextColumn("how"),
}
RANGES_CONFIG = {
    "field": _col.TextColumn("input"),
    "key": _col.TextColumn("for"),
    "low": _col.NumberColumn("low", format="%g"),
    "typical": _col.NumberColumn("typical (default)", format="%g"),
    "high": _col.NumberColumn("high", format="%g"),
    "unit": _col.TextColumn("unit"),
    "source": _col.TextColumn("source"),
    "date": _col.TextColumn("date"),
    "confidence": _col.TextColumn("confidence"),
}


def _help(field: str) -> str:
    default = DEFAULTS[field]
    value = default.value
    shown = "typical" if value is None else f"{value:,g}" if isinstance(value, float) else value
    return f"{default.unit}. Default {shown}. Source: {default.source}"


def _config_inputs(ps: PageState) -> dict[str, Any]:
    specs = load_specs()
    gpus = sorted(specs.index[specs["tdp_w"].notna()])
    values: dict[str, Any] = {}
    with st.sidebar:
        st.header("Own servers")
        values["gpu_name"] = ps.selectbox(
            "GPU", gpus, name="gpu", default=DEFAULTS["gpu_name"].value, help=_help("gpu_name")
        )
        for field, spec in NUMBER_FIELDS.items():
            if field == "power_kw_per_server":
                st.header("Power, site and people")
            if field == "utilization":
                st.header("Use")
            if field == "network_usd_per_server":
                values["fabric"] = ps.selectbox(
                    "Fabric", list(FABRICS), name="fabric", default="infiniband",
                    help=_help("fabric"),
                )  # fmt: skip
            spec = {**spec, "default": DEFAULTS[field].value, "help": _help(field)}
            values[field] = number(ps, field, spec)
    return values


def _given(values: Mapping[str, Any]) -> dict[str, Any]:
    """The inputs that differ from their defaults (the others are left to the defaults)."""
    return {
        k: v
        for k, v in values.items()
        if v is not None and not (k in DEFAULTS and v == DEFAULTS[k].value)
    }


def config_from_inputs(inputs: Mapping[str, Any], name: str = "own-servers") -> LoadedConfig:
    """The on-prem configuration of this page's inputs (state.remembered_inputs(PAGE)).

    Inputs left at their defaults (or empty) are defaulted; OnPremConfigError names a bad
    field."""
    values: dict[str, Any] = {"name": name}
    if "gpu" in inputs:
        values["gpu_name"] = inputs["gpu"]
    if "fabric" in inputs:
        values["fabric"] = inputs["fabric"]
    values.update({f: inputs[f] for f in NUMBER_FIELDS if f in inputs})
    return config_from_mapping(
        {"name": name, **_given(values)}, source="the Cloud vs on-prem page's inputs"
    )


@dataclass(frozen=True)
class CloudInputs:
    """The cloud side asked for: pricing, tiers, the offers chosen (refs), the work and the
    price trend (None: not set)."""

    gpu: str
    pricing: str
    tiers: tuple[str, ...]
    refs: tuple[str, ...]
    monthly_gpu_hours: float | None
    trend_per_year: float | None

    def compared(self) -> pd.DataFrame:
        """The chosen offers compared (planner.onprem.compare.compared_offers; cached)."""
        return _compared(self.gpu, self.refs, self.pricing, self.tiers)


def _cloud_inputs(ps: PageState, gpu: str) -> CloudInputs:
    st.subheader("Cloud options")
    # Two rows, so each choice is wide enough for its chips at 1280 px.
    left, middle = st.columns([1, 2])
    with left:
        kind = ps.radio("Cloud pricing", list(PRICING_KINDS), name="pricing", default="on-demand")
    with middle:
        tiers = ps.multiselect(
            "Provider tiers", list(TIERS), name="tiers", default=list(DEFAULT_TIERS),
            help="As on the Plan page: marketplace hosts (single listings, no contract) are "
            "left out unless chosen.",
        )  # fmt: skip
    refs, labels, default_refs = _offer_choices(gpu, kind, tuple(tiers))
    middle, right = st.columns([3, 1])
    with middle:
        chosen = ps.multiselect(
            md_text(f"{gpu} offers to compare ({kind}, USD per GPU-hour)"),
            refs,
            name="offers",
            default=default_refs,
            depends_on=(gpu, kind, *tiers),
            format_func=lambda ref: labels.get(ref, ref),
            help="provider:region:instance_type; the default is each provider's cheapest.",
        )
    with right:
        demand = optional_number(
            ps, DEMAND_LABEL, "monthly_gpu_hours", min_value=0.0, step=1000.0,
            help="The work: sets the utilization (x 12 / (GPUs x 8760 h)) and, where it "
            "does not fit, the servers needed. Empty: the utilization input.",
        )  # fmt: skip
        trend = optional_number(
            ps, TREND_LABEL, "cloud_price_trend", min_value=-0.9, max_value=1.0, step=0.05,
            help="Cloud price change per year over the server's life (-0.15 = 15% cheaper "
            "each year), drawn within +/-50%. Empty: flat.",
        )  # fmt: skip
    return CloudInputs(gpu, kind, tuple(tiers), tuple(chosen), demand, trend)


@st.cache_data(show_spinner=False, max_entries=MAX_ENTRIES, ttl=TTL_S)
def _offer_choices(
    gpu: str, kind: str, tiers: tuple[str, ...]
) -> tuple[list[str], dict[str, str], list[str]]:
    """The offers of `gpu` at `kind` pricing in `tiers` that can be compared (refs), each
    ref's label with its $/GPU-hour, and the default choice (each provider's cheapest), once
    for every session that asks (the snapshot in use is loaded once per process)."""
    offers = data.offers()
    priced = priced_offers(offers_in_tiers(offers, tiers), gpu, kind)
    default = compared_offers(offers, gpu, None, kind, tiers)
    labels = {
        ref: f"{ref} ({money(usd)})"
        for ref, usd in zip(priced["ref"], priced["usd_per_gpu_hour"], strict=True)
    }
    return priced["ref"].tolist(), labels, default["ref"].tolist() if len(default) else []


@st.cache_data(show_spinner=False, max_entries=MAX_ENTRIES, ttl=TTL_S)
def _compared(gpu: str, refs: tuple[str, ...], kind: str, tiers: tuple[str, ...]) -> pd.DataFrame:
    """The offers `refs` of `gpu` compared (none chosen: none), as
    planner.onprem.compare.compared_offers gives them."""
    offers = data.offers()
    if refs:
        return compared_offers(offers, gpu, list(refs), kind, list(tiers))
    return compared_offers(offers, gpu, None, kind, list(tiers)).iloc[:0]


@st.cache_resource(show_spinner=False, max_entries=MAX_FIGURES, ttl=TTL_S)
def _figures(
    config: OnPremConfig,
    offers: pd.DataFrame,
    defaulted: tuple[str, ...],
    monthly_gpu_hours: float | None,
    trend_per_year: float | None,
    pricing: str,
) -> tuple[go.Figure, go.Figure]:
    """The page's two charts (curve_figure and tornado_figure) of the answer to these
    inputs (render's cache.tco_answer call), built once for every session that asks,
    shared read-only."""
    answer = cache.tco_answer(
        config, offers, defaulted, monthly_gpu_hours, trend_per_year,
        source=ANSWER_SOURCE, pricing=pricing,
    )  # fmt: skip
    swing = cache.sensitivity(answer.config, answer.defaulted)
    return curve_figure(answer.config, answer.cloud), tornado_figure(swing)


def curve_figure(config: OnPremConfig, compared: pd.DataFrame) -> go.Figure:
    """Amortized $/GPU-hour vs utilization, a line per cloud offer (TcoAnswer.cloud rows),
    break-even points."""
    top_u = config.max_utilization
    grid = UTILIZATION_GRID[top_u + 1e-9 >= UTILIZATION_GRID]
    curve = amortized_usd_per_gpu_hour(config, grid)
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=grid, y=curve, mode="lines",
            name=f"on-prem {config.gpus} x {config.gpu_name} (amortized)",
            line={"width": 3, "color": "#d62728"},
            hovertemplate="%{x:.0%} utilization: $%{y:.2f} per GPU-hour<extra></extra>",
        )
    )  # fmt: skip
    now = float(amortized_usd_per_gpu_hour(config))
    fig.add_trace(
        go.Scatter(
            x=[config.utilization], y=[now], mode="markers",
            marker={"size": 12, "color": "#d62728", "symbol": "diamond"},
            name=f"your utilization {config.utilization:.0%}: {money(now)}",
        )
    )  # fmt: skip
    dates = price_date_labels(compared)
    for row, date in zip(compared.itertuples(), dates, strict=True):
        fig.add_trace(
            go.Scatter(
                x=[grid[0], top_u], y=[row.usd_per_gpu_hour, row.usd_per_gpu_hour],
                mode="lines", line={"dash": "dash", "width": 1.5},
                name=f"{row.ref} {row.pricing} {money(row.usd_per_gpu_hour)} ({date})",
            )
        )  # fmt: skip
    if len(compared):
        u_star = break_even_utilization(config, compared["usd_per_gpu_hour"].to_numpy())
        reachable = u_star <= top_u
        fig.add_trace(
            go.Scatter(
                x=u_star[reachable], y=compared["usd_per_gpu_hour"].to_numpy()[reachable],
                mode="markers", marker={"size": 9, "color": "black", "symbol": "x"},
                name="break-even utilization",
                hovertemplate="break-even at %{x:.1%}<extra></extra>",
            )
        )  # fmt: skip
    # The y axis reaches the on-prem cost at 20% utilization (or at the grid's last point,
    # where failures leave less than that), so the curve's fall reads.
    at_20 = min(int(np.searchsorted(grid, 0.2)), len(grid) - 1)
    top = max(float(curve[at_20]), now)
    if len(compared):
        top = max(top, float(compared["usd_per_gpu_hour"].max()) * 1.3)
    fig.update_layout(
        title="Amortized on-prem $/GPU-hour vs utilization, against the cloud",
        xaxis={"title": "utilization (share of the year the GPUs run paid work)",
               "tickformat": ".0%", "range": [0, 1.02]},
        yaxis={"title": "USD per GPU-hour", "range": [0, top]},
        legend={"orientation": "h", "y": -0.25},
        height=480,
        margin={"t": 60, "b": 10},
    )  # fmt: skip
    return fig


def tornado_figure(swing: pd.DataFrame) -> go.Figure:
    """planner.onprem.sensitivity as a tornado chart (largest swing on top): each input
    over the range the Monte Carlo draws it from."""
    rows = swing.loc[swing["swing_usd_per_gpu_hour"] > 0].iloc[::-1]
    base = float(swing["base_usd_per_gpu_hour"].iloc[0]) if len(swing) else 0.0
    labels = [INPUT_LABELS.get(f, f) for f in rows["field"]]
    fig = go.Figure()
    for side, color in (("low", "#1f77b4"), ("high", "#ff7f0e")):
        fig.add_trace(
            go.Bar(
                y=labels, x=rows[f"{side}_usd_per_gpu_hour"] - base, base=base,
                orientation="h", name=f"input at its {side} end", marker_color=color,
                customdata=rows[[f"{side}_value", f"{side}_usd_per_gpu_hour"]],
                hovertemplate="%{y} = %{customdata[0]:,.4g}: $%{customdata[1]:.3f}<extra></extra>",
            )
        )  # fmt: skip
    fig.add_vline(x=base, line={"color": "black", "width": 1})
    fig.update_layout(
        title="What decides the on-prem $/GPU-hour (each input over its cited range)",
        barmode="overlay",
        xaxis={"title": "USD per GPU-hour"},
        height=max(300, 40 * len(labels) + 120),
        margin={"t": 60, "b": 10},
    )
    return fig


def compare_table(answer: TcoAnswer) -> pd.DataFrame:
    """The offers' rows as shown: COMPARE_COLUMNS, with price dates as read."""
    shown = cloud_table(answer)
    shown["p_buy_cheaper"] = shown["p_buy_cheaper"].astype(float)
    return shown.loc[:, [c for c in COMPARE_COLUMNS if c in shown]]


def onprem_report(answer: TcoAnswer, link: str = "") -> Report:
    """The page's HTML report: the verdict, both charts, the comparison, the lines and the
    sensitivity, the assumptions, and the source of every default and price used."""
    config = answer.config
    swing = cache.sensitivity(config, answer.defaulted)
    other = answer.cloud.loc[answer.cloud["gpu_name"] != config.gpu_name, "ref"].tolist()
    notes = assumptions(answer)
    if answer.pricing == "spot":
        notes.append("Spot prices are per hour of capacity; interruptions not included.")
    if other:
        notes.append(f"{', '.join(other)} have another GPU: different work per hour.")
    note = sizing_note(answer)
    return Report(
        title=f"Cloud vs on-prem: {config.gpus} x {config.gpu_name}",
        summary=[
            verdict_sentence(answer),
            *([note] if note else []),
            defaulted_text(answer),
            *[f"Decided most by {line}" for line in deciding_inputs(swing)],
        ],
        figures=[
            ("$/GPU-hour vs utilization", curve_figure(config, answer.cloud)),
            ("What decides it", tornado_figure(swing)),
        ],
        tables=[
            ("Against the cloud", compare_table(answer)),
            ("On-prem cost lines", worded_breakdown(answer)),
            ("Sensitivity", swing),
        ],
        assumptions=notes,
        sources=_sources(answer),
        link=link,
    )


def _sources(answer: TcoAnswer) -> list[str]:
    config = answer.config
    lines = [
        f"{field}: default, {DEFAULTS[field].source}"
        for field in answer.defaulted
        if field not in ("name",)
    ]
    lines.append(f"power: {config.power_basis}")
    cloud = answer.cloud
    dates = price_date_labels(cloud)
    lines += [
        f"{r.ref}: {r.pricing} ${r.usd_per_gpu_hour:.4f} per GPU-hour, priced {date} "
        f"({r.price_source})"
        for r, date in zip(cloud.itertuples(), dates, strict=True)
    ]
    return lines


def _config_error(exc: OnPremConfigError) -> None:
    """An inline error naming the input behind a bad configuration field."""
    labels = {"monthly_gpu_hours": DEMAND_LABEL, "gpu_name": "GPU", "fabric": "Fabric"}
    labels.update({f: spec["label"] for f, spec in NUMBER_FIELDS.items()})
    if exc.field in labels:
        text = f"**{labels[exc.field]}** (field `{exc.field}`): {md_text(exc.message)}"
    else:
        text = md_text(exc)
    st.error(f"{text}. Change that input and the page updates.", icon=":material/error:")


def _metrics(answer: TcoAnswer) -> None:
    """The on-prem $/GPU-hour with its band, the utilization of the work, and against the
    cheapest offer its price and the share of cases buying is cheaper."""
    config = answer.config
    p10, _, p90 = answer.band
    cols = [*st.columns(2), *st.columns(2)]  # two rows of two: no figure cut at 1280 px
    cols[0].metric(
        "On-prem $/GPU-hour",
        money(answer.onprem["usd_per_gpu_hour"]),
        f"P10-P90 {money(p10)}-{money(p90)}",
        delta_color="off",
        delta_arrow="off",
        help=md_text(f"{config.gpus} x {config.gpu_name}; power: {config.power_basis}"),
    )
    cols[1].metric(
        "Utilization",
        percent(config.utilization, 1),
        f"{answer.monthly_gpu_hours:,.0f} GPU-h a month, {config.servers} "
        f"server{'' if config.servers == 1 else 's'}",
        delta_color="off",
        delta_arrow="off",
        help="The monthly GPU-hours of the work over the servers' GPU-hours (x 12 / (GPUs x "
        "8760 h)).",
    )
    cloud = answer.cloud
    if cloud.empty:
        st.info("Pick at least one cloud offer above to compare with.")
        return
    best = cloud.sort_values("usd_per_gpu_hour").iloc[0]
    date = price_date_labels(best.to_frame().T)[0]
    cols[2].metric(
        "Cheapest cloud $/GPU-hour",
        money(best["usd_per_gpu_hour"]),
        md_text(f"{str(best['ref']).split(':')[0]}, {best['pricing']}, {date}"),
        delta_color="off",
        delta_arrow="off",
        help=md_text(f"{best['ref']} ({best['pricing']}, priced {date})"),
    )
    cols[3].metric(
        "Buying cheaper than it",
        f"in {percent(best['p_buy_cheaper'], 0)} of cases",
        f"break-even at {percent(best['break_even_utilization'], 1)} utilization"
        if pd.notna(best["break_even_utilization"])
        else "never at any reachable utilization",
        delta_color="off",
        delta_arrow="off",
    )


def _verdict(answer: TcoAnswer) -> None:
    """The one-sentence answer, the sizing note, and the defaulted lines."""
    st.markdown(f"**{md_text(verdict_sentence(answer))}**")
    note = sizing_note(answer)
    if note:
        st.warning(md_text(note), icon=":material/dns:")
    st.caption(md_text(defaulted_text(answer) + "."))


def _comparison(answer: TcoAnswer, curve: go.Figure) -> None:
    """The $/GPU-hour vs utilization chart (`curve`, curve_figure of the answer) and the
    table against the cloud offers."""
    st.plotly_chart(curve, key=f"{PAGE}.curve_chart")
    st.subheader("Against the cloud")
    show_table(compare_table(answer), COMPARE_CONFIG, key=f"{PAGE}.compare")
    late = answer.cloud["break_even_months"].fillna(np.inf) > answer.config.lifetime_years * 12
    if late.any():
        st.warning(
            md_text(
                f"Against {', '.join(answer.cloud.loc[late, 'ref'])}, owning pays back only "
                f"after the server's {answer.config.lifetime_years:g}-year life."
            ),
            icon=":material/schedule:",
        )


def _breakdown(answer: TcoAnswer, tornado: go.Figure) -> None:
    """Every cost line, then the tornado chart (each the page's full width: side by side,
    the table's $/GPU-hour was cut to "$" and the chart's title at 1280 px), then the ranges
    and their sources."""
    swing = cache.sensitivity(answer.config, answer.defaulted)
    st.subheader("On-prem cost lines")
    show_table(worded_breakdown(answer), BREAKDOWN_CONFIG, key=f"{PAGE}.breakdown")
    st.plotly_chart(tornado, key=f"{PAGE}.tornado_chart")
    for line in deciding_inputs(swing):
        st.markdown(md_text(f"- {line}"))
    with st.expander("Default ranges and their sources"):
        ranges = ranges_frame()
        ranges["field"] = ranges["field"].map(lambda f: FIELD_LABELS.get(f, f))
        show_table(ranges, RANGES_CONFIG, key=f"{PAGE}.ranges")


def render() -> None:
    """Draw the Cloud vs on-prem page: inputs, the verdict, charts, tables and downloads."""
    ps = PageState(PAGE)
    st.title("Cloud vs on-prem: rent or buy?")
    values = _config_inputs(ps)
    cloud = _cloud_inputs(ps, values["gpu_name"])
    try:
        loaded = config_from_mapping(
            {"name": "own-servers", **_given(values)}, source="the Cloud vs on-prem page's inputs"
        )
    except OnPremConfigError as exc:
        _config_error(exc)
        ps.sync()
        return

    try:
        # Every session asking the same is shown the same outputs: drawn once, replayed
        # (an input the answer refuses raises before anything is drawn, and is not kept).
        drawn(f"{PAGE}.answer", (loaded.config, tuple(loaded.defaulted), cloud),
              lambda: _answer_drawn(loaded, cloud))  # fmt: skip
    except OnPremConfigError as exc:
        _config_error(exc)
        ps.sync()
        return
    buttons = st.columns(2)
    gpu_name = loaded.config.gpu_name
    with buttons[0]:
        download_csv(
            lambda: worded_tco(_answer(loaded, cloud)),
            f"onprem-vs-cloud-{gpu_name}.csv",
            key=f"{PAGE}.csv",
        )
    with buttons[1]:
        link = ps.link()
        download_report(
            lambda: onprem_report(_answer(loaded, cloud), link),
            f"onprem-vs-cloud-{gpu_name}.html",
            key=f"{PAGE}.report",
        )
    ps.sync()
    ps.share_box()


def _answer(loaded: LoadedConfig, cloud: CloudInputs) -> TcoAnswer:
    """The TCO answer to these inputs (cached by request)."""
    return cache.tco_answer(*_asked(loaded, cloud), source=ANSWER_SOURCE, pricing=cloud.pricing)


def _asked(
    loaded: LoadedConfig, cloud: CloudInputs
) -> tuple[OnPremConfig, pd.DataFrame, tuple[str, ...], float | None, float | None]:
    """The TCO request of these inputs: the config, the offers compared, the fields left
    at their defaults, the work and the price trend."""
    return (loaded.config, cloud.compared(), tuple(loaded.defaulted), cloud.monthly_gpu_hours,
            cloud.trend_per_year)  # fmt: skip


def _answer_drawn(loaded: LoadedConfig, cloud: CloudInputs) -> None:
    """The verdict, the figures, both charts and the tables of the answer to these inputs."""
    answer = _answer(loaded, cloud)
    curve, tornado = _figures(*_asked(loaded, cloud), pricing=cloud.pricing)
    _verdict(answer)
    _metrics(answer)
    _comparison(answer, curve)
    _breakdown(answer, tornado)
