"""The buy-or-rent band: seeded Monte Carlo over the cited ranges, the verdict and the
tornado drawn from the same ranges."""

from __future__ import annotations

import time

import numpy as np
import pytest

from planner.onprem.answer import tco_answer
from planner.onprem.config import CONFIG_KEYS, OnPremConfig
from planner.onprem.montecarlo import simulate, versus_cloud
from planner.onprem.sensitivity import sensitivity
from planner.onprem.uncertain import input_ranges
from planner.onprem.verdict import Verdict, verdict_of

ALL_DEFAULTED = tuple(k for k in CONFIG_KEYS if k not in ("servers", "utilization"))
CONFIG = OnPremConfig(servers=4, utilization=10_000 * 12 / (32 * 8760))


def test_the_same_seed_gives_the_same_draws_and_another_seed_others() -> None:
    a = simulate(CONFIG, ALL_DEFAULTED, 2_000, seed=7)
    b = simulate(CONFIG, ALL_DEFAULTED, 2_000, seed=7)
    c = simulate(CONFIG, ALL_DEFAULTED, 2_000, seed=8)
    assert np.array_equal(a.usd_per_gpu_hour, b.usd_per_gpu_hour)
    assert not np.array_equal(a.usd_per_gpu_hour, c.usd_per_gpu_hour)
    assert versus_cloud(a, 6.88) == versus_cloud(b, 6.88)


def test_ten_thousand_draws_take_well_under_a_second() -> None:
    start = time.perf_counter()
    draws = simulate(CONFIG, ALL_DEFAULTED, 10_000)
    versus_cloud(draws, 6.88, trend_per_year=-0.15)
    assert time.perf_counter() - start < 0.5
    assert draws.n == 10_000


def test_draws_stay_within_the_ranges() -> None:
    ranges = input_ranges(CONFIG, ALL_DEFAULTED)
    draws = simulate(CONFIG, ALL_DEFAULTED, 5_000)
    for field, (low, _, high) in ranges.items():
        assert draws.inputs[field].min() >= low and draws.inputs[field].max() <= high, field
    assert ranges["capex_usd_per_server"] == (199_000, 270_000, 317_000)
    # The utilization may fall short of the plan, and never exceeds what the servers give.
    assert ranges["utilization"][0] == pytest.approx(0.8 * CONFIG.utilization)
    assert ranges["utilization"][2] <= CONFIG.max_utilization


def test_inputs_the_user_set_are_known_except_the_forecasts() -> None:
    quoted = OnPremConfig(servers=4, capex_usd_per_server=300_000, lifetime_years=5)
    defaulted = tuple(
        k for k in ALL_DEFAULTED if k not in ("capex_usd_per_server", "lifetime_years")
    )
    ranges = input_ranges(quoted, defaulted)
    assert "capex_usd_per_server" not in ranges  # a quote is known
    low, mid, high = ranges["lifetime_years"]  # a forecast keeps its relative spread
    assert (low, mid, high) == pytest.approx((5 * 3 / 4, 5, 5 * 6 / 4))


def test_the_share_of_cases_falls_with_the_cloud_price() -> None:
    draws = simulate(CONFIG, ALL_DEFAULTED, 5_000)
    shares = [versus_cloud(draws, p).p_buy_cheaper for p in (1.0, 3.99, 5.0, 6.88, 20.0)]
    assert shares == sorted(shares)
    assert shares[0] == 0.0 and shares[-1] == 1.0
    # A falling cloud price makes buying win less often.
    assert versus_cloud(draws, 6.88, -0.3).p_buy_cheaper < versus_cloud(draws, 6.88).p_buy_cheaper


def test_the_band_holds_the_typical_figure() -> None:
    answer = tco_answer(CONFIG, _offers([6.88]), ALL_DEFAULTED)
    p10, p50, p90 = answer.band
    assert p10 < answer.onprem["usd_per_gpu_hour"] < p90
    assert p10 < p50 < p90
    row = answer.cloud.iloc[0]
    assert row["payback_months_p10"] <= row["payback_months_p50"] <= row["payback_months_p90"]


@pytest.mark.parametrize(
    ("share", "verdict"),
    [(0.97, Verdict.BUY), (0.8, Verdict.BUY), (0.5, Verdict.CLOSE), (0.2, Verdict.RENT)],
)
def test_verdict_codes(share: float, verdict: Verdict) -> None:
    assert verdict_of(share) is verdict


def test_the_tornado_uses_the_monte_carlo_ranges() -> None:
    swing = sensitivity(CONFIG, ALL_DEFAULTED)
    ranges = input_ranges(CONFIG, ALL_DEFAULTED)
    assert set(swing["field"]) == set(ranges)
    for row in swing.itertuples():
        assert (row.low_value, row.high_value) == (ranges[row.field][0], ranges[row.field][2])
    assert swing["swing_usd_per_gpu_hour"].is_monotonic_decreasing
    capex = swing.set_index("field").loc["capex_usd_per_server"]
    assert capex["low_usd_per_gpu_hour"] < capex["base_usd_per_gpu_hour"]
    assert capex["high_usd_per_gpu_hour"] > capex["base_usd_per_gpu_hour"]


def _offers(prices: list[float]):  # type: ignore[no-untyped-def]
    import pandas as pd

    return pd.DataFrame(
        {
            "ref": [f"x:{i}" for i in range(len(prices))],
            "provider": "x",
            "region": "r",
            "instance_type": [f"t{i}" for i in range(len(prices))],
            "gpu_name": "H100-SXM",
            "gpu_count": 8,
            "tier": "hyperscaler",
            "pricing": "on-demand",
            "usd_per_gpu_hour": prices,
            "priced_at": "2025-06-01",
            "source": "test",
        }
    )
