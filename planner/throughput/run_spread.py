"""How far a new run lands from the median of a figure's runs: the measured band.

A figure measured or published at a count is the median of its runs. What a buyer gets
is one more run of that configuration, on another machine of the kind, with another
software stack; its 80% band is the 10-90% quantiles of the leave-one-run-out log errors

    r_i = log(x_i / median(x_j, j != i))

pooled over every figure with two or more runs (a prediction interval for a new run, so
it does not narrow with the number of runs). A figure of one run gets the same band,
where min..max would claim no spread at all. Fewer than MIN_SPREAD_GROUPS such figures:
RUN_BAND_DEFAULT, the same quantiles on the bundled published figures
(benchmarks.published, from reference/benchmarks/lambda_pytorch_throughput.csv);
tools/evaluate_estimator.py (g) prints the band's leave-one-figure-out coverage.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from planner.throughput.scaling import BAND_QUANTILES

FIGURE_KEY = ["gpu_name", "model", "precision", "generation", "total_gpus"]
MIN_SPREAD_GROUPS = 20
# log(x / median of the other runs) at 10% and 90%, on the 246 bundled published figures
# with two or more runs (benchmarks.published; tests/planner/throughput/test_run_spread.py).
RUN_BAND_DEFAULT = (-0.0467, 0.0292)


def figure_of_runs(column: str = "throughput") -> dict[str, tuple[str, str]]:
    """A figure's named aggregations of its runs' `column`, for DataFrameGroupBy.agg: the
    median, min and max (`column`, `column`_low, `column`_high) and the number of runs."""
    return {
        column: (column, "median"),
        f"{column}_low": (column, "min"),
        f"{column}_high": (column, "max"),
        "runs": (column, "size"),
    }


def leave_one_run_out(reference: pd.DataFrame) -> pd.DataFrame:
    """One row per run of a figure with two or more runs: its FIGURE_KEY columns,
    throughput, others_median (median of the figure's other runs) and log_error
    (log(throughput / others_median)). Vectorized per group size."""
    ref = reference.reindex(columns=[*FIGURE_KEY, "throughput"]).copy()
    ref["generation"] = ref["generation"].astype(object).fillna("").astype(str)
    ref["total_gpus"] = ref["total_gpus"].astype(float)
    ref["throughput"] = ref["throughput"].astype(float)
    ref["_group"] = ref.groupby(FIGURE_KEY, sort=False).ngroup()
    size = ref.groupby("_group")["throughput"].transform("size")
    ref = ref.loc[size >= 2].copy()
    ref["others_median"] = np.nan
    for _, runs in ref.groupby("_group", sort=False)["throughput"]:
        values = runs.to_numpy()
        others = np.broadcast_to(values, (len(values), len(values)))
        mask = ~np.eye(len(values), dtype=bool)
        ref.loc[runs.index, "others_median"] = np.median(
            others[mask].reshape(len(values), len(values) - 1), axis=1
        )
    ref["log_error"] = np.log(ref["throughput"] / ref["others_median"])
    return ref.drop(columns="_group").reset_index(drop=True)


def run_band(reference: pd.DataFrame) -> tuple[float, float]:
    """(q10, q90) of leave_one_run_out's log errors, pooled; RUN_BAND_DEFAULT when fewer
    than MIN_SPREAD_GROUPS figures have two or more runs. q10 <= 0 <= q90."""
    errors = leave_one_run_out(reference)
    if errors.groupby(FIGURE_KEY).ngroups < MIN_SPREAD_GROUPS:
        return RUN_BAND_DEFAULT
    low, high = np.quantile(errors["log_error"], BAND_QUANTILES)
    return float(min(low, 0.0)), float(max(high, 0.0))
