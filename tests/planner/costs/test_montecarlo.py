"""P10/P50/P90: exact from the band off spot, simulated on spot, reproducible by seed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from planner.costs.montecarlo import (
    Z90,
    band_time_cost,
    log_sigmas,
    sample_split_normal,
    sample_spot_wall_hours,
    split_normal_quantiles,
    time_cost_quantiles,
)
from planner.costs.spot import sample_wall_hours, spot_overhead

SAMPLES = 3.6e9  # 1e6 s at 1000/s: 1000 h


def rows(n: int = 3, **columns: object) -> pd.DataFrame:
    base = {
        "throughput": [1000.0] * n,
        "throughput_low": [800.0] * n,
        "throughput_high": [1300.0] * n,
        "option_usd_per_hour": [2.0] * n,
        "instances": [1.0] * n,
        "interruptions_per_hour": [0.01] * n,
        "overhead_factor": [1.0] * n,
    }
    base.update(columns)  # type: ignore[arg-type]
    return pd.DataFrame(base)


def test_split_normal_has_the_band_as_its_10_50_90_quantiles() -> None:
    down, up = log_sigmas([10.0], [8.0], [15.0])
    assert down[0] == pytest.approx(np.log(10 / 8) / 1.2816, rel=1e-4)
    assert up[0] == pytest.approx(np.log(15 / 10) / Z90)
    exact = split_normal_quantiles([10.0], [8.0], [15.0])
    assert exact[:, 0] == pytest.approx([8.0, 10.0, 15.0])
    z = np.random.default_rng(1).standard_normal((200_000, 1))
    drawn = np.quantile(sample_split_normal([10.0], [8.0], [15.0], z), (0.1, 0.5, 0.9), axis=0)
    assert drawn[:, 0] == pytest.approx([8.0, 10.0, 15.0], rel=0.01)


def test_missing_band_means_no_spread() -> None:
    down, up = log_sigmas([10.0, 10.0], [np.nan, 12.0], [10.0, 9.0])
    assert down.tolist() == [0.0, 0.0] and up.tolist() == [0.0, 0.0]


def test_off_spot_quantiles_are_the_band_inverted_into_hours() -> None:
    values = band_time_cost(SAMPLES, [1000.0], [800.0], [1300.0], [2.0])
    hours = values[:3, 0]
    assert hours == pytest.approx([SAMPLES / 1300 / 3600, 1000.0, SAMPLES / 800 / 3600])
    assert values[3:, 0] == pytest.approx(hours * 2.0)
    frame = time_cost_quantiles(SAMPLES, rows(1), [False], [True], 0.1, 0.25, 0, 1000)
    assert frame["quantile_method"].iloc[0] == "band"
    assert frame["hours_p50"].iloc[0] == pytest.approx(1000.0)


def test_monte_carlo_is_reproducible_and_ordered() -> None:
    table = rows(3, interruptions_per_hour=[0.001, 0.01, 0.05])
    spot = [True, True, True]
    a = time_cost_quantiles(SAMPLES, table, spot, spot, 0.1, 0.25, seed=7, draws=5000)
    b = time_cost_quantiles(SAMPLES, table, spot, spot, 0.1, 0.25, seed=7, draws=5000)
    c = time_cost_quantiles(SAMPLES, table, spot, spot, 0.1, 0.25, seed=8, draws=5000)
    pd.testing.assert_frame_equal(a, b)
    assert not np.allclose(a["hours_p50"], c["hours_p50"])
    assert (a["hours_p10"] <= a["hours_p50"]).all() and (a["hours_p50"] <= a["hours_p90"]).all()
    assert (a["cost_p10_usd"] <= a["cost_p90_usd"]).all()
    assert a["cost_p50_usd"].to_numpy() == pytest.approx(2.0 * a["hours_p50"].to_numpy())
    assert a["quantile_method"].iloc[0] == "monte-carlo (5,000 draws, seed 7)"
    # More interruptions, more hours at every quantile.
    assert a["hours_p50"].is_monotonic_increasing and a["hours_p90"].is_monotonic_increasing


def test_spot_takes_longer_than_on_demand_at_the_same_throughput() -> None:
    table = rows(2, interruptions_per_hour=[0.02, 0.02])
    off = time_cost_quantiles(SAMPLES, table, [False, False], [False, False], 0.1, 0.25, 0, 4000)
    on = time_cost_quantiles(SAMPLES, table, [True, True], [True, True], 0.1, 0.25, 0, 4000)
    for q in ("hours_p10", "hours_p50", "hours_p90"):
        assert (on[q] > off[q]).all()


def test_spot_quantiles_match_planner_spot_when_throughput_is_certain() -> None:
    """With a zero-width band the simulation is planner.costs.spot's own (exact sampler)."""
    rate, checkpoint, restart = 0.02, 0.1, 0.25
    ours = sample_spot_wall_hours(
        SAMPLES, [1000.0], [1000.0], [1000.0], [rate], checkpoint, restart, [2.0],
        np.random.default_rng(3), 20_000,
    )  # fmt: skip
    exact = sample_wall_hours(
        1000.0, rate, checkpoint, restart, rng=np.random.default_rng(4), draws=20_000,
        instances=2.0,
    )  # fmt: skip
    assert np.mean(ours) == pytest.approx(
        spot_overhead(1000.0, rate, checkpoint, restart, instances=2.0)["expected_wall_hours"][0],
        rel=0.01,
    )
    for q in (0.1, 0.5, 0.9):
        assert np.quantile(ours, q) == pytest.approx(np.quantile(exact, q), rel=0.02)


def test_spot_spread_widens_with_the_throughput_band() -> None:
    narrow = sample_spot_wall_hours(
        SAMPLES, [1000.0], [990.0], [1010.0], [0.01], 0.1, 0.25, [1.0],
        np.random.default_rng(0), 5000,
    )  # fmt: skip
    wide = sample_spot_wall_hours(
        SAMPLES, [1000.0], [700.0], [1400.0], [0.01], 0.1, 0.25, [1.0],
        np.random.default_rng(0), 5000,
    )  # fmt: skip
    spread = lambda w: np.quantile(w, 0.9) - np.quantile(w, 0.1)  # noqa: E731
    assert spread(wide) > 3 * spread(narrow)
    # The band's own quantiles bound the compute part: P10 >= samples / high.
    assert np.quantile(wide, 0.1) >= SAMPLES / 1400 / 3600


def test_the_interruption_rate_range_widens_p10_p90() -> None:
    # 200 h of compute, one interruption per ~50 h at the central rate; checkpoints 0.5 h.
    exact = rows(1, interruptions_per_hour=[0.02], throughput_low=[999.0], throughput_high=[1001.0])
    ranged = exact.assign(interruptions_low_per_hour=[0.002], interruptions_high_per_hour=[0.2])
    args = ([True], [True], 0.5, 1.0, 0, 4000)
    fixed = time_cost_quantiles(SAMPLES / 5, exact, *args)
    wide = time_cost_quantiles(SAMPLES / 5, ranged, *args)
    assert wide["hours_p90"].iloc[0] > 1.2 * fixed["hours_p90"].iloc[0]
    assert wide["hours_p10"].iloc[0] <= fixed["hours_p10"].iloc[0]
    # A range of zero width is the fixed rate.
    same = exact.assign(interruptions_low_per_hour=[0.02], interruptions_high_per_hour=[0.02])
    assert time_cost_quantiles(SAMPLES / 5, same, *args)["hours_p90"].iloc[0] == pytest.approx(
        fixed["hours_p90"].iloc[0]
    )


def test_unsimulated_spot_rows_use_the_expected_overhead() -> None:
    table = rows(1, overhead_factor=[1.2])
    frame = time_cost_quantiles(SAMPLES, table, [True], [False], 0.1, 0.25, 0, 1000)
    assert frame["quantile_method"].iloc[0] == "band x expected spot overhead"
    assert frame["hours_p50"].iloc[0] == pytest.approx(1200.0)
