"""Break-even against a cloud price: the utilization where owning costs the same per
GPU-hour, and the months until buying has paid back.

Writing the yearly cost as F + V u (F: all but the utilization-driven energy, V: energy
per unit of utilization; planner.onprem.lines), owning equals a cloud price p (USD per
GPU-hour) at u* = F / (G 8760 p - V) for G GPUs. u* above the most the servers can work
(1 - failure downtime) means owning is never cheaper; inf that the cloud price is below
the marginal electricity.

Payback (discounted at the cost of capital i, so that it agrees with the per-GPU-hour cost,
which carries the financing): K paid up front (planner.onprem.lines), running cost R a
month, cloud spend for D GPU-hours a month at p (1 + g)^(t / 12) after t months (g: the
yearly cloud price trend, 0 = flat). With a = ln(1 + g) / 12 and d = ln(1 + i) / 12, payback
is the first m where the present value of the cloud bill saved reaches K:

  p D (e^((a - d) m) - 1) / (a - d) - R (1 - e^(-d m)) / d = K

closed form when g = 0: m* = -ln(1 - K d / (p D - R)) / d (K / (p D - R) when i = 0 too);
bisection otherwise (within 1,200 months; later is never). The resale value is left out
of payback (it comes at the end of the life); it is in the per-GPU-hour cost.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from planner.onprem.config import HOURS_PER_YEAR, OnPremConfig
from planner.onprem.lines import FloatArray, params_of, yearly_lines

HORIZON_MONTHS = 1200.0


def break_even_utilization(config: OnPremConfig, cloud_usd_per_gpu_hour: ArrayLike) -> FloatArray:
    """u* = F / (G 8760 p - V) for each cloud price; inf where p is at or below the
    marginal electricity per GPU-hour. Values above config.max_utilization cannot be reached."""
    price = np.asarray(cloud_usd_per_gpu_hour, dtype=float)
    lines = yearly_lines(params_of(config))
    denominator = config.gpus * HOURS_PER_YEAR * price - lines["variable"]
    with np.errstate(divide="ignore", invalid="ignore"):
        out = lines["fixed"] / np.where(denominator > 0, denominator, 1.0)
    return np.asarray(np.where(denominator > 0, out, np.inf), dtype=float)


def life_mean_price_factor(trend_per_year: ArrayLike, lifetime_years: ArrayLike) -> FloatArray:
    """Mean of (1 + g)^t over t in [0, L] years: (e^(cL) - 1) / (c L), c = ln(1 + g); 1 at g = 0."""
    g = np.asarray(trend_per_year, dtype=float)
    life = np.asarray(lifetime_years, dtype=float)
    c = np.log1p(g)
    safe = np.where(np.abs(c) > 1e-12, c, 1.0)
    factor = np.expm1(safe * life) / (safe * life)
    return np.asarray(np.where(np.abs(c) > 1e-12, factor, 1.0), dtype=float)


def _grown(rate: FloatArray, months: FloatArray) -> FloatArray:
    """(e^(b m) - 1) / b, and m where b = 0."""
    safe = np.where(np.abs(rate) > 1e-12, rate, 1.0)
    with np.errstate(over="ignore"):
        grown = np.expm1(safe * months) / safe
    return np.asarray(np.where(np.abs(rate) > 1e-12, grown, months))


def payback_months(
    upfront_usd: ArrayLike,
    running_usd_per_month: ArrayLike,
    cloud_usd_per_month: ArrayLike,
    trend_per_year: ArrayLike = 0.0,
    discount_rate_per_year: ArrayLike = 0.0,
) -> FloatArray:
    """Months until the discounted cloud spend saved covers the upfront cost (module
    docstring); inf = never (within HORIZON_MONTHS). Vectorized over every argument."""
    k, r, c, g, i = np.broadcast_arrays(
        *(np.asarray(v, dtype=float) for v in (upfront_usd, running_usd_per_month,
                                               cloud_usd_per_month, trend_per_year,
                                               discount_rate_per_year))
    )  # fmt: skip
    a, d = np.log1p(g) / 12.0, np.log1p(i) / 12.0
    margin = c - r
    # Flat prices: (c - r) (1 - e^(-d m)) / d = k  ->  m = -ln(1 - k d / (c - r)) / d.
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(margin > 0, k / np.where(margin > 0, margin, 1.0), np.inf)
        inside = 1 - share * d
        discounted = np.where(inside > 0, -np.log(np.where(inside > 0, inside, 1.0)) / d, np.inf)
        flat = np.where(d > 1e-12, discounted, share)
    flat = np.where(margin > 0, flat, np.inf)
    trended_any = np.abs(a) > 1e-12
    if not np.any(trended_any):
        return np.asarray(np.where(flat <= HORIZON_MONTHS, flat, np.inf), dtype=float)

    def gain(m: FloatArray) -> FloatArray:
        return np.asarray(c * _grown(a - d, m) - r * _grown(-d, m) - k, dtype=float)

    # The gain rises while the cloud bill c e^(a m) exceeds r: the crossing lies where it rises.
    safe_a = np.where(trended_any, a, 1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):
        turn = np.log(np.where((r > 0) & (c > 0), r / np.where(c > 0, c, 1.0), 1.0)) / safe_a
    turn = np.clip(np.nan_to_num(turn, nan=0.0, posinf=HORIZON_MONTHS), 0.0, HORIZON_MONTHS)
    falling = a < 0
    lo = np.where(falling, 0.0, turn)
    hi = np.where(falling, np.where(c > r, turn, 0.0), HORIZON_MONTHS)
    reached = gain(hi) >= 0
    for _ in range(60):
        mid = (lo + hi) / 2
        up = gain(mid) >= 0
        hi = np.where(up, mid, hi)
        lo = np.where(up, lo, mid)
    out = np.where(trended_any, np.where(reached, hi, np.inf), flat)
    return np.asarray(np.where(out <= HORIZON_MONTHS, out, np.inf), dtype=float)


def break_even_months(
    config: OnPremConfig,
    cloud_usd_per_gpu_hour: ArrayLike,
    monthly_gpu_hours: float,
    trend_per_year: float = 0.0,
) -> FloatArray:
    """Payback months of `config` (at its utilization) against each cloud price for
    `monthly_gpu_hours` of work a month; inf = never."""
    price = np.asarray(cloud_usd_per_gpu_hour, dtype=float)
    lines = yearly_lines(params_of(config))
    return payback_months(
        lines["upfront"], lines["running"] / 12.0, price * float(monthly_gpu_hours),
        trend_per_year, config.cost_of_capital_rate,
    )  # fmt: skip
