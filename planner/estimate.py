"""Throughput for any (GPU, model, precision, GPU count) from the best source, labelled.

  measured / published  a figure at this count: median of its runs, band = min..max
  scaled                figures of the same GPU at other counts, through the scaling law
                        chosen by held-out error (planner.scaling), anchored at the nearest
                        figure; band from the law's held-out error per doubling
  estimated             no figure of this GPU for this model and precision: 1-GPU throughput
                        from the spec regression (planner.spec_model) x the law pooled over
                        the measured GPUs; band from both cross-validated errors

Beyond a node (`gpus_per_node`, and beyond the largest measured count) the law is not
extrapolated: the analytic ring all-reduce model (planner.scaling.comm_efficiency) carries
the figure across the network.

Reference rows (`fit_throughput_model`), one per run or figure:
  gpu_name (canonical), num_gpus, model, precision, throughput (> 0)
  optional: generation (benchmark generation; "" when unknown), source (measured |
  published | ...), detail (where the figure came from), interconnect.
Queries (`predict_throughput`): gpu_name, num_gpus, model, precision; optional
  generation (default: the newest with data), gpus_per_node (default CommModel's).
Predictions, aligned to the queries' index: throughput, throughput_low, throughput_high,
  throughput_source (measured | published | scaled | estimated | none), throughput_detail.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from planner.hardware import load_specs
from planner.scaling import (
    DATA_PARALLEL_MODELS,
    GRADIENT_BYTES_PER_PARAM,
    LAW_CODE,
    CommModel,
    ScalingFits,
    bus_bandwidth_gbs,
    comm_efficiency,
    effective_gpus,
    fit_scaling,
    interconnect_class,
)
from planner.spec_model import PRECISION_FAMILY, SpecEstimator, fit_spec_estimator

REFERENCE_COLUMNS: tuple[str, ...] = ("gpu_name", "num_gpus", "model", "precision", "throughput")
QUERY_COLUMNS: tuple[str, ...] = ("gpu_name", "num_gpus", "model", "precision")
PREDICTION_COLUMNS: tuple[str, ...] = (
    "throughput",
    "throughput_low",
    "throughput_high",
    "throughput_source",
    "throughput_detail",
)
KEY = ["gpu_name", "model", "precision"]
SOURCE_RANK = {"measured": 0, "published": 1}
# Fewer GPUs cannot separate compute from bandwidth (three slopes and an intercept).
MIN_ESTIMATOR_GPUS = 4


@dataclass(frozen=True)
class ThroughputModel:
    """Everything a prediction needs, fitted once from reference rows.

    figures: one row per (gpu_name, model, precision, generation, num_gpus) with
      throughput (median), throughput_low/high (min/max of runs), runs, source, detail,
      interconnect. scaling: planner.scaling.ScalingFits. estimator: the spec
      regression (None when no 1-GPU figure of a GPU with a spec row exists).
    generations: oldest first; target_generation: what estimates are for by default.
    """

    figures: pd.DataFrame
    scaling: ScalingFits
    estimator: SpecEstimator | None
    comm: CommModel = field(default_factory=CommModel)
    generations: tuple[str, ...] = ("",)
    target_generation: str = ""


def aggregate_figures(reference: pd.DataFrame) -> pd.DataFrame:
    """One figure per (GPU, model, precision, generation, count): median, min, max of runs."""
    ref = reference.copy()
    ref["num_gpus"] = ref["num_gpus"].astype(float)
    ref["throughput"] = ref["throughput"].astype(float)
    for column, default in (("generation", ""), ("source", "measured"), ("detail", "")):
        if column not in ref.columns:
            ref[column] = default
        ref[column] = ref[column].fillna(default).astype(str)
    if "interconnect" not in ref.columns:
        ref["interconnect"] = interconnect_class(ref["gpu_name"])
    ref["_rank"] = ref["source"].map(SOURCE_RANK).fillna(len(SOURCE_RANK))
    ref = ref.sort_values("_rank", kind="stable")
    keys = [*KEY, "generation", "num_gpus"]
    table = ref.groupby(keys, sort=True).agg(
        throughput=("throughput", "median"),
        throughput_low=("throughput", "min"),
        throughput_high=("throughput", "max"),
        runs=("throughput", "size"),
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
) -> ThroughputModel:
    """Fit the scaling laws and the spec regression on reference rows (see module doc).

    `generations` orders generations oldest first (default sorted); estimates are for
    `target_generation` (default the newest). `scaling_models` limits the scaling fits
    to those models (the spec regression always learns from every row). The spec
    regression needs 1-GPU figures of at least MIN_ESTIMATOR_GPUS GPUs with spec rows.
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
    ones = figures.loc[figures["num_gpus"] == 1]
    known = ones["gpu_name"].isin(load_specs().index)
    estimator = None
    if ones.loc[known, "gpu_name"].nunique() >= MIN_ESTIMATOR_GPUS:
        estimator = fit_spec_estimator(ones, order)
    return ThroughputModel(
        figures=figures,
        scaling=scaling,
        estimator=estimator,
        comm=comm or CommModel(),
        generations=order,
        target_generation=target_generation or order[-1],
    )


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
    params = pd.Series(
        [_params_text(lw, av, bv) for lw, av, bv in zip(law, a, b, strict=True)], index=q.index
    )
    mape_text = pd.Series(err_mape, index=q.index).map(
        lambda v: f"held-out error {v:.1%} MAPE" if np.isfinite(v) else "no held-out test"
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
    return out


def _law_precision(pooled: pd.DataFrame, models: pd.Series, precisions: pd.Series) -> pd.Series:
    """The precision whose laws apply: the query's, else a fitted sibling (bf16 -> fp16)."""
    fitted = set(zip(pooled["model"], pooled["precision"], strict=True))
    out = precisions.copy()
    for i, (m, p) in enumerate(zip(models, precisions, strict=True)):
        if (m, p) in fitted:
            continue
        family = PRECISION_FAMILY.get(p)
        siblings = sorted(q for mm, q in fitted if mm == m and PRECISION_FAMILY.get(q) == family)
        if siblings:
            out.iloc[i] = siblings[0]
    return out


def _params_text(law: str, a: float, b: float) -> str:
    if law == "linear":
        return ""
    if law == "amdahl":
        return f" p={1 - a:.3f}"
    if law == "usl":
        return f" σ={a:.3g} κ={b:.3g}"
    return f" θ={a:.3g}"


def _across_nodes(
    n: np.ndarray, m: np.ndarray, x1: np.ndarray, q: pd.DataFrame, comm: CommModel
) -> tuple[np.ndarray, np.ndarray]:
    """E_comm(N) / E_comm(M) for N > M (else 1), and whether the model was available."""
    info = q["model"].map(DATA_PARALLEL_MODELS)
    known = info.notna().to_numpy()
    ratio = np.ones(len(n))
    beyond = (n > m) & known & np.isfinite(x1)
    if not beyond.any():
        return ratio, known
    rows = np.flatnonzero(beyond)
    sub = q.iloc[rows]
    params = np.array([info.iloc[i].params for i in rows])
    units = np.array([info.iloc[i].step_units_per_gpu for i in rows])
    strong = np.array([info.iloc[i].global_batch for i in rows])
    grad = params * sub["precision"].map(GRADIENT_BYTES_PER_PARAM).fillna(4.0).to_numpy()
    compute = units / x1[rows]
    per_node = sub["gpus_per_node"].to_numpy(dtype=float)
    e_n = comm_efficiency(
        n[rows],
        compute,
        grad,
        bus_bandwidth_gbs(sub["gpu_name"], n[rows], comm, per_node),
        comm,
        strong,
    )
    e_m = comm_efficiency(
        m[rows],
        compute,
        grad,
        bus_bandwidth_gbs(sub["gpu_name"], m[rows], comm, per_node),
        comm,
        strong,
    )
    ratio[rows] = e_n / e_m
    return ratio, known


# --------------------------------------------------------------------------- predict


def _prepare_queries(model: ThroughputModel, queries: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in QUERY_COLUMNS if c not in queries.columns]
    if missing:
        raise ValueError(f"queries lack column(s) {', '.join(missing)}")
    q = queries.loc[:, list(QUERY_COLUMNS)].copy()
    q["num_gpus"] = q["num_gpus"].astype(float)
    wanted = queries["generation"] if "generation" in queries.columns else None
    q["wanted_generation"] = "" if wanted is None else wanted.fillna("").astype(str)
    q["gpus_per_node"] = (
        queries["gpus_per_node"].astype(float).fillna(model.comm.gpus_per_node)
        if "gpus_per_node" in queries.columns
        else float(model.comm.gpus_per_node)
    )
    if "interconnect" in queries.columns:
        q["interconnect"] = queries["interconnect"].fillna("").astype(str)
        blank = q["interconnect"] == ""
        q.loc[blank, "interconnect"] = interconnect_class(q.loc[blank, "gpu_name"])
    else:
        q["interconnect"] = interconnect_class(q["gpu_name"])
    return q


def _choose_generation(figures: pd.DataFrame, q: pd.DataFrame, order: tuple[str, ...]) -> None:
    """Set q['generation'] for rows whose GPU has figures (NaN for the others).

    The wanted generation where this GPU has figures in it; otherwise the generation with
    a figure nearest the requested count (in doublings), the newest among ties: the same
    benchmark run is the best anchor, and among equals today's software stack wins.
    """
    rank = {g: i for i, g in enumerate(order)}
    have = figures.loc[:, [*KEY, "generation", "num_gpus"]].copy()
    have["_rank"] = have["generation"].map(rank).fillna(-1)
    pairs = q.loc[:, [*KEY, "num_gpus"]].reset_index(names="_row")
    cand = pairs.merge(have, on=KEY, how="inner", suffixes=("", "_fig"))
    cand["_distance"] = np.abs(np.log2(cand["num_gpus_fig"] / cand["num_gpus"]))
    best = cand.sort_values(["_row", "_distance", "_rank"], ascending=[True, True, False])
    best = best.drop_duplicates("_row").set_index("_row")
    q["generation"] = best["generation"].reindex(range(len(q))).to_numpy()
    wanted = q.loc[:, [*KEY, "wanted_generation"]].merge(
        have.loc[:, [*KEY, "generation"]]
        .drop_duplicates()
        .rename(columns={"generation": "wanted_generation"})
        .assign(_exists=True),
        on=[*KEY, "wanted_generation"],
        how="left",
    )
    exists = wanted["_exists"].fillna(False).to_numpy(dtype=bool) & (
        q["wanted_generation"].to_numpy() != ""
    )
    q.loc[exists, "generation"] = q.loc[exists, "wanted_generation"]


def predict_throughput(
    model: ThroughputModel,
    queries: pd.DataFrame,
    figures: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Throughput, band, source and detail for every query row (see module docstring).

    `figures` replaces the model's own figures as the measured/published anchors (the
    plan passes its measured-before-published table), in aggregate_figures' columns.
    """
    figs = model.figures if figures is None else figures
    q = _prepare_queries(model, queries).reset_index(drop=True)
    _choose_generation(figs, q, model.generations)
    out = pd.DataFrame(
        {
            "throughput": np.nan,
            "throughput_low": np.nan,
            "throughput_high": np.nan,
            "throughput_source": "none",
            "throughput_detail": "",
        },
        index=q.index,
    )
    n = q["num_gpus"].to_numpy(float)

    # Exact figures.
    fig_cols = [*KEY, "generation", "num_gpus", "throughput", "throughput_low", "throughput_high"]
    exact = q.loc[:, [*KEY, "generation", "num_gpus"]].merge(
        figs.loc[:, [*fig_cols, "runs", "source", "detail"]], how="left"
    )
    hit = exact["throughput"].notna().to_numpy()
    for column in ("throughput", "throughput_low", "throughput_high"):
        out.loc[hit, column] = exact.loc[hit, column].to_numpy()
    out.loc[hit, "throughput_source"] = exact.loc[hit, "source"].to_numpy()
    runs = exact["runs"].fillna(0).astype(int).astype(str)
    gen_text = q["generation"].fillna("").astype(str).map(lambda g: f" ({g})" if g else "")
    out.loc[hit, "throughput_detail"] = (
        np.where(
            exact.loc[hit, "runs"].to_numpy() > 1,
            "median of " + runs[hit] + " runs" + gen_text[hit],
            exact.loc[hit, "detail"].fillna("").astype(str).where(lambda s: s != "", "1 run")
            + gen_text[hit],
        )
    ).astype(object)

    # Anchors for the rest: the largest figure count <= N, else the smallest above.
    counts = figs.groupby([*KEY, "generation"])["num_gpus"].agg(["nunique", "max"]).reset_index()
    q = q.merge(counts, on=[*KEY, "generation"], how="left")
    q["single_point"] = q["nunique"].fillna(0).to_numpy() == 1
    law = _law_for(model, q)
    rest = ~hit & q["generation"].notna().to_numpy()
    anchor = _anchors(figs, q.loc[rest])
    known_max = np.fmax(law["max_count"].to_numpy(), q["max"].to_numpy(dtype=float))
    m_node = np.fmax(q["gpus_per_node"].to_numpy(float), np.nan_to_num(known_max))

    if rest.any():
        rows = np.flatnonzero(rest)
        code, a, b = (
            law["law_code"].to_numpy()[rows],
            law["a"].to_numpy()[rows],
            law["b"].to_numpy()[rows],
        )
        an, ax = anchor["anchor_n"].to_numpy(), anchor["throughput"].to_numpy()
        eff = lambda k: effective_gpus(k, code, a, b)  # noqa: E731
        m = np.maximum(m_node[rows], an)
        x1 = ax / eff(an)
        capped = np.minimum(n[rows], m)
        x = ax * eff(capped) / eff(an) * np.where(n[rows] > m, n[rows] / m, 1.0)
        ratio, comm_known = _across_nodes(n[rows], m, x1, q.iloc[rows], model.comm)
        x = x * ratio
        d = np.abs(np.log2(n[rows] / an))
        q_low, q_high = law["q_low"].to_numpy()[rows], law["q_high"].to_numpy()[rows]
        low_ratio = anchor["throughput_low"].to_numpy() / ax
        high_ratio = anchor["throughput_high"].to_numpy() / ax
        out.loc[rows, "throughput"] = x
        out.loc[rows, "throughput_low"] = x * low_ratio * np.exp(-q_high * d)
        out.loc[rows, "throughput_high"] = x * high_ratio * np.exp(-q_low * d)
        out.loc[rows, "throughput_source"] = "scaled"
        beyond = _beyond_text(n[rows], m, comm_known, model.comm)
        out.loc[rows, "throughput_detail"] = (
            law["law_text"].to_numpy()[rows]
            + " through the "
            + pd.Series(an).map("{:g}".format).to_numpy()
            + "-GPU "
            + anchor["source"].to_numpy()
            + " figure"
            + gen_text.to_numpy()[rows]
            + beyond
        )

    estimate = q["generation"].isna().to_numpy()
    if estimate.any() and model.estimator is not None:
        _estimate_rows(model, q, law, estimate, n, m_node, out)
    elif estimate.any():
        out.loc[estimate, "throughput_detail"] = "no figure for this GPU and no spec regression"
    out.index = queries.index
    return out.loc[:, list(PREDICTION_COLUMNS)]


def _anchors(figs: pd.DataFrame, rest: pd.DataFrame) -> pd.DataFrame:
    """The anchor figure for each row of `rest` (aligned to it)."""
    cols = [*KEY, "generation", "num_gpus", "throughput", "throughput_low", "throughput_high"]
    base = figs.loc[:, [*cols, "source"]].copy()
    base["num_gpus"] = base["num_gpus"].astype(float)
    base["anchor_n"] = base["num_gpus"]
    base = base.sort_values("num_gpus")
    left = rest.loc[:, [*KEY, "generation", "num_gpus"]].copy()
    left["_row"] = np.arange(len(left))
    left = left.sort_values("num_gpus")
    by = [*KEY, "generation"]
    back = pd.merge_asof(left, base, on="num_gpus", by=by, direction="backward")
    fwd = pd.merge_asof(left, base, on="num_gpus", by=by, direction="forward")
    back = back.set_index("_row").sort_index()
    fwd = fwd.set_index("_row").sort_index()
    return back.where(back["throughput"].notna(), fwd).reset_index(drop=True)


def _beyond_text(n: np.ndarray, m: np.ndarray, known: np.ndarray, comm: CommModel) -> np.ndarray:
    network = (
        f"; beyond {{m}} GPUs: ring all-reduce over {comm.network_gbps_per_node:g} Gb/s per node, "
        f"overlap {comm.overlap:.0%}"
    )
    texts = np.full(len(n), "", dtype=object)
    for i in np.flatnonzero(n > m):
        texts[i] = (
            network.format(m=f"{m[i]:g}")
            if known[i]
            else f"; beyond {m[i]:g} GPUs: law extrapolated (no model size for the comm model)"
        )
    return texts


def _estimate_rows(
    model: ThroughputModel,
    q: pd.DataFrame,
    law: pd.DataFrame,
    rows_mask: np.ndarray,
    n: np.ndarray,
    m_node: np.ndarray,
    out: pd.DataFrame,
) -> None:
    assert model.estimator is not None
    rows = np.flatnonzero(rows_mask)
    sub = q.iloc[rows]
    target = sub["wanted_generation"].where(
        sub["wanted_generation"].isin(model.estimator.generations), model.target_generation
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
    x1 = est["estimate"].to_numpy(float)
    code, a, b = (
        law["law_code"].to_numpy()[rows],
        law["a"].to_numpy()[rows],
        law["b"].to_numpy()[rows],
    )
    m = m_node[rows]
    capped = np.minimum(n[rows], m)
    x = x1 * effective_gpus(capped, code, a, b) * np.where(n[rows] > m, n[rows] / m, 1.0)
    ratio, comm_known = _across_nodes(n[rows], m, x1, sub, model.comm)
    x = x * ratio
    d = np.log2(np.maximum(n[rows], 1.0))
    q_low, q_high = law["q_low"].to_numpy()[rows], law["q_high"].to_numpy()[rows]
    down = np.hypot(np.log(x1 / est["low"].to_numpy(float)), q_high * d)
    up = np.hypot(np.log(est["high"].to_numpy(float) / x1), -q_low * d)
    ok = np.isfinite(x)
    out.loc[rows, "throughput"] = x
    out.loc[rows, "throughput_low"] = x * np.exp(-down)
    out.loc[rows, "throughput_high"] = x * np.exp(up)
    out.loc[rows[ok], "throughput_source"] = "estimated"
    cv = np.where(est["cv_kind"] == "cell", "GPU known from other models", "GPU left out")
    mape = est["mape"].map(lambda v: f"{v:.0%}" if np.isfinite(v) else "?")
    detail = (
        "spec regression (peak TFLOPS at "
        + sub["precision"].to_numpy()
        + ", memory bandwidth and size; generation "
        + target.to_numpy()
        + "), cross-validated error "
        + mape.to_numpy()
        + " MAPE ("
        + cv
        + ")"
        + np.where(n[rows] > 1, " x " + law["law_text"].to_numpy()[rows], "")
        + _beyond_text(n[rows], m, comm_known, model.comm)
    )
    out.loc[rows, "throughput_detail"] = np.where(
        ok, detail, "no estimate: " + est["reason"].to_numpy()
    )
