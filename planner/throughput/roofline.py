"""An unmeasured GPU from the measured ones nearest it, through a roofline mix per model.

A training step's time on a GPU is a compute-bound part, inversely proportional to the
dense peak P at the precision, plus a memory-bound part, inversely proportional to the HBM
bandwidth B (Williams et al. 2009, "Roofline"):

    t(g) ∝ f P0 / P_g + (1 - f) B0 / B_g,    X_g = X_h t(h) / t(g)

with f the compute-bound share of the step on a reference GPU of peak P0 and bandwidth B0
(the geometric means of the measured GPUs'). f is fitted per (model, precision) on the
measured GPUs themselves: the value in [0, 1] (a grid of F_STEPS) that best predicts each
measured GPU from each other one (least squares on log ratios). The prediction for g is the
geometric mean over its NEAREST measured GPUs (nearest in log peak, then log bandwidth) of
their carried figures. Peaks are the spec table's training rates
(planner.throughput.spec_model.spec_features: FP16 with FP32 accumulation, the half rate
GeForce datasheets list, because mixed-precision training accumulates in FP32).

The prediction splits the step into three operator classes, each timed at its own rate
(the kernel-level form): tensor-core convolutions and GEMMs at the precision's peak P,
CUDA-core work (normalisation and activation math, FP32 optimizer updates, non-tensor
kernels) at the FP32 peak V, and memory-bound element-wise traffic at the bandwidth B:

    t(g) ∝ a P0 / P_g + c V0 / V_g + (1 - a - c) B0 / B_g

with the class shares (a, c) fitted per (model, precision) on the measured GPUs (a grid of
step 1 / (F_STEPS − 1) on the simplex), the same pairwise least squares on log ratios.
On the bundled Lambda figures, leave-one-GPU-out (tools/evaluate_estimator.py (a), 600
figures), the three classes err 20.8% MAPE against 22.2% for the compute/memory pair and
36.2% for the nearest-peak GPU times the peak ratio.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from planner.machines.specs import load_specs
from planner.throughput.spec_model import spec_features

F_STEPS = np.linspace(0.0, 1.0, 51)
NEAREST = 2


def step_units(
    log_peak: np.ndarray, log_bw: np.ndarray, f: float, ref: tuple[float, float]
) -> np.ndarray:
    """t(g) up to a constant: f P0 / P_g + (1 - f) B0 / B_g, from log peaks and bandwidths,
    `ref` = (log P0, log B0)."""
    return f * np.exp(ref[0] - np.asarray(log_peak, float)) + (1.0 - f) * np.exp(
        ref[1] - np.asarray(log_bw, float)
    )


def fit_compute_share(figures: pd.DataFrame) -> tuple[float, tuple[float, float]]:
    """(f, reference) for one (model, precision): over every ordered pair of GPUs in
    `figures` (throughput, log_peak, log_bw), the grid value of f with the least squared
    log error of X_i = X_j t(j) / t(i); the reference is the GPUs' mean log peak and
    bandwidth."""
    x = figures["throughput"].to_numpy(float)
    lp, lb = figures["log_peak"].to_numpy(float), figures["log_bw"].to_numpy(float)
    ref = (float(np.mean(lp)), float(np.mean(lb)))
    i, j = np.where(~np.eye(len(x), dtype=bool))
    if not len(i):
        return 0.5, ref
    errors = []
    for f in F_STEPS:
        t = step_units(lp, lb, float(f), ref)
        errors.append(float(np.sum(np.log(x[j] * t[j] / t[i] / x[i]) ** 2)))
    return float(F_STEPS[int(np.argmin(errors))]), ref


def _class_grid() -> np.ndarray:
    """(G, 3) shares (a, c, 1 − a − c) on the simplex, F_STEPS per axis."""
    a, c = np.meshgrid(F_STEPS, F_STEPS, indexing="ij")
    keep = a + c <= 1.0 + 1e-9
    a, c = a[keep], c[keep]
    return np.column_stack([a, c, np.clip(1.0 - a - c, 0.0, 1.0)])


CLASS_GRID = _class_grid()


def class_units(rates: np.ndarray, shares: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """t(g) up to a constant for GPUs with log rates `rates` (n, 3: log peak, log FP32
    peak, log bandwidth): shares (G, 3) or (3,) times exp(ref − rates). Shape (G, n) or (n,)."""
    return np.asarray(shares, float) @ np.exp(np.asarray(ref, float)[:, None] - rates.T)


def fit_class_shares(throughput: np.ndarray, rates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(shares (3,), ref (3,)): the grid point with the least squared log error of
    X_i = X_j t(j) / t(i) over every ordered pair; Σ_{i≠j} (d_j − d_i)² = 2n Σd² − 2(Σd)²
    with d = log X + log t, so the search is one matrix product."""
    ref = rates.mean(axis=0)
    d = np.log(throughput)[None, :] + np.log(class_units(rates, CLASS_GRID, ref))
    n = d.shape[1]
    errors = 2 * n * np.sum(d**2, axis=1) - 2 * np.sum(d, axis=1) ** 2
    return CLASS_GRID[int(np.argmin(errors))], ref


def _rates(names: pd.Series, precisions: pd.Series) -> pd.DataFrame:
    """log peak, log FP32 peak (the peak where the spec has none) and log bandwidth."""
    features = spec_features(names, precisions)
    vector = np.log(names.map(load_specs()["fp32_tflops"]).astype(float))
    return features.assign(log_vector=vector.fillna(features["log_peak"]))


def roofline_predict(figures: pd.DataFrame, gpu_name: str, precision: str) -> float:
    """Throughput of `gpu_name` from `figures` (gpu_name, precision, throughput: one
    model's 1-GPU figures of other GPUs at this precision): the roofline mix fitted on
    them, from its NEAREST measured GPUs. NaN when it has no spec peak or nothing to
    carry from."""
    donors = figures.loc[figures["gpu_name"] != gpu_name]
    if donors.empty:
        return float("nan")
    columns = ["log_peak", "log_vector", "log_bw"]
    donors = donors.assign(**_rates(donors["gpu_name"], donors["precision"]))
    donors = donors.dropna(subset=columns)
    target = _rates(pd.Series([gpu_name]), pd.Series([precision])).iloc[0]
    if donors.empty or not np.all(np.isfinite(target[columns].to_numpy(float))):
        return float("nan")
    shares, ref = fit_class_shares(
        donors["throughput"].to_numpy(float), donors[columns].to_numpy(float)
    )
    distance = np.abs(donors["log_peak"] - target["log_peak"]) + 0.1 * np.abs(
        donors["log_bw"] - target["log_bw"]
    )
    near = donors.loc[distance.sort_values(kind="stable").index[:NEAREST]]
    t_near = class_units(near[columns].to_numpy(float), shares, ref)
    t_g = class_units(target[columns].to_numpy(float)[None, :], shares, ref)
    values = near["throughput"].to_numpy(float) * t_near / t_g
    return float(np.exp(np.mean(np.log(values))))
