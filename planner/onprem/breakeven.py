"""Break-even against a cloud price: the utilization where owning costs the same per
GPU-hour, and the months until buying has paid back.

Writing the yearly cost as F + V u (F: all but the utilization-driven energy, V: energy
per unit of utilization; planner.onprem.lines), owning equals a cloud price p (USD per
GPU-hour) at u* = F / (G 8760 p - V) for G GPUs. u* above the most the servers can work
(1 - failure downtime) means owning is never cheaper; inf that the cloud price is below
the marginal electricity.

Payback: K paid up front (planner.onprem.lines), running cost R a month, cloud spend for
D GPU-hours a month at p (1 + g)^(t / 12) after t months (g: the yearly cloud price trend,
0 = flat). Payback is the first m where cloud spend p D (e^(a m) - 1) / a (a = ln(1 + g) /
12; p D m when g = 0) reaches K + R m; m* = K / (p D - R) when g = 0. Resale and financing
are left out of payback (simple payback); they are in the per-GPU-hour cost. Found by
bisection where g != 0 (within 1,200 months; later is never).
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


def payback_months(
    upfront_usd: ArrayLike,
    running_usd_per_month: ArrayLike,
    cloud_usd_per_month: ArrayLike,
    trend_per_year: ArrayLike = 0.0,
) -> FloatArray:
    """Months until cloud spend reaches K + R m (module docstring); inf = never (within
    HORIZON_MONTHS). Vectorized over every argument."""
    k, r, c, g = np.broadcast_arrays(
        *(np.asarray(v, dtype=float) for v in (upfront_usd, running_usd_per_month,
                                               cloud_usd_per_month, trend_per_year))
    )  # fmt: skip
    margin = c - r
    with np.errstate(divide="ignore", invalid="ignore"):
        flat = np.where(margin > 0, k / np.where(margin > 0, margin, 1.0), np.inf)
    a = np.log1p(g) / 12.0
    if not np.any(np.abs(a) > 1e-12):
        return np.asarray(np.where(flat <= HORIZON_MONTHS, flat, np.inf), dtype=float)
    safe_a = np.where(np.abs(a) > 1e-12, a, 1e-12)

    def gain(m: FloatArray) -> FloatArray:
        return np.asarray(c * np.expm1(safe_a * m) / safe_a - r * m - k, dtype=float)

    # The gain rises while the cloud bill c e^(a m) exceeds r: the crossing lies where it rises.
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
    trended = np.where(reached, hi, np.inf)
    out = np.where(np.abs(a) > 1e-12, trended, flat)
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
        lines["upfront"], lines["running"] / 12.0, price * float(monthly_gpu_hours), trend_per_year
    )
