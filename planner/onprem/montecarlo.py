"""Monte Carlo over the uncertain inputs of an on-prem config (planner.onprem.uncertain).

Each uncertain input is drawn from a triangular distribution (low, central, high), all
independently, in one vectorized numpy pass; the cost lines (planner.onprem.lines) are
evaluated for every draw at once. Against a cloud price p with a yearly trend g (drawn
uniformly within +/-50% of the trend given; none when not given), a draw counts as
"buying is cheaper" when its amortized USD per GPU-hour is below the cloud's mean price
over the draw's life, p x mean((1 + g)^t); payback months per draw follow
planner.onprem.breakeven. P10/P50/P90 are the 10th, 50th and 90th percentiles of the
draws. A fixed seed gives the same figures every run.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np

from planner.onprem.breakeven import HORIZON_MONTHS, life_mean_price_factor, payback_months
from planner.onprem.config import HOURS_PER_MONTH, OnPremConfig
from planner.onprem.lines import FloatArray, yearly_lines
from planner.onprem.uncertain import input_ranges, params_with

DRAWS = 10_000
SEED = 20261202


@dataclass(frozen=True)
class TcoDraws:
    """The draws: each uncertain input's values, and per draw the amortized USD per
    GPU-hour, the upfront USD, the running USD per month and the GPU-hours used a month."""

    inputs: dict[str, FloatArray]
    usd_per_gpu_hour: FloatArray
    upfront_usd: FloatArray
    running_usd_per_month: FloatArray
    monthly_gpu_hours: FloatArray
    lifetime_years: FloatArray
    cost_of_capital_rate: FloatArray
    seed: int

    @property
    def n(self) -> int:
        """How many draws."""
        return int(self.usd_per_gpu_hour.size)


def _triangular(
    rng: np.random.Generator, low: float, mid: float, high: float, n: int
) -> FloatArray:
    if not low < high:
        return np.full(n, mid)
    return rng.triangular(low, min(max(mid, low), high), high, n)


def simulate(
    config: OnPremConfig, defaulted: Collection[str], n: int = DRAWS, seed: int = SEED
) -> TcoDraws:
    """n draws of the config's cost (inputs in planner.onprem.uncertain.input_ranges)."""
    if n < 1:
        raise ValueError(f"draws {n!r} must be at least 1")
    rng = np.random.default_rng(seed)
    ranges = input_ranges(config, defaulted)
    inputs = {f: _triangular(rng, *ranges[f], n) for f in sorted(ranges)}
    params = params_with(config, defaulted, inputs)
    lines = yearly_lines(params)
    shape = lines["total"].shape
    used = np.broadcast_to(params["utilization"] * config.gpus * HOURS_PER_MONTH, shape)
    return TcoDraws(
        inputs=inputs,
        usd_per_gpu_hour=np.asarray(lines["total"] / lines["gpu_hours"], dtype=float),
        upfront_usd=np.asarray(lines["upfront"], dtype=float),
        running_usd_per_month=np.asarray(lines["running"] / 12.0, dtype=float),
        monthly_gpu_hours=np.asarray(used, dtype=float),
        lifetime_years=np.asarray(np.broadcast_to(params["lifetime_years"], shape), dtype=float),
        cost_of_capital_rate=np.asarray(
            np.broadcast_to(params["cost_of_capital_rate"], shape), dtype=float
        ),
        seed=seed,
    )


@dataclass(frozen=True)
class VersusCloud:
    """Buying against one cloud price over the draws: the share of draws where buying is
    cheaper over the server's life, and payback months P10/P50/P90 (inf = never)."""

    cloud_usd_per_gpu_hour: float
    p_buy_cheaper: float
    payback_months_p10: float
    payback_months_p50: float
    payback_months_p90: float


LOWEST_TREND = -0.99  # a cloud price falling 99% a year: a drawn trend goes no lower


def trend_draws(trend_per_year: float | None, n: int, seed: int) -> FloatArray:
    """The cloud price trend per draw: uniform within +/-50% of the trend, never below
    LOWEST_TREND (a price cannot fall by all of itself or more in a year); 0 when None."""
    if trend_per_year is None or trend_per_year == 0:
        return np.zeros(n)
    rng = np.random.default_rng(seed + 1)
    ends = sorted((0.5 * trend_per_year, 1.5 * trend_per_year))
    return rng.uniform(max(ends[0], LOWEST_TREND), max(ends[1], LOWEST_TREND), n)


def versus_cloud(
    draws: TcoDraws, cloud_usd_per_gpu_hour: float, trend_per_year: float | None = None
) -> VersusCloud:
    """The draws against one cloud price (module docstring)."""
    price = float(cloud_usd_per_gpu_hour)
    g = trend_draws(trend_per_year, draws.n, draws.seed)
    mean_price = price * life_mean_price_factor(g, draws.lifetime_years)
    cheaper = float(np.mean(draws.usd_per_gpu_hour < mean_price))
    months = payback_months(
        draws.upfront_usd, draws.running_usd_per_month, price * draws.monthly_gpu_hours, g,
        draws.cost_of_capital_rate,
    )  # fmt: skip
    capped = np.where(np.isfinite(months), months, 2 * HORIZON_MONTHS)
    p10, p50, p90 = (float(m) if m <= HORIZON_MONTHS else np.inf for m in percentiles(capped))
    return VersusCloud(price, cheaper, p10, p50, p90)


def percentiles(values: FloatArray) -> tuple[float, float, float]:
    """P10, P50, P90."""
    p10, p50, p90 = np.percentile(values, [10, 50, 90])
    return float(p10), float(p50), float(p90)
