"""Time and cost to train: hours = samples / throughput; cost = hours x price.

Vectorized over offers (pandas Series in, Series out). Cloud billing is taken as
per-second with no minimum (AWS, GCP and Azure Linux VMs bill per second after the
first minute), so cost is proportional to hours.
"""

from __future__ import annotations

import pandas as pd


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
