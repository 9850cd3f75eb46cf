"""Throughput for (GPU, workload, precision, GPU count), labelled with its source.

Sources, most trusted first:
  measured   - the user's own `gpuplan bench` results
  published  - published figures (Lambda's PyTorch benchmarks)
  scaled     - a measured or published figure at another GPU count, through the scaling
               law fitted to that GPU (planner.throughput.scaling; chosen by held-out error)
  estimated  - no figure for this GPU: the spec regression (planner.throughput.spec_model) times the
               pooled scaling law (LLMs: planner.llm.throughput, from measured or assumed MFU)

Every row says which figure or fit it came from (`throughput_detail`, with the fit's
error) and carries a low/high band (`throughput_low`, `throughput_high`): the spread of
runs for figures, the cross-validated error for fits (an 80% band).
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from benchmarks.batch_choice import without_slower_batches
from planner.codes import SOURCE_RANK, ThroughputSource, is_published
from planner.io.result_folders import folder_results
from planner.machines.specs import load_specs
from planner.throughput import bundled, disk_cache
from planner.throughput.disk_cache import frame_digest
from planner.throughput.estimate import (
    CURVE_KEY,
    PREDICTION_COLUMNS,
    STEP_COLUMNS,
    ThroughputCurves,
    ThroughputModel,
    aggregate_figures,
    evaluate_curves,
    fit_figures_estimator,
    fit_throughput_model,
    predict_throughput,
    prepare_queries,
    throughput_curves,
    throughput_details,
)
from planner.throughput.result_tables import (
    GENERATION_COLUMN,
    results_with_generation,
    sample_table,
)
from planner.throughput.siblings import compute_share, with_sibling_figures
from planner.throughput.spec_model import SpecEstimator
from planner.workloads.catalog import Workload


def throughput_table(results: pd.DataFrame, workload: Workload, precision: str) -> pd.DataFrame:
    """Known figures for a workload and precision: one row per (GPU, count), best source.

    `results` is a benchmarks.results.results_frame() table (own and published rows).
    The figures are aggregate_figures() of reference_from_results(results), the one
    aggregation `estimate`, the Scaling page and the fits use, in its columns (gpu_name,
    model, precision, generation, total_gpus, throughput, throughput_low, throughput_high,
    runs, source, detail, interconnect). Per (GPU, count) the newest generation's figure
    of the best source (measured before published) is kept, its generation blanked so
    that a plan anchors on the nearest count whatever the generation of each.
    For bf16 without a bf16 figure, an fp16-AMP figure stands in on GPUs with bf16
    tensor cores (same dense peak: gpu_specs bf16_tflops == fp16_tflops), and says so.
    """
    reference = reference_from_results(results)
    return best_figures(
        aggregate_figures(reference), model_key(workload), precision, _generation_order(reference)
    )


def best_figures(
    figures: pd.DataFrame, model_name: str, precision: str, generations: tuple[str, ...]
) -> pd.DataFrame:
    """throughput_table's selection from aggregate_figures() rows (`generations` oldest first)."""
    rows = figures.loc[(figures["model"] == model_name) & (figures["precision"] == precision)]
    if precision == "bf16":
        has_bf16 = load_specs()["bf16_tflops"].notna()
        proxy = figures.loc[
            (figures["model"] == model_name)
            & (figures["precision"] == "fp16")
            & (figures["source"] == "published")
            & figures["gpu_name"].map(has_bf16).fillna(False).astype(bool)
        ]
        proxy = proxy.assign(
            precision="bf16", detail="fp16 AMP figure as bf16 proxy: " + proxy["detail"]
        )
        rows = pd.concat([rows, proxy], ignore_index=True)
    rank = {g: i for i, g in enumerate(generations)}
    rows = rows.assign(
        _source=rows["source"].map(SOURCE_RANK).fillna(len(SOURCE_RANK)),
        _generation=rows["generation"].map(rank).fillna(-1),
    )
    rows = rows.sort_values(["gpu_name", "total_gpus", "_source", "_generation"], ascending=[
        True, True, True, False])  # fmt: skip
    best = rows.drop_duplicates(["gpu_name", "total_gpus"]).drop(columns=["_source", "_generation"])
    share = compute_share(figures, model_name, precision)
    return with_sibling_figures(best.assign(generation="").reset_index(drop=True), share)


def model_key(workload: Workload) -> str:
    """The benchmark model a workload is measured by, in Lambda's names (resnet50, ...)."""
    return workload.published_model or _result_model(workload.model, workload.model_size)


@lru_cache(maxsize=256)
def _result_model(workload: str, size: str) -> str:
    """The benchmark model name of a result's workload and size (a pure lookup, asked once
    per row of a results table: remembered)."""
    from benchmarks.published import MODEL_MAP

    inverse = {v: k for k, v in MODEL_MAP.items()}
    return inverse.get((workload, size), workload if size in ("", "full") else f"{workload}-{size}")


OWN_GENERATION = "own"
# True for a bundled sample result (benchmarks/results/), False for the user's and published.
SAMPLE_COLUMN = "sample"


def reference_from_results(results: pd.DataFrame) -> pd.DataFrame:
    """Every non-LLM result as planner.throughput.estimate reference rows.

    model: Lambda's model name; generation: the `generation` column of `results` for
    published rows (Lambda's benchmark version, set where the figures are loaded: see
    own_and_published_results; where it is blank, their date: the newest date's runs are
    the newest generation; "own" for measured ones); source: measured | published;
    detail: the figure's source for published rows, "own run <id>" for measured ones.
    Of a batch sweep's own runs only the fastest batch's count (benchmarks.batch_choice).
    """
    results = without_slower_batches(results)
    rows = results.loc[
        results["gpu_name"].notna()
        & (results["workload"] != "gpt")
        & (results["throughput"] > 0)
        & (results["world_size"] > 0)
    ]
    columns = ["gpu_name", "total_gpus", "model", "precision", "throughput", "generation"]
    if rows.empty:
        return pd.DataFrame(columns=[*columns, "source", "detail"])
    published = is_published(rows["source"])
    known = rows[GENERATION_COLUMN] if GENERATION_COLUMN in rows else pd.Series("", rows.index)
    generation = known.fillna("").astype(str).replace("", np.nan)
    dated = rows["started_at"].fillna("").astype(str).str[:10] if "started_at" in rows else ""
    generation = generation.fillna(pd.Series(dated, index=rows.index)).replace("", "published")
    models = [
        _result_model(w, s) for w, s in zip(rows["workload"], rows["model_size"], strict=True)
    ]
    return pd.DataFrame(
        {
            "gpu_name": rows["gpu_name"].astype(str),
            "total_gpus": rows["world_size"].astype(float),
            "model": models,
            "precision": rows["precision"].astype(str),
            "throughput": rows["throughput"].astype(float),
            "generation": np.where(published, generation, OWN_GENERATION),
            "source": np.where(
                published, ThroughputSource.PUBLISHED.value, ThroughputSource.MEASURED.value
            ),
            "detail": np.where(
                published,
                rows["detail"].fillna("").astype(str),
                "own run " + rows["id"].astype(str),
            ),
        }
    ).reset_index(drop=True)


@dataclass(frozen=True, eq=False)
class ByKey:
    """A cache key that carries its payload (a table, a model) but hashes and compares by
    `key` alone, so functools.lru_cache can remember results computed from unhashable
    tables."""

    key: tuple[Hashable, ...]
    payload: Any = None

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ByKey) and other.key == self.key


# One lock for the in-process caches below: concurrent app sessions asking for the same
# model wait for one fit rather than each fitting it.
_LOCK = threading.RLock()


def clear_caches() -> None:
    """Forget the in-process fitted models, inputs and curves (the disk cache stays)."""
    with _LOCK:
        _fitted_model.cache_clear()
        _fitted_estimator.cache_clear()
        _inputs.cache_clear()
        _curves.cache_clear()
        bundled.clear_caches()


def throughput_model_for_results(
    results: pd.DataFrame, workload: Workload, precision: str
) -> ThroughputModel:
    """The estimator and scaling fits for a workload, fitted on all results (cached).

    The spec regression learns from every model and precision; scaling laws are fitted
    for this workload's model (at the precision and its siblings). Generations order
    own < v0 < v1 < v2, and estimates are for the newest published generation.
    """
    return throughput_model_for_model(results, model_key(workload))


def throughput_model_for_model(results: pd.DataFrame, model_name: str) -> ThroughputModel:
    """throughput_model_for_results for a benchmark model named as in the reference
    (Lambda's names: resnet50, bert_large_squad, ssd, ...).

    Cached in process (per content of the results) and on disk (planner.throughput.
    disk_cache, keyed by the reference's digest and the fitting code), so the bundled
    data is fitted once per installation and again only when own results change it.
    """
    reference = reference_from_results(results)
    with _LOCK:
        return _fitted_model(ByKey((frame_digest(reference), model_name), reference))


def _generation_order(reference: pd.DataFrame) -> tuple[str, ...]:
    published = sorted(g for g in reference["generation"].unique() if g != OWN_GENERATION)
    return (OWN_GENERATION, *published) if published else (OWN_GENERATION,)


@lru_cache(maxsize=4)
def _fitted_estimator(key: ByKey) -> SpecEstimator | None:
    """The spec regression of one reference table (it learns from every model)."""
    reference: pd.DataFrame = key.payload
    digest = str(key.key[0])

    def build() -> _Estimator:
        figures = aggregate_figures(reference)
        return _Estimator(fit_figures_estimator(figures, _generation_order(reference)))

    return disk_cache.load_or_build("spec-estimator", digest, _Estimator, build).estimator


@lru_cache(maxsize=8)
def _fitted_model(key: ByKey) -> ThroughputModel:
    reference: pd.DataFrame = key.payload
    digest, model_name = str(key.key[0]), str(key.key[1])

    def build() -> ThroughputModel:
        order = _generation_order(reference)
        model = fit_throughput_model(
            reference,
            generations=order,
            target_generation=order[-1],
            scaling_models=(model_name,),
            estimator=_fitted_estimator(ByKey((digest,), reference)),
        )
        return replace(model, digest=f"{digest}:{model_name}")

    return disk_cache.load_or_build(f"model:{model_name}", digest, ThroughputModel, build)


@dataclass(frozen=True)
class _Estimator:
    """A fitted spec regression or None, as one picklable value for the disk cache."""

    estimator: SpecEstimator | None


# Columns that identify a results table's content for the caches below (the batch: a
# sweep's slower batches are left out of the figures, benchmarks.batch_choice).
_IDENTITY_COLUMNS = (
    "id", "source", "workload", "model_size", "precision", "gpu_name", "device", "world_size",
    "throughput", "throughput_p10", "throughput_p90", "mfu", "started_at", "detail",
    "batch_size_per_device",
)  # fmt: skip


@dataclass(frozen=True)
class ThroughputInputs:
    """What throughput_for_options needs for a workload: the figures and the fits."""

    figures: pd.DataFrame  # throughput_table()
    model: ThroughputModel  # throughput_model_for_results()
    figures_digest: str  # frame_digest(figures), taken once where they are built


def results_digest(results: pd.DataFrame) -> str:
    """A content hash of a results table (the columns that make figures and fits)."""
    present = [c for c in _IDENTITY_COLUMNS if c in results.columns]
    return frame_digest(results.loc[:, present])


def throughput_inputs(
    results: pd.DataFrame, workload: Workload, precision: str
) -> ThroughputInputs:
    """throughput_table, its figures and throughput_model_for_results, cached per content.

    Plans over the same results reuse them (the figures, the spec regression, the laws).
    """
    key = (results_digest(results), model_key(workload), precision)
    with _LOCK:
        return _inputs(ByKey(key, (results, workload, precision)))


@lru_cache(maxsize=16)
def _inputs(key: ByKey) -> ThroughputInputs:
    results, workload, precision = key.payload
    model = throughput_model_for_results(results, workload, precision)
    name = model_key(workload)

    def build() -> _Figures:
        # throughput_table() from the model's own aggregate_figures() of the same reference.
        return _Figures(best_figures(model.figures, name, precision, model.generations))

    # On disk beside the model (keyed by its reference's digest): the sibling figures
    # take a cold plan as long as loading the fits does.
    figures = disk_cache.load_or_build(f"figures:{name}:{precision}", model.digest, _Figures, build)
    return ThroughputInputs(figures.figures, model, frame_digest(figures.figures))


@dataclass(frozen=True)
class _Figures:
    """throughput_table()'s rows for one model and precision, as one picklable value."""

    figures: pd.DataFrame


def throughput_for_offers(
    offers: pd.DataFrame,
    figures: pd.DataFrame,
    model: ThroughputModel | None = None,
    *,
    model_name: str | None = None,
    precision: str | None = None,
) -> pd.DataFrame:
    """Throughput for every offer's (gpu_name, gpu_count), aligned to `offers.index`.

    `figures` is throughput_table()'s: they are used as they are at their counts
    (measured before published). Other counts of a GPU in the table are `scaled` through
    that GPU's fitted law from the nearest count (a fractional GPU slice scales linearly
    from one GPU); GPUs without a figure are `estimated` from their specs. `model` holds
    the fits (throughput_model_for_results); without it they are fitted on `figures` alone.
    `model_name` and `precision` default to the figures'.
    Columns: throughput, throughput_low, throughput_high, throughput_source,
    throughput_detail (which figure, which law or regression and its error). NaN
    throughput where nothing applies (no spec row, too little data to estimate).
    """
    out = pd.DataFrame(index=offers.index, columns=list(PREDICTION_COLUMNS), dtype=object)
    for column in ("throughput", "throughput_low", "throughput_high"):
        out[column] = np.nan
    if offers.empty or (figures.empty and model is None):
        return out
    if model is None:
        model = fit_throughput_model(figures.rename(columns={"runs": "_runs"}))
    model_name = model_name or (str(figures["model"].iloc[0]) if len(figures) else None)
    precision = precision or (str(figures["precision"].iloc[0]) if len(figures) else None)
    if model_name is None or precision is None:
        return out
    queries = pd.DataFrame(
        {
            "gpu_name": offers["gpu_name"].astype(str),
            "total_gpus": offers["gpu_count"].astype(float),
            "model": model_name,
            "precision": precision,
        },
        index=offers.index,
    )
    predicted = predict_throughput(model, queries, figures=figures)
    none = predicted["throughput_source"] == "none"
    predicted.loc[none, ["throughput", "throughput_low", "throughput_high"]] = np.nan
    predicted["throughput_source"] = predicted["throughput_source"].where(~none, None)
    return predicted.loc[:, list(PREDICTION_COLUMNS)]


@dataclass(frozen=True)
class OptionThroughput:
    """Throughput of many options evaluated as arrays; words only for the rows shown.

    values: throughput, throughput_low, throughput_high, throughput_source, aligned to the
    options' index (NaN / None where nothing applies). details(positions) gives the
    throughput_detail text of the options at those positions.
    """

    values: pd.DataFrame
    curves: ThroughputCurves | None
    evaluated: pd.DataFrame
    k: np.ndarray
    n: np.ndarray

    def details(self, positions: np.ndarray) -> np.ndarray:
        """throughput_detail for the options at `positions` (0-based, in the options' order)."""
        positions = np.asarray(positions, dtype=int)
        if self.curves is None:
            return np.full(len(positions), "no figure for this GPU and no estimate", object)
        return throughput_details(
            self.curves, self.evaluated.iloc[positions], self.k[positions], self.n[positions]
        )


def cached_curves(
    model: ThroughputModel,
    keys: pd.DataFrame,
    figures: pd.DataFrame,
    figures_digest: str | None = None,
) -> ThroughputCurves:
    """throughput_curves, remembered per (model, keys, figures): plans reuse them.
    `figures_digest` is frame_digest(figures) where the caller has it already."""
    with _LOCK:
        key = (id(model), frame_digest(keys), figures_digest or frame_digest(figures))
        return _curves(ByKey(key, (model, keys, figures)))


@lru_cache(maxsize=16)
def _curves(key: ByKey) -> ThroughputCurves:
    """Curves from memory, else from disk when the model records what it was fitted from."""
    model, keys, figures = key.payload
    if not model.digest:
        return throughput_curves(model, keys, figures)
    digest = f"{model.digest}:{key.key[1]}:{key.key[2]}"
    return disk_cache.load_or_build(
        "curves", digest, ThroughputCurves, lambda: throughput_curves(model, keys, figures)
    )


def throughput_for_options(
    options: pd.DataFrame,
    figures: pd.DataFrame,
    model: ThroughputModel,
    model_name: str,
    precision: str,
    global_batch: float | None = None,
    figures_digest: str | None = None,
) -> OptionThroughput:
    """Throughput of every option (gpu_name, total_gpus, gpus_per_node) without per-row text.

    `figures` is throughput_table()'s (ThroughputInputs.figures; `figures_digest` its
    ThroughputInputs.figures_digest, else it is computed).
    Same sources and bands as throughput_for_offers (figures at their counts,
    other counts scaled through the fitted law, the ring all-reduce model across nodes of
    `gpus_per_node` GPUs, spec estimates for GPUs without figures); the curves are built
    once per (GPU, node size) and cached across calls, counts are evaluated as arrays.
    `global_batch` caps the global batch (planner.throughput.step_model); the values
    also carry the step breakdown (STEP_COLUMNS: per_gpu_batch, compute_s, comm_s,
    overhead_s).
    """
    columns = ["throughput", "throughput_low", "throughput_high", "throughput_source"]
    empty = pd.DataFrame(index=options.index, columns=columns, dtype=object)
    if options.empty:
        return OptionThroughput(empty, None, pd.DataFrame(), np.array([], int), np.array([]))
    queries = pd.DataFrame(
        {
            "gpu_name": options["gpu_name"].astype(str).to_numpy(),
            "total_gpus": options["total_gpus"].astype(float).to_numpy(),
            "model": model_name,
            "precision": precision,
            "gpus_per_node": options["gpus_per_node"].astype(float).to_numpy(),
            "network_gbps": (
                options["network_gbps"].astype(float).to_numpy()
                if "network_gbps" in options.columns
                else np.nan
            ),
        }
    )
    q = prepare_queries(model, queries)
    codes = q.groupby(CURVE_KEY, sort=False, dropna=False).ngroup().to_numpy()
    firsts = np.unique(codes, return_index=True)[1]
    keys = q.iloc[firsts].loc[:, CURVE_KEY].reset_index(drop=True)
    position = np.empty(len(firsts), dtype=int)
    position[codes[firsts]] = np.arange(len(firsts))
    k = position[codes]
    n = q["total_gpus"].to_numpy(float)
    curves = cached_curves(model, keys, figures, figures_digest)
    evaluated = evaluate_curves(curves, k, n, global_batch)
    none = evaluated["source"].to_numpy() == "none"
    values = pd.DataFrame(
        {
            "throughput": evaluated["throughput"].to_numpy(),
            "throughput_low": evaluated["throughput_low"].to_numpy(),
            "throughput_high": evaluated["throughput_high"].to_numpy(),
            "throughput_source": np.where(none, None, evaluated["source"].to_numpy()),
            **{c: evaluated[c].to_numpy() for c in STEP_COLUMNS},
        },
        index=options.index,
    )
    return OptionThroughput(values, curves, evaluated, k, n)


def own_and_published_results(
    results_dirs: list[str] | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """Own results (bundled samples + `results_dirs`) and published ones, as one table.

    Column `sample` is True for the bundled samples (benchmarks/results/: tiny CPU runs
    that show what a result looks like), never the user's own results.

    Own results get `gpu_name` from their CUDA device name; published ones a
    `generation`, their benchmark version (results_with_generation). Returns the table
    and one message per result file that was rejected (the others still load): invalid,
    or with a figure above its GPU's datasheet peak (planner.io.result_physics).
    """
    from pricing.gpus import gpu_from_device_name

    samples, problems = sample_table(bundled_results_dir())
    frames = [samples]
    own_ids: set[str] = set()
    for directory in results_dirs or []:
        loaded, bad = folder_results(directory)
        problems.extend(bad)
        if loaded:
            frames.append(results_with_generation(loaded))
            own_ids.update(r.id for r in loaded)
    mine = pd.concat(frames, ignore_index=True) if len(frames) > 1 else samples
    if not mine.empty:
        named = mine["gpu_name"].notna()
        mine.loc[~named, "gpu_name"] = mine.loc[~named, "device_name"].map(gpu_from_device_name)
        mine = mine.drop_duplicates("id")
    mine[SAMPLE_COLUMN] = mine["id"].isin(set(samples["id"]) - own_ids)
    published = bundled.published_results()
    versions = published.pop("benchmark_version")
    published[GENERATION_COLUMN] = versions.fillna("").astype(str)
    published[SAMPLE_COLUMN] = False
    return pd.concat([mine, published], ignore_index=True), problems


def bundled_results_dir() -> str:
    """Sample measured results shipped with gpuplan (benchmarks/results/)."""
    from importlib import resources

    return str(resources.files("benchmarks") / "results")
