"""The measured band: leave-one-run-out errors of figures with two or more runs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from planner.throughput.run_spread import (
    MIN_SPREAD_GROUPS,
    RUN_BAND_DEFAULT,
    leave_one_run_out,
    run_band,
)


def runs(groups: dict[str, list[float]]) -> pd.DataFrame:
    rows = [
        {"gpu_name": gpu, "model": "resnet50", "precision": "fp16_amp", "generation": "v1",
         "total_gpus": 1, "throughput": x}
        for gpu, values in groups.items()
        for x in values
    ]  # fmt: skip
    return pd.DataFrame(rows)


def test_each_run_is_compared_with_the_median_of_the_others() -> None:
    errors = leave_one_run_out(runs({"A": [100.0, 110.0, 90.0], "B": [50.0]}))
    assert len(errors) == 3  # B's single run has nothing to be compared with
    by_run = errors.set_index("throughput")
    assert by_run.at[100.0, "others_median"] == pytest.approx(100.0)  # median(110, 90)
    assert by_run.at[110.0, "others_median"] == pytest.approx(95.0)  # median(100, 90)
    assert by_run.at[90.0, "log_error"] == pytest.approx(np.log(90.0 / 105.0))


def test_the_band_is_the_pooled_quantiles_and_brackets_zero() -> None:
    rng = np.random.default_rng(3)
    groups = {f"G{i}": list(1000.0 * np.exp(rng.normal(0.0, 0.05, 4))) for i in range(60)}
    low, high = run_band(runs(groups))
    # A log-normal spread of 5% per run: a new run is within about +-1.28 * 5% * sqrt(1 + ...)
    assert -0.12 < low < -0.04 and 0.04 < high < 0.12


def test_too_few_repeated_figures_fall_back_to_the_bundled_spread() -> None:
    few = {f"G{i}": [100.0, 140.0] for i in range(MIN_SPREAD_GROUPS - 1)}
    assert run_band(runs(few)) == RUN_BAND_DEFAULT


def test_identical_runs_give_a_band_of_zero_width() -> None:
    same = {f"G{i}": [100.0, 100.0, 100.0] for i in range(MIN_SPREAD_GROUPS)}
    assert run_band(runs(same)) == (0.0, 0.0)


def test_the_default_band_is_the_one_the_bundled_published_figures_give() -> None:
    """RUN_BAND_DEFAULT is recomputed from what a plan fits on (benchmarks.published):
    new bundled figures must move the default with them."""
    from benchmarks.published import published_frame
    from planner.throughput.offers import reference_from_results

    reference = reference_from_results(published_frame())
    low, high = run_band(reference)
    assert (round(low, 4), round(high, 4)) == RUN_BAND_DEFAULT
