"""The tornado chart's data: how the amortized USD per GPU-hour moves when each uncertain
input goes from the low to the high end of its range (planner.onprem.uncertain, the ranges
the Monte Carlo draws from), the others at their central value; one vectorized pass."""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
import pandas as pd

from planner.onprem.config import OnPremConfig
from planner.onprem.lines import amortized_usd_per_gpu_hour, yearly_lines
from planner.onprem.uncertain import input_ranges, params_with


def sensitivity(config: OnPremConfig, defaulted: Collection[str]) -> pd.DataFrame:
    """One row per uncertain input, largest swing first. Columns: field, base_value,
    low_value, high_value, base_usd_per_gpu_hour, low_usd_per_gpu_hour (at low_value),
    high_usd_per_gpu_hour, swing_usd_per_gpu_hour (|high - low|)."""
    ranges = input_ranges(config, defaulted)
    fields = list(ranges)
    n = len(fields)
    base = params_with(config, defaulted, {})
    inputs = {f: np.full(2 * n, float(np.asarray(base[f]))) for f in fields}
    for i, field in enumerate(fields):
        low, _, high = ranges[field]
        inputs[field][i], inputs[field][n + i] = low, high
    lines = yearly_lines(params_with(config, defaulted, inputs))
    values = lines["total"] / lines["gpu_hours"]
    frame = pd.DataFrame(
        {
            "field": fields,
            "base_value": [ranges[f][1] for f in fields],
            "low_value": [ranges[f][0] for f in fields],
            "high_value": [ranges[f][2] for f in fields],
            "base_usd_per_gpu_hour": float(amortized_usd_per_gpu_hour(config)),
            "low_usd_per_gpu_hour": values[:n],
            "high_usd_per_gpu_hour": values[n:],
        }
    )
    frame["swing_usd_per_gpu_hour"] = (
        frame["high_usd_per_gpu_hour"] - frame["low_usd_per_gpu_hour"]
    ).abs()
    frame = frame.sort_values("swing_usd_per_gpu_hour", ascending=False, kind="stable")
    return frame.reset_index(drop=True)
