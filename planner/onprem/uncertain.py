"""Which inputs of a config are uncertain, and over what range (low, central, high).

A line the config left to its default is drawn over its cited range
(planner.onprem.ranges); a line the user set is taken as known (a quote, a tariff), except
the forecasts, which stay uncertain around the value set by their range's relative spread:
the utilization (x 0.8-1.1 of planned), the life and the resale value. Power derived from
TDP is spread as DGX H100's published draw is around its typical (6.5-10.2 kW of 7.5).
The Monte Carlo (planner.onprem.montecarlo) and the tornado (planner.onprem.sensitivity)
read the same ranges.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import numpy as np

from planner.onprem.config import OnPremConfig
from planner.onprem.lines import FloatArray, params_of
from planner.onprem.ranges import LINES, LineRange, capex_range, network_range

FORECASTS: tuple[str, ...] = ("utilization", "lifetime_years", "resale_fraction")
# Lines drawn when defaulted (their range is absolute); power and staff are handled apart.
_ABSOLUTE: tuple[str, ...] = (
    "storage_usd_per_server", "installation_usd_per_server", "spares_fraction",
    "lifetime_years", "cost_of_capital_rate", "resale_fraction", "maintenance_fraction_per_year",
    "idle_power_fraction", "pue", "usd_per_kwh", "colocation_usd_per_kw_month",
    "staff_usd_per_fte_year", "servers_per_fte",
)  # fmt: skip


def _relative(value: float, line: LineRange) -> tuple[float, float, float]:
    """value spread as the line's range is around its typical value."""
    if line.typical == 0:
        return value, value, value
    return value * line.low / line.typical, value, value * line.high / line.typical


def input_ranges(
    config: OnPremConfig, defaulted: Collection[str]
) -> dict[str, tuple[float, float, float]]:
    """(low, central, high) of every uncertain input of `config`, by parameter name.

    `defaulted`: the config keys left to their defaults. Central is the config's value.
    The utilization's high end is capped at what the servers can work (1 - downtime)."""
    out: dict[str, tuple[float, float, float]] = {}
    if "capex_usd_per_server" in defaulted:
        found = capex_range(config.gpu_name)
        if found is not None:
            out["capex_usd_per_server"] = (found.low, found.typical, found.high)
    if "network_usd_per_server" in defaulted:
        net = network_range(config.fabric)
        out["network_usd_per_server"] = (net.low, net.typical, net.high)
    for field in _ABSOLUTE:
        line = LINES[field]
        if field in defaulted:
            out[field] = (line.low, line.typical, line.high)
        elif field in FORECASTS:
            out[field] = _relative(float(getattr(config, field)), line)
    if "power_kw_per_server" in defaulted:
        out["power_kw_per_server"] = _relative(config.server_power_kw, LINES["power_kw_per_server"])
    if "staff_usd_per_year" not in defaulted:  # a staff budget set: FTE inputs do not apply
        out.pop("staff_usd_per_fte_year", None)
        out.pop("servers_per_fte", None)
    low, mid, high = _relative(config.utilization, LINES["utilization_factor"])
    out["utilization"] = (low, mid, min(high, config.max_utilization, 1.0))
    if out["utilization"][2] < mid:
        out["utilization"] = (low, mid, mid)
    return {k: v for k, v in out.items() if v[0] < v[2]}


def params_with(
    config: OnPremConfig, defaulted: Collection[str], inputs: Mapping[str, FloatArray]
) -> dict[str, FloatArray]:
    """The config's parameters with some inputs replaced by arrays (draws or tornado ends);
    staff follows servers / servers_per_fte x staff_usd_per_fte_year where it was defaulted."""
    params = {**params_of(config), **{k: np.asarray(v, dtype=float) for k, v in inputs.items()}}
    if "staff_usd_per_year" in defaulted:
        params["staff_usd_per_year"] = (
            params["servers"] / params["servers_per_fte"] * params["staff_usd_per_fte_year"]
        )
    return params
