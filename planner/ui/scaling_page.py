"""The Scaling page: one GPU and model from 1 to 1024 GPUs: figures, laws, extrapolation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from planner.machines.specs import load_specs
from planner.throughput.scaling import CommModel
from planner.throughput.scaling_report import (
    EXTRAPOLATION_MAX_GPUS,
    extrapolation,
    extrapolation_counts,
    gpus_with_figures,
    interconnect_assumed,
    law_curves,
    model_choices,
    scaling_points,
    throughput_unit,
)
from planner.ui import data
from planner.ui.export import Report, download_csv, download_report
from planner.ui.state import PageState
from planner.ui.tables import show_table
from planner.ui.text import md_text

PAGE = "scaling"
DEFAULT_MODEL = "resnet50"
DEFAULT_GPU = "H100-SXM"
LAW_COLORS = {"linear": "#7f7f7f", "amdahl": "#ff7f0e", "usl": "#9467bd", "ring": "#2ca02c"}
PLANNER_COLOR = "#1f77b4"


# Global batch caps of the catalog workloads that use these benchmarks (planner.workloads.catalog).
DEFAULT_GLOBAL_BATCH = {"resnet50": 8192.0, "bert_large_squad": 256.0, "bert_base_squad": 256.0}


def _inputs(
    ps: PageState, reference: pd.DataFrame
) -> tuple[str, str, str, CommModel, float | None]:
    choices = model_choices(reference)
    with st.sidebar:
        st.header("Model and GPU")
        models = sorted(choices["model"].unique())
        model_name = ps.selectbox(
            "Benchmark model",
            models,
            name="model",
            default=DEFAULT_MODEL,
            help="The published benchmark models (Lambda's names) and your own results.",
        )
        precisions = choices.loc[choices["model"] == model_name, "precision"].tolist()
        precision = ps.radio(
            "Precision",
            precisions,
            name="precision",
            default="fp16",
            horizontal=True,
            help="fp16 is mixed precision (AMP), as published.",
        )
        measured = gpus_with_figures(reference, model_name, precision)
        counts = dict(zip(measured["gpu_name"], measured["counts"], strict=True))
        others = sorted(set(load_specs().index) - set(counts))
        gpu = ps.selectbox(
            "GPU",
            [*measured["gpu_name"], *others],
            name="gpu",
            default=DEFAULT_GPU,
            format_func=lambda g: (
                f"{g} · {counts[g]} counts" if g in counts else f"{g} · estimated"
            ),
            help="GPUs with figures first; the others are estimated from their specs.",
        )
        st.header("Interconnect")
        per_node = ps.number_input(
            "GPUs per node",
            name="gpus_per_node",
            default=8,
            min_value=1,
            max_value=64,
            step=1,
            help="GPUs sharing a node's NVLink/PCIe fabric (8 on HGX/DGX servers).",
        )
        network = ps.number_input(
            "Network per node (Gb/s)",
            name="network_gbps",
            default=400.0,
            min_value=1.0,
            max_value=100_000.0,
            step=100.0,
            help="400 = one InfiniBand NDR port or 4 x 100 Gb/s EFA (AWS p4d); p5 has 3,200.",
        )
        overlap = ps.slider(
            "Overlap of communication with compute",
            name="overlap",
            default=0.0,
            min_value=0.0,
            max_value=1.0,
            step=0.05,
            help="Share of the compute time that hides the gradient all-reduce (DDP overlaps "
            "it with the backward pass). 0 fitted the published 2- and 4-GPU figures best.",
        )
        st.header("Batch")
        global_batch = ps.number_input(
            "Global batch (samples per step; 0 = no cap)",
            name=f"global_batch_{model_name}",
            default=DEFAULT_GLOBAL_BATCH.get(model_name, 0.0),
            min_value=0.0,
            max_value=1e7,
            step=256.0,
            help="The largest batch the training recipe keeps accuracy at (ResNet-50 90 "
            "epochs: 8k, Goyal et al. 2017). Past it, more GPUs mean smaller per-GPU batches.",
        )
    comm = CommModel(network_gbps_per_node=network, gpus_per_node=int(per_node), overlap=overlap)
    return model_name, precision, gpu, comm, (float(global_batch) if global_batch else None)


def _step_figure(curve: pd.DataFrame, title: str) -> go.Figure:
    """Seconds per step at powers of two, stacked: compute, exposed communication, and the
    fixed per-step overhead, with the per-GPU batch on each bar."""
    counts = curve["num_gpus"].to_numpy(float)
    rows = curve.loc[np.isclose(np.log2(counts) % 1, 0) & curve["compute_s"].notna()]
    fig = go.Figure()
    labels = [f"{n:,.0f}" for n in rows["num_gpus"]]
    for column, name in (
        ("compute_s", "compute"),
        ("comm_s", "communication (exposed)"),
        ("overhead_s", "fixed overhead"),
    ):
        fig.add_bar(x=labels, y=rows[column] * 1e3, name=name)
    fig.add_scatter(
        x=labels,
        y=(rows["compute_s"] + rows["comm_s"] + rows["overhead_s"]) * 1e3,
        mode="text",
        text=[f"b={b:.3g}" for b in rows["per_gpu_batch"]],
        textposition="top center",
        showlegend=False,
    )
    fig.update_layout(
        barmode="stack",
        title=title,
        xaxis_title="GPUs",
        yaxis_title="ms per step",
        legend={"orientation": "h"},
    )
    return fig


def _band_and_laws(
    fig: go.Figure, laws: pd.DataFrame, curve: pd.DataFrame, metric: str, label: str, unit: str
) -> None:
    """The planner's 80% band and line for `metric`, then each fitted law (chosen bold)."""
    fig.add_trace(
        go.Scatter(
            x=curve["num_gpus"],
            y=curve[f"{metric}_high"],
            line={"width": 0},
            showlegend=False,
            hoverinfo="skip",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=curve["num_gpus"],
            y=curve[f"{metric}_low"],
            fill="tonexty",
            fillcolor="rgba(31,119,180,0.15)",
            line={"width": 0},
            name="planner 80% band",
            hoverinfo="skip",
        )
    )
    _planner_lines(fig, curve, metric, label)
    value = "%{y:,.0f} " + unit if unit else "%{y:.0%}"
    for law, rows in laws.groupby("law", sort=False):
        chosen = bool(rows["chosen"].iloc[0])
        fig.add_trace(
            go.Scatter(
                x=rows["num_gpus"],
                y=rows[metric],
                mode="lines",
                name=f"{law} law" + (" (chosen)" if chosen else ""),
                line={
                    "color": LAW_COLORS.get(str(law)),
                    "width": 3 if chosen else 1.2,
                    "dash": "solid" if chosen else "dot",
                },
                hovertemplate=f"{law}: {value} at %{{x}} GPUs<extra></extra>",
            )
        )


def _throughput_figure(
    points: pd.DataFrame,
    laws: pd.DataFrame,
    curve: pd.DataFrame,
    per_node: int,
    unit: str,
    title: str,
) -> go.Figure:
    fig = go.Figure()
    _band_and_laws(fig, laws, curve, "throughput", "planner extrapolation", unit)
    _point_traces(fig, points, "throughput", unit)
    _layout(fig, title, f"throughput ({unit})", per_node, log_y=True)
    return fig


def _efficiency_figure(
    points: pd.DataFrame, laws: pd.DataFrame, curve: pd.DataFrame, per_node: int, title: str
) -> go.Figure:
    fig = go.Figure()
    _band_and_laws(fig, laws, curve, "efficiency", "planner efficiency", "")
    _point_traces(fig, points.dropna(subset=["efficiency"]), "efficiency", "")
    _layout(fig, title, "efficiency X(N) / (N X(1))", per_node, log_y=False)
    fig.update_yaxes(tickformat=".0%", rangemode="tozero")
    return fig


def _planner_lines(fig: go.Figure, curve: pd.DataFrame, column: str, name: str) -> None:
    inside = curve.loc[~curve["beyond_node"]]
    beyond = curve.loc[curve["beyond_node"]]
    if len(beyond) and len(inside):
        beyond = pd.concat([inside.tail(1), beyond])
    for rows, label, dash in ((inside, name, "solid"), (beyond, f"{name}, across nodes", "dash")):
        if rows.empty:
            continue
        fig.add_trace(
            go.Scatter(
                x=rows["num_gpus"],
                y=rows[column],
                mode="lines",
                name=label,
                line={"color": PLANNER_COLOR, "width": 2.5, "dash": dash},
                customdata=rows[["throughput_source", "throughput_detail"]],
                hovertemplate="%{x} GPUs: %{y:,.3g} (%{customdata[0]})<br>"
                "%{customdata[1]}<extra></extra>",
            )
        )


def _point_traces(fig: go.Figure, points: pd.DataFrame, column: str, unit: str) -> None:
    for generation, rows in points.groupby("generation", sort=True):
        error = {}
        if column == "throughput":
            error = {
                "error_y": {
                    "type": "data",
                    "symmetric": False,
                    "array": rows["throughput_high"] - rows["throughput"],
                    "arrayminus": rows["throughput"] - rows["throughput_low"],
                }
            }
        fig.add_trace(
            go.Scatter(
                x=rows["num_gpus"],
                y=rows[column],
                mode="markers",
                marker={"size": 10, "line": {"width": 1, "color": "white"}},
                name=f"{rows['source'].iloc[0]} ({generation})",
                customdata=rows[["detail", "runs"]],
                hovertemplate="%{x} GPUs: %{y:,.3g} " + unit + "<br>%{customdata[0]}"
                "<br>%{customdata[1]} run(s)<extra></extra>",
                **error,
            )
        )


def _layout(fig: go.Figure, title: str, y_title: str, per_node: int, log_y: bool) -> None:
    fig.add_vline(x=per_node, line={"dash": "dot", "color": "#999"})
    # Annotations on a log axis take log10 of the position (plotly's convention).
    fig.add_annotation(
        x=math.log10(per_node),
        y=1,
        yref="paper",
        text=f"node boundary ({per_node} GPUs)",
        showarrow=False,
        xanchor="left",
        yanchor="top",
        font={"color": "#777"},
    )
    fig.update_layout(
        title=title,
        xaxis={"title": "GPUs", "type": "log"},
        yaxis={"title": y_title, "type": "log" if log_y else "linear"},
        legend={"orientation": "h", "y": -0.2},
        margin={"t": 60, "b": 10},
        height=480,
    )


_col = st.column_config
CURVE_CONFIG = {
    "num_gpus": _col.NumberColumn("GPUs", format="%d"),
    "throughput": _col.NumberColumn("throughput", format="localized"),
    "throughput_low": _col.NumberColumn("throughput P10", format="localized"),
    "throughput_high": _col.NumberColumn("throughput P90", format="localized"),
    "efficiency": _col.NumberColumn("efficiency", format="percent"),
    "efficiency_low": _col.NumberColumn("efficiency P10", format="percent"),
    "efficiency_high": _col.NumberColumn("efficiency P90", format="percent"),
    "throughput_source": _col.TextColumn("source"),
    "beyond_node": _col.CheckboxColumn("beyond one node"),
    "throughput_detail": _col.TextColumn("how"),
}
LAW_CONFIG = {
    "law": _col.TextColumn("law"),
    "a": _col.NumberColumn("a", format="%.4g"),
    "b": _col.NumberColumn("b", format="%.4g"),
    "fit_mape": _col.NumberColumn("in-sample error", format="percent"),
    "heldout_mape": _col.NumberColumn("held-out error", format="percent"),
    "chosen": _col.CheckboxColumn("chosen"),
    "level fitted to generation": _col.TextColumn("level fitted to generation"),
}
# GPU counts the Scaling page words its efficiency at, in nodes of `gpus_per_node`.
WORDED_NODES = (1, 8, 128)


def _power_of_two(counts: pd.Series) -> pd.Series:
    n = counts.astype(int)
    return (n > 0) & ((n & (n - 1)) == 0)


def efficiency_words(curve: pd.DataFrame, gpu: str, gpus_per_node: int) -> str:
    """Efficiency at one node, 8 nodes and the largest count, in a sentence:
    'On 8 H100-SXM (one node) it keeps 94% of linear scaling (7.5 x one GPU); ...'."""
    parts = []
    by_count = curve.set_index("num_gpus")
    counts = [float(gpus_per_node * n) for n in WORDED_NODES]
    counts.append(float(curve["num_gpus"].max()))
    for count in dict.fromkeys(c for c in counts if c in by_count.index and c > 1):
        row = by_count.loc[count]
        if pd.isna(row["efficiency"]):
            continue
        nodes = count / gpus_per_node
        where = (
            "one node" if nodes == 1 else f"{nodes:,.0f} nodes" if nodes > 1 else "part of a node"
        )
        parts.append(
            f"on {count:,.0f} GPUs ({where}) **{row['efficiency']:.0%}** of linear scaling "
            f"({row['efficiency'] * count:,.1f} x one GPU; 80% band "
            f"{row['efficiency_low']:.0%}–{row['efficiency_high']:.0%})"
        )
    if not parts:
        return f"No efficiency to state for {md_text(gpu)} beyond one GPU."
    return f"{md_text(gpu)} keeps " + "; ".join(parts) + "."


def _laws_table(laws: pd.DataFrame) -> pd.DataFrame:
    if laws.empty:
        return laws
    table = laws.drop_duplicates("law").loc[
        :, ["law", "a", "b", "fit_mape", "heldout_mape", "chosen", "generation"]
    ]
    return table.rename(columns={"generation": "level fitted to generation"})


def render() -> None:
    """Draw the Scaling page."""
    ps = PageState(PAGE)
    st.title("Scaling: throughput from 1 to 1,024 GPUs")
    directory = data.results_dir()
    reference = data.reference(directory)
    if reference.empty:
        st.warning("No throughput figures to show: the results and published tables are empty.")
        ps.sync()
        return
    model_name, precision, gpu, comm, global_batch = _inputs(ps, reference)
    model = data.throughput_model(directory, model_name)
    results_table, skipped = data.results(directory)
    data.warn_skipped(skipped)
    unit = throughput_unit(results_table, model_name)
    counts = extrapolation_counts(EXTRAPOLATION_MAX_GPUS, comm.gpus_per_node)
    points = scaling_points(model, gpu, model_name, precision)
    laws = law_curves(model, gpu, model_name, precision, counts)
    curve = extrapolation(model, gpu, model_name, precision, counts, comm, global_batch)
    links = interconnect_assumed(gpu, comm)

    one = curve.loc[curve["num_gpus"] == 1].iloc[0]
    node = curve.loc[curve["num_gpus"] == comm.gpus_per_node].iloc[0]
    top = curve.iloc[-1]
    if pd.isna(one["throughput"]):
        st.warning(
            md_text(
                f"No figure and no estimate for {gpu} on {model_name} {precision}: "
                f"{one['throughput_detail']}"
            )
        )
        ps.sync()
        return
    kind = links["link"].iloc[0] if len(links) > 1 else links["link"].iloc[-1]
    st.caption(
        md_text(
            f"{gpu} · {model_name} · {precision} · within a node: {kind}; across nodes: "
            f"{comm.network_gbps_per_node:g} Gb/s per node, overlap {comm.overlap:.0%}"
        )
    )
    cols = st.columns(4)
    cols[0].metric(
        "1 GPU",
        md_text(f"{one['throughput']:,.0f} {unit}"),
        md_text(one["throughput_source"]),
        delta_color="off",
        help=md_text(one["throughput_detail"]),
    )
    cols[1].metric(
        f"Efficiency at {comm.gpus_per_node} GPUs",
        f"{node['efficiency']:.0%}",
        f"{node['efficiency_low']:.0%}-{node['efficiency_high']:.0%} (80% band)",
        delta_color="off",
        help=md_text(node["throughput_detail"]),
    )
    cols[2].metric(
        f"Efficiency at {top['num_gpus']:,.0f} GPUs",
        f"{top['efficiency']:.0%}",
        f"{top['efficiency_low']:.0%}-{top['efficiency_high']:.0%} (80% band)",
        delta_color="off",
        help=md_text(top["throughput_detail"]),
    )
    chosen = laws.loc[laws["chosen"], "law"]
    cols[3].metric(
        "Law used",
        chosen.iloc[0] if len(chosen) else "pooled / estimated",
        f"{len(points)} figures",
        delta_color="off",
        help=md_text(node["throughput_detail"]),
    )
    st.markdown(efficiency_words(curve, gpu, comm.gpus_per_node))
    if laws.empty:
        st.info(
            md_text(
                f"{gpu} has figures at fewer than two GPU counts for {model_name} {precision}, "
                f"so no law was fitted to it; the planner uses: {node['throughput_detail']}"
            )
        )
    title = f"{gpu}, {model_name} {precision}"
    throughput_fig = _throughput_figure(
        points, laws, curve, comm.gpus_per_node, unit, f"Throughput vs GPUs: {title}"
    )
    efficiency_fig = _efficiency_figure(
        points, laws, curve, comm.gpus_per_node, f"Scaling efficiency: {title}"
    )
    left, right = st.columns(2)
    with left:
        st.plotly_chart(throughput_fig, key=f"{PAGE}.throughput_chart")
    with right:
        st.plotly_chart(efficiency_fig, key=f"{PAGE}.efficiency_chart")

    st.subheader("Where each step's time goes")
    if curve["compute_s"].notna().any():
        st.caption(
            "Per step: compute at the per-GPU batch b (which shrinks once the global batch "
            "is split over more GPUs), the all-reduce time not hidden behind the backward "
            "pass, and a fixed floor (kernel launches and the optimizer's pass over the "
            "weights) that does not shrink with b (planner.throughput.step_model)."
        )
        step_fig = _step_figure(curve, f"Step time vs GPUs: {title}")
        st.plotly_chart(step_fig, key=f"{PAGE}.step_chart")
    else:
        st.caption(md_text(f"No parameter count for {model_name}: the step model does not apply."))
    st.subheader("Interconnect assumed")
    show_table(links, {c: _col.TextColumn(c.replace("_", " ")) for c in links.columns},
               key=f"{PAGE}.links")  # fmt: skip
    st.subheader("Laws fitted to this GPU")
    if laws.empty:
        st.caption("None: figures at one GPU count only.")
    else:
        show_table(_laws_table(laws), LAW_CONFIG, key=f"{PAGE}.laws")
        st.caption(
            "a, b: law parameters (amdahl a = 1 - p; usl a = σ, b = κ; ring a = θ). fit_mape: "
            "in-sample error on this GPU; heldout_mape: error predicting each GPU's largest "
            "count from its smaller ones, over all GPUs of this model and precision."
        )
    with st.expander("Extrapolation table and figures"):
        shown = curve.round(4)
        every = st.toggle(
            "Every count computed", value=False, key=f"{PAGE}.every_count",
            help="Off: powers of two only.",
        )  # fmt: skip
        counts_shown = shown if every else shown.loc[_power_of_two(shown["num_gpus"])]
        show_table(counts_shown, CURVE_CONFIG, key=f"{PAGE}.curve")
        st.dataframe(points, hide_index=True, key=f"{PAGE}.points")
        download_csv(shown, f"scaling-{gpu}-{model_name}-{precision}.csv", key=f"{PAGE}.csv")
    assumptions = [
        f"Within the node ({comm.gpus_per_node} GPUs) and the data: the law chosen by held-out "
        "error (planner.throughput.scaling), anchored at the nearest figure.",
        f"Across nodes: ring all-reduce of fp32 gradients over {comm.network_gbps_per_node:g} "
        f"Gb/s per node at {comm.achievable_fraction:.0%} of peak, overlap {comm.overlap:.0%} "
        "(Thakur et al. 2005; Patarasuk & Yuan 2009).",
        "Band: the method's 80% band (held-out error per doubling of the GPU count; spec "
        "regression error for estimated GPUs).",
    ]
    sources = sorted({f"{r.source} ({r.generation}): {r.detail}" for r in points.itertuples()})
    link = ps.link()  # read now: the report is built on click, outside the script run
    download_report(
        lambda: Report(
            title=f"Scaling: {title}",
            summary=[
                f"1 GPU: {one['throughput']:,.0f} {unit} ({one['throughput_source']}: "
                f"{one['throughput_detail']})",
                f"Efficiency at {comm.gpus_per_node} GPUs: {node['efficiency']:.0%}; at "
                f"{top['num_gpus']:,.0f} GPUs: {top['efficiency']:.0%}",
            ],
            figures=[("Throughput", throughput_fig), ("Efficiency", efficiency_fig)],
            tables=[
                ("Interconnect assumed", links),
                ("Laws", _laws_table(laws)),
                ("Extrapolation", curve.round(4)),
            ],
            assumptions=assumptions,
            sources=sources or ["no figure: estimated from specs"],
            link=link,
        ),
        f"scaling-{gpu}-{model_name}-{precision}.html",
        key=f"{PAGE}.report",
    )
    ps.sync()
    ps.share_box()
