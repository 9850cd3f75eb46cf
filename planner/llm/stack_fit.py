"""Fit each stack's parameters (planner.llm.stack_profiles) on published runs (planner.llm.corpus),
and predict every source's runs from a fit without that source (leave-one-source-out).

Each run is timed by the operator model at a base set of parameters; its step splits into
the parts each parameter scales (stack_profiles.StepParts; GEMMs apart for the fp8 factor),
so a parameter set's tokens/s follows without a new layout search. The fit minimises, by
scipy.optimize.least_squares (soft-L1 loss), the runs' log(predicted / measured) over
DATA_LOG_SIGMA plus each parameter's log distance from its centre over PRIOR_LOG_SIGMA: first
one pooled set for all stacks (centred on stack_profiles.PRIOR), then each stack with runs
its own set centred on the pooled one (a stack with few runs stays near it); the fp8 GEMM
factor and the MoE factor are pooled only. Then every run is timed again
at the fitted parameters (its layout may change) and the fit repeated (ROUNDS). Predictions
of held-out runs use the full model (planner.llm.throughput.predict_layout) at the fold's
parameters, so the layout search and every nonlinearity are in the error reported.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

from planner.llm.corpus import CorpusRun
from planner.llm.stack_profiles import (
    PRIOR,
    StackParams,
    StepParts,
    layout_step_parts,
    prior_params,
    rescaled_step,
)
from planner.llm.throughput import LayoutPrediction, predict_layout
from planner.settings import LLMSettings

FAMILY_PARAMS = (
    "kernel_efficiency", "unfused", "comm_exposure", "tp_comm_exposure", "cast_factor",
    "overlap_cost",
)  # fmt: skip
POOLED_PARAMS = (*FAMILY_PARAMS, "fp8_gemm_factor", "moe_factor")
# How far (in log) a parameter may sit from its centre at the cost of one run's typical
# error: assumptions, wide enough that 10+ runs move a stack where its data say.
PRIOR_LOG_SIGMA = {
    "kernel_efficiency": 0.3,
    "unfused": 0.7,
    "comm_exposure": 1.0,
    "tp_comm_exposure": 1.0,
    "cast_factor": 1.0,
    "fp8_gemm_factor": 0.3,
    "moe_factor": 0.7,
    "overlap_cost": 0.7,
}
BOUNDS = {
    "kernel_efficiency": (0.3, 2.0),
    # eager PyTorch runs each norm, activation and residual op as its own kernel: about
    # three times the fused traffic (each reads and writes what a fused kernel reads once);
    # the fused ideal is the least traffic there is. Below 1 the factor would stand in for
    # other errors: with the compiled small-model runs (nanochat) it fell to 0.5, and
    # gpuplan's own H200 runs timed at their own operator rates came out 17% too fast.
    "unfused": (1.0, 3.0),
    "comm_exposure": (0.2, 10.0),
    "tp_comm_exposure": (0.05, 5.0),
    "cast_factor": (0.1, 10.0),
    "fp8_gemm_factor": (0.4, 1.2),
    "moe_factor": (0.5, 5.0),
    # Lee et al. 2025 measured up to 40%; 1 would cost the hidden collectives as if exposed
    # (the floor keeps the log-space fit away from 0)
    "overlap_cost": (0.02, 1.0),
}
DATA_LOG_SIGMA = 0.15  # a run's typical log error: the unit of the soft-L1 loss
ROUNDS = 2
SOURCE_RUNS_CAP = 8  # runs per source at full weight (source_weights)


@dataclass(frozen=True)
class Timed:
    """One run timed at `base`: its step's parts, the GEMM seconds within the kernels, and
    the predicted tokens/s per GPU (NaN when no layout fits)."""

    run: CorpusRun
    base: StackParams
    parts: StepParts
    gemm_s: float
    tokens_per_gpu: float


def run_settings(run: CorpusRun, stack: StackParams, pinned: bool = True) -> LLMSettings:
    """The LLMSettings a corpus run states, under `stack` (its stated tp/pp/cp if `pinned`;
    the attention kernel its source says it ran, else the stack's)."""
    return LLMSettings(
        global_batch_tokens=run.global_batch_tokens,
        micro_batch=run.micro_batch,
        recompute=run.recompute,
        zero=run.zero,
        framework=run.family,
        stack=stack,
        pinned=run.pinned if pinned else None,
        eager=run.eager,
        flash_attention=run.flash_attention,
        fp8_recipe=run.fp8_recipe,
        moe_overlap=run.moe_overlap,
        dp_overlap=run.dp_overlap,
        tp_overlap=run.tp_overlap,
        fp32_reduce=run.fp32_reduce,
        pinned_ran=pinned and run.pinned is not None,
        attention=run.attention_kernel or "auto",
        board_gpus=run.board_gpus,
    )


def predict_run(
    run: CorpusRun, stack: StackParams, ops: pd.DataFrame | None = None
) -> LayoutPrediction:
    """The operator model's prediction of one corpus run under `stack` (with the attention
    kernel the run states): at its stated layout, else (the stack cannot run it, or it does
    not fit) the searched one. `ops`: a
    results table whose operator-benchmark runs replace the kernel defaults on their GPU."""
    found = predict_layout(
        run.workload, run.precision, run.gpu_name, run.num_gpus, run.gpus_per_node,
        run.network_gbps, settings=run_settings(run, stack), ops=ops,
    )  # fmt: skip
    if found.layout.fits or run.pinned is None:
        return found
    return predict_layout(
        run.workload, run.precision, run.gpu_name, run.num_gpus, run.gpus_per_node,
        run.network_gbps, settings=run_settings(run, stack, pinned=False), ops=ops,
    )  # fmt: skip


def time_run(run: CorpusRun, stack: StackParams) -> Timed:
    """The run timed at `stack` (Timed)."""
    found = predict_run(run, stack)
    layout = found.layout
    tokens = found.tokens_per_s / run.num_gpus if layout.fits else math.nan
    gemm = layout.step_s * layout.gemm_share if layout.fits else math.nan
    return Timed(run, stack, layout_step_parts(layout), gemm, tokens)


def rescaled_tokens(timed: Timed, theta: StackParams) -> float:
    """Tokens/s per GPU of a timed run under `theta`, its layout kept (module docstring)."""
    fp8_gemm_s = timed.gemm_s if timed.run.precision == "fp8" else 0.0
    step = rescaled_step(timed.parts, timed.base, theta, fp8_gemm_s)
    return timed.tokens_per_gpu * timed.parts.total / step


def source_weights(sources: list[str]) -> np.ndarray:
    """Per-run weights on the data residuals: a source with more than SOURCE_RUNS_CAP runs
    counts as that many (weight sqrt(cap / its runs)), so that one large sweep does not set
    the pooled parameters alone; smaller sources keep weight 1 (a single run is not made to
    count as several)."""
    counts = {s: sources.count(s) for s in set(sources)}
    return np.sqrt([min(1.0, SOURCE_RUNS_CAP / counts[s]) for s in sources])


def _set(stack: StackParams, values: dict[str, float]) -> StackParams:
    """`stack` with the named float parameters replaced."""
    return replace(stack, **values)  # type: ignore[arg-type]


def _solve(
    timed: list[Timed],
    names: tuple[str, ...],
    start: np.ndarray,
    centre: np.ndarray,
    theta_of: Callable[[np.ndarray, Timed], StackParams],
) -> np.ndarray:
    """least_squares over log parameters `names` (data and prior residuals: module
    docstring); `theta_of(x, run)` is a run's parameters at x."""
    truth = np.log([t.run.tokens_per_gpu for t in timed])
    weight = source_weights([t.run.source for t in timed])
    sigma = np.array([PRIOR_LOG_SIGMA[n.split(":")[0]] for n in names])
    low = np.log([BOUNDS[n.split(":")[0]][0] for n in names])
    high = np.log([BOUNDS[n.split(":")[0]][1] for n in names])

    def residuals(x: np.ndarray) -> np.ndarray:
        predicted = np.log([rescaled_tokens(t, theta_of(x, t)) for t in timed])
        data = weight * (predicted - truth) / DATA_LOG_SIGMA
        return np.concatenate([data, (x - centre) / sigma])

    x0 = np.clip(start, low + 1e-9, high - 1e-9)
    return least_squares(residuals, x0, bounds=(low, high), loss="soft_l1").x


@dataclass(frozen=True)
class Fit:
    """Fitted parameters: pooled, and by family (each with its runs count)."""

    pooled: StackParams
    families: dict[str, StackParams]

    def for_run(self, run: CorpusRun) -> StackParams:
        """The parameters a run is predicted with (its family's, else pooled)."""
        return self.families.get(run.family) or replace(
            self.pooled,
            framework=run.family,
            attention_kernel=prior_params(run.family).attention_kernel,
            runs=0,
        )


def fit_stacks(runs: list[CorpusRun]) -> Fit:
    """Fitted parameters on `runs` (module docstring). Runs no layout fits are left out."""
    families = sorted({r.family for r in runs})
    fit = Fit(PRIOR, {f: prior_params(f) for f in families})
    prior_centre = np.log([getattr(PRIOR, n) for n in POOLED_PARAMS])
    for _ in range(ROUNDS):
        timed = [time_run(r, fit.for_run(r)) for r in runs]
        timed = [t for t in timed if math.isfinite(t.tokens_per_gpu) and t.tokens_per_gpu > 0]

        def pooled_theta(x: np.ndarray, t: Timed) -> StackParams:
            return _set(t.base, dict(zip(POOLED_PARAMS, map(float, np.exp(x)), strict=True)))

        x = _solve(timed, POOLED_PARAMS, prior_centre, prior_centre, pooled_theta)
        values = dict(zip(POOLED_PARAMS, map(float, np.exp(x)), strict=True))
        pooled = _set(replace(PRIOR, framework="pooled"), values)
        fitted = {}
        for family in families:
            own = [t for t in timed if t.run.family == family]
            base = replace(
                pooled, framework=family, attention_kernel=prior_params(family).attention_kernel
            )
            centre = np.log([getattr(base, n) for n in FAMILY_PARAMS])

            def family_theta(x: np.ndarray, t: Timed, base: StackParams = base) -> StackParams:
                return _set(base, dict(zip(FAMILY_PARAMS, map(float, np.exp(x)), strict=True)))

            if own:
                y = _solve(own, FAMILY_PARAMS, centre, centre, family_theta)
                base = _set(base, dict(zip(FAMILY_PARAMS, map(float, np.exp(y)), strict=True)))
            fitted[family] = replace(base, runs=len(own))
        fit = Fit(pooled, fitted)
    return fit


@dataclass(frozen=True)
class HeldOut:
    """A run predicted from a fit without its source: tokens/s per GPU, the fold's
    parameters of its stack, and its layout."""

    run: CorpusRun
    predicted: float
    stack: StackParams
    layout: str


def leave_one_source_out(runs: list[CorpusRun]) -> tuple[list[HeldOut], dict[str, Fit]]:
    """Every run predicted from a fit on the other sources' runs (a stack none of them
    ran takes the pooled fit), and each fold's parameters by family."""
    out, folds = [], {}
    for source in sorted({r.source for r in runs}):
        train = [r for r in runs if r.source != source]
        fit = fit_stacks(train)
        folds[source] = fit
        for run in (r for r in runs if r.source == source):
            stack = fit.for_run(run)
            found = predict_run(run, stack)
            tokens = found.tokens_per_s / run.num_gpus if found.layout.fits else math.nan
            out.append(HeldOut(run, tokens, stack, found.layout.label))
    return out, folds
