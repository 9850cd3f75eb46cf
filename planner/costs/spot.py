"""Spot capacity: expected time and cost of a job that is interrupted, checkpoints and restarts.

Model (Daly 2006, section 2; the classic checkpoint/restart model): interruptions arrive as a
Poisson process of rate `interruptions_per_hour` (λ; MTBF M = 1/λ) while the job runs,
checkpoints and restarts. The job needs `compute_hours` (W) of uninterrupted work. It writes a
checkpoint (`checkpoint_hours`, C) after every `interval_hours` (τ) of work, except after the
last segment. An interruption loses the work since the last checkpoint, then costs a restart
(`restart_hours`, R: a new instance, start-up and checkpoint reload), which an interruption can
itself cut short. A segment of length s (τ + C, or the shorter last piece) therefore takes, in
expectation,

    E[T_s] = M e^{R/M} (e^{s/M} - 1)                                   (Daly 2006, eq. 3)

and the job the sum over its ceil(W/τ) segments. The overhead factor is E[wall] / W (>= 1); it
tends to 1 as λ -> 0 (the optimal interval then grows without bound, so no checkpoints either).
Work lost per interruption is E[X | X < s] = M - s/(e^{s/M} - 1), which is s/2 for s << M
("half the interval on average").

Everything is vectorized: arguments are scalars or equal-length arrays (numpy broadcasting),
results are arrays of the broadcast shape. Sampling takes a seeded numpy Generator.

Units: hours and interruptions per hour throughout; prices in USD per hour.
The termination notice (AWS 2 min, GCP and Azure 30 s) is not used to checkpoint: a job that
checkpoints on the notice loses less work than modelled here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from edge.distinct import per_distinct
from planner.defaults import DEFAULT_CHECKPOINT_HOURS, DEFAULT_RESTART_HOURS

FloatArray = NDArray[np.float64]
HOURS_PER_MONTH = 730.0  # 8760 / 12
# The exact sampler draws one number per interruption; above this many it asks for "moments".
MAX_EXACT_DRAWS = 20_000_000


def rate_from_window_fraction(fraction: float, window_hours: float) -> float:
    """Poisson rate per hour for a probability `fraction` of >= 1 interruption in a window.

    P(at least one in H hours) = 1 - exp(-λH)  =>  λ = -ln(1 - f) / H.
    """
    if not 0 <= fraction < 1:
        raise ValueError(f"fraction {fraction!r} must be in [0, 1)")
    return -math.log1p(-fraction) / window_hours


@dataclass(frozen=True)
class SpotRateDefault:
    """A provider's default interruption rate, its plausible range and where it comes from."""

    provider: str
    interruptions_per_hour: float
    low_per_hour: float
    high_per_hour: float
    basis: str
    source: str
    assumption: bool


# Each provider publishes a different measure; every one is converted to a central rate per
# instance-hour with a 10-90% range (rate_from_window_fraction), checked 2026-11 against the
# sources named. None is read live, none is per GPU family (no provider publishes a GPU-only
# figure), so each range is wide: set your own rate from your interruption history.
SPOT_RATE_DEFAULTS: dict[str, SpotRateDefault] = {
    "aws": SpotRateDefault(
        "aws",
        rate_from_window_fraction(0.30, HOURS_PER_MONTH),  # 4.9e-4 /h, one per ~85 days
        rate_from_window_fraction(0.05, HOURS_PER_MONTH),  # "<5%" band: 7.0e-5 /h
        rate_from_window_fraction(0.90, HOURS_PER_MONTH),  # 3.2e-3 /h, one per ~13 days
        "Spot Instance Advisor bands of the share of capacity reclaimed over the trailing "
        "month (<5%, 5-10%, 10-15%, 15-20%, >20%); GPU instance types mostly sit in the "
        ">20% band, taken at 30% as the central monthly probability (assumed). Range: the "
        "<5% band to 90% a month. The Advisor counts instances, not instance-hours.",
        "aws.amazon.com/ec2/spot/instance-advisor (band definitions as published in "
        "spot-advisor-data.json)",
        True,
    ),
    "gcp": SpotRateDefault(
        "gcp",
        rate_from_window_fraction(0.10, 24.0),  # 4.39e-3 /h, one per ~10 days
        rate_from_window_fraction(0.05, 24.0),
        rate_from_window_fraction(0.15, 24.0),
        "Google's preemptible-VM documentation: historical preemption 5-15% per day per "
        "project (seven-day average, occasionally higher); midpoint 10%/day, range 5-15%. "
        "Spot VMs are preempted the same way 'at any time' but have no 24 h maximum runtime.",
        "cloud.google.com/compute/docs/instances/preemptible (older versions; the 5-15% "
        "figure is quoted from them, not from a current page); "
        "cloud.google.com/compute/docs/instances/create-use-spot",
        True,
    ),
    "azure": SpotRateDefault(
        "azure",
        rate_from_window_fraction(0.175, HOURS_PER_MONTH),  # 2.6e-4 /h, one per ~160 days
        rate_from_window_fraction(0.025, HOURS_PER_MONTH),
        rate_from_window_fraction(0.90, HOURS_PER_MONTH),
        "Azure's eviction-rate bands (0-5%, 5-10%, 10-15%, 15-20%, 20+%) read, as AWS's, as "
        "the share of instances evicted over the trailing month (assumed: the window is not "
        "stated where the bands are quoted); central 17.5% (the 15-20% band's midpoint, "
        "assumed for GPU sizes), range the 0-5% band's midpoint to 90% a month.",
        "learn.microsoft.com/azure/architecture/guide/spot/spot-eviction; Resource Graph "
        "SpotResources evictionRate bands",
        True,
    ),
}
# Providers with no published figure (neoclouds, marketplaces, custom CSVs): the geometric
# mean of the hyperscalers' central rates, with a range that holds all of theirs.
OTHER_PROVIDER_DEFAULT = SpotRateDefault(
    "other",
    math.exp(
        sum(math.log(d.interruptions_per_hour) for d in SPOT_RATE_DEFAULTS.values())
        / len(SPOT_RATE_DEFAULTS)
    ),
    min(d.low_per_hour for d in SPOT_RATE_DEFAULTS.values()),
    max(d.high_per_hour for d in SPOT_RATE_DEFAULTS.values()),
    "no published interruption figure: the geometric mean of the aws, gcp and azure "
    "central rates, with a range holding all of theirs (assumption)",
    "assumption",
    True,
)


def default_rate(provider: str) -> SpotRateDefault:
    """The documented default for a provider (OTHER_PROVIDER_DEFAULT when none is published)."""
    return SPOT_RATE_DEFAULTS.get(provider.lower(), OTHER_PROVIDER_DEFAULT)


def interruptions_per_hour_for(
    providers: pd.Series, overrides: Mapping[str, float] | None = None
) -> pd.Series:
    """Interruption rate per hour for each row's provider: `overrides` first, then defaults."""
    for provider, rate in (overrides or {}).items():
        if not rate >= 0:
            raise ValueError(f"interruption rate for {provider!r} must be >= 0 per hour")
    given = {p.lower(): float(r) for p, r in (overrides or {}).items()}
    rates = _per_provider(providers, lambda p: given.get(p, default_rate(p).interruptions_per_hour))
    return pd.Series(rates, index=providers.index, dtype=float)


def interruption_range_for(
    providers: pd.Series, overrides: Mapping[str, float] | None = None
) -> tuple[pd.Series, pd.Series]:
    """(low, high) interruptions per instance-hour per row: the default's 10-90% range, or
    the overriding rate at both ends (a rate the user gives has no spread)."""
    given = {p.lower(): float(r) for p, r in (overrides or {}).items()}
    low = _per_provider(providers, lambda p: given.get(p, default_rate(p).low_per_hour))
    high = _per_provider(providers, lambda p: given.get(p, default_rate(p).high_per_hour))
    return (
        pd.Series(low, index=providers.index, dtype=float),
        pd.Series(high, index=providers.index, dtype=float),
    )


def _per_provider(
    providers: pd.Series, value: Callable[[str], object], dtype: type = float
) -> NDArray[Any]:
    """`value` of each row's provider (lower-cased), computed once per distinct provider."""
    return per_distinct(lambda p: value(str(p).lower()), providers).astype(dtype)


# ---------------------------------------------------------------- checkpoint interval


def young_interval_hours(checkpoint_hours: ArrayLike, mtbf_hours: ArrayLike) -> FloatArray:
    """Young's first-order optimal checkpoint interval: τ = sqrt(2 C M).

    Young, J. W. (1974), "A first order approximation to the optimum checkpoint interval",
    Communications of the ACM 17(9), 530-531.
    """
    c, m = _floats(checkpoint_hours, mtbf_hours)
    return np.sqrt(2.0 * c * m)


def daly_interval_hours(checkpoint_hours: ArrayLike, mtbf_hours: ArrayLike) -> FloatArray:
    """Daly's higher-order optimal checkpoint interval (compute time between checkpoints).

    τ = sqrt(2CM) [1 + (1/3) sqrt(C/2M) + (1/9) (C/2M)] - C   for C < 2M, else τ = M.
    Daly, J. T. (2006), "A higher order estimate of the optimum checkpoint interval for
    restart dumps", Future Generation Computer Systems 22(3), 303-312, eq. 37.
    """
    c, m = _floats(checkpoint_hours, mtbf_hours)
    with np.errstate(invalid="ignore", divide="ignore"):
        x = c / (2.0 * m)
        tau = np.sqrt(2.0 * c * m) * (1.0 + np.sqrt(x) / 3.0 + x / 9.0) - c
    return np.where(c < 2.0 * m, tau, m)


def optimal_interval_hours(
    checkpoint_hours: ArrayLike,
    interruptions_per_hour: ArrayLike,
    method: Literal["daly", "young"] = "daly",
) -> FloatArray:
    """Optimal compute interval between checkpoints; inf where the rate is 0 (never checkpoint).

    A checkpoint that costs nothing (C = 0) gives an interval of 0 (checkpoint continuously).
    """
    c, rate = _floats(checkpoint_hours, interruptions_per_hour)
    with np.errstate(divide="ignore"):
        mtbf = np.where(rate > 0, 1.0 / np.where(rate > 0, rate, 1.0), np.inf)
    if method == "daly":
        tau = daly_interval_hours(c, mtbf)
    elif method == "young":
        tau = young_interval_hours(c, mtbf)
    else:
        raise ValueError(f"unknown interval method {method!r}; valid: daly, young")
    return np.where(rate > 0, tau, np.inf)


# ---------------------------------------------------------------- expectation and spread


@dataclass(frozen=True)
class _Segments:
    """A job cut into `n_full` segments of `full_hours` (work + checkpoint) and a last one."""

    compute: FloatArray
    rate: FloatArray
    checkpoint: FloatArray
    restart: FloatArray
    interval: FloatArray
    n_full: FloatArray
    full_hours: FloatArray
    last_hours: FloatArray


def _segments(
    compute_hours: ArrayLike,
    interruptions_per_hour: ArrayLike,
    checkpoint_hours: ArrayLike,
    restart_hours: ArrayLike,
    interval_hours: ArrayLike | None,
    instances: ArrayLike,
) -> _Segments:
    w, rate, c, r, inst = _floats(
        compute_hours, interruptions_per_hour, checkpoint_hours, restart_hours, instances
    )
    _check(w, "compute_hours", w > 0, "> 0")
    _check(rate, "interruptions_per_hour", rate >= 0, ">= 0")
    _check(c, "checkpoint_hours", c >= 0, ">= 0")
    _check(r, "restart_hours", r >= 0, ">= 0")
    _check(inst, "instances", inst >= 1, ">= 1")
    # Independent instances: any interruption stops the job (superposed Poisson processes).
    rate = rate * inst
    if interval_hours is None:
        tau = optimal_interval_hours(c, rate)
    else:
        (tau,) = _floats(interval_hours)
        _check(tau, "interval_hours", tau > 0, "> 0")
    w, rate, c, r, tau = np.broadcast_arrays(w, rate, c, r, tau)
    tau = np.maximum(tau, 1e-12 * w)  # C = 0 gives τ = 0: checkpoint (almost) continuously
    with np.errstate(invalid="ignore"):
        n = np.where(np.isfinite(tau), np.maximum(np.ceil(w / tau - 1e-9), 1.0), 1.0)
    n_full = n - 1.0
    last = w - n_full * np.where(np.isfinite(tau), tau, 0.0)
    # Where there is no full segment its length is never used; keep it finite.
    full = np.where(n_full > 0, tau + c, last)
    return _Segments(w, rate, c, r, np.minimum(tau, w), n_full, full, last)


def spot_overhead(
    compute_hours: ArrayLike,
    interruptions_per_hour: ArrayLike,
    checkpoint_hours: ArrayLike = DEFAULT_CHECKPOINT_HOURS,
    restart_hours: ArrayLike = DEFAULT_RESTART_HOURS,
    interval_hours: ArrayLike | None = None,
    instances: ArrayLike = 1,
) -> pd.DataFrame:
    """Expected time on spot and its spread, one row per job (inputs broadcast together).

    Columns (hours unless named otherwise):
      compute_hours, interruptions_per_hour (per job: rate x instances), checkpoint_hours,
      restart_hours, interval_hours (compute between checkpoints; Daly 2006 when not given),
      checkpoints (count), expected_interruptions (count, restarts included),
      lost_hours_per_interruption (E[work lost | interrupted] in a full segment, ~ interval/2),
      expected_wall_hours, wall_hours_std (exact, compound-geometric moments),
      overhead_factor (expected_wall_hours / compute_hours, >= 1).
    """
    s = _segments(
        compute_hours,
        interruptions_per_hour,
        checkpoint_hours,
        restart_hours,
        interval_hours,
        instances,
    )
    mean, var, failures = _wall_moments(s)
    lost, _ = _truncated_exponential_moments(s.full_hours, s.rate)
    return pd.DataFrame(
        {
            "compute_hours": np.ravel(s.compute),
            "interruptions_per_hour": np.ravel(s.rate),
            "checkpoint_hours": np.ravel(s.checkpoint),
            "restart_hours": np.ravel(s.restart),
            "interval_hours": np.ravel(s.interval),
            "checkpoints": np.ravel(s.n_full),
            "expected_interruptions": np.ravel(failures),
            "lost_hours_per_interruption": np.ravel(lost),
            "expected_wall_hours": np.ravel(mean),
            "wall_hours_std": np.ravel(np.sqrt(var)),
            "overhead_factor": np.ravel(mean / s.compute),
        }
    )


def _wall_moments(s: _Segments) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Mean, variance and expected interruption count of the wall time.

    A segment of length s takes s + sum_{k<=K} (X_k + Rt_k): K ~ failures before the first
    success with p = e^{-λs} (E = e^{λs} - 1, Var = e^{λs}(e^{λs} - 1)), X ~ Exp(λ) cut at s,
    Rt = R + the same compound over restarts cut at R. Compound sums: E[N]Var(Z) + Var(N)E[Z]^2.
    """
    mu_y, var_y = _truncated_exponential_moments(s.restart, s.rate)
    with np.errstate(over="ignore", invalid="ignore"):
        e_j = np.expm1(s.rate * s.restart)
        var_j = np.exp(s.rate * s.restart) * e_j
    e_rt = s.restart + e_j * mu_y
    var_rt = e_j * var_y + var_j * mu_y**2

    def one(seg: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        mu_x, var_x = _truncated_exponential_moments(seg, s.rate)
        with np.errstate(over="ignore", invalid="ignore"):
            e_k = np.expm1(s.rate * seg)
            var_k = np.exp(s.rate * seg) * e_k
            e_z = mu_x + e_rt
            var_z = var_x + var_rt
            mean = seg + e_k * e_z
            var = e_k * var_z + var_k * e_z**2
        return mean, var, e_k * (1.0 + e_j)

    m_f, v_f, k_f = one(s.full_hours)
    m_l, v_l, k_l = one(s.last_hours)
    has_full = s.n_full > 0
    with np.errstate(over="ignore", invalid="ignore"):
        mean = np.where(has_full, s.n_full * m_f, 0.0) + m_l
        var = np.where(has_full, s.n_full * v_f, 0.0) + v_l
        failures = np.where(has_full, s.n_full * k_f, 0.0) + k_l
    return mean, var, failures


def sample_wall_hours(
    compute_hours: ArrayLike,
    interruptions_per_hour: ArrayLike,
    checkpoint_hours: ArrayLike,
    restart_hours: ArrayLike,
    *,
    rng: np.random.Generator,
    draws: int,
    interval_hours: ArrayLike | None = None,
    instances: ArrayLike = 1,
    method: Literal["exact", "moments"] = "exact",
) -> FloatArray:
    """Wall-clock hours of each job in `draws` simulated runs: shape (draws, jobs).

    "exact" simulates every interruption: per segment type the count of interruptions is
    negative binomial (sum of geometric counts), each loses an Exp(λ) time cut at the segment
    length (inverse-CDF draw), each restart can itself be interrupted the same way. Its cost
    grows with the number of interruptions (MAX_EXACT_DRAWS caps it).
    "moments" draws one gamma variate per job and run for the time beyond the interruption-free
    time, with the exact mean and variance (_wall_moments): cheap for many jobs, approximate
    in shape (tests compare its quantiles with "exact").
    """
    if draws < 1:
        raise ValueError(f"draws must be >= 1, got {draws}")
    s = _segments(
        compute_hours,
        interruptions_per_hour,
        checkpoint_hours,
        restart_hours,
        interval_hours,
        instances,
    )
    flat = _Segments(*(np.ravel(getattr(s, f)) for f in _Segments.__dataclass_fields__))
    base = np.where(flat.n_full > 0, flat.n_full * flat.full_hours, 0.0) + flat.last_hours
    if method == "moments":
        mean, var, failures = _wall_moments(flat)
        _check_feasible(failures)
        extra = mean - base
        with np.errstate(divide="ignore", invalid="ignore"):
            shape = np.where(var > 0, extra**2 / np.where(var > 0, var, 1.0), 1.0)
            scale = np.where(extra > 0, var / np.where(extra > 0, extra, 1.0), 0.0)
        gamma = rng.gamma(np.maximum(shape, 1e-300), 1.0, size=(draws, base.size))
        return base + np.where(extra > 0, gamma * scale, 0.0)
    if method != "exact":
        raise ValueError(f"unknown sampling method {method!r}; valid: exact, moments")
    _, _, failures = _wall_moments(flat)
    _check_feasible(failures)
    expected = float(np.sum(failures)) * draws
    if expected > MAX_EXACT_DRAWS:
        raise ValueError(
            f"about {expected:,.0f} interruptions to simulate (over {MAX_EXACT_DRAWS:,}); "
            "use method='moments' or fewer draws"
        )
    size = (draws, base.size)
    p_full = np.exp(-flat.rate * flat.full_hours)
    p_last = np.exp(-flat.rate * flat.last_hours)
    p_restart = np.exp(-flat.rate * flat.restart)
    k_full = np.where(
        flat.n_full > 0,
        rng.negative_binomial(np.maximum(flat.n_full, 1.0), p_full, size=size),
        0,
    )
    k_last = rng.geometric(p_last, size=size) - 1
    k_total = k_full + k_last
    j_total = np.where(
        k_total > 0, rng.negative_binomial(np.maximum(k_total, 1), p_restart, size=size), 0
    )
    lost = _sum_truncated_exponentials(k_full, flat.full_hours, flat.rate, rng)
    lost += _sum_truncated_exponentials(k_last, flat.last_hours, flat.rate, rng)
    restarts = k_total * flat.restart + _sum_truncated_exponentials(
        j_total, flat.restart, flat.rate, rng
    )
    return base + lost + restarts


def overhead_quantiles(
    samples_wall_hours: FloatArray,
    compute_hours: ArrayLike,
    quantiles: tuple[float, ...] = (0.1, 0.5, 0.9),
) -> pd.DataFrame:
    """Overhead-factor quantiles per job from sample_wall_hours output (draws, jobs).

    Columns: overhead_mean, overhead_p10, overhead_p50, overhead_p90 (names follow
    `quantiles`: p = round(100 q)).
    """
    w = np.broadcast_to(
        np.ravel(np.asarray(compute_hours, dtype=float)), samples_wall_hours.shape[1:]
    )
    factor = samples_wall_hours / w
    out = {"overhead_mean": factor.mean(axis=0)}
    values = np.quantile(factor, quantiles, axis=0)
    for q, row in zip(quantiles, values, strict=True):
        out[f"overhead_p{round(100 * q)}"] = row
    return pd.DataFrame(out)


def spot_cost_usd(wall_hours: ArrayLike, spot_usd_per_hour: ArrayLike) -> FloatArray:
    """USD for `wall_hours` at `spot_usd_per_hour`: restarts and lost work are paid for."""
    hours, price = _floats(wall_hours, spot_usd_per_hour)
    return hours * price


def spot_for_offers(
    offers: pd.DataFrame,
    compute_hours: ArrayLike,
    checkpoint_hours: ArrayLike = DEFAULT_CHECKPOINT_HOURS,
    restart_hours: ArrayLike = DEFAULT_RESTART_HOURS,
    rates: Mapping[str, float] | None = None,
    instances: ArrayLike = 1,
) -> pd.DataFrame:
    """Spot time and cost per offer row (index kept): what a plan joins onto its rows.

    `compute_hours` is each row's uninterrupted hours (scalar or aligned array); `rates`
    overrides SPOT_RATE_DEFAULTS per provider. Columns: spot_overhead's, plus
    spot_usd_per_hour (from the offer; NaN = no spot price), spot_cost_usd
    (expected_wall_hours x spot price), rate_source ("default:<provider>" or "user").
    """
    rate = interruptions_per_hour_for(offers["provider"], rates)
    frame = spot_overhead(
        np.broadcast_to(np.asarray(compute_hours, dtype=float), (len(offers),)),
        rate.to_numpy(),
        checkpoint_hours,
        restart_hours,
        instances=instances,
    )
    frame.index = offers.index
    low, high = interruption_range_for(offers["provider"], rates)
    frame["interruptions_low_per_hour"] = low.to_numpy()
    frame["interruptions_high_per_hour"] = high.to_numpy()
    frame["spot_usd_per_hour"] = offers["spot_usd_per_hour"].astype(float)
    frame["spot_cost_usd"] = frame["expected_wall_hours"] * frame["spot_usd_per_hour"]
    user = {p.lower() for p in (rates or {})}
    frame["rate_source"] = _per_provider(
        offers["provider"],
        lambda p: "user" if p in user else f"default:{p if p in SPOT_RATE_DEFAULTS else 'other'}",
        object,
    )
    return frame


# ---------------------------------------------------------------- helpers


def _floats(*values: ArrayLike) -> tuple[FloatArray, ...]:
    return tuple(np.asarray(v, dtype=float) for v in values)


def _check(values: FloatArray, name: str, ok: NDArray[np.bool_], valid: str) -> None:
    if not np.all(ok):
        bad = np.ravel(values)[np.flatnonzero(~np.ravel(np.broadcast_to(ok, values.shape)))[0]]
        raise ValueError(f"{name} = {bad!r} is not valid: it must be {valid}")


# More expected interruptions per run than this: the job practically never finishes.
MAX_INTERRUPTIONS_PER_RUN = 1e6


def _check_feasible(failures: FloatArray) -> None:
    worst = float(np.max(failures)) if np.all(np.isfinite(failures)) else math.inf
    if worst > MAX_INTERRUPTIONS_PER_RUN:
        raise ValueError(
            f"expected {worst:.3g} interruptions per run: the job practically never finishes "
            "at this interruption rate with this checkpoint interval; checkpoint more often"
        )


def _truncated_exponential_moments(
    bound: FloatArray, rate: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Mean and variance of X ~ Exp(rate) given X < bound (Uniform(0, bound) when rate = 0).

    With a = rate x bound: mean = b (1/a - 1/(e^a - 1)), var = 1/rate^2 - b^2 / (4 sinh^2(a/2));
    Taylor series below a = 1e-3 avoid cancellation (mean = b (1/2 - a/12 + a^3/720),
    var = b^2 (1/12 - a^2/240)).
    """
    b, lam = np.broadcast_arrays(*_floats(bound, rate))
    a = lam * b
    small = a < 1e-3
    safe = np.where(small, 1.0, a)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        mean_big = b * (1.0 / safe - 1.0 / np.expm1(safe))
        var_big = b**2 * (1.0 / safe**2 - 1.0 / (4.0 * np.sinh(safe / 2.0) ** 2))
    mean = np.where(small, b * (0.5 - a / 12.0 + a**3 / 720.0), mean_big)
    var = np.where(small, b**2 * (1.0 / 12.0 - a**2 / 240.0), var_big)
    return mean, var


def _sum_truncated_exponentials(
    counts: NDArray[np.int64], bound: FloatArray, rate: FloatArray, rng: np.random.Generator
) -> FloatArray:
    """Per cell, the sum of `counts` independent Exp(rate) draws cut at `bound` (per job column).

    Inverse CDF: X = -ln(1 - U (1 - e^{-rate b})) / rate.
    """
    flat = np.ravel(counts).astype(np.int64)
    total = int(flat.sum())
    if total == 0:
        return np.zeros(counts.shape)
    cell = np.repeat(np.arange(flat.size), flat)
    job = cell % counts.shape[1]
    lam = rate[job]
    u = rng.random(total)
    x = -np.log1p(u * np.expm1(-lam * bound[job])) / lam
    sums = np.bincount(cell, weights=x, minlength=flat.size)
    return np.asarray(sums, dtype=float).reshape(counts.shape)
