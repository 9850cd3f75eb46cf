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
"""

from __future__ import annotations

import numpy as np
import pandas as pd

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


def roofline_predict(figures: pd.DataFrame, gpu_name: str, precision: str) -> float:
    """Throughput of `gpu_name` from `figures` (gpu_name, precision, throughput: one
    model's 1-GPU figures of other GPUs at this precision): the roofline mix fitted on
    them, from its NEAREST measured GPUs. NaN when it has no spec peak or nothing to
    carry from."""
    donors = figures.loc[figures["gpu_name"] != gpu_name]
    if donors.empty:
        return float("nan")
    features = spec_features(donors["gpu_name"], donors["precision"])
    donors = donors.assign(**features).dropna(subset=["log_peak", "log_bw"])
    target = spec_features(pd.Series([gpu_name]), pd.Series([precision])).iloc[0]
    if donors.empty or not np.isfinite(target["log_peak"]) or not np.isfinite(target["log_bw"]):
        return float("nan")
    f, ref = fit_compute_share(donors)
    distance = np.abs(donors["log_peak"] - target["log_peak"]) + 0.1 * np.abs(
        donors["log_bw"] - target["log_bw"]
    )
    near = donors.loc[distance.sort_values(kind="stable").index[:NEAREST]]
    t_near = step_units(near["log_peak"].to_numpy(float), near["log_bw"].to_numpy(float), f, ref)
    t_g = step_units(np.array([target["log_peak"]]), np.array([target["log_bw"]]), f, ref)
    values = near["throughput"].to_numpy(float) * t_near / t_g
    return float(np.exp(np.mean(np.log(values))))
