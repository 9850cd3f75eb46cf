"""Throughput for any (GPU, model, precision, GPU count) from the best source, labelled.

  measured / published  a figure at this count: median of its runs, band = where a new
                        run lands (throughput.run_spread: leave-one-run-out error)
  scaled                figures of the same GPU at other counts, through the scaling law
                        chosen by held-out error (throughput.scaling), anchored at the nearest
                        figure; band from the law's held-out error per doubling
  estimated             no figure of this GPU for this model and precision: 1-GPU throughput
                        from the spec regression (throughput.spec_model) x the law pooled over
                        the measured GPUs; band from both cross-validated errors

Beyond a node (`gpus_per_node`, and beyond the largest measured count) the law is not
extrapolated: the analytic ring all-reduce model (throughput.scaling.comm_efficiency) carries
the figure across the network.

Reference rows (`fit_throughput_model`), one per run or figure:
  gpu_name (canonical), total_gpus, model, precision, throughput (> 0)
  optional: generation (benchmark generation; "" when unknown), source (measured |
  published | ...), detail (where the figure came from), interconnect.
Queries (`predict_throughput`): gpu_name, total_gpus, model, precision; optional
  generation (default: the newest with data), gpus_per_node (default CommModel's).
Predictions, aligned to the queries' index: throughput, throughput_low, throughput_high,
  throughput_source (measured | published | scaled | estimated | none), throughput_detail.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from planner.codes import SOURCE_RANK, ThroughputSource
from planner.machines.specs import load_specs
from planner.settings import CommModel
from planner.throughput.roofline import roofline_predict
from planner.throughput.run_spread import RUN_BAND_DEFAULT, figure_of_runs, run_band
from planner.throughput.scaling import (
    DATA_PARALLEL_MODELS,
    GRADIENT_BYTES_PER_PARAM,
    LAW_CODE,
    ScalingFits,
    bus_bandwidth_gbs,
    comm_efficiency,
    effective_gpus,
    fit_scaling,
    interconnect_class,
)
from planner.throughput.spec_model import PRECISION_FAMILY, SpecEstimator, fit_spec_estimator
from planner.throughput.step_model import STEP_BEYOND_LOG_ERROR, StepInputs, step_breakdown

REFERENCE_COLUMNS: tuple[str, ...] = ("gpu_name", "total_gpus", "model", "precision", "throughput")
QUERY_COLUMNS: tuple[str, ...] = ("gpu_name", "total_gpus", "model", "precision")
PREDICTION_COLUMNS: tuple[str, ...] = (
    "throughput",
    "throughput_low",
    "throughput_high",
    "throughput_source",
    "throughput_detail",
)
KEY = ["gpu_name", "model", "precision"]
# Fewer GPUs cannot separate compute from bandwidth (three slopes and an intercept).
MIN_ESTIMATOR_GPUS = 4
# DATA_PARALLEL_MODELS' per-GPU batches are those of the 80 GB GPUs in Lambda's runs.
REFERENCE_MEMORY_GB = 80.0


@dataclass(frozen=True)
class ThroughputModel:
    """Everything a prediction needs, fitted once from reference rows.

    figures: one row per (gpu_name, model, precision, generation, total_gpus) with
      throughput (median), throughput_low/high (min/max of runs), runs, source, detail,
      interconnect. scaling: planner.throughput.scaling.ScalingFits. estimator: the spec
      regression (None when no 1-GPU figure of a GPU with a spec row exists).
    run_band: the measured figures' band in log (planner.throughput.run_spread).
    generations: oldest first; target_generation: what estimates are for by default.
    """

    figures: pd.DataFrame
    scaling: ScalingFits
    estimator: SpecEstimator | None
    comm: CommModel = field(default_factory=CommModel)
    generations: tuple[str, ...] = ("",)
    target_generation: str = ""
    # What it was fitted from (planner.throughput.disk_cache), "" when not recorded.
    digest: str = ""
    # log (q10, q90) of a new run around a figure's median (planner.throughput.run_spread).
    run_band: tuple[float, float] = RUN_BAND_DEFAULT


def aggregate_figures(reference: pd.DataFrame) -> pd.DataFrame:
    """One figure per (GPU, model, precision, generation, count): median, min, max of runs.

    The one aggregation of results: the fits, `estimate`, the Scaling page and the plan's
    anchors (offers.throughput_table) all read its rows. Columns: gpu_name, model,
    precision, generation, total_gpus, throughput, throughput_low, throughput_high, runs,
    source (the best of the group's), detail (its first run's), interconnect.
    """
    ref = reference.copy()
    ref["total_gpus"] = ref["total_gpus"].astype(float)
    ref["throughput"] = ref["throughput"].astype(float)
    for column, default in (("generation", ""), ("source", "measured"), ("detail", "")):
        if column not in ref.columns:
            ref[column] = default
        ref[column] = ref[column].fillna(default).astype(str)
    if "interconnect" not in ref.columns:
        ref["interconnect"] = interconnect_class(ref["gpu_name"])
    ref["_rank"] = ref["source"].map(SOURCE_RANK).fillna(len(SOURCE_RANK))
    ref = ref.sort_values("_rank", kind="stable")
    keys = [*KEY, "generation", "total_gpus"]
    table = ref.groupby(keys, sort=True).agg(
        **figure_of_runs(),
        source=("source", "first"),
        detail=("detail", "first"),
        interconnect=("interconnect", "first"),
    )
    return table.reset_index()


def fit_throughput_model(
    reference: pd.DataFrame,
    comm: CommModel | None = None,
    generations: tuple[str, ...] | None = None,
    target_generation: str | None = None,
    scaling_models: tuple[str, ...] | None = None,
    estimator: SpecEstimator | None = None,
) -> ThroughputModel:
    """Fit the scaling laws and the spec regression on reference rows (see module doc).

    `generations` orders generations oldest first (default sorted); estimates are for
    `target_generation` (default the newest). `scaling_models` limits the scaling fits
    to those models (the spec regression always learns from every row). The spec
    regression needs 1-GPU figures of at least MIN_ESTIMATOR_GPUS GPUs with spec rows;
    pass `estimator` to reuse one fitted on the same reference.
    """
    missing = [c for c in REFERENCE_COLUMNS if c not in reference.columns]
    if missing:
        raise ValueError(f"reference rows lack column(s) {', '.join(missing)}")
    figures = aggregate_figures(reference)
    order = generations or tuple(sorted(figures["generation"].unique()))
    in_scope = (
        figures if scaling_models is None else figures.loc[figures["model"].isin(scaling_models)]
    )
    scaling = fit_scaling(in_scope)
    if estimator is None:
        estimator = fit_figures_estimator(figures, order)
    return ThroughputModel(
        figures=figures,
        scaling=scaling,
        estimator=estimator,
        comm=comm or CommModel(),
        generations=order,
        target_generation=target_generation or order[-1],
        run_band=run_band(reference),
    )


def fit_figures_estimator(
    figures: pd.DataFrame, generations: tuple[str, ...]
) -> SpecEstimator | None:
    """The spec regression on aggregate_figures()' 1-GPU rows, or None when fewer than
    MIN_ESTIMATOR_GPUS GPUs with spec rows have one."""
    ones = figures.loc[figures["total_gpus"] == 1]
    known = ones["gpu_name"].isin(load_specs().index)
    if ones.loc[known, "gpu_name"].nunique() < MIN_ESTIMATOR_GPUS:
        return None
    return fit_spec_estimator(ones, generations)


# --------------------------------------------------------------------------- laws


def _law_for(model: ThroughputModel, q: pd.DataFrame) -> pd.DataFrame:
    """The scaling law for each query row: the GPU's fit, else pooled, else global.

    Adds law_code, a, b, max_count, q_low, q_high, law_text. Rows whose GPU has figures
    at only one count take the ring law pooled over this model's GPUs (the communication
    model calibrated on measured GPUs); rows of an estimated GPU take the chosen pooled law.
    """
    fits = model.scaling
    q = q.assign(precision=_law_precision(fits.pooled, q["model"], q["precision"]).to_numpy())
    own = q.merge(
        fits.groups.loc[:, [*KEY, "interconnect", "law", "a", "b", "counts", "max_count"]],
        on=[*KEY, "interconnect"],
        how="left",
    )
    pooled_all = fits.pooled
    chosen = pooled_all.loc[pooled_all["chosen"]]
    ring = pooled_all.loc[pooled_all["law"] == "ring"]
    cols = ["model", "precision", "law", "a", "b", "groups", "heldout_mape", "q_low", "q_high"]
    pooled = q.loc[:, ["model", "precision"]].merge(chosen.loc[:, cols], how="left")
    pooled_ring = q.loc[:, ["model", "precision"]].merge(ring.loc[:, cols], how="left")
    single = q["single_point"].to_numpy()
    use_ring = single & pooled_ring["law"].notna().to_numpy()
    fallback = pooled.mask(np.broadcast_to(use_ring[:, None], pooled.shape), pooled_ring)
    has_own = own["law"].notna().to_numpy()

    glob = fits.global_chosen
    out = pd.DataFrame(index=q.index)
    law = np.where(has_own, own["law"], fallback["law"])
    a = np.where(has_own, own["a"], fallback["a"])
    b = np.where(has_own, own["b"], fallback["b"])
    no_law = pd.isna(law)
    law = np.where(no_law, glob["law"], law)
    a = np.where(no_law, glob["a"], a)
    b = np.where(no_law, glob["b"], b)
    out["law"] = law
    out["law_code"] = pd.Series(law).map(LAW_CODE).to_numpy()
    out["a"] = a.astype(float)
    out["b"] = b.astype(float)
    out["max_count"] = own["max_count"].to_numpy(dtype=float)
    # The band comes from the held-out error of the law in use (pooled per model/precision).
    source = pooled.mask(np.broadcast_to((use_ring & ~has_own)[:, None], pooled.shape), pooled_ring)
    err_q_low = source["q_low"].fillna(glob["q_low"]).to_numpy(dtype=float)
    err_q_high = source["q_high"].fillna(glob["q_high"]).to_numpy(dtype=float)
    err_mape = source["heldout_mape"].fillna(glob["heldout_mape"]).to_numpy(dtype=float)
    out["q_low"] = err_q_low
    out["q_high"] = err_q_high
    params = _unique_map(
        pd.Series(list(zip(law, a, b, strict=True)), index=q.index),
        lambda t: _params_text(*t),
    )
    mape_text = _unique_map(
        pd.Series(err_mape, index=q.index),
        lambda v: f"held-out error {v:.1%} MAPE" if np.isfinite(v) else "no held-out test",
    )
    groups = fallback["groups"].fillna(0).astype(int).astype(str).to_numpy()
    text = np.where(
        has_own,
        "law fitted to counts " + own["counts"].fillna("").astype(str).to_numpy(),
        np.where(
            use_ring,
            "one count measured: ring all-reduce model, θ pooled over " + groups + " GPUs",
            np.where(no_law, "global law", "law pooled over " + groups + " GPUs"),
        ),
    )
    out["law_text"] = pd.Series(law, index=q.index) + params + " (" + text + "; " + mape_text + ")"
    # No GPU of this model and precision was measured at two counts: nothing to fit, so
    # the analytic ring all-reduce model (or, without a model size, linear) carries it.
    unfitted = ~has_own & (fallback["groups"].fillna(0).to_numpy() == 0)
    known = q["model"].isin(list(DATA_PARALLEL_MODELS)).to_numpy()
    out["analytic"] = unfitted & known
    out.loc[unfitted & known, "law_text"] = (
        "analytic ring all-reduce model (no GPU of this model measured at two counts)"
    )
    out.loc[unfitted & ~known, ["law", "law_code", "a", "b"]] = ["linear", LAW_CODE["linear"], 0, 0]
    out.loc[unfitted & ~known, "law_text"] = (
        "linear, assumed (no GPU of this model measured at two counts, no model size)"
    )
    return out


def _law_precision(pooled: pd.DataFrame, models: pd.Series, precisions: pd.Series) -> pd.Series:
    """The precision whose laws apply: the query's, else a fitted sibling (bf16 -> fp16)."""
    fitted = set(zip(pooled["model"], pooled["precision"], strict=True))
    pairs = pd.DataFrame({"model": models, "precision": precisions})
    choice = {}
    for m, p in pairs.drop_duplicates().itertuples(index=False):
        family = PRECISION_FAMILY.get(p)
        siblings = sorted(q for mm, q in fitted if mm == m and PRECISION_FAMILY.get(q) == family)
        choice[(m, p)] = p if (m, p) in fitted or not siblings else siblings[0]
    keys = pd.Series(list(zip(models, precisions, strict=True)), index=precisions.index)
    return keys.map(choice)


def _unique_map(values: pd.Series, text: Callable[[Any], str]) -> pd.Series:
    """`text` applied once per distinct value (many rows share few values)."""
    distinct = values.drop_duplicates()
    return values.map(dict(zip(distinct, distinct.map(text), strict=True)))


def _params_text(law: str, a: float, b: float) -> str:
    if law == "linear":
        return ""
    if law == "amdahl":
        return f" p={1 - a:.3f}"
    if law == "usl":
        return f" σ={a:.3g} κ={b:.3g}"
    return f" θ={a:.3g}"


# --------------------------------------------------------------------------- curves

CURVE_KEY = [
    "gpu_name", "model", "precision", "wanted_generation", "interconnect", "gpus_per_node",
    "network_gbps",
]  # fmt: skip
SOURCE_CODES = tuple(source.value for source in ThroughputSource)


@dataclass(frozen=True)
class ThroughputCurves:
    """Everything about a (GPU, model, precision) that does not depend on the count.

    keys: one row per curve: CURVE_KEY columns + law, law_code, a, b, max_count, q_low,
      q_high, law_text, estimate (1-GPU, spec regression), est_down / est_up (log
      half-widths of its band), est_text, comm (bool), grad_bytes, step_units, strong,
      bus_pair_gbs (N <= 2), bus_node_gbs (within a node), bus_net_gbs (across nodes).
    anchors: figures padded to (curves, A): n (NaN = none), x, low, high (x times the
      model's run_band: where a new run lands), rank
      (generation order), plus object arrays gen, source, detail, runs.
    Build once with throughput_curves(); evaluate any counts with evaluate_curves().
    """

    keys: pd.DataFrame
    n: np.ndarray
    x: np.ndarray
    low: np.ndarray
    high: np.ndarray
    rank: np.ndarray
    gen: np.ndarray
    source: np.ndarray
    detail: np.ndarray
    runs: np.ndarray
    comm: CommModel


def prepare_queries(model: ThroughputModel, queries: pd.DataFrame) -> pd.DataFrame:
    """Queries with CURVE_KEY filled in (defaults: newest generation, the model's node
    size, the spec table's interconnect) plus total_gpus; ready for throughput_curves."""
    missing = [c for c in QUERY_COLUMNS if c not in queries.columns]
    if missing:
        raise ValueError(f"queries lack column(s) {', '.join(missing)}")
    q = queries.loc[:, list(QUERY_COLUMNS)].copy()
    q["gpu_name"] = q["gpu_name"].astype(str)
    q["total_gpus"] = q["total_gpus"].astype(float)
    wanted = queries["generation"] if "generation" in queries.columns else None
    q["wanted_generation"] = "" if wanted is None else wanted.fillna("").astype(str)
    q["gpus_per_node"] = (
        queries["gpus_per_node"].astype(float).fillna(model.comm.gpus_per_node)
        if "gpus_per_node" in queries.columns
        else float(model.comm.gpus_per_node)
    )
    q["network_gbps"] = (
        queries["network_gbps"].astype(float).fillna(model.comm.network_gbps_per_node)
        if "network_gbps" in queries.columns
        else float(model.comm.network_gbps_per_node)
    )
    codes, names = pd.factorize(q["gpu_name"])  # a few GPUs over thousands of options
    spec_class = pd.Series(
        interconnect_class(pd.Series(names)).to_numpy()[codes], index=q.index, dtype=object
    )
    if "interconnect" in queries.columns:
        given = queries["interconnect"].fillna("").astype(str)
        q["interconnect"] = given.where(given != "", spec_class)
    else:
        q["interconnect"] = spec_class
    return q


def throughput_curves(
    model: ThroughputModel, keys: pd.DataFrame, figures: pd.DataFrame | None = None
) -> ThroughputCurves:
    """Precompute each curve (one per distinct row of `keys`, CURVE_KEY columns).

    `figures` replaces the model's own figures as anchors (aggregate_figures' columns).
    """
    figs = model.figures if figures is None else figures
    keys = keys.loc[:, CURVE_KEY].reset_index(drop=True)
    rank = {g: i for i, g in enumerate(model.generations)}
    anchors = figs.loc[:, [*KEY, "generation", "total_gpus", "throughput", "source", "detail",
                           "runs"]].copy()  # fmt: skip
    anchors["_rank"] = anchors["generation"].map(rank).fillna(-1).astype(float)
    wanted_ok = (
        keys.merge(
            anchors.loc[:, [*KEY, "generation"]]
            .drop_duplicates()
            .rename(columns={"generation": "wanted_generation"})
            .assign(_ok=True),
            how="left",
        )["_ok"]
        .fillna(False)
        .to_numpy(dtype=bool)
        & (keys["wanted_generation"] != "").to_numpy()
    )
    joined = keys.reset_index(names="_key").merge(anchors, on=KEY, how="inner")
    wanted_rows = joined["_key"].map(pd.Series(wanted_ok)).to_numpy(dtype=bool)
    keep = ~wanted_rows | (joined["generation"] == joined["wanted_generation"]).to_numpy()
    joined = joined.loc[keep].sort_values(["_key", "total_gpus", "_rank"])
    slot = joined.groupby("_key").cumcount().to_numpy()
    width = int(slot.max()) + 1 if len(slot) else 1
    shape = (len(keys), width)

    def grid(column: str, fill: Any, dtype: Any) -> np.ndarray:
        out = np.full(shape, fill, dtype=dtype)
        out[joined["_key"].to_numpy(), slot] = joined[column].to_numpy()
        return out

    n = grid("total_gpus", np.nan, float)
    counts = np.sum(np.isfinite(n), axis=1)
    distinct = pd.Series(
        [len(set(row[np.isfinite(row)])) for row in n] if width > 1 else counts, dtype=int
    )
    info = keys.assign(single_point=(distinct == 1).to_numpy())
    info = pd.concat([info, _law_for(model, info)], axis=1)
    info = _estimates(model, info, has_figures=counts > 0)
    info = _comm_constants(info, model.comm)
    x = grid("throughput", np.nan, float)
    down, up = model.run_band
    return ThroughputCurves(
        keys=info,
        n=n,
        x=x,
        low=x * np.exp(down),
        high=x * np.exp(up),
        rank=grid("_rank", -np.inf, float),
        gen=grid("generation", "", object),
        source=grid("source", "", object),
        detail=grid("detail", "", object),
        runs=grid("runs", 0, float),
        comm=model.comm,
    )


def _estimates(model: ThroughputModel, info: pd.DataFrame, has_figures: np.ndarray) -> pd.DataFrame:
    """The spec regression's 1-GPU estimate for curves without figures."""
    info = info.assign(estimate=np.nan, est_down=np.nan, est_up=np.nan, est_text="")
    rows = np.flatnonzero(~has_figures)
    if not len(rows):
        return info
    if model.estimator is None:
        info.loc[rows, "est_text"] = "no estimate: too few measured GPUs to calibrate on"
        return info
    sub = info.iloc[rows]
    # A GPU known from other models is estimated for the newest generation it was
    # measured in (its offset was learnt there); an unknown GPU for the target generation.
    rank = {g: i for i, g in enumerate(model.generations)}
    own_gen = (
        model.figures.assign(_rank=model.figures["generation"].map(rank))
        .sort_values("_rank")
        .drop_duplicates("gpu_name", keep="last")
        .set_index("gpu_name")["generation"]
    )
    default = sub["gpu_name"].map(own_gen).fillna(model.target_generation)
    target = sub["wanted_generation"].where(
        sub["wanted_generation"].isin(model.estimator.generations), default
    )
    est = model.estimator.predict(
        pd.DataFrame(
            {
                "gpu_name": sub["gpu_name"].to_numpy(),
                "model": sub["model"].to_numpy(),
                "precision": sub["precision"].to_numpy(),
                "generation": target.to_numpy(),
            }
        )
    )
    regression = est["estimate"].to_numpy(float)
    left_out = (est["cv_kind"] != "cell").to_numpy()
    x1 = _with_roofline(regression, left_out, sub.assign(target=target.to_numpy()), model.figures)
    info.loc[rows, "estimate"] = x1
    info.loc[rows, "est_down"] = np.log(regression / est["low"].to_numpy(float))
    info.loc[rows, "est_up"] = np.log(est["high"].to_numpy(float) / regression)
    cv = np.where(
        left_out, "GPU left out; blended with a roofline mix of the nearest measured GPUs",
        "GPU known from other models",
    )  # fmt: skip
    mape = _unique_map(est["mape"], lambda v: f"{v:.0%}" if np.isfinite(v) else "?")
    text = (
        "spec regression (peak TFLOPS at "
        + sub["precision"].to_numpy()
        + ", memory bandwidth and size; generation "
        + target.to_numpy()
        + "), cross-validated error "
        + mape.to_numpy()
        + " MAPE ("
        + cv
        + ")"
    )
    caveat = est["caveat"].to_numpy(dtype=object)
    text = text + np.where(caveat != "", " [" + caveat.astype(str) + "]", "")
    info.loc[rows, "est_text"] = np.where(
        np.isfinite(x1), text, "no estimate: " + est["reason"].to_numpy()
    )
    return info


def _with_roofline(
    regression: np.ndarray, left_out: np.ndarray, queries: pd.DataFrame, figures: pd.DataFrame
) -> np.ndarray:
    """The spec regression's 1-GPU estimate, for GPUs it never saw blended (geometric mean)
    with the roofline mix of the nearest measured GPUs (planner.throughput.roofline), whose
    figures of the query's target generation are carried (each GPU's newest where it has
    none of that generation): in
    leave-one-GPU-out on the bundled figures the blend errs 21.3% (MAPE) where the
    regression alone errs 24.6% and the roofline alone 22.2% (tools/evaluate_estimator.py)."""
    out = regression.copy()
    ones = figures.loc[figures["total_gpus"] == 1] if len(figures) else figures
    for i in np.flatnonzero(left_out & np.isfinite(regression)):
        q = queries.iloc[i]
        donors = ones.loc[(ones["model"] == q["model"]) & (ones["precision"] == q["precision"])]
        same = donors["generation"] == q["target"]
        ranked = donors.assign(_same=same).sort_values(["_same", "generation"])
        chosen = ranked.drop_duplicates("gpu_name", keep="last")
        roof = roofline_predict(chosen, str(q["gpu_name"]), str(q["precision"]))
        if np.isfinite(roof) and roof > 0:
            out[i] = float(np.sqrt(regression[i] * roof))
    return out


def _comm_constants(info: pd.DataFrame, comm: CommModel) -> pd.DataFrame:
    """Per curve: what the ring all-reduce model needs (bytes, step units, bandwidths)."""
    spec = DATA_PARALLEL_MODELS
    params = info["model"].map({k: v.params for k, v in spec.items()})
    grad = info["precision"].map(GRADIENT_BYTES_PER_PARAM).fillna(4.0)
    per_node = info["gpus_per_node"].to_numpy(float)
    network = info["network_gbps"].to_numpy(float)
    gpus = info["gpu_name"]
    specs = load_specs()
    memory_gb = gpus.map(specs["memory_gb"]).astype(float).fillna(REFERENCE_MEMORY_GB)
    step_units = info["model"].map({k: v.step_units_per_gpu for k, v in spec.items()})
    return info.assign(
        comm=params.notna().to_numpy(),
        grad_bytes=(params * grad).to_numpy(float),
        params=params.to_numpy(float),
        step_units=step_units,
        # The largest batch that fits grows with memory (activations ∝ batch): the
        # reference batch is that of an 80 GB GPU.
        batch_limit=(step_units * memory_gb / REFERENCE_MEMORY_GB).to_numpy(float),
        kernels=info["model"].map({k: v.kernels_per_step for k, v in spec.items()}),
        mem_bw_gbs=gpus.map(specs["memory_bw_gbs"]).astype(float).fillna(1000.0).to_numpy(),
        net_gbs_per_gpu=network / 8.0 * comm.achievable_fraction / np.maximum(per_node, 1.0),
        strong=info["model"].map({k: v.global_batch for k, v in spec.items()}).eq(True),
        bus_pair_gbs=bus_bandwidth_gbs(gpus, np.full(len(info), 2.0), comm, per_node, network),
        bus_node_gbs=bus_bandwidth_gbs(gpus, np.minimum(per_node, 3.0), comm, per_node, network),
        bus_net_gbs=bus_bandwidth_gbs(gpus, per_node + 1.0, comm, per_node, network),
    )


def _bus(keys: pd.DataFrame, k: np.ndarray, n: np.ndarray, per_node: np.ndarray) -> np.ndarray:
    return np.where(
        n <= 2,
        keys["bus_pair_gbs"].to_numpy(float)[k],
        np.where(
            n <= per_node,
            keys["bus_node_gbs"].to_numpy(float)[k],
            keys["bus_net_gbs"].to_numpy(float)[k],
        ),
    )


def _efficiency(
    keys: pd.DataFrame,
    ki: np.ndarray,
    counts: np.ndarray,
    per_node: np.ndarray,
    compute_s: np.ndarray,
    comm: CommModel,
) -> np.ndarray:
    """comm_efficiency at `counts` GPUs for curves `ki` (their gradient bytes and buses)."""
    return comm_efficiency(
        counts,
        compute_s,
        keys["grad_bytes"].to_numpy(float)[ki],
        _bus(keys, ki, counts, per_node),
        comm,
        keys["strong"].to_numpy(bool)[ki],
    )


def evaluate_curves(
    curves: ThroughputCurves,
    k: np.ndarray,
    n: np.ndarray,
    global_batch: np.ndarray | float | None = None,
) -> pd.DataFrame:
    """Throughput of curve k[i] at n[i] GPUs, for arrays of any length (pure numpy).

    Up to m (the node or the largest figure) the anchor figure and the fitted law give
    X(min(N, m)); the step-time model (planner.throughput.step_model) carries it on:
    X(N) = X(min(N, m)) · N·p(N) / (min(N, m)·p₀(min(N, m))), p the per-GPU throughput
    with the per-GPU batch min(batch limit, global_batch / N) and p₀ at the batch the
    figure was measured at. `global_batch` (samples per step, NaN/None = no cap) per row.

    Columns: throughput, throughput_low, throughput_high, source (one of SOURCE_CODES),
    anchor (slot of the anchor figure, -1 for estimates), beyond (N past the node and
    the data: the step model carried it), m (that limit), and STEP_COLUMNS (the step's
    parts at N; NaN where the model has no size).
    """
    k = np.asarray(k, dtype=int)
    n = np.asarray(n, dtype=float)
    cap = np.broadcast_to(
        np.asarray(np.nan if global_batch is None else global_batch, dtype=float), n.shape
    )
    cap = np.where(np.isfinite(cap) & (cap > 0), cap, np.inf)
    anchor = _anchors(curves, k, n)
    x, m, step_cols = _scaled(curves, k, n, anchor, cap)
    low, high = _band(curves, k, n, anchor, x)
    # Past the node the step model's own leave-one-out error widens the band (it reads
    # optimistic there: the low side widens more).
    past = np.isfinite(step_cols["per_gpu_batch"]) & (n > m)
    low = np.where(past, low * np.exp(-STEP_BEYOND_LOG_ERROR[1]), low)
    high = np.where(past, high * np.exp(-STEP_BEYOND_LOG_ERROR[0]), high)
    fig_source = np.where(anchor.has_fig, curves.source[k][anchor.rows, anchor.slot], "")
    source = np.where(
        anchor.has_fig & (anchor.n == n),
        np.where(np.isin(fig_source, ("published", "sibling")), fig_source, "measured"),
        np.where(anchor.has_fig, "scaled", np.where(np.isfinite(x), "estimated", "none")),
    )
    ok = source != "none"
    return pd.DataFrame(
        {
            "throughput": np.where(ok, x, np.nan),
            "throughput_low": np.where(ok, low, np.nan),
            "throughput_high": np.where(ok, high, np.nan),
            "source": source,
            "anchor": np.where(anchor.has_fig, anchor.slot, -1),
            "beyond": (n > m) & ok & np.isfinite(x),
            "m": m,
            **step_cols,
        }
    )


@dataclass(frozen=True)
class _Anchor:
    """The figure each row starts from: has_fig (a figure within one node exists), slot
    (its column in the curve), n and x (its GPU count and throughput; the spec estimate at
    1 GPU where there is no figure), have (which figures lie within one node), per_node."""

    have: np.ndarray
    has_fig: np.ndarray
    slot: np.ndarray
    rows: np.ndarray
    n: np.ndarray
    x: np.ndarray
    per_node: np.ndarray


def _anchors(curves: ThroughputCurves, k: np.ndarray, n: np.ndarray) -> _Anchor:
    """Per row, the anchor figure: in the generation with a figure nearest N (in doublings,
    the newest among ties), the largest count <= N, else the smallest above."""
    keys = curves.keys
    cn = curves.n[k]
    per_node = keys["gpus_per_node"].to_numpy(float)[k]
    # A figure on more GPUs than one node of this option holds ran over a faster fabric
    # (4 GPUs over NVLink are not four 1-GPU VMs over Ethernet): only counts within a
    # node anchor; the step model carries them across nodes.
    have = np.isfinite(cn) & (cn <= np.maximum(per_node, 1.0)[:, None] + 1e-9)
    cn = np.where(have, cn, np.nan)
    has_fig = have.any(axis=1)
    distance = np.where(have, np.abs(np.log2(np.where(have, cn, 1.0) / n[:, None])), np.inf)
    best = distance.min(axis=1, keepdims=True)
    rank = np.where(have & (distance <= best + 1e-12), curves.rank[k], -np.inf)
    chosen_rank = rank.max(axis=1, keepdims=True)
    same = have & (curves.rank[k] == chosen_rank)
    below = same & (cn <= n[:, None] + 1e-9)
    pick_below = np.where(below, cn, -np.inf).argmax(axis=1)
    pick_above = np.where(same, cn, np.inf).argmin(axis=1)
    slot = np.where(below.any(axis=1), pick_below, pick_above)
    rows = np.arange(len(k))
    an = np.where(has_fig, cn[rows, slot], 1.0)
    ax = np.where(has_fig, curves.x[k][rows, slot], keys["estimate"].to_numpy(float)[k])
    return _Anchor(have, has_fig, slot, rows, an, ax, per_node)


def _scaled(
    curves: ThroughputCurves, k: np.ndarray, n: np.ndarray, anchor: _Anchor, cap: np.ndarray
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Throughput at N from the anchor: the fitted law (or the ring all-reduce model) up to
    m, the node or the largest figure; the step-time model beyond it and under the batch
    cap; linear past m where the model has no size. Returns X(N), m and the step parts."""
    keys, an, ax, per_node = curves.keys, anchor.n, anchor.x, anchor.per_node
    code = keys["law_code"].to_numpy()[k]
    a = keys["a"].to_numpy(float)[k]
    b = keys["b"].to_numpy(float)[k]
    known_max = np.minimum(np.nan_to_num(keys["max_count"].to_numpy(float)[k]), per_node)
    fig_max = np.where(anchor.have, curves.n[k], 0.0).max(axis=1)
    m = np.maximum.reduce([per_node, known_max, fig_max, an])
    x1 = ax / effective_gpus(an, code, a, b)
    comm_ok = keys["comm"].to_numpy(bool)[k]
    analytic = keys["analytic"].to_numpy(bool)[k] & comm_ok & np.isfinite(ax)
    m = np.where(analytic, np.maximum(per_node, an), m)
    nc = np.minimum(n, m)
    x = ax * effective_gpus(nc, code, a, b) / effective_gpus(an, code, a, b)
    if analytic.any():
        # X(N) = X(anchor) N E(N) / (anchor E(anchor)), E from the ring all-reduce model
        # with the step time of one GPU taken as anchor figure / anchor count.
        i = np.flatnonzero(analytic)
        ki = k[i]
        compute = keys["step_units"].to_numpy(float)[ki] / (ax[i] / an[i])
        e_n = _efficiency(keys, ki, nc[i], per_node[i], compute, curves.comm)
        e_a = _efficiency(keys, ki, an[i], per_node[i], compute, curves.comm)
        x[i] = ax[i] * np.maximum(nc[i], 0.0) * e_n / (an[i] * e_a)
        x1 = np.where(analytic, ax / an, x1)
    step_cols = {c: np.full(len(k), np.nan) for c in STEP_COLUMNS}
    stepped = comm_ok & np.isfinite(x1) & np.isfinite(x)
    if stepped.any():
        i = np.flatnonzero(stepped)
        inputs = _step_inputs(keys, k[i], x1[i], cap[i], per_node[i])
        at_n = step_breakdown(inputs, n[i])
        plain = replace(inputs, global_batch=np.full(len(i), np.inf))
        at_m = step_breakdown(plain, nc[i])
        x[i] = x[i] * at_n["throughput"] / at_m["throughput"]
        at_n["batch_limit"] = inputs.b_mem
        for column in STEP_COLUMNS:
            step_cols[column][i] = at_n[column]
    rest = ~stepped & (n > m)
    return np.where(rest, x * n / m, x), m, step_cols


def _band(
    curves: ThroughputCurves, k: np.ndarray, n: np.ndarray, anchor: _Anchor, x: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The 10-90% band: the anchor figure's own band widened by the law's held-out
    quantiles per doubling away from it; for estimates, the spec model's cross-validated
    error and that widening added in quadrature."""
    keys, has_fig, rows, slot = curves.keys, anchor.has_fig, anchor.rows, anchor.slot
    d = np.abs(np.log2(n / anchor.n))
    scale_down = keys["q_high"].to_numpy(float)[k] * d
    scale_up = -keys["q_low"].to_numpy(float)[k] * d
    ax = np.where(has_fig, anchor.x, 1.0)
    fig_low = np.where(has_fig, curves.low[k][rows, slot] / ax, 1.0)
    fig_high = np.where(has_fig, curves.high[k][rows, slot] / ax, 1.0)
    est_down = keys["est_down"].to_numpy(float)[k]
    est_up = keys["est_up"].to_numpy(float)[k]
    low = np.where(
        has_fig, x * fig_low * np.exp(-scale_down), x * np.exp(-np.hypot(est_down, scale_down))
    )
    high = np.where(
        has_fig, x * fig_high * np.exp(scale_up), x * np.exp(np.hypot(est_up, scale_up))
    )
    return low, high


# Step parts at N (planner.throughput.step_model): batch_limit is the per-GPU batch the
# anchor figure ran at, batch_rate the per-GPU rate at per_gpu_batch over the rate there
# (the small-batch penalty), comm_s the all-reduce time left exposed of comm_total_s.
STEP_COLUMNS = (
    "per_gpu_batch", "batch_limit", "batch_rate", "compute_s", "comm_s", "comm_total_s",
    "overhead_s",
)  # fmt: skip


def _step_inputs(
    keys: pd.DataFrame, ki: np.ndarray, x1: np.ndarray, cap: np.ndarray, per_node: np.ndarray
) -> StepInputs:
    """The step model's arrays for curves `ki` with 1-GPU throughput `x1`."""
    column = lambda name: keys[name].to_numpy(float)[ki]  # noqa: E731
    return StepInputs(
        x1=x1,
        b_mem=column("batch_limit"),
        global_batch=cap,
        kernels=column("kernels"),
        params=column("params"),
        grad_bytes=column("grad_bytes"),
        mem_bw_gbs=column("mem_bw_gbs"),
        bus_intra_gbs=column("bus_node_gbs"),
        net_gbs_per_gpu=column("net_gbs_per_gpu"),
        per_node=per_node,
    )


PREDICT_COLUMNS: tuple[str, ...] = (
    "throughput", "throughput_low", "throughput_high", "throughput_source", "beyond_node",
    "limit_code", *STEP_COLUMNS,
)  # fmt: skip


def _evaluate(
    model: ThroughputModel, queries: pd.DataFrame, figures: pd.DataFrame | None
) -> tuple[ThroughputCurves, np.ndarray, np.ndarray, pd.DataFrame]:
    """Curves for the queries' distinct keys, then every row evaluated: (curves, k, n, values)."""
    q = prepare_queries(model, queries).reset_index(drop=True)
    key_codes = q.groupby(CURVE_KEY, sort=False, dropna=False).ngroup().to_numpy()
    first = np.unique(key_codes, return_index=True)[1]
    curves = throughput_curves(model, q.iloc[first], figures)
    k = _remap(key_codes, first)
    n = q["total_gpus"].to_numpy(float)
    cap = (
        pd.to_numeric(queries["global_batch"], errors="coerce").to_numpy(float)
        if "global_batch" in queries.columns
        else None
    )
    return curves, k, n, evaluate_curves(curves, k, n, cap)


def predict(
    model: ThroughputModel,
    queries: pd.DataFrame,
    figures: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Numbers and reason codes for every query row, no words (PREDICT_COLUMNS).

    The one entry point to the throughput model: `queries` has gpu_name, total_gpus, model,
    precision and optionally generation, gpus_per_node, network_gbps, interconnect,
    global_batch (samples per step). `figures` replaces the model's own figures as the
    measured/published anchors, in aggregate_figures' columns. throughput_source is one
    of SOURCE_CODES; beyond_node marks counts the step model carried past the node and
    the data; limit_code is "batch-bound" where the global batch leaves each GPU less
    than its batch limit, else ""; STEP_COLUMNS are the step time's parts at that count.
    explain() (predict_throughput) adds the words.
    """
    curves, k, _, values = _evaluate(model, queries, figures)
    return _numbers(curves, k, values, queries.index)


def _numbers(
    curves: ThroughputCurves, k: np.ndarray, values: pd.DataFrame, index: pd.Index
) -> pd.DataFrame:
    limit = curves.keys["batch_limit"].to_numpy(float)[k]
    batch = values["per_gpu_batch"].to_numpy(float)
    out = values.rename(columns={"source": "throughput_source", "beyond": "beyond_node"})
    out["limit_code"] = np.where(np.isfinite(batch) & (batch < limit * 0.999), "batch-bound", "")
    out.index = index
    return out.loc[:, list(PREDICT_COLUMNS)]


def predict_throughput(
    model: ThroughputModel,
    queries: pd.DataFrame,
    figures: pd.DataFrame | None = None,
    numbers: bool = False,
) -> pd.DataFrame:
    """predict() with words: throughput, band, source and throughput_detail per query row
    (PREDICTION_COLUMNS; with `numbers`, also predict()'s codes and step parts).

    The words are built once per distinct (curve, count), never per row.
    """
    curves, k, n, values = _evaluate(model, queries, figures)
    pair = pd.DataFrame({"k": k, "n": n})
    pair_codes = pair.groupby(["k", "n"], sort=False).ngroup().to_numpy()
    firsts = np.unique(pair_codes, return_index=True)[1]
    texts = _details(curves, values.iloc[firsts], k[firsts], n[firsts])
    out = _numbers(curves, k, values, queries.index)
    out["throughput_detail"] = texts[_remap(pair_codes, firsts)]
    if numbers:
        return out
    return out.loc[:, list(PREDICTION_COLUMNS)]


def throughput_details(
    curves: ThroughputCurves, values: pd.DataFrame, k: np.ndarray, n: np.ndarray
) -> np.ndarray:
    """Words for evaluated rows (evaluate_curves output for curves k at counts n): which
    figure, law or regression each came from and its error. Call it on the rows you show."""
    return _details(curves, values.reset_index(drop=True), np.asarray(k), np.asarray(n, float))


def _remap(codes: np.ndarray, firsts: np.ndarray) -> np.ndarray:
    """Group codes -> positions in the array of first occurrences."""
    position = np.empty(int(codes.max()) + 1 if len(codes) else 0, dtype=int)
    position[codes[firsts]] = np.arange(len(firsts))
    return position[codes]


def _details(
    curves: ThroughputCurves, values: pd.DataFrame, k: np.ndarray, n: np.ndarray
) -> np.ndarray:
    keys = curves.keys
    rows = np.arange(len(k))
    slot = np.maximum(values["anchor"].to_numpy(), 0)
    gen = curves.gen[k][rows, slot]
    gen_text = np.where(gen != "", " (" + gen.astype(str) + ")", "")
    runs = curves.runs[k][rows, slot]
    fig_detail = curves.detail[k][rows, slot].astype(str)
    an = curves.n[k][rows, slot]
    source = values["source"].to_numpy()
    fig_source = curves.source[k][rows, slot].astype(str)
    runs_text = pd.Series(runs).fillna(0).astype(int).astype(str).to_numpy()
    # A published figure's detail names its source; an own run's names one run of many.
    median_text = (
        "median of " + runs_text + " runs" + gen_text
        + np.where((fig_detail != "") & (fig_source != "measured"), ", " + fig_detail, "")
    )  # fmt: skip
    exact_text = np.where(
        runs > 1, median_text, np.where(fig_detail != "", fig_detail, "1 run") + gen_text
    )
    an_text = _unique_map(pd.Series(an), lambda v: f"{v:g}" if np.isfinite(v) else "").to_numpy()
    law_text = keys["law_text"].to_numpy()[k]
    beyond = _beyond_text(
        values["beyond"].to_numpy(),
        values["m"].to_numpy(),
        keys["comm"].to_numpy()[k],
        keys["network_gbps"].to_numpy(float)[k],
        curves.comm,
    )
    scaled_text = (
        law_text + " through the " + an_text + "-GPU "
        + curves.source[k][rows, slot].astype(str) + " figure" + gen_text + beyond
    )  # fmt: skip
    est_text = keys["est_text"].to_numpy()[k].astype(str)
    estimated_text = est_text + np.where(n > 1, " x " + law_text, "") + beyond
    return np.select(
        [
            source == "measured",
            source == "published",
            source == "sibling",
            source == "scaled",
            source == "estimated",
        ],
        [exact_text, exact_text, exact_text, scaled_text, estimated_text],
        np.where(est_text != "", est_text, "no figure for this GPU and no estimate"),
    ).astype(object)


def _beyond_text(
    beyond: np.ndarray, m: np.ndarray, known: np.ndarray, gbps: np.ndarray, comm: CommModel
) -> np.ndarray:
    gbps_text = _unique_map(pd.Series(gbps), "{:g}".format).to_numpy(dtype=object)
    network = (
        " GPUs: step-time model (per-GPU batch, fitted per-step floor and straggler wait, "
        "hierarchical "
        "all-reduce over " + gbps_text + " Gb/s per node hidden behind backward as DDP does)"
    )
    m_text = _unique_map(pd.Series(m), "{:g}".format).to_numpy(dtype=object)
    tail = np.where(known, network, " GPUs: law extrapolated (no model size for the comm model)")
    return np.where(beyond, "; beyond " + m_text + tail, "").astype(object)
