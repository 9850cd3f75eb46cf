"""P10/P50/P90 hours and dollars of the rows a plan shows (planner.costs.montecarlo), with
the same fixed hours and billing as their central figures."""

from __future__ import annotations

import numpy as np
import pandas as pd

from planner.costs.cost import dollars, fixed_hours
from planner.costs.montecarlo import time_cost_quantiles
from planner.costs.work import nominal_speed
from planner.request import PlanRequest


def with_bands(shown: pd.DataFrame, request: PlanRequest, simulate: np.ndarray) -> pd.DataFrame:
    """Rows with hours_p10/p50/p90, cost_p10/p50/p90_usd and quantile_method.

    Spot rows in `simulate` are drawn (request.seed, request.draws); other rows take the
    throughput band's quantiles. Start-up, staging and checkpoint hours are added to each
    quantile and its cost is planner.costs.cost.dollars of those hours.
    """
    workload = request.workload
    quantiles = time_cost_quantiles(
        workload.samples,
        nominal_speed(shown, workload).assign(overhead_factor=shown["spot_overhead_factor"]),
        (shown["pricing"] == "spot").to_numpy(),
        simulate,
        request.checkpoint_hours,
        request.restart_hours,
        request.seed,
        request.draws,
    )
    fixed = fixed_hours(shown)
    for q in ("p10", "p50", "p90"):
        hours = quantiles[f"hours_{q}"].to_numpy(float) + fixed
        quantiles[f"hours_{q}"] = hours
        quantiles[f"cost_{q}_usd"] = dollars(shown, hours)
    return shown.join(quantiles)
