"""Spot interruptions: checkpoint interval, expected overhead, sampled spread."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import integrate
from scipy.optimize import minimize_scalar

from planner.costs import spot


def simulate_one_run(
    work: float, rate: float, checkpoint: float, restart: float, interval: float, rng
) -> float:
    """Wall-clock hours of one run, event by event (an independent implementation).

    Interruptions arrive as a Poisson process in wall-clock time; the job works through
    segments (work + checkpoint, no checkpoint after the last), loses the current segment when
    interrupted, then restarts (a restart can be interrupted too).
    """
    t, done = 0.0, 0.0
    next_hit = rng.exponential(1 / rate) if rate > 0 else math.inf
    while True:
        piece = min(interval, work - done)
        last = done + piece >= work - 1e-9
        length = piece + (0.0 if last else checkpoint)
        if t + length <= next_hit:
            t += length
            done += piece
            if last:
                return t
            continue
        t = next_hit
        next_hit = t + rng.exponential(1 / rate)
        while t + restart > next_hit:
            t = next_hit
            next_hit = t + rng.exponential(1 / rate)
        t += restart


def test_overhead_tends_to_one_as_the_rate_goes_to_zero() -> None:
    rates = np.array([1e-2, 1e-3, 1e-5, 1e-7, 0.0])
    frame = spot.spot_overhead(200.0, rates, checkpoint_hours=0.1, restart_hours=0.5)
    overhead = frame["overhead_factor"].to_numpy()
    assert np.all(np.diff(overhead) < 0)
    assert overhead[0] > 1.01
    assert overhead[-2] == pytest.approx(1.0, abs=1e-4)
    assert overhead[-1] == 1.0
    assert frame["checkpoints"].iloc[-1] == 0
    assert frame["expected_interruptions"].iloc[-1] == 0


def test_young_and_daly_intervals_match_their_closed_forms() -> None:
    c, m = 0.1, 50.0
    assert spot.young_interval_hours(c, m) == pytest.approx(math.sqrt(2 * 0.1 * 50))
    x = c / (2 * m)
    daly = math.sqrt(2 * c * m) * (1 + math.sqrt(x) / 3 + x / 9) - c
    assert spot.daly_interval_hours(c, m) == pytest.approx(daly, rel=1e-12)
    # Checkpoints as long as two MTBFs: Daly says checkpoint every MTBF.
    assert spot.daly_interval_hours(30.0, 10.0) == pytest.approx(10.0)
    # optimal_interval_hours works from the rate: MTBF = 1 / rate.
    assert spot.optimal_interval_hours(c, 1 / m) == pytest.approx(daly)
    assert spot.optimal_interval_hours(c, 1 / m, "young") == pytest.approx(math.sqrt(10))
    assert np.isinf(spot.optimal_interval_hours(c, 0.0))


@pytest.mark.parametrize(("c", "m"), [(0.1, 50.0), (1.0, 10.0), (0.05, 2.0)])
def test_daly_interval_is_the_minimum_of_the_expected_time(c: float, m: float) -> None:
    """Daly's estimate sits within 0.1% of the numerical optimum of E[T](tau); Young's does not."""

    def expected(tau: float) -> float:
        return m * (math.exp((tau + c) / m) - 1) / tau

    best = minimize_scalar(expected, bounds=(1e-6, 10 * m), method="bounded").x
    daly = float(spot.daly_interval_hours(c, m))
    young = float(spot.young_interval_hours(c, m))
    assert daly == pytest.approx(best, rel=1e-3)
    assert abs(daly - best) <= abs(young - best)
    assert expected(daly) <= expected(young)


def expected_wall_hours(*args: Any, **kwargs: Any) -> np.ndarray:
    return spot.spot_overhead(*args, **kwargs)["expected_wall_hours"].to_numpy()


def test_expected_wall_hours_is_dalys_per_segment_formula() -> None:
    """The compound-geometric mean equals Daly 2006 eq. 3 summed over segments:
    E[segment] = e^{λR} (e^{λs} - 1) / λ."""
    # 10 h of work, checkpoint every 4 h (C = 0.5 h): segments 4.5, 4.5 and a last 2 h.
    rate, r = 0.05, 0.25
    hand = math.exp(rate * r) / rate * (2 * math.expm1(rate * 4.5) + math.expm1(rate * 2.0))
    got = expected_wall_hours(10.0, rate, 0.5, r, interval_hours=4.0)
    assert float(got[0]) == pytest.approx(hand, rel=1e-12)
    no_rate = expected_wall_hours(10.0, 0.0, 0.5, r, interval_hours=4.0)
    assert float(no_rate[0]) == pytest.approx(11.0)


def test_lost_work_per_interruption_is_about_half_the_segment() -> None:
    frame = spot.spot_overhead(100.0, 1e-4, checkpoint_hours=0.1, restart_hours=0.1)
    segment = frame["interval_hours"].iloc[0] + 0.1
    assert frame["lost_hours_per_interruption"].iloc[0] == pytest.approx(segment / 2, rel=0.01)
    # Frequent interruptions lose less than half: the interruption comes early more often.
    busy = spot.spot_overhead(100.0, 0.5, 0.1, 0.1, interval_hours=4.0)
    assert busy["lost_hours_per_interruption"].iloc[0] < 4.1 / 2


@pytest.mark.parametrize(("bound", "rate"), [(2.0, 0.5), (1.0, 1e-5), (3.0, 4.0), (0.5, 0.0)])
def test_truncated_exponential_moments_match_numerical_integration(
    bound: float, rate: float
) -> None:
    def density(x: float) -> float:
        if rate == 0:
            return 1 / bound
        return rate * math.exp(-rate * x) / -math.expm1(-rate * bound)

    mean_q = integrate.quad(lambda x: x * density(x), 0, bound)[0]
    second_q = integrate.quad(lambda x: x * x * density(x), 0, bound)[0]
    mean, var = spot._truncated_exponential_moments(np.array(bound), np.array(rate))
    assert float(mean) == pytest.approx(mean_q, rel=1e-7)
    assert float(var) == pytest.approx(second_q - mean_q**2, rel=1e-6)


JOBS = {  # compute hours, rate per hour, checkpoint h, restart h
    "long-rare": (300.0, 0.004, 0.1, 0.25),
    "short-frequent": (20.0, 0.2, 0.05, 0.3),
    "no-restart-cost": (50.0, 0.05, 0.2, 0.0),
}


@pytest.mark.parametrize("job", list(JOBS))
def test_monte_carlo_mean_and_spread_match_the_analytic_moments(job: str) -> None:
    w, rate, c, r = JOBS[job]
    draws = 40_000
    samples = spot.sample_wall_hours(w, rate, c, r, rng=np.random.default_rng(7), draws=draws)
    assert samples.shape == (draws, 1)
    row = spot.spot_overhead(w, rate, c, r).iloc[0]
    error = row["wall_hours_std"] / math.sqrt(draws)
    assert abs(samples.mean() - row["expected_wall_hours"]) < 4 * error
    assert samples.std() == pytest.approx(row["wall_hours_std"], rel=0.05)
    assert samples.min() >= w  # never faster than uninterrupted


def test_event_by_event_simulation_agrees_with_the_model() -> None:
    """The closed form is the mean of an independent, wall-clock Poisson simulation."""
    w, rate, c, r = 20.0, 0.1, 0.2, 0.5
    tau = float(spot.optimal_interval_hours(c, rate))
    rng = np.random.default_rng(11)
    runs = np.array([simulate_one_run(w, rate, c, r, tau, rng) for _ in range(6000)])
    row = spot.spot_overhead(w, rate, c, r).iloc[0]
    assert abs(runs.mean() - row["expected_wall_hours"]) < 4 * row["wall_hours_std"] / math.sqrt(
        len(runs)
    )
    exact = spot.sample_wall_hours(w, rate, c, r, rng=np.random.default_rng(3), draws=6000)
    for q in (0.1, 0.5, 0.9):
        assert np.quantile(exact, q) == pytest.approx(np.quantile(runs, q), rel=0.02)


def test_moments_sampler_quantiles_follow_the_exact_sampler() -> None:
    w = np.array([300.0, 20.0, 50.0])
    rate = np.array([0.004, 0.2, 0.05])
    args = (w, rate, 0.1, 0.25)
    exact = spot.sample_wall_hours(*args, rng=np.random.default_rng(1), draws=30_000)
    fast = spot.sample_wall_hours(
        *args, rng=np.random.default_rng(2), draws=30_000, method="moments"
    )
    q_exact = spot.overhead_quantiles(exact, w)
    q_fast = spot.overhead_quantiles(fast, w)
    for column in ("overhead_mean", "overhead_p10", "overhead_p50", "overhead_p90"):
        np.testing.assert_allclose(q_fast[column], q_exact[column], rtol=0.01)


def test_vectorized_calls_equal_scalar_calls() -> None:
    w = np.array([10.0, 100.0, 1000.0, 5.0])
    rate = np.array([0.0, 0.01, 0.05, 0.3])
    c = np.array([0.1, 0.05, 0.2, 0.01])
    r = np.array([0.2, 0.5, 0.0, 0.1])
    table = spot.spot_overhead(w, rate, c, r)
    rows = pd.concat(
        [spot.spot_overhead(*args) for args in zip(w, rate, c, r, strict=True)],
        ignore_index=True,
    )
    pd.testing.assert_frame_equal(table, rows, rtol=1e-15)
    # Broadcasting: one checkpoint cost for every job.
    np.testing.assert_array_equal(
        expected_wall_hours(w, rate, 0.1, 0.2),
        expected_wall_hours(w, rate, np.full(4, 0.1), np.full(4, 0.2)),
    )


def test_sampling_is_reproducible_with_a_seed_and_jobs_are_independent_columns() -> None:
    args = ([10.0, 100.0], [0.05, 0.01], 0.1, 0.2)
    a = spot.sample_wall_hours(*args, rng=np.random.default_rng(5), draws=1000)
    b = spot.sample_wall_hours(*args, rng=np.random.default_rng(5), draws=1000)
    np.testing.assert_array_equal(a, b)
    alone = spot.sample_wall_hours(10.0, 0.05, 0.1, 0.2, rng=np.random.default_rng(9), draws=20_000)
    both = spot.sample_wall_hours(*args, rng=np.random.default_rng(10), draws=20_000)
    for q in (0.1, 0.5, 0.9):
        assert np.quantile(both[:, 0], q) == pytest.approx(np.quantile(alone, q), rel=0.01)


def test_more_instances_mean_more_interruptions() -> None:
    one = spot.spot_overhead(100.0, 0.01, 0.1, 0.25, instances=1).iloc[0]
    four = spot.spot_overhead(100.0, 0.01, 0.1, 0.25, instances=4).iloc[0]
    assert four["interruptions_per_hour"] == pytest.approx(0.04)
    same = spot.spot_overhead(100.0, 0.04, 0.1, 0.25).iloc[0]
    assert four["expected_wall_hours"] == pytest.approx(same["expected_wall_hours"])
    assert four["overhead_factor"] > one["overhead_factor"]


def test_provider_defaults_are_the_documented_conversions() -> None:
    aws = spot.SPOT_RATE_DEFAULTS["aws"]
    assert aws.interruptions_per_hour == pytest.approx(-math.log(0.7) / 730)
    assert spot.SPOT_RATE_DEFAULTS["gcp"].interruptions_per_hour == pytest.approx(
        -math.log(0.9) / 24
    )
    assert spot.SPOT_RATE_DEFAULTS["azure"].interruptions_per_hour == pytest.approx(
        -math.log(0.825) / 730
    )
    for default in [*spot.SPOT_RATE_DEFAULTS.values(), spot.OTHER_PROVIDER_DEFAULT]:
        assert default.low_per_hour < default.interruptions_per_hour < default.high_per_hour
        assert default.basis and default.source
    rates = spot.interruptions_per_hour_for(
        pd.Series(["AWS", "gcp", "lambda", "azure"]), overrides={"azure": 0.5}
    )
    assert rates.tolist() == pytest.approx(
        [
            aws.interruptions_per_hour,
            spot.SPOT_RATE_DEFAULTS["gcp"].interruptions_per_hour,
            spot.OTHER_PROVIDER_DEFAULT.interruptions_per_hour,
            0.5,
        ]
    )


def test_spot_for_offers_prices_the_expected_wall_time() -> None:
    offers = pd.DataFrame(
        {
            "provider": ["aws", "gcp", "lambda"],
            "spot_usd_per_hour": [10.0, 5.0, np.nan],
        },
        index=[7, 8, 9],
    )
    frame = spot.spot_for_offers(offers, [100.0, 100.0, 100.0], rates={"gcp": 0.02})
    assert list(frame.index) == [7, 8, 9]
    assert frame.loc[7, "spot_cost_usd"] == pytest.approx(
        10.0 * frame.loc[7, "expected_wall_hours"]
    )
    assert frame.loc[8, "interruptions_per_hour"] == pytest.approx(0.02)
    assert math.isnan(frame.loc[9, "spot_cost_usd"])
    assert frame["rate_source"].tolist() == ["default:aws", "user", "default:other"]


def test_bad_inputs_name_the_argument() -> None:
    with pytest.raises(ValueError, match="interruptions_per_hour"):
        spot.spot_overhead(10.0, -0.1)
    with pytest.raises(ValueError, match="compute_hours"):
        spot.spot_overhead(0.0, 0.1, 0.1, 0.1)
    with pytest.raises(ValueError, match="interval_hours"):
        spot.spot_overhead(10.0, 0.1, 0.1, 0.1, interval_hours=0.0)
    # No checkpoints on a 1000 h job at one interruption per 2 h: it never finishes.
    with pytest.raises(ValueError, match="checkpoint more often"):
        spot.sample_wall_hours(
            1000.0, 0.5, 0.1, 0.1, interval_hours=1000.0, rng=np.random.default_rng(0), draws=10
        )
    with pytest.raises(ValueError, match="moments"):
        spot.sample_wall_hours(
            np.full(1000, 500.0), 0.5, 0.01, 0.1, rng=np.random.default_rng(0), draws=10_000
        )


def test_spot_cost_is_wall_hours_times_price() -> None:
    np.testing.assert_allclose(spot.spot_cost_usd([10.0, 20.0], [2.0, 0.5]), [20.0, 10.0])


def test_readme_example_figures() -> None:
    """The figures quoted in docs/model.md's Spot section."""
    rate = spot.SPOT_RATE_DEFAULTS["gcp"].interruptions_per_hour
    row = spot.spot_overhead(100.0, rate, checkpoint_hours=0.1, restart_hours=0.25).iloc[0]
    assert round(row["interval_hours"], 1) == 6.7
    assert round(row["overhead_factor"], 3) == 1.030
    assert row["checkpoints"] == 14
    draws = spot.sample_wall_hours(
        100.0, rate, 0.1, 0.25, rng=np.random.default_rng(0), draws=10_000
    )
    q = spot.overhead_quantiles(draws, 100.0).iloc[0].round(3)
    assert (q["overhead_p10"], q["overhead_p50"], q["overhead_p90"]) == (1.014, 1.014, 1.072)


def test_central_rates_are_comparable_across_providers() -> None:
    # Each a central reading of its provider's measure: within 20x of each other (the face
    # value conversions were 170x apart), neoclouds in the middle with the widest range.
    centrals = [d.interruptions_per_hour for d in spot.SPOT_RATE_DEFAULTS.values()]
    other = spot.OTHER_PROVIDER_DEFAULT
    assert max(centrals) / min(centrals) < 20
    assert min(centrals) < other.interruptions_per_hour < max(centrals)
    assert other.low_per_hour == min(d.low_per_hour for d in spot.SPOT_RATE_DEFAULTS.values())
    assert other.high_per_hour == max(d.high_per_hour for d in spot.SPOT_RATE_DEFAULTS.values())


def test_the_rate_range_follows_the_provider_and_a_given_rate_has_none() -> None:
    low, high = spot.interruption_range_for(pd.Series(["aws", "vast", "gcp"]), {"gcp": 0.02})
    aws = spot.SPOT_RATE_DEFAULTS["aws"]
    assert (low[0], high[0]) == (aws.low_per_hour, aws.high_per_hour)
    assert (low[1], high[1]) == (
        spot.OTHER_PROVIDER_DEFAULT.low_per_hour,
        spot.OTHER_PROVIDER_DEFAULT.high_per_hour,
    )
    assert low[2] == high[2] == 0.02
