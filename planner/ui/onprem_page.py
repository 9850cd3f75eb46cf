"""The Cloud vs on-prem page: own servers' amortized $/GPU-hour against cloud offers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from edge.format import money
from planner.machines.specs import load_specs
from planner.onprem.tco import (
    COMPONENTS,
    DEFAULTS,
    LoadedConfig,
    OnPremConfig,
    OnPremConfigError,
    amortized_usd_per_gpu_hour,
    break_even_utilization,
    config_from_mapping,
    cost_breakdown,
    defaults_frame,
    sensitivity,
    tco_table,
)
from planner.render.tco_tables import after_life, months_text, worded_tco
from planner.ui import data
from planner.ui.export import Report, download_csv, download_report
from planner.ui.inputs import number, optional_number
from planner.ui.state import PageState
from planner.ui.tables import shared_columns, show_table
from planner.ui.text import md_text
from pricing.catalog import (
    PRICING_KINDS,
    price_date_label,
    price_date_labels,
)
from pricing.refs import cheapest_per_provider, priced_offers

PAGE = "onprem"
# Widget bounds are wide on purpose: OnPremConfig checks the real ranges and says why.
NUMBER_FIELDS: dict[str, dict[str, Any]] = {
    "servers": {"label": "Servers", "min_value": 0, "max_value": 100_000, "step": 1},
    "gpus_per_server": {"label": "GPUs per server", "min_value": 0, "max_value": 1024, "step": 1},
    "capex_usd_per_server": {
        "label": "Capex per server (USD)",
        "min_value": 0.0,
        "step": 1000.0,
        "format": "%.0f",
    },
    "extra_capex_usd": {
        "label": "Site-wide capex (USD)",
        "min_value": 0.0,
        "step": 10_000.0,
        "format": "%.0f",
    },
    "lifetime_years": {"label": "Lifetime (years)", "min_value": 0.0, "max_value": 30.0},
    "power_kw_per_server": {
        "label": "Power per server (kW; empty = from TDP)",
        "min_value": 0.0,
        "step": 0.1,
    },
    "host_overhead_fraction": {
        "label": "Host power (fraction of GPU TDP)",
        "min_value": 0.0,
        "max_value": 10.0,
        "step": 0.01,
    },
    "idle_power_fraction": {
        "label": "Idle power (fraction)",
        "min_value": 0.0,
        "max_value": 1.0,
        "step": 0.05,
    },
    "pue": {"label": "PUE", "min_value": 0.0, "max_value": 5.0, "step": 0.01},
    "usd_per_kwh": {
        "label": "Electricity (USD/kWh)",
        "min_value": 0.0,
        "step": 0.005,
        "format": "%.4f",
    },
    "colocation_usd_per_kw_month": {
        "label": "Colocation (USD per kW-month)",
        "min_value": 0.0,
        "step": 5.0,
    },
    "facility_usd_per_year": {
        "label": "Facility (USD/year)",
        "min_value": 0.0,
        "step": 1000.0,
        "format": "%.0f",
    },
    "staff_usd_per_year": {
        "label": "Staff (USD/year)",
        "min_value": 0.0,
        "step": 1000.0,
        "format": "%.0f",
    },
    "maintenance_fraction_per_year": {
        "label": "Maintenance (fraction of capex/year)",
        "min_value": 0.0,
        "max_value": 1.0,
        "step": 0.01,
    },
    "utilization": {
        "label": "Utilization (share of the year used)",
        "min_value": 0.0,
        "max_value": 1.0,
        "step": 0.05,
    },
}
UTILIZATION_GRID = np.linspace(0.05, 1.0, 96)
DEMAND_LABEL = "Demand (GPU-hours per month)"
# Each config field in words (the inputs' labels; name and GPU besides).
FIELD_LABELS: dict[str, str] = {
    "name": "Name",
    "gpu_name": "GPU",
    **{f: str(spec["label"]) for f, spec in NUMBER_FIELDS.items()},
}
_col = st.column_config
COMPARE_CONFIG = {
    "ref": _col.TextColumn("cloud offer"),
    "gpu_count": _col.NumberColumn("GPUs", format="%g"),
    **shared_columns("gpu_name", "pricing", "usd_per_gpu_hour", "price_source"),
    "cheaper": _col.TextColumn("cheaper at your utilization"),
    "break_even_utilization": _col.NumberColumn("break-even utilization", format="percent"),
    "break_even_months": _col.TextColumn("on-prem pays back in"),
    "break_even_note": _col.TextColumn("in words"),
    "price_date": _col.TextColumn("price date"),
}
BREAKDOWN_CONFIG = {
    "component": _col.TextColumn("component"),
    "usd_per_year": _col.NumberColumn("$/year", format="dollar"),
    **shared_columns("usd_per_gpu_hour"),
    "share": _col.NumberColumn("share", format="percent"),
    "basis": _col.TextColumn("how"),
}
DEFAULTS_CONFIG = {
    "field": _col.TextColumn("input"),
    "default": _col.TextColumn("default"),
    "unit": _col.TextColumn("unit"),
    "source": _col.TextColumn("source"),
}
COMPARE_COLUMNS: tuple[str, ...] = (
    "ref", "gpu_name", "gpu_count", "pricing", "usd_per_gpu_hour", "cheaper",
    "break_even_utilization", "break_even_months", "break_even_note", "price_date",
    "price_source",
)  # fmt: skip


def compare_table(cloud: pd.DataFrame) -> pd.DataFrame:
    """The cloud rows of a TCO table as shown: COMPARE_COLUMNS, price dates as read
    ("≥ 2025-06-01" where only a lower bound is known)."""
    shown = cloud.loc[:, list(COMPARE_COLUMNS)].copy()
    shown["price_date"] = price_date_labels(cloud)
    return shown


def _help(field: str) -> str:
    default = DEFAULTS[field]
    value = default.value
    shown = "TDP-derived" if value is None else f"{value:,g}" if isinstance(value, float) else value
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
            if field == "pue":
                st.header("Power and site")
            if field == "utilization":
                st.header("Use")
            spec = {**spec, "default": DEFAULTS[field].value, "help": _help(field)}
            values[field] = number(ps, field, spec)
    return values


def config_from_inputs(inputs: Mapping[str, Any], name: str = "own-servers") -> LoadedConfig:
    """The on-prem configuration of this page's inputs (state.remembered_inputs(PAGE)).

    Inputs not given take their defaults; OnPremConfigError names a bad field.
    """
    values: dict[str, Any] = {"name": name}
    if "gpu" in inputs:
        values["gpu_name"] = inputs["gpu"]
    values.update({f: inputs[f] for f in NUMBER_FIELDS if f in inputs})
    return config_from_mapping(values, source="the Cloud vs on-prem page's inputs")


def _cloud_inputs(ps: PageState, gpu: str) -> tuple[str, pd.DataFrame, float | None, float]:
    offers = data.offers()
    st.subheader("Cloud options")
    left, middle, right = st.columns([1, 3, 1])
    with left:
        kind = ps.radio("Cloud pricing", list(PRICING_KINDS), name="pricing", default="on-demand")
    priced = priced_offers(offers, gpu, kind)
    default = cheapest_per_provider(offers, gpu, kind)["ref"].tolist()
    # One label per offer, made once (not a row lookup per option on every run).
    labels = {
        ref: f"{ref} ({money(usd)})"
        for ref, usd in zip(priced["ref"], priced["usd_per_gpu_hour"], strict=True)
    }
    with middle:
        chosen = ps.multiselect(
            md_text(f"{gpu} offers to compare ({kind}, USD per GPU-hour)"),
            priced["ref"].tolist(),
            name="offers",
            default=default,
            depends_on=(gpu, kind),
            format_func=lambda ref: labels.get(ref, ref),
            help="provider:region:instance_type; the default is each provider's cheapest.",
        )
    with right:
        demand = optional_number(
            ps,
            DEMAND_LABEL,
            "monthly_gpu_hours",
            min_value=0.0,
            step=100.0,
            help="For break-even months. Empty: what the servers deliver at the utilization "
            "(GPUs x 730 h x utilization).",
        )
        fraction = ps.slider(
            "Tornado swing (±)",
            name="swing",
            default=0.2,
            min_value=0.05,
            max_value=0.5,
            step=0.05,
            help="Each input moved by this fraction, one at a time.",
        )
    rows = priced.loc[priced["ref"].isin(chosen)].set_index("ref").loc[chosen].reset_index()
    return kind, rows, demand, fraction


def _never(value: float, fmt: str) -> str:
    return "never" if pd.isna(value) else fmt.format(value)


def curve_figure(config: OnPremConfig, compared: pd.DataFrame) -> go.Figure:
    """Amortized $/GPU-hour vs utilization, a line per cloud offer, break-even points."""
    curve = amortized_usd_per_gpu_hour(config, UTILIZATION_GRID)
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=UTILIZATION_GRID,
            y=curve,
            mode="lines",
            name=f"on-prem {config.gpus} x {config.gpu_name} (amortized)",
            line={"width": 3, "color": "#d62728"},
            hovertemplate="%{x:.0%} utilization: $%{y:.2f} per GPU-hour<extra></extra>",
        )
    )
    now = float(amortized_usd_per_gpu_hour(config))
    fig.add_trace(
        go.Scatter(
            x=[config.utilization],
            y=[now],
            mode="markers",
            marker={"size": 12, "color": "#d62728", "symbol": "diamond"},
            name=f"your utilization {config.utilization:.0%}: {money(now)}",
        )
    )
    dates = price_date_labels(compared, date="priced_at")
    for row, date in zip(compared.itertuples(), dates, strict=True):
        fig.add_trace(
            go.Scatter(
                x=[UTILIZATION_GRID[0], 1.0],
                y=[row.usd_per_gpu_hour, row.usd_per_gpu_hour],
                mode="lines",
                line={"dash": "dash", "width": 1.5},
                name=f"{row.ref} {row.pricing} {money(row.usd_per_gpu_hour)} ({date})",
            )
        )
    if len(compared):
        u_star = break_even_utilization(config, compared["usd_per_gpu_hour"].to_numpy())
        reachable = u_star <= 1
        fig.add_trace(
            go.Scatter(
                x=u_star[reachable],
                y=compared["usd_per_gpu_hour"].to_numpy()[reachable],
                mode="markers",
                marker={"size": 9, "color": "black", "symbol": "x"},
                name="break-even utilization",
                hovertemplate="break-even at %{x:.1%}<extra></extra>",
            )
        )
    top = max(float(curve[np.searchsorted(UTILIZATION_GRID, 0.2)]), now)
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


def tornado_figure(swing: pd.DataFrame, fraction: float) -> go.Figure:
    """planner.onprem.tco.sensitivity as a tornado chart (largest swing on top)."""
    rows = swing.loc[swing["swing_usd_per_gpu_hour"] > 0].iloc[::-1]
    base = float(swing["base_usd_per_gpu_hour"].iloc[0])
    labels = [FIELD_LABELS.get(f, f) for f in rows["field"]]
    fig = go.Figure()
    for side, color in (("low", "#1f77b4"), ("high", "#ff7f0e")):
        fig.add_trace(
            go.Bar(
                y=labels,
                x=rows[f"{side}_usd_per_gpu_hour"] - base,
                base=base,
                orientation="h",
                name=f"input {'-' if side == 'low' else '+'}{fraction:.0%}",
                marker_color=color,
                customdata=rows[[f"{side}_value", f"{side}_usd_per_gpu_hour"]],
                hovertemplate="%{y} = %{customdata[0]:,.4g}: $%{customdata[1]:.3f}<extra></extra>",
            )
        )
    fig.add_vline(x=base, line={"color": "black", "width": 1})
    fig.update_layout(
        title=f"What the on-prem $/GPU-hour is most sensitive to (each input ±{fraction:.0%})",
        barmode="overlay",
        xaxis={"title": "USD per GPU-hour"},
        height=max(300, 40 * len(labels) + 120),
        margin={"t": 60, "b": 10},
    )
    return fig


def onprem_report(
    config: OnPremConfig,
    kind: str,
    compared: pd.DataFrame,
    monthly_gpu_hours: float | None,
    fraction: float,
    link: str = "",
) -> Report:
    """The page's HTML report: both charts, the comparison, breakdown and sensitivity
    tables, the assumptions, and the source of every default and price used."""
    table = worded_tco(tco_table(config, compared, monthly_gpu_hours, source="inputs on this page"))
    onprem, cloud = table.iloc[0], table.iloc[1:]
    swing = sensitivity(config, fraction)
    assumptions = [
        f"Power: {config.power_basis}.",
        "Capex straight-line over the lifetime, no salvage value, no cost of capital; "
        f"components: {', '.join(COMPONENTS)}; a year is 8760 h, a month 730 h.",
        "Break-even utilization: where the amortized on-prem $/GPU-hour equals the cloud's; "
        "break-even months: when cumulative cloud spend for the demand exceeds capex plus "
        "cumulative running cost (planner.onprem.tco).",
    ]
    if kind == "spot":
        assumptions.append("Spot prices are per hour of capacity; interruptions not included.")
    other = cloud.loc[cloud["gpu_name"] != config.gpu_name, "ref"].tolist()
    if other:
        assumptions.append(f"{', '.join(other)} have another GPU: different work per hour.")
    return Report(
        title=f"Cloud vs on-prem: {config.gpus} x {config.gpu_name}",
        summary=[
            f"On-prem {money(onprem['usd_per_gpu_hour'])} per GPU-hour at "
            f"{config.utilization:.0%} utilization",
            *[f"{r.ref}: {r.break_even_note}" for r in cloud.itertuples()],
        ],
        figures=[
            ("$/GPU-hour vs utilization", curve_figure(config, compared)),
            ("Sensitivity", tornado_figure(swing, fraction)),
        ],
        tables=[
            ("Against the cloud", compare_table(cloud)),
            ("On-prem cost breakdown", cost_breakdown(config)),
            ("Sensitivity", swing),
        ],
        assumptions=assumptions,
        sources=_sources(config, compared),
        link=link,
    )


def _sources(config: OnPremConfig, compared: pd.DataFrame) -> list[str]:
    lines = [
        f"{field} = {getattr(config, field)!r}: default, {DEFAULTS[field].source}"
        for field in DEFAULTS
        if field not in ("name", "power_kw_per_server")
        and getattr(config, field) == DEFAULTS[field].value
    ]
    lines.append(f"power: {config.power_basis}")
    dates = price_date_labels(compared, date="priced_at")
    lines += [
        f"{r.ref}: {r.pricing} ${r.usd_per_gpu_hour:.4f} per GPU-hour, priced {date} ({r.source})"
        for r, date in zip(compared.itertuples(), dates, strict=True)
    ]
    return lines


def _config_error(exc: OnPremConfigError) -> None:
    """An inline error naming the input behind a bad configuration field."""
    labels = {"monthly_gpu_hours": DEMAND_LABEL, "gpu_name": "GPU"}
    labels.update({f: spec["label"] for f, spec in NUMBER_FIELDS.items()})
    if exc.field in labels:
        text = f"**{labels[exc.field]}** (field `{exc.field}`): {md_text(exc.message)}"
    else:
        text = md_text(exc)
    st.error(f"{text}. Change that input and the page updates.", icon=":material/error:")


def _metrics(config: OnPremConfig, kind: str, onprem: pd.Series, cloud: pd.DataFrame) -> None:
    """The on-prem $/GPU-hour, then against the cheapest cloud offer: its price, the
    break-even utilization and months (a warning when it pays back only after the servers'
    life)."""
    cols = st.columns(4)
    cols[0].metric(
        "On-prem $/GPU-hour",
        money(onprem["usd_per_gpu_hour"]),
        f"at {config.utilization:.0%} utilization",
        delta_color="off",
        help=md_text(f"{config.gpus} x {config.gpu_name}; power: {config.power_basis}"),
    )
    if cloud.empty:
        st.info("Pick at least one cloud offer above to compare with.")
        return
    best = cloud.sort_values("usd_per_gpu_hour").iloc[0]
    cols[1].metric(
        "Cheapest cloud $/GPU-hour",
        money(best["usd_per_gpu_hour"]),
        md_text(
            f"{best['ref']} ({kind}, "
            f"{price_date_label(best['price_date'], best['price_date_basis'])})"
        ),
        delta_color="off",
    )
    cols[2].metric(
        "Break-even utilization",
        _never(best["break_even_utilization"], "{:.1%}"),
        "on-prem cheaper above it",
        delta_color="off",
        help=md_text(best["break_even_note"]),
    )
    _break_even_months(cols[3], config, best)


def _break_even_months(col: Any, config: OnPremConfig, best: pd.Series) -> None:
    """The months until on-prem pays back against `best`, with a warning when that is after
    the servers' life."""
    late = after_life(best["break_even_months"], config.lifetime_years)
    col.metric(
        "Break-even months",
        _never(best["break_even_months"], "{:,.1f}"),
        (
            f"after the server's life ({config.lifetime_years * 12:g} months)"
            if late
            else f"at {best['monthly_gpu_hours']:,.0f} GPU-hours/month"
        ),
        delta_color="inverse" if late else "off",
        delta_arrow="off" if not late else "auto",
        help=md_text(best["break_even_note"]),
    )
    if late:
        st.warning(
            md_text(
                f"Against {best['ref']}, on-prem pays back only after "
                f"{best['break_even_months']:,.1f} months: after the server's "
                f"{config.lifetime_years:g}-year life. Buying does not pay back at this "
                "demand."
            ),
            icon=":material/schedule:",
        )


def _comparison(config: OnPremConfig, compared: pd.DataFrame, cloud: pd.DataFrame) -> None:
    """The $/GPU-hour vs utilization chart and the table against the cloud offers."""
    st.plotly_chart(curve_figure(config, compared), key=f"{PAGE}.curve_chart")
    shown = compare_table(cloud)
    shown["break_even_months"] = [
        months_text(m, config.lifetime_years) for m in shown["break_even_months"].fillna(np.inf)
    ]
    st.subheader("Against the cloud")
    show_table(shown, COMPARE_CONFIG, key=f"{PAGE}.compare")


def _breakdown(config: OnPremConfig, fraction: float) -> None:
    """The on-prem cost per GPU-hour by component beside the tornado chart, then the
    defaults and their sources."""
    left, right = st.columns([2, 3])
    with left:
        st.subheader("On-prem cost per GPU-hour")
        show_table(cost_breakdown(config), BREAKDOWN_CONFIG, key=f"{PAGE}.breakdown")
    with right:
        st.plotly_chart(
            tornado_figure(sensitivity(config, fraction), fraction), key=f"{PAGE}.tornado_chart"
        )
    with st.expander("Defaults and their sources"):
        defaults = defaults_frame()
        defaults["default"] = defaults["default"].map(
            lambda v: "TDP-derived" if v is None else f"{v:,g}" if isinstance(v, float) else v
        )
        defaults["field"] = defaults["field"].map(lambda f: FIELD_LABELS.get(f, f))
        show_table(defaults.astype(str), DEFAULTS_CONFIG, key=f"{PAGE}.defaults")


def render() -> None:
    """Draw the Cloud vs on-prem page: inputs, metrics, charts, tables and downloads."""
    ps = PageState(PAGE)
    st.title("Cloud vs on-prem: rent or buy?")
    values = _config_inputs(ps)
    kind, compared, demand, fraction = _cloud_inputs(ps, values["gpu_name"])
    try:
        config = OnPremConfig(**values)
        table = worded_tco(tco_table(config, compared, demand, source="inputs on this page"))
    except OnPremConfigError as exc:
        _config_error(exc)
        ps.sync()
        return
    cloud = table.iloc[1:]
    _metrics(config, kind, table.iloc[0], cloud)
    _comparison(config, compared, cloud)
    _breakdown(config, fraction)
    buttons = st.columns(2)
    with buttons[0]:
        download_csv(table, f"onprem-vs-cloud-{config.gpu_name}.csv", key=f"{PAGE}.csv")
    with buttons[1]:
        link = ps.link()
        download_report(
            lambda: onprem_report(config, kind, compared, demand, fraction, link),
            f"onprem-vs-cloud-{config.gpu_name}.html",
            key=f"{PAGE}.report",
        )
    ps.sync()
    ps.share_box()
