"""One-GPU training throughput of a GPU nobody measured, from its specs.

A calibrated roofline in log space: a kernel's time is bounded by compute (FLOPs / peak)
and by memory traffic (bytes / bandwidth) (Williams, Waterman & Patterson 2009,
"Roofline", CACM 52(4)); a network mixes both, so per model and precision

  log X = α_m + α_p + α_mp + (β + β_mp) · [log peak_p, log memory_bw, log memory_gb]
          + γ_gen + γ_gen,m + u_gpu

with peak_p the dense peak at the precision (never below the FP32 peak: autocast falls back
to FP32 where a chip has no fast FP16/TF32), memory size standing in for the batch size a
card allows, γ the benchmark generation (Lambda's v0/v1/v2 containers differ: the same
A100 trains ResNet-50 ~20% faster in v1 than in v0) and u the GPU's own offset, known only
for GPUs measured on other models. The model-specific terms (α_mp, β_mp, γ_gen,m, u) are
ridge-shrunk toward the shared ones, so a model measured on few GPUs borrows the slopes of
the others. The fit is iteratively reweighted least squares with Huber weights
(Huber 1964), so one odd published figure does not bend a slope.

Bands come from the model's own cross-validated error: leave-one-GPU-out (the GPU absent
from the training data entirely) and K-fold over (GPU, model, precision) cells (the GPU
present on other models). The empirical 10% and 90% quantiles of the log residuals per
(model, precision), shrunk halfway toward those of all pairs pooled (all pairs alone when a
pair has fewer than MIN_CV_RESIDUALS), give an 80% band.

Training rows (`rows`): gpu_name, model, precision, generation, throughput (1-GPU).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from planner.machines.specs import load_specs

# Spec column of the dense peak at each precision label (Lambda's and the planner's).
PEAK_COLUMNS: dict[str, str] = {
    "fp32": "fp32_tflops",
    "tf32": "tf32_tflops",
    "fp16": "fp16_tflops",
    "fp16_amp": "fp16_tflops",
    "bf16": "bf16_tflops",
}
# Labels that mean the same arithmetic (AMP with 16-bit tensor-core math): a label with no
# training rows borrows a sibling's intercept.
PRECISION_FAMILY: dict[str, str] = {
    "fp16": "amp16",
    "fp16_amp": "amp16",
    "bf16": "amp16",
    "tf32": "tf32",
    "fp32": "fp32",
}
# Memory size is not a feature: it changes the batch a card allows, not its speed at a
# batch (the step model and the fit check use it); the same silicon with more memory is
# not faster.
FEATURES = ("log_peak", "log_bw")
# The fp16 peak the regression uses under AMP: the FP32-accumulate figure (fp16_tflops;
# half the FP16-accumulate rate on GeForce cards, whose figure is fp16_fp16acc_tflops).
# Scored leave-one-GPU-out on the bundled 1-GPU rows (tools/evaluate_estimator.py), the
# FP32-accumulate peak predicts better: 18.8% MAPE overall against 20.1% with the
# FP16-accumulate one, and GeForce fp16 rows +6% (mean signed error) against +27%.
AMP_LABELS = ("fp16", "fp16_amp")
AMP_PEAK = "fp32acc"
HUBER_C = 0.1  # log units (~10%): residuals beyond it are down-weighted
IRLS_STEPS = 8
CV_IRLS_STEPS = 2  # folds start from the full fit's weights
PENALTY = {
    "model": 1e-4,
    "precision": 1e-4,
    "pair": 1.0,
    "slope": 1e-4,
    "pair_slope": 1.0,
    "generation": 1e-2,
    "generation_model": 1.0,
    "gpu": 1.0,
}
CV_FOLDS = 10
CV_SEED = 20260501
MIN_CV_RESIDUALS = 12
BAND_QUANTILES = (0.1, 0.9)


def spec_features(gpu_names: pd.Series, precisions: pd.Series) -> pd.DataFrame:
    """log peak TFLOP/s at the precision, log memory GB/s and log memory GB per row.

    The peak is max(peak at the precision, FP32 peak); bf16 needs bf16 hardware (NaN
    without it). NaN for GPUs with no spec row or precisions without a peak column.
    """
    specs = load_specs()
    fp32 = gpu_names.map(specs["fp32_tflops"]).astype(float)
    peak = pd.Series(np.nan, index=gpu_names.index)
    for label, column in PEAK_COLUMNS.items():
        rows = precisions == label
        if rows.any():
            own = gpu_names[rows].map(specs[column]).astype(float)
            if label in AMP_LABELS and AMP_PEAK == "fp16acc":
                fast = gpu_names[rows].map(specs["fp16_fp16acc_tflops"]).astype(float)
                own = np.fmax(own, fast) if label != "bf16" else own
            peak[rows] = own if label == "bf16" else np.fmax(own, fp32[rows])
    return pd.DataFrame(
        {
            "log_peak": np.log(peak),
            "log_bw": np.log(gpu_names.map(specs["memory_bw_gbs"]).astype(float)),
            "log_mem": np.log(gpu_names.map(specs["memory_gb"]).astype(float)),
        },
        index=gpu_names.index,
    )


@dataclass(frozen=True)
class _Layout:
    models: tuple[str, ...]
    precisions: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...]
    generations: tuple[str, ...]
    gpus: tuple[str, ...]
    mean: np.ndarray
    mem_range: tuple[float, float]
    peak_range: tuple[float, float]  # TFLOP/s, over the training rows
    bw_range: tuple[float, float]  # GB/s
    tdp_min_w: float  # lowest board power among the training GPUs


def chip(gpu_names: pd.Series) -> pd.Series:
    """The silicon a GPU name stands for: memory-size variants share it (V100-SXM2-16GB and
    V100-SXM2-32GB are one chip), so they share the GPU offset u."""
    return gpu_names.astype(str).str.replace(r"-\d+GB$", "", regex=True)


def _one_hot(values: pd.Series, levels: tuple) -> np.ndarray:
    index = {v: i for i, v in enumerate(levels)}
    codes = values.map(index)
    out = np.zeros((len(values), len(levels)))
    ok = codes.notna().to_numpy()
    out[np.flatnonzero(ok), codes[ok].astype(int).to_numpy()] = 1.0
    return out


def _design(rows: pd.DataFrame, layout: _Layout) -> tuple[np.ndarray, np.ndarray]:
    """Design matrix (dense: predicting needs no scipy) and per-column ridge penalties
    (see the module docstring)."""
    feats = rows.loc[:, list(FEATURES)].to_numpy(float).copy()
    feats -= layout.mean
    pair_keys = pd.Series(list(zip(rows["model"], rows["precision"], strict=True)))
    pair = _one_hot(pair_keys, layout.pairs)
    gen = _one_hot(rows["generation"].reset_index(drop=True), layout.generations)
    model = _one_hot(rows["model"].reset_index(drop=True), layout.models)
    gen_model = (gen[:, :, None] * model[:, None, :]).reshape(len(rows), -1)
    pair_slope = (pair[:, :, None] * feats[:, None, :]).reshape(len(rows), -1)
    blocks = [
        ("model", model),
        ("precision", _one_hot(rows["precision"].reset_index(drop=True), layout.precisions)),
        ("pair", pair),
        ("slope", feats),
        ("pair_slope", pair_slope),
        ("generation", gen),
        ("generation_model", gen_model),
        ("gpu", _one_hot(chip(rows["gpu_name"].reset_index(drop=True)), layout.gpus)),
    ]
    matrix = np.hstack([block for _, block in blocks])
    penalty = np.concatenate([np.full(block.shape[1], PENALTY[name]) for name, block in blocks])
    return matrix, penalty


def _solve(
    design: np.ndarray,
    y: np.ndarray,
    penalty: np.ndarray,
    weights: np.ndarray | None = None,
    steps: int = IRLS_STEPS,
) -> tuple[np.ndarray, np.ndarray]:
    """Ridge IRLS with Huber weights (Huber 1964); returns (coefficients, weights).

    The design is solved as a sparse matrix (one-hot blocks): its products stay out of
    multithreaded BLAS, which on a busy machine costs more in thread contention than the
    arithmetic.
    """
    from scipy.sparse import csr_matrix, diags
    from scipy.sparse.linalg import spsolve

    matrix = csr_matrix(design)
    weights = np.ones(len(y)) if weights is None else weights.copy()
    coef = np.zeros(matrix.shape[1])
    ridge = diags(penalty + 1e-9)
    for _ in range(steps):
        weighted = matrix.T @ diags(weights)
        coef = spsolve((weighted @ matrix + ridge).tocsc(), weighted @ y)
        residual = np.abs(y - matrix @ coef)
        weights = np.where(residual <= HUBER_C, 1.0, HUBER_C / np.maximum(residual, 1e-12))
    return coef, weights


def _layout(rows: pd.DataFrame, generations: tuple[str, ...]) -> _Layout:
    mem = rows["log_mem"].to_numpy(float)
    return _Layout(
        models=tuple(sorted(rows["model"].unique())),
        precisions=tuple(sorted(rows["precision"].unique())),
        pairs=tuple(sorted(set(zip(rows["model"], rows["precision"], strict=True)))),
        generations=generations,
        gpus=tuple(sorted(chip(rows["gpu_name"]).unique())),
        mean=rows.loc[:, list(FEATURES)].to_numpy(float).mean(axis=0),
        mem_range=(float(mem.min()), float(mem.max())),
        peak_range=(float(np.exp(rows["log_peak"].min())), float(np.exp(rows["log_peak"].max()))),
        bw_range=(float(np.exp(rows["log_bw"].min())), float(np.exp(rows["log_bw"].max()))),
        tdp_min_w=float(rows["gpu_name"].map(load_specs()["tdp_w"]).min()),
    )


def _predict_log(layout: _Layout, coef: np.ndarray, rows: pd.DataFrame) -> np.ndarray:
    matrix, _ = _design(rows, layout)
    return matrix @ coef


def _prepare(rows: pd.DataFrame) -> pd.DataFrame:
    rows = rows.reset_index(drop=True)
    feats = spec_features(rows["gpu_name"], rows["precision"])
    out = pd.concat([rows, feats], axis=1)
    return out.loc[out[list(FEATURES)].notna().all(axis=1)].reset_index(drop=True)


def _cross_validate(
    rows: pd.DataFrame,
    weights: np.ndarray,
    generations: tuple[str, ...],
    target_generation: str | None = None,
) -> pd.DataFrame:
    """Log residuals log(predicted / truth): leave-one-GPU-out and K-fold over cells.

    Each fold is a fresh fit on the other rows (its own feature centring and memory
    range), starting IRLS from the full fit's weights. With `target_generation`, held-out
    GPUs are predicted for that generation instead of their own (what a query that
    names no generation gets).
    """
    cells = rows.loc[:, ["gpu_name", "model", "precision"]].drop_duplicates()
    fold = np.random.default_rng(CV_SEED).permutation(len(cells)) % CV_FOLDS
    cell_fold = rows.merge(cells.assign(_fold=fold), how="left")["_fold"].to_numpy()
    splits = [("logo", (rows["gpu_name"] == g).to_numpy()) for g in rows["gpu_name"].unique()]
    if target_generation is None:
        splits += [("cell", cell_fold == k) for k in range(min(CV_FOLDS, len(cells)))]
    parts = []
    for kind, test in splits:
        train = rows.loc[~test]
        held = test & rows["model"].isin(train["model"]).to_numpy()
        if kind == "cell":
            held &= rows["gpu_name"].isin(train["gpu_name"]).to_numpy()
        if not held.any() or train["gpu_name"].nunique() < 2:
            continue
        layout = _layout(train, generations)
        matrix, penalty = _design(train, layout)
        y = np.log(train["throughput"].to_numpy(float))
        coef, _ = _solve(matrix, y, penalty, weights[~test], steps=CV_IRLS_STEPS)
        queries = rows.loc[held]
        if target_generation is not None:
            queries = queries.assign(generation=target_generation)
        predicted = np.exp(_predict_log(layout, coef, queries))
        parts.append(rows.loc[held].assign(kind=kind, predicted=predicted))
    columns = ["kind", "gpu_name", "model", "precision", "generation", "throughput", "predicted"]
    if not parts:
        return pd.DataFrame(columns=[*columns, "log_residual"])
    cv = pd.concat(parts, ignore_index=True).loc[:, columns]
    cv["log_residual"] = np.log(cv["predicted"] / cv["throughput"])
    return cv


def leave_one_gpu_out(
    rows: pd.DataFrame,
    generations: tuple[str, ...] | None = None,
    target_generation: str | None = None,
) -> pd.DataFrame:
    """Leave-one-GPU-out predictions of 1-GPU rows (the `logo` rows of the CV table).

    With `target_generation`, every held-out GPU is predicted for that generation rather
    than its own. Columns as SpecEstimator.cv.
    """
    prepared = _prepare(rows)
    order = generations or tuple(sorted(prepared["generation"].astype(str).unique()))
    layout = _layout(prepared, order)
    matrix, penalty = _design(prepared, layout)
    _, weights = _solve(matrix, np.log(prepared["throughput"].to_numpy(float)), penalty)
    cv = _cross_validate(prepared, weights, order, target_generation)
    return cv.loc[cv["kind"] == "logo"].reset_index(drop=True)


def _bands(cv: pd.DataFrame) -> pd.DataFrame:
    """Per (kind, model, precision): n, mape, q_low, q_high of the log residuals."""
    columns = ["kind", "model", "precision", "n", "mape", "q_low", "q_high"]
    if cv.empty:
        return pd.DataFrame(columns=columns)

    def stats(e: pd.Series) -> pd.Series:
        q_low, q_high = np.quantile(e, BAND_QUANTILES)
        return pd.Series(
            {
                "n": float(len(e)),
                "mape": float(np.mean(np.abs(np.expm1(e)))),
                "q_low": min(float(q_low), 0.0),
                "q_high": max(float(q_high), 0.0),
            }
        )

    per_pair = (
        cv.groupby(["kind", "model", "precision"])["log_residual"].apply(stats).unstack()
    ).reset_index()
    pooled = cv.groupby("kind")["log_residual"].apply(stats).unstack()
    # A quantile from ~20 residuals is noisy: shrink each pair's halfway to the pooled one.
    for column in ("q_low", "q_high"):
        per_pair[column] = (per_pair[column] + per_pair["kind"].map(pooled[column])) / 2
    pooled = pooled.reset_index().assign(model="", precision="")
    few = per_pair["n"] < MIN_CV_RESIDUALS
    fallback = per_pair.loc[few, ["kind", "model", "precision"]].merge(
        pooled.drop(columns=["model", "precision"]), on="kind"
    )
    per_pair = pd.concat([per_pair.loc[~few], fallback, pooled], ignore_index=True)
    return per_pair.loc[:, columns]


@dataclass(frozen=True)
class SpecEstimator:
    """A fitted spec regression with its cross-validation residuals and bands.

    `cv`: kind (logo | cell), gpu_name, model, precision, generation, throughput,
    predicted, log_residual. `bands`: kind, model, precision, n, mape, q_low, q_high
    (model == precision == "" is the pooled row).
    """

    layout: _Layout
    coef: np.ndarray
    cv: pd.DataFrame
    bands: pd.DataFrame

    @property
    def generations(self) -> tuple[str, ...]:
        """Benchmark generations, oldest first."""
        return self.layout.generations

    def predict(self, queries: pd.DataFrame) -> pd.DataFrame:
        """1-GPU throughput for rows of gpu_name, model, precision, generation.

        Returns, aligned to `queries.index`: estimate, low, high (80% band), mape, cv_kind
        (logo: GPU not in the training data; cell: GPU known from other models), reason
        (why an estimate is missing, else ""), caveat (where the GPU lies outside what the
        regression was calibrated on, else ""): the band does not cover that risk.
        """
        q = queries.loc[:, ["gpu_name", "model", "precision", "generation"]].copy()
        q["precision"] = self._trained_precision(q["model"], q["precision"])
        feats = spec_features(q["gpu_name"], queries["precision"])
        q = pd.concat([q, feats], axis=1)
        known_gen = q["generation"].isin(self.layout.generations)
        q["generation"] = q["generation"].where(known_gen, self.layout.generations[-1])
        reason = np.select(
            [
                ~q["model"].isin(self.layout.models),
                q["precision"].isna(),
                feats.isna().any(axis=1),
            ],
            [
                "no 1-GPU figure of this model to calibrate on",
                "no figure at this precision (or a sibling precision) to calibrate on",
                "no spec row or no peak at this precision",
            ],
            "",
        )
        ok = reason == ""
        out = pd.DataFrame(
            {
                "estimate": np.nan,
                "low": np.nan,
                "high": np.nan,
                "mape": np.nan,
                "cv_kind": "",
                "reason": reason,
                "caveat": "",
            },
            index=queries.index,
        )
        if not ok.any():
            return out
        rows = q.loc[ok]
        estimate = np.exp(_predict_log(self.layout, self.coef, rows))
        kind = np.where(chip(rows["gpu_name"]).isin(self.layout.gpus), "cell", "logo")
        band = self._band(rows["model"], rows["precision"], pd.Series(kind, index=rows.index))
        out.loc[ok, "estimate"] = estimate
        out.loc[ok, "low"] = estimate * np.exp(-band["q_high"].to_numpy())
        out.loc[ok, "high"] = estimate * np.exp(-band["q_low"].to_numpy())
        out.loc[ok, "mape"] = band["mape"].to_numpy()
        out.loc[ok, "cv_kind"] = kind
        out.loc[ok, "caveat"] = self._caveats(rows)
        return out

    def _caveats(self, rows: pd.DataFrame) -> np.ndarray:
        """Say where a GPU's specs lie outside the calibrated range (extrapolation)."""
        layout = self.layout
        peak = np.exp(rows["log_peak"].to_numpy(float))
        bw = np.exp(rows["log_bw"].to_numpy(float))
        tdp = rows["gpu_name"].map(load_specs()["tdp_w"]).to_numpy(float)
        low_peak, high_peak = layout.peak_range
        low_bw, high_bw = layout.bw_range
        watts = layout.tdp_min_w
        notes = [
            (peak < low_peak * 0.99, f"peak below the calibrated {low_peak:g} TFLOPS"),
            (peak > high_peak * 1.01, f"peak above the calibrated {high_peak:g} TFLOPS"),
            (bw < low_bw * 0.99, f"bandwidth below the calibrated {low_bw:g} GB/s"),
            (bw > high_bw * 1.01, f"bandwidth above the calibrated {high_bw:g} GB/s"),
            (
                tdp < watts * 0.99,
                f"board power below the calibrated {watts:g} W "
                "(power-capped clocks may make it optimistic)",
            ),
        ]
        text = np.full(len(rows), "", dtype=object)
        for mask, note in notes:
            text = np.where(mask, np.where(text == "", note, text + "; " + note), text)
        return np.where(text != "", "extrapolated: " + text, "")

    def _trained_precision(self, models: pd.Series, precisions: pd.Series) -> pd.Series:
        """The query's precision label, or a trained sibling label of the same family."""
        trained = set(self.layout.precisions)
        sibling: dict[str, str | None] = {}
        for label in PEAK_COLUMNS:
            if label in trained:
                sibling[label] = label
            else:
                family = [p for p in trained if PRECISION_FAMILY.get(p) == PRECISION_FAMILY[label]]
                sibling[label] = sorted(family)[0] if family else None
        return precisions.map(sibling)

    def _band(self, models: pd.Series, precisions: pd.Series, kind: pd.Series) -> pd.DataFrame:
        keys = pd.DataFrame({"kind": kind, "model": models, "precision": precisions})
        exact = keys.merge(self.bands, on=["kind", "model", "precision"], how="left")
        pooled = self.bands.loc[self.bands["model"] == ""].set_index("kind")
        for column in ("mape", "q_low", "q_high"):
            fill = exact["kind"].map(pooled[column]) if not pooled.empty else np.nan
            exact[column] = (
                exact[column]
                .fillna(fill)
                .fillna({"mape": 0.3, "q_low": -0.3, "q_high": 0.3}[column])
            )
        return exact


def fit_spec_estimator(
    rows: pd.DataFrame, generations: tuple[str, ...] | None = None
) -> SpecEstimator:
    """Fit the spec regression on 1-GPU rows and cross-validate it (see module docstring).

    `rows`: gpu_name, model, precision, generation, throughput (> 0). Rows of GPUs
    without a spec row are left out. `generations` orders generations oldest first
    (default: sorted).
    """
    prepared = _prepare(rows)
    if prepared.empty:
        raise ValueError("no 1-GPU figure of a GPU with a spec row: nothing to calibrate on")
    order = generations or tuple(sorted(prepared["generation"].astype(str).unique()))
    layout = _layout(prepared, order)
    matrix, penalty = _design(prepared, layout)
    y = np.log(prepared["throughput"].to_numpy(float))
    coef, weights = _solve(matrix, y, penalty)
    cv = _cross_validate(prepared, weights, order)
    return SpecEstimator(layout, coef, cv, _bands(cv))
