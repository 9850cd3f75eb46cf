"""The Benchmarks page: own and published results side by side, uploads, a quick run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from planner.throughput import SAMPLE_COLUMN
from planner.throughput.benchmark_compare import (
    is_published,
    measured_vs_published,
    model_label,
    throughput_by_gpu,
)
from planner.ui import bench_run, data, uploads
from planner.ui.cache import MAX_ENTRIES, MAX_FIGURES, TTL_S, drawn
from planner.ui.export import download_csv
from planner.ui.state import PageState
from planner.ui.tables import show_table
from planner.ui.text import md_text

PAGE = "benchmarks"
DEFAULT_MODEL = "resnet50 full"
BROWSE_COLUMNS: tuple[str, ...] = (
    "id", "source", "gpu_name", "device_name", "world_size", "precision",
    "batch_size_per_device", "throughput", "throughput_unit", "throughput_p10",
    "throughput_p90", "mfu", "peak_memory_gib", "mean_power_w", "started_at", "detail",
)  # fmt: skip
SHOW = ("all", "own", "published")
# Session keys: what the last save / quick run wrote (shown after the page reruns).
SAVED = f"_{PAGE}.saved"
QUICK = f"_{PAGE}.quick"


Chosen = tuple[str, str, tuple[str, ...], str, bool]  # model, precision, GPUs, show, samples


@data.from_results
@st.cache_data(show_spinner=False, max_entries=MAX_ENTRIES, ttl=TTL_S)
def _choices(directory: str) -> dict[str, dict[str, list[str]]]:
    """The models with a precision in the results of `directory` (and published), each
    one's precisions and each precision's GPUs (else device names), sorted; once per folder."""
    table, _ = data.results(directory)
    trained = table.loc[table["precision"].notna()]
    labels = model_label(trained["workload"], trained["model_size"])
    choices: dict[str, dict[str, list[str]]] = {}
    for model in sorted(labels.unique()):
        precisions = sorted(trained.loc[labels == model, "precision"].astype(str).unique())
        choices[model] = {}
        for precision in precisions:
            here = trained.loc[(labels == model) & (trained["precision"] == precision)]
            gpus = here["gpu_name"].fillna(here["device_name"]).astype(str).unique()
            choices[model][precision] = sorted(gpus)
    return choices


def _inputs(ps: PageState, choices: dict[str, dict[str, list[str]]]) -> Chosen:
    """The sidebar (`choices`: _choices): model, precision, GPUs, origin, samples shown."""
    with st.sidebar:
        st.header("Results")
        model = ps.selectbox("Model", list(choices), name="model", default=DEFAULT_MODEL)
        precisions = list(choices.get(str(model), {}))
        precision = ps.radio(
            "Precision",
            precisions,
            name="precision",
            default="fp16" if "fp16" in precisions else None,
            horizontal=True,
            help="fp16 is mixed precision (AMP) in published figures.",
        )
        gpus = ps.multiselect(
            "GPUs (none = all)",
            choices.get(str(model), {}).get(str(precision), []),
            name="gpus",
            default=[],
        )
        show = ps.radio("Show", list(SHOW), name="show", default="all", horizontal=True)
        samples = ps.toggle(
            "Show bundled samples",
            name="samples",
            default=True,
            help="Tiny CPU runs shipped in benchmarks/results/ to show what a result looks "
            "like. They are marked as samples and never counted as your own results.",
        )
    return model, precision, tuple(gpus), show, bool(samples)


def folder_text(directory: str, own: int, samples: int, shown: bool) -> str:
    """Which folder the page reads own results from (absolute), what it holds, and the
    bundled samples apart from them."""
    folder = Path(directory).expanduser().resolve()
    held = (
        f"{own:,} own result(s)"
        if folder.is_dir()
        else "it does not exist yet (`gpuplan bench run` and the uploads below create it)"
    )
    return (
        f"Own results are read from {folder} (GPUPLAN_RESULTS_DIR, else ./results): {held}. "
        f"The {samples} bundled sample(s) from benchmarks/results/ are "
        + ("shown as samples, never counted as yours." if shown else "hidden.")
    )


def _by_gpu(table: pd.DataFrame, model: str, precision: str) -> pd.DataFrame:
    """throughput_by_gpu with the bundled samples apart: their own origin, "sample"."""
    sample = table[SAMPLE_COLUMN].astype(bool)
    mine = throughput_by_gpu(table.loc[~sample], model, precision)
    if not sample.any():
        return mine
    samples = throughput_by_gpu(table.loc[sample], model, precision)
    samples = samples.loc[samples["origin"] == "own"].assign(origin="sample")
    return pd.concat([mine, samples], ignore_index=True)


def _chart(by_gpu: pd.DataFrame, title: str) -> go.Figure:
    order = (
        by_gpu.groupby("gpu_name")["throughput"].max().sort_values(ascending=True).index.tolist()
    )
    shown = by_gpu.assign(gpus=by_gpu["world_size"].astype(str) + " GPU(s)")
    fig = px.scatter(
        shown,
        x="throughput",
        y="gpu_name",
        color="gpus",
        symbol="origin",
        symbol_map={"published": "circle", "own": "star", "sample": "diamond-open"},
        error_x=shown["throughput_high"] - shown["throughput"],
        error_x_minus=shown["throughput"] - shown["throughput_low"],
        hover_data=["runs", "detail"],
        category_orders={"gpu_name": order[::-1]},
        log_x=True,
        title=title,
        labels={"throughput": f"throughput ({by_gpu['throughput_unit'].iloc[0]})", "gpu_name": ""},
    )
    fig.update_traces(marker={"size": 11})
    fig.update_layout(height=max(360, 24 * len(order) + 140), margin={"t": 60, "b": 10})
    return fig


@data.from_results
@st.cache_data(show_spinner=False, max_entries=MAX_ENTRIES, ttl=TTL_S)
def _by_gpu_shown(
    directory: str,
    model: str,
    precision: str,
    gpus: tuple[str, ...],
    show: str,
    show_samples: bool,
) -> pd.DataFrame:
    """_by_gpu of the results of `directory` (without the bundled samples unless
    `show_samples`), on `gpus` (none: all) and of origin `show` ("all": every origin), once
    for every session that asks the same thing."""
    table, _ = data.results(directory)
    if not show_samples:
        table = table.loc[~table[SAMPLE_COLUMN].astype(bool)]
    by_gpu = _by_gpu(table, model, precision)
    if gpus:
        by_gpu = by_gpu.loc[by_gpu["gpu_name"].isin(gpus)]
    if show != "all":
        by_gpu = by_gpu.loc[by_gpu["origin"] == show]
    return by_gpu


@data.from_results
@st.cache_resource(show_spinner=False, max_entries=MAX_FIGURES, ttl=TTL_S)
def _chart_shown(directory: str, chosen: Chosen) -> go.Figure:
    """The chart of _by_gpu_shown(directory, *chosen), built once, shared read-only."""
    model, precision = chosen[0], chosen[1]
    by_gpu = _by_gpu_shown(directory, *chosen)
    return _chart(by_gpu, f"{model} {precision}: throughput by GPU (median, min-max of runs)")


def _upload_section(directory: str) -> None:
    st.subheader("Add result files")
    st.caption(
        "Result JSON files from `gpuplan bench run` on other machines (or `gpuplan bench "
        f"add`) go into the results folder ({md_text(directory)}; set GPUPLAN_RESULTS_DIR to "
        f"change it). Each file is checked first (at most {uploads.limit_text()}, a valid "
        "result whose id is 1-128 letters, digits, '.', '_' or '-'); a bad file is named "
        "with its field and nothing is saved."
    )
    files = st.file_uploader(
        "Result files (.json)",
        type=["json"],
        accept_multiple_files=True,
        max_upload_size=uploads.MAX_UPLOAD_MB,
        key=f"{PAGE}.upload",
    )
    if not files:
        return
    checked = [uploads.check_upload(f.name, f.getvalue()) for f in files]
    errors = [c.error for c in checked if c.error]
    for message in errors:
        st.error(md_text(message, 1000), icon=":material/error:")
    if errors:
        st.error("Nothing was saved: fix or leave out the file(s) above.", icon=":material/error:")
        return
    taken = uploads.conflicts(checked, directory)
    for message in taken:
        st.error(md_text(message, 1000), icon=":material/error:")
    if taken:
        return
    saved = st.session_state.pop(SAVED, None)
    if saved:
        st.success(f"Saved {len(saved)} file(s):", icon=":material/check_circle:")
        st.code("\n".join(saved), language=None)
    new = [c for c in checked if not uploads.already_saved(c, directory)]
    if not new:
        st.info(f"The {len(checked)} file(s) are in the results folder.")
        return
    valid = pd.DataFrame(
        [
            {
                "file": c.name,
                "id": c.result.id,
                "workload": c.result.workload,
                "precision": c.result.precision,
                "device": c.result.device_name or c.result.device,
                "world_size": c.result.world_size,
                "throughput": c.result.throughput,
                "unit": c.result.throughput_unit,
            }
            for c in new
            if c.result is not None
        ]
    )
    show_table(valid, {}, key=f"{PAGE}.upload_preview")
    if st.button(md_text(f"Save {len(valid)} file(s) to {directory}"), key=f"{PAGE}.save"):
        paths = uploads.save_all(new, directory)
        data.clear_results()
        st.session_state[SAVED] = [str(p) for p in paths]
        st.rerun()


def _quick_bench_section(directory: str) -> None:
    st.subheader("Quick benchmark on this machine")
    st.caption(
        "Runs `gpuplan bench run` on this machine's CPU with a tiny model (a few seconds to a "
        "minute) and saves the result into the results folder."
    )
    left, right = st.columns(2)
    workload = left.selectbox("Workload", bench_run.QUICK_WORKLOADS, key=f"{PAGE}.quick_workload")
    steps = right.number_input(
        "Timed steps", min_value=2, max_value=200, value=10, step=1, key=f"{PAGE}.quick_steps"
    )
    if not st.button("Run the benchmark", key=f"{PAGE}.quick_run"):
        _quick_results(directory)
        return
    st.session_state.pop(QUICK, None)
    warmup = 2
    argv = bench_run.command(workload, int(steps), warmup, directory)
    st.code(" ".join(argv[2:]), language="bash")
    bar = st.progress(0.0, text="starting ...")

    def show(progress: tuple[str, int, int] | None) -> None:
        fraction = bench_run.overall_fraction(progress, warmup, int(steps))
        text = "starting ..." if progress is None else f"{progress[0]} {progress[1]}/{progress[2]}"
        bar.progress(fraction, text=text)

    outcome = bench_run.run(argv, show)
    if outcome.returncode != 0 or not outcome.results:
        why = "timed out" if outcome.timed_out else f"exit code {outcome.returncode}"
        st.error(f"The benchmark failed ({why}); its last output:", icon=":material/error:")
        st.code(outcome.error_text() or "(none)", language=None)
        return
    data.clear_results()
    st.session_state[QUICK] = outcome.results
    st.rerun()


def _quick_results(directory: str) -> None:
    for result in st.session_state.get(QUICK, []):
        path = Path(directory) / f"{result['id']}.json"
        st.success(
            md_text(
                f"{result['workload']} {result.get('model_size', '')}: "
                f"{result['throughput']:,.1f} {result['throughput_unit']} on "
                f"{result.get('device_name') or result.get('device')}, saved to {path}"
            ),
            icon=":material/check_circle:",
        )
        with st.expander(md_text(f"Result file {path.name}")):
            st.json(path.read_text() if path.exists() else result)


def _sweeps_section(directory: str) -> None:
    """Sweeps (`gpuplan sweep run`) and their results beside the published figures."""
    st.subheader("Sweeps: results per instance type, beside published figures")
    sweeps = _sweeps(directory)
    if sweeps.empty:
        st.info(
            "No sweep results in the results folder: `gpuplan sweep run SPEC` measures "
            "on-prem servers and cloud instance types and puts them here."
        )
        return
    sweeps = sweeps.assign(measured_over_published=sweeps["measured_over_published"].round(3))
    st.caption(f"{sweeps['sweep_id'].nunique()} sweep(s), {int(sweeps['runs'].sum())} result(s)")
    show_table(sweeps, {}, key=f"{PAGE}.sweeps")


def _without_samples(directory: str) -> pd.DataFrame:
    """The results of `directory` and the published ones, without the bundled samples."""
    table, _ = data.results(directory)
    return table.loc[~table[SAMPLE_COLUMN].astype(bool)]


@data.from_results
@st.cache_data(show_spinner="Predicting each own result without it ...", max_entries=4)
def _calibration(directory: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """calibrate() and error_summary() of the results of `directory` (without the bundled
    samples), reason codes in words; keyed by the folder (hashing the whole results table
    on every render cost more than reading the answer)."""
    from planner.render.calibration import worded_calibration
    from planner.throughput.calibration import calibrate, error_summary

    rows = calibrate(_without_samples(directory))
    return worded_calibration(rows), error_summary(rows)


@data.from_results
@st.cache_data(show_spinner=False, max_entries=4)
def _sweeps(directory: str) -> pd.DataFrame:
    """planner.throughput.sweep_results.sweep_table of the results of `directory` (no samples)."""
    from planner.throughput.sweep_results import sweep_table

    return sweep_table(_without_samples(directory))


@data.from_results
@st.cache_data(show_spinner=False, max_entries=4)
def _measured(directory: str) -> pd.DataFrame:
    """measured_vs_published of the results of `directory` (no samples)."""
    return measured_vs_published(_without_samples(directory))


def _calibration_section(directory: str) -> None:
    """Predicted (without each own result) vs measured, and the error by GPU and method."""
    from planner.render.calibration import TITLE

    st.subheader("Predicted vs measured, for every own result")
    st.caption(
        md_text(f"{TITLE}. Each prediction is what a plan would use with that result left out.")
        + " `gpuplan bench calibrate` prints the same tables."
    )
    rows, summary = _calibration(directory)
    if rows.empty:
        st.info("No own results yet: nothing to compare.")
        return
    show_table(rows, {}, key=f"{PAGE}.calibration")
    if summary.empty:
        st.info("No own GPU result could be compared (the reasons are in the table).")
    else:
        show_table(summary, {}, key=f"{PAGE}.calibration_summary")


def render() -> None:
    """Draw the Benchmarks page."""
    ps = PageState(PAGE)
    st.title("Benchmarks: own measurements and published figures")
    directory = data.results_dir()
    chosen = _inputs(ps, _choices(directory))
    # Every session asking the same is shown the same outputs: drawn once, replayed.
    drawn(f"{PAGE}.results", (directory, chosen), lambda: _results_drawn(directory, chosen))
    model, precision = chosen[0], chosen[1]
    download_csv(
        lambda: _browse(directory, chosen),
        f"results-{model.replace(' ', '-')}-{precision}.csv",
        key=f"{PAGE}.csv",
    )
    ps.sync()
    ps.share_box()
    st.divider()
    _upload_section(directory)
    if bench_run.available():
        st.divider()
        _quick_bench_section(directory)


def _shown_table(directory: str, show_samples: bool) -> pd.DataFrame:
    """The results of `directory` and the published ones, the bundled samples only if shown."""
    table, _ = data.results(directory)
    return table if show_samples else table.loc[~table[SAMPLE_COLUMN].astype(bool)]


def _browse(directory: str, chosen: Chosen) -> pd.DataFrame:
    """Every result of the chosen model and precision (on the GPUs chosen, of the origin
    shown), BROWSE_COLUMNS, by GPU, GPU count and source."""
    model, precision, gpus, show, show_samples = chosen
    table = _shown_table(directory, show_samples)
    labels = model_label(table["workload"], table["model_size"])
    rows = table.loc[(labels == model) & (table["precision"] == precision)]
    if gpus:
        rows = rows.loc[rows["gpu_name"].fillna(rows["device_name"]).isin(gpus)]
    if show != "all":
        origin = np.where(is_published(rows), "published", "own")
        rows = rows.loc[(origin == show) & ~rows[SAMPLE_COLUMN].astype(bool)]
    rows = rows.assign(
        source=rows["source"].where(~rows[SAMPLE_COLUMN].astype(bool), "bundled sample")
    )
    return rows.loc[:, list(BROWSE_COLUMNS)].sort_values(["gpu_name", "world_size", "source"])


def _results_drawn(directory: str, chosen: Chosen) -> None:
    """Skipped files, the folder, the counts, the chart, measured vs published, the
    calibration, the sweeps and every result of the model and precision chosen."""
    model, precision, _, show, show_samples = chosen
    table, problems = data.results(directory)
    data.warn_skipped(problems)
    sample = table[SAMPLE_COLUMN].astype(bool)
    own = ~is_published(table) & ~sample
    st.caption(md_text(folder_text(directory, int(own.sum()), int(sample.sum()), show_samples)))
    table = _shown_table(directory, show_samples)
    own = own.loc[table.index]
    cols = st.columns(3)
    cols[0].metric("Own results", f"{int(own.sum()):,}", "in the results folder", delta_color="off")
    published = is_published(table)
    cols[1].metric(
        "Published figures",
        f"{int(published.sum()):,}",
        md_text(", ".join(sorted(table.loc[published, "source"].unique()))),
        delta_color="off",
    )
    by_gpu = _by_gpu_shown(directory, *chosen)
    cols[2].metric(
        md_text(f"GPUs with {model} {precision} figures"),
        f"{by_gpu['gpu_name'].nunique()}",
        f"{int(by_gpu['runs'].sum()) if len(by_gpu) else 0} runs",
        delta_color="off",
    )
    if by_gpu.empty:
        st.info(md_text(f"No {show if show != 'all' else ''} result for {model} {precision} here."))
    else:
        st.plotly_chart(_chart_shown(directory, chosen), key=f"{PAGE}.chart")

    st.subheader("Measured vs published, same GPU, model, precision and GPU count")
    side = _measured(directory)
    if side.empty:
        st.info(
            "No own results yet: run `gpuplan bench run` on a machine and add its result "
            "files below (or put them in the results folder)."
        )
    else:
        side = side.assign(measured_over_published=side["measured_over_published"].round(3))
        show_table(side, {}, key=f"{PAGE}.side_by_side")

    _calibration_section(directory)
    _sweeps_section(directory)
    browse = _browse(directory, chosen)
    st.subheader(md_text(f"All {model} {precision} results ({len(browse):,})"))
    show_table(browse, {}, key=f"{PAGE}.browse")
