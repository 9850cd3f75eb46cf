"""The Plan page: pick a workload, precision, providers and pricing; see the ranking."""

from __future__ import annotations

import os

import pandas as pd
import plotly.express as px
import streamlit as st

from planner.plan import Plan, make_plan
from planner.ui import data
from planner.workloads import WORKLOADS, get_workload

PRECISIONS = ["fp16", "bf16", "tf32", "fp32"]
TABLE_COLUMNS = [
    "rank",
    "provider",
    "region",
    "instance_type",
    "gpu_name",
    "gpu_count",
    "throughput",
    "throughput_unit",
    "throughput_source",
    "instances",
    "total_gpus",
    "hours_to_train",
    "cost_usd",
    "usd_per_hour",
    "price_date",
    "throughput_detail",
]


def _inputs() -> tuple[str, str, list[str], bool]:
    offers = data.offers()
    providers = sorted(offers["provider"].unique())
    with st.sidebar:
        st.header("Job")
        workload = st.selectbox(
            "Workload",
            list(WORKLOADS),
            key="workload",
            help="What one training run is (gpuplan workloads).",
        )
        precision = st.radio("Precision", PRECISIONS, horizontal=True, key="precision")
        st.header("Where")
        chosen = st.multiselect("Providers", providers, default=providers, key="providers")
        spot = st.toggle(
            "Spot prices",
            value=False,
            key="spot",
            help="Price at spot/preemptible rates; hours include the expected time lost to "
            "interruptions at each provider's default rate.",
        )
    return workload, precision, chosen, spot


def _price_dates() -> str:
    parts = [f"{m.provider} {m.priced_at}" for m in data.manifest()]
    return "Prices as of: " + ", ".join(parts)


def _chart(plan: Plan) -> None:
    rows = plan.rows
    fig = px.scatter(
        rows,
        x="hours_to_train",
        y="cost_usd",
        color="provider",
        symbol="throughput_source",
        log_x=True,
        log_y=True,
        hover_data=[
            "instance_type",
            "region",
            "gpu_name",
            "gpu_count",
            "instances",
            "usd_per_hour",
            "throughput_detail",
            "price_date",
        ],
        labels={"hours_to_train": "hours to train", "cost_usd": "cost to train (USD)"},
        title=f"Time vs cost: {plan.workload.name} ({plan.precision}, {plan.pricing})",
    )
    st.plotly_chart(fig, key="time_vs_cost")


def render() -> None:
    """Draw the Plan page."""
    st.title("gpuplan: where to train, for how much")
    workload_name, precision, providers, spot = _inputs()
    st.caption(_price_dates())
    if not providers:
        st.info("Pick at least one provider in the sidebar.")
        return
    table, problems = data.results(os.environ.get("GPUPLAN_RESULTS_DIR", "results"))
    pricing = "spot" if spot else "on-demand"
    plan = make_plan(
        get_workload(workload_name), precision, data.offers(), table, pricing, providers=providers
    )
    workload = plan.workload
    st.markdown(f"**{workload.description}** — {workload.samples:,.0f} {workload.sample_unit}.")
    if plan.rows.empty:
        st.warning("No offer has both a price and a throughput for this choice.")
    else:
        best = plan.rows.iloc[0]
        fastest = plan.rows.sort_values("hours_to_train").iloc[0]
        left, right = st.columns(2)
        left.metric(
            "Cheapest",
            f"${best['cost_usd']:,.0f}",
            f"{best['hours_to_train']:,.1f} h on {best['provider']} {best['instance_type']}",
            delta_color="off",
        )
        right.metric(
            "Fastest",
            f"{fastest['hours_to_train']:,.1f} h",
            f"${fastest['cost_usd']:,.0f} on {fastest['provider']} {fastest['instance_type']}",
            delta_color="off",
        )
        _chart(plan)
        st.subheader(f"Ranked by cost to train ({len(plan.rows)} options)")
        st.dataframe(_display(plan.rows), hide_index=True, key="ranked_table")
    with st.expander("Assumptions and warnings", expanded=False):
        for line in plan.assumptions:
            st.markdown(f"- {line}")
        for line in [*plan.warnings, *problems]:
            st.markdown(f"- ⚠️ {line}")


def _display(rows: pd.DataFrame) -> pd.DataFrame:
    shown = rows.loc[:, TABLE_COLUMNS].copy()
    shown["hours_to_train"] = shown["hours_to_train"].round(2)
    shown["cost_usd"] = shown["cost_usd"].round(2)
    shown["throughput"] = shown["throughput"].round(1)
    return shown
