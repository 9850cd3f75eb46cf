"""The Scaling page: one GPU and model from 1 to 1024 GPUs: figures, laws, extrapolation."""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from edge.format import count as count_text
from planner.machines.specs import load_specs
from planner.settings import CommModel
from planner.throughput import scaling_report
from planner.ui import data
from planner.ui.cache import MAX_ENTRIES, MAX_FIGURES, TTL_S, drawn
from planner.ui.export import Report, download_csv, download_report
from planner.ui.inputs import number
from planner.ui.state import PageState
from planner.ui.tables import banded, show_table
from planner.ui.text import md_text

PAGE = "scaling"
DEFAULT_MODEL = "resnet50"
DEFAULT_GPU = "H100-SXM"
LAW_COLORS = {"linear": "#7f7f7f", "amdahl": "#ff7f0e", "usl": "#9467bd", "ring": "#2ca02c"}
PLANNER_COLOR = "#1f77b4"


# Global batch caps of the catalog workloads that use these benchmarks (planner.workloads.catalog).
DEFAULT_GLOBAL_BATCH = {"resnet50": 8192.0, "bert_large_squad": 256.0, "bert_base_squad": 256.0}


# The Interconnect section's number inputs (inputs.number: label, default, widget keywords).
INTERCONNECT_FIELDS: dict[str, dict[str, Any]] = {
    "gpus_per_node": {
        "label": "GPUs per node", "default": 8, "min_value": 1, "max_value": 64, "step": 1,
        "help": "GPUs sharing a node's NVLink/PCIe fabric (8 on HGX/DGX servers).",
    },
    "network_gbps": {
        "label": "Network per node (Gb/s)", "default": 400.0, "min_value": 1.0,
        "max_value": 100_000.0, "step": 100.0,
        "help": "400 = one InfiniBand NDR port or 4 x 100 Gb/s EFA (AWS p4d); p5 has 3,200.",
    },
}  # fmt: skip

# The sidebar's answer: model, precision, GPU, interconnect, global batch (None: default).
Inputs = tuple[str, str, str, CommModel, float | None]


def _inputs(ps: PageState, choices: pd.DataFrame) -> Inputs:
    """The sidebar: model, precision and GPU (`choices`: _model_choices), the interconnect,
    the global batch."""
    with st.sidebar:
        model_name, precision, gpu = _model_and_gpu(ps, choices)
        comm = _interconnect(ps)
        global_batch = _global_batch(ps, model_name)
    return model_name, precision, gpu, comm, global_batch


@data.from_results
@st.cache_data(show_spinner=False, max_entries=MAX_ENTRIES, ttl=TTL_S)
def _model_choices(directory: str) -> pd.DataFrame:
    """scaling_report.model_choices of data.reference(directory), once per results folder
    (empty: no figures at all)."""
    return scaling_report.model_choices(data.reference(directory))


@data.from_results
@st.cache_data(show_spinner=False, max_entries=MAX_ENTRIES, ttl=TTL_S)
def _gpu_choices(
    directory: str, model_name: str, precision: str
) -> tuple[list[str], dict[str, int]]:
    """The GPU choices (those with figures first, then every other GPU in the spec table)
    and each measured GPU's number of counts, once per results folder, model and precision."""
    reference = data.reference(directory)
    measured = scaling_report.gpus_with_figures(reference, model_name, precision)
    counts = dict(zip(measured["gpu_name"], measured["counts"], strict=True))
    others = sorted(set(load_specs().index) - set(counts))
    return [*measured["gpu_name"], *others], counts


def _model_and_gpu(ps: PageState, choices: pd.DataFrame) -> tuple[str, str, str]:
    """The Model and GPU section: a benchmark model, its precision (`choices`:
    _model_choices), and a GPU (those with figures first, with their number of counts)."""
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
    gpus, counts = _gpu_choices(data.results_dir(), model_name, precision)
    gpu = ps.selectbox(
        "GPU",
        gpus,
        name="gpu",
        default=DEFAULT_GPU,
        format_func=lambda g: f"{g} · {counts[g]} counts" if g in counts else f"{g} · estimated",
        help="GPUs with figures first; the others are estimated from their specs.",
    )
    return model_name, precision, gpu


def _interconnect(ps: PageState) -> CommModel:
    """The Interconnect section: GPUs per node, the network per node, and how much of the
    communication the compute hides."""
    st.header("Interconnect")
    per_node = number(ps, "gpus_per_node", INTERCONNECT_FIELDS["gpus_per_node"])
    network = number(ps, "network_gbps", INTERCONNECT_FIELDS["network_gbps"])
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
    return CommModel(network_gbps_per_node=network, gpus_per_node=int(per_node), overlap=overlap)


def _global_batch(ps: PageState, model_name: str) -> float | None:
    """The Batch section: the recipe's global batch for this model (None: no cap)."""
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
    return float(global_batch) if global_batch else None


def _step_figure(curve: pd.DataFrame, title: str) -> go.Figure:
    """Seconds per step at powers of two, stacked: compute, exposed communication, and the
    fixed per-step overhead; the per-GPU batch under each GPU count on the axis (text over
    the bars overprinted its neighbours)."""
    counts = curve["total_gpus"].to_numpy(float)
    rows = curve.loc[np.isclose(np.log2(counts) % 1, 0) & curve["compute_s"].notna()]
    fig = go.Figure()
    labels = [f"{n:,.0f}" for n in rows["total_gpus"]]
    batches = [f"b={count_text(b, short=True)}" for b in rows["per_gpu_batch"]]
    for column, name in (
        ("compute_s", "compute"),
        ("comm_s", "communication (exposed)"),
        ("overhead_s", "fixed overhead"),
    ):
        fig.add_bar(
            x=labels,
            y=rows[column] * 1e3,
            name=name,
            customdata=batches,
            hovertemplate="%{x} GPUs, %{customdata}: %{y:.3g} ms<extra>" + name + "</extra>",
        )
    fig.update_layout(
        barmode="stack",
        title=title,
        xaxis={
            "title": "GPUs (b: per-GPU batch)",
            # one evenly spaced bar per count: read as numbers, "1" to "512" sat on a
            # linear axis (the small counts overprinted) and "1,024" fell off its end
            "type": "category",
            "tickmode": "array",
            "tickvals": labels,
            "ticktext": [f"{n}<br>{b}" for n, b in zip(labels, batches, strict=True)],
        },
        yaxis_title="ms per step",
        legend={"orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 0},
        margin={"t": 90},
    )
    return fig


def _band_and_laws(
    fig: go.Figure, laws: pd.DataFrame, curve: pd.DataFrame, metric: str, label: str, unit: str
) -> None:
    """The planner's 80% band and line for `metric`, then each fitted law (chosen bold)."""
    fig.add_trace(
        go.Scatter(
            x=curve["total_gpus"],
            y=curve[f"{metric}_high"],
            line={"width": 0},
            showlegend=False,
            hoverinfo="skip",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=curve["total_gpus"],
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
                x=rows["total_gpus"],
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
                x=rows["total_gpus"],
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
                x=rows["total_gpus"],
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
    "total_gpus": _col.NumberColumn("GPUs", format="localized"),
    **banded("throughput", "localized", "throughput", "throughput_low", "throughput_high"),
    **banded("efficiency", "percent", "efficiency", "efficiency_low", "efficiency_high"),
    "per_gpu_batch": _col.NumberColumn(
        "batch per GPU", format="%.3g", help="global batch / GPUs, at most the recipe's own"
    ),
    "throughput_source": _col.TextColumn("source"),
    "beyond_node": _col.CheckboxColumn("beyond one node"),
    "compute_s": _col.NumberColumn("compute s/step", format="%.3g"),
    "comm_s": _col.NumberColumn("exposed comm s/step", format="%.3g"),
    "overhead_s": _col.NumberColumn("fixed overhead s/step", format="%.3g"),
    "limit_code": _col.TextColumn("limit"),
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
LLM_CONFIG = {
    "total_gpus": _col.NumberColumn("GPUs", format="localized"),
    "layout": _col.TextColumn("layout"),
    **banded("tokens/s", "localized", "tokens_per_s", "tokens_per_s_low", "tokens_per_s_high"),
    "tokens_per_s_per_gpu": _col.NumberColumn("tokens/s per GPU", format="localized"),
    "efficiency": _col.NumberColumn("efficiency", format="percent"),
    "mfu": _col.NumberColumn("MFU", format="percent"),
    "step_s": _col.NumberColumn("step s", format="%.3g"),
    "memory_per_gpu_gb": _col.NumberColumn("GB per GPU", format="%.0f"),
    "reason": _col.TextColumn("fits?"),
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
    by_count = curve.set_index("total_gpus")
    counts = [float(gpus_per_node * n) for n in WORDED_NODES]
    counts.append(float(curve["total_gpus"].max()))
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
            f"({row['efficiency'] * count:,.1f} x one GPU{_batch_text(row)}; 80% band "
            f"{row['efficiency_low']:.0%}–{row['efficiency_high']:.0%})"
        )
    if not parts:
        return f"No efficiency to state for {md_text(gpu)} beyond one GPU."
    return f"{md_text(gpu)} keeps " + "; ".join(parts) + "."


def curve_table(curve: pd.DataFrame) -> pd.DataFrame:
    """The extrapolation as the page's table shows it: CURVE_CONFIG's order, so each
    count's per-GPU batch sits beside its efficiency (columns it does not name after)."""
    first = [c for c in CURVE_CONFIG if c in curve.columns]
    return curve.loc[:, first + [c for c in curve.columns if c not in first]]


def _laws_table(laws: pd.DataFrame) -> pd.DataFrame:
    if laws.empty:
        return laws
    table = laws.drop_duplicates("law").loc[
        :, ["law", "a", "b", "fit_mape", "heldout_mape", "chosen", "generation"]
    ]
    return table.rename(columns={"generation": "level fitted to generation"})


@dataclass(frozen=True)
class View:
    """What the page shows of one GPU, model and precision (planner.throughput.scaling_report):
    the figures, the laws fitted to them, the planner's extrapolation and the links assumed."""

    gpu: str
    model_name: str
    precision: str
    comm: CommModel
    unit: str
    points: pd.DataFrame
    laws: pd.DataFrame
    curve: pd.DataFrame
    links: pd.DataFrame

    @property
    def title(self) -> str:
        """'H100-SXM, resnet50 fp16'."""
        return f"{self.gpu}, {self.model_name} {self.precision}"

    @property
    def one(self) -> pd.Series:
        """The extrapolation at one GPU."""
        return self.curve.loc[self.curve["total_gpus"] == 1].iloc[0]

    @property
    def node(self) -> pd.Series:
        """The extrapolation at one full node."""
        return self.curve.loc[self.curve["total_gpus"] == self.comm.gpus_per_node].iloc[0]

    @property
    def top(self) -> pd.Series:
        """The extrapolation at the most GPUs."""
        return self.curve.iloc[-1]


def _view(
    directory: str,
    model_name: str,
    precision: str,
    gpu: str,
    comm: CommModel,
    global_batch: float | None,
) -> View:
    """The figures, laws, extrapolation and links of the inputs (a warning names result
    files that were skipped)."""
    _, skipped = data.results(directory)
    data.warn_skipped(skipped)
    return view_of(directory, model_name, precision, gpu, comm, global_batch)


@data.from_results
@st.cache_data(show_spinner=False, max_entries=MAX_ENTRIES, ttl=TTL_S)
def view_of(
    directory: str,
    model_name: str,
    precision: str,
    gpu: str,
    comm: CommModel,
    global_batch: float | None,
) -> View:
    """The View of the inputs on the results of `directory`, computed once for every session
    that asks the same thing."""
    model = data.throughput_model(directory, model_name)
    results_table, _ = data.results(directory)
    counts = scaling_report.extrapolation_counts(
        scaling_report.EXTRAPOLATION_MAX_GPUS, comm.gpus_per_node
    )
    return View(
        gpu=gpu,
        model_name=model_name,
        precision=precision,
        comm=comm,
        unit=scaling_report.throughput_unit(results_table, model_name),
        points=scaling_report.scaling_points(model, gpu, model_name, precision),
        laws=scaling_report.law_curves(model, gpu, model_name, precision, counts),
        curve=scaling_report.extrapolation(
            model, gpu, model_name, precision, counts, comm, global_batch
        ),
        links=scaling_report.interconnect_assumed(gpu, comm),
    )


def _batch_text(row: pd.Series) -> str:
    """', batch 8/GPU': a curve row's per-GPU batch ('' where the model has none)."""
    batch = row.get("per_gpu_batch")
    return "" if batch is None or pd.isna(batch) else f", batch {count_text(batch, short=True)}/GPU"


def _efficiency_text(row: pd.Series) -> str:
    """'94%': a curve row's efficiency."""
    return f"{row['efficiency']:.0%}"


def _headline(view: View) -> None:
    """What is assumed, the 1-GPU throughput, the efficiency at one node and at the most
    GPUs, the law used, and the efficiency in words."""
    one, node, comm = view.one, view.node, view.comm
    kind = view.links["link"].iloc[0] if len(view.links) > 1 else view.links["link"].iloc[-1]
    st.caption(
        md_text(
            f"{view.gpu} · {view.model_name} · {view.precision} · within a node: {kind}; across "
            f"nodes: {comm.network_gbps_per_node:g} Gb/s per node, overlap {comm.overlap:.0%}"
        )
    )
    cols = st.columns(4)
    cols[0].metric(
        md_text(f"1 GPU ({view.unit})"),  # the unit up here: a quarter of 1280 px is narrow
        f"{one['throughput']:,.0f}",
        md_text(one["throughput_source"]),
        delta_color="off",
        help=md_text(one["throughput_detail"]),
    )
    for col, row in zip(cols[1:3], (node, view.top), strict=True):
        col.metric(
            f"Efficiency at {row['total_gpus']:,.0f} GPUs",
            _efficiency_text(row),
            f"{row['efficiency_low']:.0%}-{row['efficiency_high']:.0%} (80% band)",
            delta_color="off",
            help=md_text(row["throughput_detail"]),
        )
    chosen = view.laws.loc[view.laws["chosen"], "law"]
    cols[3].metric(
        "Law used",
        chosen.iloc[0] if len(chosen) else "pooled / estimated",
        f"{len(view.points)} figures",
        delta_color="off",
        help=md_text(node["throughput_detail"]),
    )
    st.markdown(efficiency_words(view.curve, view.gpu, comm.gpus_per_node))
    if view.laws.empty:
        st.info(
            md_text(
                f"{view.gpu} has figures at fewer than two GPU counts for {view.model_name} "
                f"{view.precision}, so no law was fitted to it; the planner uses: "
                f"{node['throughput_detail']}"
            )
        )


@dataclass(frozen=True)
class Figures:
    """The page's charts of one View (built once, shared read-only): throughput and
    efficiency against GPUs, and the step time's parts (None where the step model does
    not apply)."""

    throughput: go.Figure
    efficiency: go.Figure
    step: go.Figure | None


@data.from_results
@st.cache_resource(show_spinner=False, max_entries=MAX_FIGURES, ttl=TTL_S)
def figures_of(
    directory: str,
    model_name: str,
    precision: str,
    gpu: str,
    comm: CommModel,
    global_batch: float | None,
) -> Figures:
    """The charts of view_of(the same inputs), built once for every session that asks."""
    view = view_of(directory, model_name, precision, gpu, comm, global_batch)
    per_node = view.comm.gpus_per_node
    title = f"Throughput vs GPUs: {view.title}"
    has_step = bool(view.curve["compute_s"].notna().any())
    return Figures(
        throughput=_throughput_figure(
            view.points, view.laws, view.curve, per_node, view.unit, title
        ),
        efficiency=_efficiency_figure(
            view.points, view.laws, view.curve, per_node, f"Scaling efficiency: {view.title}"
        ),
        step=_step_figure(view.curve, f"Step time vs GPUs: {view.title}") if has_step else None,
    )


def _charts(view: View, figures: Figures) -> tuple[go.Figure, go.Figure]:
    """Throughput and efficiency against GPUs, side by side (returned for the report)."""
    throughput_fig, efficiency_fig = figures.throughput, figures.efficiency
    left, right = st.columns(2)
    with left:
        st.plotly_chart(throughput_fig, key=f"{PAGE}.throughput_chart")
    with right:
        st.plotly_chart(efficiency_fig, key=f"{PAGE}.efficiency_chart")
    return throughput_fig, efficiency_fig


def _step_section(view: View, figures: Figures) -> None:
    """Where each step's time goes (compute, exposed communication, fixed overhead), where
    the model's parameter count is known."""
    st.subheader("Where each step's time goes")
    if figures.step is None:
        st.caption(
            md_text(f"No parameter count for {view.model_name}: the step model does not apply.")
        )
        return
    st.caption(
        "Per step: compute at the per-GPU batch b (which shrinks once the global batch "
        "is split over more GPUs), the all-reduce time not hidden behind the backward "
        "pass, and a fixed floor (kernel launches and the optimizer's pass over the "
        "weights) that does not shrink with b (planner.throughput.step_model)."
    )
    st.plotly_chart(figures.step, key=f"{PAGE}.step_chart")


def _tables(view: View) -> None:
    """The interconnect assumed and the laws fitted."""
    links = view.links
    st.subheader("Interconnect assumed")
    show_table(links, {c: _col.TextColumn(c.replace("_", " ")) for c in links.columns},
               key=f"{PAGE}.links")  # fmt: skip
    st.subheader("Laws fitted to this GPU")
    if view.laws.empty:
        st.caption("None: figures at one GPU count only.")
    else:
        show_table(_laws_table(view.laws), LAW_CONFIG, key=f"{PAGE}.laws")
        st.caption(
            "a, b: law parameters (amdahl a = 1 - p; usl a = σ, b = κ; ring a = θ). fit_mape: "
            "in-sample error on this GPU; heldout_mape: error predicting each GPU's largest "
            "count from its smaller ones, over all GPUs of this model and precision."
        )


def _extrapolation(asked: Hashable, directory: str, inputs: Inputs) -> None:
    """The extrapolation's table (powers of two, or every count computed) and figures, and
    its CSV (written on click)."""
    with st.expander("Extrapolation table and figures"):
        every = st.toggle(
            "Every count computed", value=False, key=f"{PAGE}.every_count",
            help="Off: powers of two only.",
        )  # fmt: skip
        drawn(f"{PAGE}.extrapolation", (asked, every),
              lambda: _extrapolation_tables(view_of(directory, *inputs), every))  # fmt: skip
        download_csv(
            lambda: view_of(directory, *inputs).curve.round(4),
            f"{_file_stem(inputs)}.csv",
            key=f"{PAGE}.csv",
        )


def _extrapolation_tables(view: View, every: bool) -> None:
    shown = view.curve.round(4)
    counts_shown = shown if every else shown.loc[_power_of_two(shown["total_gpus"])]
    show_table(curve_table(counts_shown), CURVE_CONFIG, key=f"{PAGE}.curve")
    show_table(view.points, {}, key=f"{PAGE}.points")


def _file_stem(inputs: Inputs) -> str:
    """'scaling-H100-SXM-resnet50-fp16': the downloads' file name."""
    model_name, precision, gpu, _, _ = inputs
    return f"scaling-{gpu}-{model_name}-{precision}"


def scaling_report_of(view: View, figures: tuple[go.Figure, go.Figure], link: str = "") -> Report:
    """The page's HTML report: the 1-GPU figure and efficiencies, both charts, the links,
    laws and extrapolation, the assumptions and every figure's source."""
    one, node, top, comm = view.one, view.node, view.top, view.comm
    assumptions = [
        f"Within the node ({comm.gpus_per_node} GPUs) and the data: the law chosen by held-out "
        "error (planner.throughput.scaling), anchored at the nearest figure.",
        f"Across nodes: ring all-reduce of fp32 gradients over {comm.network_gbps_per_node:g} "
        f"Gb/s per node at {comm.achievable_fraction:.0%} of peak, overlap {comm.overlap:.0%} "
        "(Thakur et al. 2005; Patarasuk & Yuan 2009).",
        "Band: the method's 80% band (held-out error per doubling of the GPU count; spec "
        "regression error for estimated GPUs).",
    ]
    sources = sorted({f"{r.source} ({r.generation}): {r.detail}" for r in view.points.itertuples()})
    return Report(
        title=f"Scaling: {view.title}",
        summary=[
            f"1 GPU: {one['throughput']:,.0f} {view.unit} ({one['throughput_source']}: "
            f"{one['throughput_detail']})",
            f"Efficiency at {comm.gpus_per_node} GPUs: {_efficiency_text(node)}; at "
            f"{top['total_gpus']:,.0f} GPUs: {_efficiency_text(top)}",
        ],
        figures=[("Throughput", figures[0]), ("Efficiency", figures[1])],
        tables=[
            ("Interconnect assumed", view.links),
            ("Laws", _laws_table(view.laws)),
            ("Extrapolation", view.curve.round(4)),
        ],
        assumptions=assumptions,
        sources=sources or ["no figure: estimated from specs"],
        link=link,
    )


LLM_COUNTS = (8, 16, 32, 64, 128, 256, 512, 1024)
DEFAULT_LLM = "6.7b"


def llm_table(table: pd.DataFrame) -> pd.DataFrame:
    """planner.llm.scaling's rows as the page shows them (LLM_CONFIG): the step's parts
    left to the chart, token rates to whole tokens (one format: 114,903), fit in words."""
    from planner.llm.scaling import PART_COLUMNS
    from planner.render.llm import FIT_WORDS

    shown = table.drop(columns=list(PART_COLUMNS)).assign(reason=table["reason"].map(FIT_WORDS))
    rates = [c for c in shown.columns if c.startswith("tokens_per_s")]
    shown[rates] = shown[rates].round(0)
    return shown


def _llm_section(ps: PageState, gpu: str, comm: CommModel) -> None:
    """An LLM on this GPU from one node to 1,024 GPUs: the layout, tokens/s per GPU and
    per-GPU efficiency the operator model predicts at each count, and the step's parts."""
    from planner.llm.throughput import peak_flops
    from planner.render.llm import FRAMEWORK_WORDS
    from planner.workloads.llm_presets import LLM_PRESETS
    from planner.workloads.moe_presets import MOE_PRESETS

    st.subheader("An LLM on this GPU (operator model)")
    if not math.isfinite(peak_flops(gpu, "bf16")):
        st.caption(md_text(f"{gpu} has no bf16 peak in the spec table: no LLM estimate."))
        return
    left, right = st.columns(2)
    with left:
        names = {k: f"{k} ({p.reference.split(' (')[0]})" for k, p in LLM_PRESETS.items()}
        names |= {k: f"{p.title} (mixture of experts)" for k, p in MOE_PRESETS.items()}
        label = ps.selectbox(
            "LLM", list(names), name="llm", default=DEFAULT_LLM, format_func=names.get,
            help="Dense presets by their parameter count, and mixture-of-experts models from "
            "their model cards (FLOPs and MFU on their active parameters).",
        )  # fmt: skip
    with right:
        frame = ps.radio(
            "Framework", list(FRAMEWORK_WORDS), name="llm_framework", default="megatron",
            format_func=FRAMEWORK_WORDS.get, horizontal=True,
        )  # fmt: skip
    st.caption(
        "bf16 pre-training, 4M tokens per step, on the interconnect set in the sidebar. "
        "Efficiency: tokens/s per GPU over that of the fewest GPUs that hold the model; above "
        "100% where those few GPUs must recompute activations or pipeline deeper to fit "
        "(planner.llm.ops, planner.llm.layout)."
    )
    asked = (str(label), gpu, comm, str(frame))
    drawn(f"{PAGE}.llm", asked, lambda: _llm_drawn(*asked))


def _llm_drawn(label: str, gpu: str, comm: CommModel, framework: str) -> None:
    """The LLM's step parts chart and its table at each count."""
    st.plotly_chart(_llm_figure(label, gpu, comm, framework), key=f"{PAGE}.llm_chart")
    show_table(
        llm_table(_llm_rows(label, gpu, comm, framework)), LLM_CONFIG, key=f"{PAGE}.llm_table"
    )


@st.cache_data(show_spinner=False, max_entries=MAX_ENTRIES)
def _llm_rows(label: str, gpu: str, comm: CommModel, framework: str) -> pd.DataFrame:
    """planner.llm.scaling.llm_scaling of the LLM preset `label` on `gpu` at LLM_COUNTS,
    once for every session that asks the same thing (no results folder involved)."""
    from planner.llm.scaling import llm_scaling
    from planner.settings import LLMSettings
    from planner.workloads.catalog import llm_workload, moe_workload
    from planner.workloads.llm_presets import LLM_PRESETS
    from planner.workloads.moe_presets import MOE_PRESETS

    moe = MOE_PRESETS.get(label)
    workload = (
        moe_workload(moe.params, moe.active_params, 1e9)
        if moe
        else llm_workload(LLM_PRESETS[label].params, 1e9)
    )
    return llm_scaling(
        workload, "bf16", gpu, LLM_COUNTS, comm.gpus_per_node,
        comm.network_gbps_per_node, LLMSettings(framework=framework),
    )  # fmt: skip


@st.cache_resource(show_spinner=False, max_entries=MAX_FIGURES)
def _llm_figure(label: str, gpu: str, comm: CommModel, framework: str) -> go.Figure:
    """The step's parts at each GPU count that fits (_llm_rows), built once, shared
    read-only."""
    from planner.llm.scaling import PART_COLUMNS
    from planner.render.llm import PART_LABELS

    table = _llm_rows(label, gpu, comm, framework)
    fits = table.loc[table["reason"] == "fits"]
    fig = go.Figure()
    for column in PART_COLUMNS:
        fig.add_bar(x=[f"{n:,.0f}" for n in fits["total_gpus"]], y=fits[column],
                    name=PART_LABELS[column])  # fmt: skip
    fig.update_layout(barmode="stack", yaxis={"tickformat": ".0%", "title": "share of a step"},
                      xaxis={"title": "GPUs", "type": "category"}, height=360,
                      margin={"t": 30})  # fmt: skip
    return fig


def render() -> None:
    """Draw the Scaling page: inputs, the headline figures, charts, tables and downloads."""
    ps = PageState(PAGE)
    st.title("Scaling: throughput from 1 to 1,024 GPUs")
    directory = data.results_dir()
    choices = _model_choices(directory)
    if choices.empty:
        st.warning("No throughput figures to show: the results and published tables are empty.")
        ps.sync()
        return
    inputs = _inputs(ps, choices)
    # Every session asking the same is shown the same outputs: drawn once, replayed.
    asked = (directory, *inputs)
    if not drawn(f"{PAGE}.view", asked, lambda: _view_drawn(directory, inputs)):
        ps.sync()
        return
    _extrapolation(asked, directory, inputs)
    _, _, gpu, comm, _ = inputs
    _llm_section(ps, gpu, comm)
    link = ps.link()  # read now: the report is built on click, outside the script run
    download_report(
        lambda: _report(directory, inputs, link),
        f"{_file_stem(inputs)}.html",
        key=f"{PAGE}.report",
    )
    ps.sync()
    ps.share_box()


def _view_drawn(directory: str, inputs: Inputs) -> bool:
    """The headline figures, the charts, the step's parts, the links and laws; False (and a
    warning) where the GPU has neither a figure nor an estimate."""
    view = _view(directory, *inputs)
    one = view.one
    if pd.isna(one["throughput"]):
        st.warning(
            md_text(
                f"No figure and no estimate for {view.gpu} on {view.model_name} "
                f"{view.precision}: {one['throughput_detail']}"
            )
        )
        return False
    _headline(view)
    figures = figures_of(directory, *inputs)
    _charts(view, figures)
    _step_section(view, figures)
    _tables(view)
    return True


def _report(directory: str, inputs: Inputs, link: str) -> Report:
    """The page's HTML report of these inputs (built on click)."""
    figures = figures_of(directory, *inputs)
    view = view_of(directory, *inputs)
    return scaling_report_of(view, (figures.throughput, figures.efficiency), link)
