"""The on-prem cost lines per year, vectorized over configs (numpy arrays of parameters).

Paid up front (USD), per server then for the site:

  K = servers x (capex x (1 + spares_fraction) + network + storage + installation) + extra

recovered at end of life S = resale_fraction x capex x servers. Capital per year is the
annuity that repays K less the discounted resale over the life L at the cost of capital r
(the capital recovery factor, e.g. Short, Packey & Holt 1995, NREL/TP-462-5173, eq. 4-6):

  capital = (K - S (1 + r)^-L) x r / (1 - (1 + r)^-L);   r = 0: (K - S) / L  (straight-line)

shown as one straight-line line per item (item / L), a resale credit (-S / L) and the
financing that the annuity adds (capital - (K - S) / L). Epoch AI amortizes hardware the
same way, over its life (training-cost-trends; Cottier et al. 2024). Running per year:

  support    = maintenance_fraction_per_year x capex x servers
  energy     = servers x power_kw x (idle + (1 - idle) x u) x 8760 h x PUE x usd_per_kwh
  colocation = servers x power_kw x colocation_usd_per_kw_month x 12
  facility, staff (configured, or servers / servers_per_fte x staff_usd_per_fte_year)

with u the utilization (share of the year the GPUs work). GPU-hours used per year:
GPUs x 8760 x u, so amortized USD per GPU-hour = total per year / GPU-hours used.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from planner.onprem.config import (
    HOURS_PER_YEAR,
    MIN_UTILIZATION,
    PARAMS,
    OnPremConfig,
    OnPremConfigError,
    range_text,
)

if TYPE_CHECKING:
    Params = Mapping[str, ArrayLike]

FloatArray = NDArray[np.float64]
CAPITAL_LINES: tuple[str, ...] = (
    "servers", "spares", "network", "storage", "installation", "site_capex", "resale",
    "financing",
)  # fmt: skip
RUNNING_LINES: tuple[str, ...] = ("support", "energy", "colocation", "facility", "staff")
COMPONENTS: tuple[str, ...] = (*CAPITAL_LINES, *RUNNING_LINES)


def params_of(
    config: OnPremConfig | Mapping[str, ArrayLike], utilization: ArrayLike | None = None
) -> dict[str, FloatArray]:
    """Every parameter as a float array (a config's defaults resolved); `utilization`
    overrides the config's, checked to be in (0, 1]."""
    raw = config.params() if isinstance(config, OnPremConfig) else dict(config)
    missing = [f for f in PARAMS if f not in raw]
    if missing:
        raise ValueError(f"parameters missing: {missing}")
    out = {k: np.asarray(raw[k], dtype=float) for k in PARAMS}
    if utilization is not None:
        u = np.asarray(utilization, dtype=float)
        ok = (u >= MIN_UTILIZATION) & (u <= 1)
        if not np.all(ok):
            bad = np.ravel(u)[np.flatnonzero(~np.ravel(ok))[0]]
            raise OnPremConfigError(
                f"{bad!r} is out of range; it must be {range_text('utilization')}", "utilization"
            )
        out["utilization"] = u
    return out


def upfront_usd(p: Mapping[str, FloatArray]) -> FloatArray:
    """K: everything paid when buying, USD (module docstring)."""
    per_server = (
        p["capex_usd_per_server"] * (1 + p["spares_fraction"])
        + p["network_usd_per_server"]
        + p["storage_usd_per_server"]
        + p["installation_usd_per_server"]
    )
    return np.asarray(per_server * p["servers"] + p["extra_capex_usd"], dtype=float)


def capital_recovery_factor(rate: ArrayLike, years: ArrayLike) -> FloatArray:
    """r / (1 - (1 + r)^-L), and its limit 1 / L as r -> 0 (straight-line).

    Computed as r / -expm1(-L log1p(r)): the same annuity, exact where r or L is tiny
    (r = 1e-17 makes 1 + r equal 1 in floating point, and the plain form divides by 0)."""
    r, life = np.asarray(rate, dtype=float), np.asarray(years, dtype=float)
    safe = np.where(r > 0, r, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        annuity = safe / -np.expm1(-life * np.log1p(safe))
    limit = 1.0 / life
    return np.asarray(np.where((r > 0) & np.isfinite(annuity), annuity, limit), dtype=float)


def yearly_lines(p: Mapping[str, FloatArray]) -> dict[str, FloatArray]:
    """Each line in COMPONENTS in USD per year, plus total, variable (energy per unit of
    utilization), fixed (total - variable x u), running (the running lines), upfront (K)
    and gpu_hours (used per year): arrays broadcast over the parameters."""
    life, rate, servers = p["lifetime_years"], p["cost_of_capital_rate"], p["servers"]
    capex = p["capex_usd_per_server"] * servers
    resale = p["resale_fraction"] * capex
    upfront = upfront_usd(p)
    straight = (upfront - resale) / life
    discounted_resale = resale * np.exp(-life * np.log1p(rate))
    capital = (upfront - discounted_resale) * capital_recovery_factor(rate, life)
    kw = servers * p["power_kw_per_server"]
    energy_busy = kw * HOURS_PER_YEAR * p["pue"] * p["usd_per_kwh"]
    idle, u = p["idle_power_fraction"], p["utilization"]
    lines = {
        "servers": capex / life,
        "spares": capex * p["spares_fraction"] / life,
        "network": p["network_usd_per_server"] * servers / life,
        "storage": p["storage_usd_per_server"] * servers / life,
        "installation": p["installation_usd_per_server"] * servers / life,
        "site_capex": p["extra_capex_usd"] / life,
        "resale": -resale / life,
        "financing": capital - straight,
        "support": p["maintenance_fraction_per_year"] * capex,
        "energy": energy_busy * (idle + (1 - idle) * u),
        "colocation": kw * p["colocation_usd_per_kw_month"] * 12.0,
        "facility": p["facility_usd_per_year"],
        "staff": p["staff_usd_per_year"],
    }
    shape = np.broadcast(*lines.values(), u).shape
    out = {k: np.broadcast_to(np.asarray(v, dtype=float), shape) for k, v in lines.items()}
    total = sum(out.values())
    variable = np.broadcast_to(energy_busy * (1 - idle), shape)
    out["total"] = np.asarray(total, dtype=float)
    out["variable"] = variable
    out["fixed"] = out["total"] - variable * np.broadcast_to(u, shape)
    out["running"] = np.asarray(sum(out[k] for k in RUNNING_LINES), dtype=float)
    out["upfront"] = np.broadcast_to(upfront, shape)
    gpus = np.broadcast_to(servers * p["gpus_per_server"], shape)
    out["gpus"] = gpus
    out["utilization"] = np.broadcast_to(u, shape)
    out["gpu_hours"] = gpus * HOURS_PER_YEAR * out["utilization"]
    return out


def annual_costs(
    config: OnPremConfig | Mapping[str, ArrayLike], utilization: ArrayLike | None = None
) -> pd.DataFrame:
    """yearly_lines as a table, one row per broadcast element. Columns, USD per year unless
    named: <line>_usd_per_year for each of COMPONENTS, total_usd_per_year,
    fixed_usd_per_year, variable_usd_per_year, running_usd_per_year, upfront_usd, gpus,
    utilization, gpu_hours_per_year (used)."""
    lines = yearly_lines(params_of(config, utilization))
    names = {
        **{c: f"{c}_usd_per_year" for c in COMPONENTS},
        "total": "total_usd_per_year",
        "fixed": "fixed_usd_per_year",
        "variable": "variable_usd_per_year",
        "running": "running_usd_per_year",
        "upfront": "upfront_usd",
        "gpus": "gpus",
        "utilization": "utilization",
        "gpu_hours": "gpu_hours_per_year",
    }
    return pd.DataFrame({column: np.ravel(lines[k]) for k, column in names.items()})


def amortized_usd_per_gpu_hour(
    config: OnPremConfig | Mapping[str, ArrayLike], utilization: ArrayLike | None = None
) -> FloatArray:
    """USD per GPU-hour actually used: yearly cost / (GPUs x 8760 x utilization).

    Shape follows the broadcast inputs (a 0-d array for one config and one utilization).
    """
    lines = yearly_lines(params_of(config, utilization))
    return np.asarray(lines["total"] / lines["gpu_hours"], dtype=float)
