"""P10/P50/P90 of time and cost to train, from the throughput band and spot interruptions.

Throughput: each band (throughput_low, throughput, throughput_high) is a 10%-90% range. It
is read as a split normal in log space (Wallis 2014, "The two-piece normal, binormal, or
double Gaussian distribution"): log X = log x + σ_down Z for Z < 0, log x + σ_up Z for Z >= 0,
with σ_down = ln(x / low) / 1.2816 and σ_up = ln(high / x) / 1.2816 (1.2816 = Φ⁻¹(0.9)), so
its median is x and its 10% and 90% quantiles are low and high. The bands already hold the
scaling fit's error (throughput.estimate widens them by the chosen law's held-out quantiles per
doubling of the count; planner.llm.throughput by the communication model's), so it is not
drawn twice.

Hours = samples / X / 3600 and cost = hours x price are monotone in X, so without spot their
quantiles follow from the band exactly: hours P10 = samples / high, P50 = samples / x,
P90 = samples / low (method "band"). Sampling them would only add noise.

Spot adds interruptions, checkpoints and restarts (planner.costs.spot), independent of X, at an
interruption rate that is itself uncertain (its 10-90% range per provider, drawn as a split
normal in log space as the throughput band is; a rate the user gives is taken as exact). Those
rows are simulated (method "monte-carlo"): `draws` common standard normals Z (the same for
every row, so rows compare on the same draws) give compute hours per draw, and for each
(draw, row) a wall time is drawn (sample_spot_wall_hours: checkpoints exact, lost work and
restarts a gamma variate with the mean and variance of Daly's model, as planner.costs.spot's
"moments" sampler). Cost quantiles are the wall-time quantiles x the row's price (exact:
cost is monotone in hours). Spot rows not simulated get the band quantiles times the
expected overhead factor (method "band x expected spot overhead"). A seeded numpy Generator
makes every figure reproducible.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from planner.costs.spot import spot_overhead

FloatArray = NDArray[np.float64]
QUANTILES: tuple[float, float, float] = (0.1, 0.5, 0.9)
GRID_POINTS = 17  # compute-hour grid per spot row for the interruption moments
RATE_STRATA = 7  # equal-probability strata of the interruption rate's range
Z90 = NormalDist().inv_cdf(0.9)  # 1.2816
QUANTILE_COLUMNS = (
    "hours_p10", "hours_p50", "hours_p90", "cost_p10_usd", "cost_p50_usd", "cost_p90_usd",
    "quantile_method",
)  # fmt: skip


def log_sigmas(x: ArrayLike, low: ArrayLike, high: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """(σ_down, σ_up) of the split normal in log space whose 10%/50%/90% are low/x/high.

    A missing or inverted side gives σ = 0 (no spread known on that side).
    """
    x, low, high = (np.asarray(v, dtype=float) for v in (x, low, high))
    with np.errstate(divide="ignore", invalid="ignore"):
        down = np.log(x / low) / Z90
        up = np.log(high / x) / Z90
    return (
        np.where(np.isfinite(down) & (down > 0), down, 0.0),
        np.where(np.isfinite(up) & (up > 0), up, 0.0),
    )


def split_normal_quantiles(
    x: ArrayLike, low: ArrayLike, high: ArrayLike, quantiles: tuple[float, ...] = QUANTILES
) -> FloatArray:
    """Quantiles of the band's split normal: shape (len(quantiles), rows), exact."""
    down, up = log_sigmas(x, low, high)
    z = np.array([NormalDist().inv_cdf(q) for q in quantiles])[:, None]
    return np.asarray(x, dtype=float) * np.exp(np.where(z < 0, down * z, up * z))


def sample_split_normal(x: ArrayLike, low: ArrayLike, high: ArrayLike, z: FloatArray) -> FloatArray:
    """Draws of the band's split normal for standard normals `z` (draws, 1): (draws, rows)."""
    down, up = log_sigmas(x, low, high)
    return np.asarray(x, dtype=float) * np.exp(np.where(z < 0, down * z, up * z))


def band_time_cost(
    samples: float,
    throughput: ArrayLike,
    low: ArrayLike,
    high: ArrayLike,
    usd_per_hour: ArrayLike,
    overhead: ArrayLike = 1.0,
) -> FloatArray:
    """Exact hours and cost quantiles from the band: shape (6, rows), columns in
    QUANTILE_COLUMNS order (hours P10/P50/P90, then cost). `overhead` multiplies hours."""
    speed = split_normal_quantiles(throughput, low, high)[::-1]  # P90 speed -> P10 hours
    hours = samples / speed / 3600.0 * np.asarray(overhead, dtype=float)
    return np.vstack([hours, hours * np.asarray(usd_per_hour, dtype=float)])


def sample_spot_wall_hours(
    samples: float,
    throughput: ArrayLike,
    low: ArrayLike,
    high: ArrayLike,
    interruptions_per_hour: ArrayLike,
    checkpoint_hours: float,
    restart_hours: float,
    instances: ArrayLike,
    rng: np.random.Generator,
    draws: int,
    rate_low: ArrayLike | None = None,
    rate_high: ArrayLike | None = None,
    grouped: bool = False,
) -> FloatArray:
    """Simulated wall hours of spot rows, shape (rows, draws): the columns in draw order, or
    with `grouped` grouped by rate stratum (a quantile needs no other order).

    Per draw, compute hours W come from the throughput band (common Z across rows). The
    wall time is W + its checkpoints (exact, at Daly's interval) + lost work and restarts,
    drawn as a gamma variate with the mean and variance of Daly's model (the "moments"
    sampler of planner.costs.spot.sample_wall_hours). Those two moments are computed on
    GRID_POINTS values of W per row (planner.costs.spot.spot_overhead) and interpolated
    linearly in log W: they vary smoothly with W, and this keeps 10,000 draws cheap.

    With `rate_low`/`rate_high` (the 10-90% range of the interruption rate), the rate is
    uncertain too: a split normal in log space around `interruptions_per_hour`, as the
    throughput band, drawn independently of throughput (common across rows) and taken at
    RATE_STRATA equal-probability strata, each at its middle quantile.
    """
    x = np.asarray(throughput, dtype=float)
    rows = x.size
    down, up = log_sigmas(x, low, high)
    z = rng.standard_normal((1, draws))
    rate = np.broadcast_to(np.asarray(interruptions_per_hour, float), (rows,))
    inst = np.broadcast_to(np.asarray(instances, float), (rows,))
    r_down = r_up = np.zeros(rows)  # no spread unless a range is given
    if rate_low is not None and rate_high is not None:
        r_down, r_up = log_sigmas(rate, rate_low, rate_high)
    if not (np.any(r_down > 0) or np.any(r_up > 0)):
        log_w = _log_compute_hours(samples, x, down, up, z)
        (wall,) = _walls_by_stratum([log_w], [rate], checkpoint_hours, restart_hours, inst, rng)
        return wall
    stratum = np.minimum((rng.random(draws) * RATE_STRATA).astype(np.int64), RATE_STRATA - 1)
    order = np.argsort(stratum, kind="stable")  # each stratum's draws together, in order
    ends = np.cumsum(np.bincount(stratum, minlength=RATE_STRATA))
    log_w = _log_compute_hours(samples, x, down, up, z[:, order])
    zq = [NormalDist().inv_cdf((j + 0.5) / RATE_STRATA) for j in range(RATE_STRATA)]
    rates = [rate * np.exp(np.where(q < 0, r_down * q, r_up * q)) for q in zq]
    walls = _walls_by_stratum(
        np.split(log_w, ends[:-1], axis=1), rates, checkpoint_hours, restart_hours, inst, rng
    )
    if grouped:
        return np.concatenate(walls, axis=1)
    wall = np.empty((rows, draws))
    wall[:, order] = np.concatenate(walls, axis=1)
    return wall


def _log_compute_hours(
    samples: float, x: FloatArray, down: FloatArray, up: FloatArray, z: FloatArray
) -> FloatArray:
    """log W = log(samples / 3600 / x) - the throughput's log-deviation (split normal), for
    standard normals `z` (1, draws): shape (rows, draws)."""
    return np.log(samples / 3600.0 / x)[:, None] - np.where(z < 0, down[:, None], up[:, None]) * z


def _walls_by_stratum(
    log_w: list[FloatArray],
    rates: list[FloatArray],
    checkpoint_hours: float,
    restart_hours: float,
    instances: FloatArray,
    rng: np.random.Generator,
) -> list[FloatArray]:
    """Wall hours (rows, draws) per stratum, for log compute hours `log_w[j]` at interruption
    rate `rates[j]` per instance-hour (sample_spot_wall_hours). The moment tables of every
    stratum come from one spot_overhead call; the gamma draws follow stratum order."""
    rows = len(instances)
    ranges = [
        (w.min(axis=1), w.max(axis=1)) if w.shape[1] else (np.zeros(rows), np.zeros(rows))
        for w in log_w
    ]
    lows = [lo for lo, _ in ranges]
    spans = [np.where(hi > lo, hi - lo, 1.0) for lo, hi in ranges]
    steps = np.linspace(0.0, 1.0, GRID_POINTS)[None, :]
    grids = [
        np.exp(lo[:, None] + steps * span[:, None]) for lo, span in zip(lows, spans, strict=True)
    ]
    table = spot_overhead(
        np.concatenate([g.ravel() for g in grids]),
        np.concatenate([np.repeat(r, GRID_POINTS) for r in rates]),
        checkpoint_hours,
        restart_hours,
        instances=np.tile(np.repeat(instances, GRID_POINTS), len(grids)),
    )
    shape = (len(grids), rows, GRID_POINTS)
    grid = np.stack(grids)
    base_grid = grid + table["checkpoints"].to_numpy().reshape(shape) * checkpoint_hours
    extra = np.maximum(table["expected_wall_hours"].to_numpy().reshape(shape) - base_grid, 0.0)
    var = table["wall_hours_std"].to_numpy().reshape(shape) ** 2
    interval = table["interval_hours"].to_numpy().reshape(shape).max(axis=2)
    # Per grid cell, the moments at its two ends: (strata, rows x cells, 4), one gather a draw.
    cells = np.stack([extra[..., :-1], extra[..., 1:], var[..., :-1], var[..., 1:]], axis=-1)
    cells = cells.reshape(len(grids), rows * (GRID_POINTS - 1), 4)
    offsets = (np.arange(rows) * (GRID_POINTS - 1))[:, None]
    walls = []
    for j, w in enumerate(log_w):
        t = (w - lows[j][:, None]) * ((GRID_POINTS - 1) / spans[j])[:, None]
        i = np.minimum(t.astype(np.int64), GRID_POINTS - 2)
        f = t - i
        g = 1 - f
        ends = np.take(cells[j], i + offsets, axis=0)
        mean = ends[..., 0] * g + ends[..., 1] * f
        variance = ends[..., 2] * g + ends[..., 3] * f
        compute = np.exp(w)
        checkpoints = np.maximum(np.ceil(compute / interval[j][:, None] - 1e-9), 1.0) - 1.0
        positive = (mean > 0) & (variance > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            k = np.where(positive, mean * mean / variance, 1.0)
            theta = np.where(positive, variance / mean, 0.0)
        lost = rng.standard_gamma(k) * theta
        walls.append(compute + checkpoints * checkpoint_hours + np.where(positive, lost, mean))
    return walls


def time_cost_quantiles(
    samples: float,
    rows: pd.DataFrame,
    spot: ArrayLike,
    simulate: ArrayLike,
    checkpoint_hours: float,
    restart_hours: float,
    seed: int,
    draws: int,
) -> pd.DataFrame:
    """P10/P50/P90 hours and cost per row (QUANTILE_COLUMNS), aligned to `rows.index`.

    `rows`: throughput, throughput_low, throughput_high, option_usd_per_hour, instances,
    interruptions_per_hour, overhead_factor (expected spot wall / compute hours; 1 off spot),
    optionally interruptions_low_per_hour and interruptions_high_per_hour (the rate's 10-90%
    range, drawn with the throughput band where given).
    `spot` marks spot rows; `simulate` the spot rows to simulate (the rest: band x expected
    overhead). Reproducible for a given seed, draws and set of simulated rows.
    """
    spot_rows = np.asarray(spot, dtype=bool)
    sampled = np.asarray(simulate, dtype=bool) & spot_rows
    x = rows["throughput"].to_numpy(float)
    low = rows["throughput_low"].to_numpy(float)
    high = rows["throughput_high"].to_numpy(float)
    price = rows["option_usd_per_hour"].to_numpy(float)
    overhead = np.where(spot_rows, rows["overhead_factor"].to_numpy(float), 1.0)
    values = band_time_cost(samples, x, low, high, price, overhead)
    method = np.where(spot_rows, "band x expected spot overhead", "band").astype(object)
    if sampled.any():
        i = np.flatnonzero(sampled)
        rate = rows["interruptions_per_hour"].to_numpy(float)
        instances = rows["instances"].to_numpy(float)
        rate_low, rate_high = (
            rows[f"interruptions_{end}_per_hour"].to_numpy(float)
            if f"interruptions_{end}_per_hour" in rows.columns
            else rate
            for end in ("low", "high")
        )
        rate_low = np.where(np.isfinite(rate_low), rate_low, rate)
        rate_high = np.where(np.isfinite(rate_high), rate_high, rate)
        # Rows with the same band, rate and instance count draw the same wall times (common
        # random numbers), so each distinct set is simulated once.
        keys = np.column_stack(
            [x[i], low[i], high[i], rate[i], instances[i], rate_low[i], rate_high[i]]
        )
        distinct, back = np.unique(keys, axis=0, return_inverse=True)
        wall = sample_spot_wall_hours(
            samples,
            distinct[:, 0],
            distinct[:, 1],
            distinct[:, 2],
            distinct[:, 3],
            checkpoint_hours,
            restart_hours,
            distinct[:, 4],
            np.random.default_rng(seed),
            draws,
            rate_low=distinct[:, 5],
            rate_high=distinct[:, 6],
            grouped=True,
        )
        quantiles = np.quantile(wall, QUANTILES, axis=1, overwrite_input=True)  # wall: ours
        values[:3, i] = quantiles[:, back.ravel()]
        values[3:, i] = values[:3, i] * price[i]  # cost is monotone in hours per row
        method[i] = f"monte-carlo ({draws:,} draws, seed {seed})"
    frame = pd.DataFrame(values.T, columns=list(QUANTILE_COLUMNS[:6]), index=rows.index)
    frame["quantile_method"] = method
    return frame
