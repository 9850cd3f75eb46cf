"""Time and cost to train: hours = samples / throughput; cost = hours x price.

Vectorized over offers (pandas Series in, Series out). Cloud billing is taken as
per-second with no minimum (AWS, GCP and Azure Linux VMs bill per second after the
first minute), so cost is proportional to hours.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from planner.costs.overheads import billed_hours


def hours_to_train(samples: float, throughput_per_s: pd.Series) -> pd.Series:
    """Wall-clock hours to process `samples` at `throughput_per_s` (samples/s).

    Non-positive throughput gives NaN, never an infinite or negative time.
    """
    throughput = throughput_per_s.where(throughput_per_s > 0)
    return samples / throughput / 3600.0


def cost_to_train(hours: pd.Series, usd_per_hour: pd.Series) -> pd.Series:
    """USD for `hours` at `usd_per_hour` (NaN where the price is missing)."""
    return hours * usd_per_hour


def usd_per_million_samples(usd_per_hour: pd.Series, throughput_per_s: pd.Series) -> pd.Series:
    """USD per 10^6 samples (or tokens): price per hour / samples per hour x 10^6."""
    return usd_per_hour / (throughput_per_s.where(throughput_per_s > 0) * 3600.0) * 1e6


def fixed_hours(options: pd.DataFrame) -> np.ndarray:
    """Hours an option spends besides computing: start-up, data staging and checkpoint
    writes (planner.costs.overheads.job_overheads' columns)."""
    return (
        options["setup_hours"].to_numpy(float)
        + options["staging_hours"].to_numpy(float)
        + options["checkpoint_write_hours"].to_numpy(float)
    )


def dollars(options: pd.DataFrame, hours: ArrayLike) -> np.ndarray:
    """USD an option is billed for `hours` of wall time: its billing rounds the hours up
    (planner.costs.overheads.billed_hours: increment and minimum per provider), times the
    option's price per hour. The one cost formula for central figures and P10–P90 alike."""
    billed = billed_hours(
        np.asarray(hours, float),
        options["billing_increment_s"].to_numpy(float),
        options["billing_minimum_s"].to_numpy(),
    )
    return np.asarray(billed, float) * options["option_usd_per_hour"].to_numpy(float)
