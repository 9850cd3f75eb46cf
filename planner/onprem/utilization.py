"""Utilization from the work: the share of the servers' year that the monthly GPU-hours fill.

  utilization = monthly GPU-hours x 12 / (GPUs x 8760 h)

The servers can give at most 1 - failure_downtime_fraction of their hours. Where the work
needs more, the answer is for the servers it needs:

  servers needed = ceil(monthly GPU-hours x 12 / (GPUs per server x 8760 x (1 - downtime)))
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.onprem.config import (
    HOURS_PER_MONTH,
    HOURS_PER_YEAR,
    MIN_UTILIZATION,
    VALID_RANGES,
    OnPremConfig,
    OnPremConfigError,
)


@dataclass(frozen=True)
class Sizing:
    """Where the utilization of an answer comes from.

    monthly_gpu_hours: the work (None: the config's utilization was used);
    servers_configured: the config's servers; servers: those the answer is for (more where
    the work does not fit); utilization: of those servers; max_utilization: 1 - downtime.
    """

    monthly_gpu_hours: float | None
    servers_configured: int
    servers: int
    utilization: float
    max_utilization: float

    @property
    def resized(self) -> bool:
        """The work needs more servers than the config has."""
        return self.servers != self.servers_configured


def utilization_of_hours(config: OnPremConfig, monthly_gpu_hours: float) -> float:
    """monthly GPU-hours x 12 / (GPUs x 8760): may exceed 1 (the work does not fit)."""
    return float(monthly_gpu_hours) * 12.0 / (config.gpus * HOURS_PER_YEAR)


def per_server_hours(config: OnPremConfig) -> float:
    """GPU-hours one server of this kind delivers a month, less those lost to failures."""
    return config.gpus_per_server * HOURS_PER_MONTH * config.max_utilization


def servers_needed(config: OnPremConfig, monthly_gpu_hours: float) -> int:
    """The fewest servers of this kind whose hours, less those lost to failures, hold the work."""
    return max(1, math.ceil(float(monthly_gpu_hours) / per_server_hours(config) - 1e-9))


def size_for_work(
    config: OnPremConfig, monthly_gpu_hours: float | None
) -> tuple[OnPremConfig, Sizing]:
    """The config at the utilization the work implies (on more servers where it must be),
    and how it was sized; the config as it is where no hours are given."""
    if monthly_gpu_hours is None:
        sizing = Sizing(None, config.servers, config.servers, config.utilization,
                        config.max_utilization)  # fmt: skip
        return config, sizing
    hours = float(monthly_gpu_hours)
    if not (math.isfinite(hours) and hours > 0):
        raise OnPremConfigError(
            f"{monthly_gpu_hours!r} must be a finite number of GPU-hours per month > 0",
            "monthly_gpu_hours",
        )
    sized = config
    if utilization_of_hours(config, hours) > config.max_utilization:
        needed = servers_needed(config, hours)
        most = VALID_RANGES["servers"][2]
        if needed > most:
            raise OnPremConfigError(
                f"needs {needed:,} servers of {config.gpus_per_server} GPUs; a config holds at "
                f"most {most:,.0f}: give at most {most * per_server_hours(config):,.0f} "
                "GPU-hours a month",
                "monthly_gpu_hours",
            )
        sized = config.with_servers(needed)
    utilization = utilization_of_hours(sized, hours)
    if utilization < MIN_UTILIZATION:
        least = MIN_UTILIZATION * sized.gpus * HOURS_PER_MONTH
        raise OnPremConfigError(
            f"is {utilization:.3g} of the cluster's hours, below the least utilization "
            f"{MIN_UTILIZATION:g}: give at least {least:.3g} GPU-hours a month",
            "monthly_gpu_hours",
        )
    sized = sized.with_utilization(min(utilization, 1.0))
    sizing = Sizing(hours, config.servers, sized.servers, utilization, config.max_utilization)
    return sized, sizing


def capacity_gpu_hours_per_month(config: OnPremConfig) -> float:
    """GPU-hours the cluster can deliver in a month: GPUs x 730 h x (1 - downtime)."""
    return config.gpus * HOURS_PER_MONTH * config.max_utilization
