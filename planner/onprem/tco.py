"""On-prem total cost of ownership: amortized USD per GPU-hour and break-even against the cloud.

Cost per year of an on-prem cluster (every figure in USD per year, vectorized over configs):

  capex        = (capex_usd_per_server x servers + extra_capex_usd) / lifetime_years
                 (straight-line depreciation, no salvage value, no cost of capital)
  maintenance  = maintenance_fraction_per_year x total capex
  energy       = power_kw x 8760 h x (idle + (1 - idle) x utilization) x pue x usd_per_kwh
  colocation   = power_kw x colocation_usd_per_kw_month x 12   (wholesale colocation is
                 priced per kW of IT capacity; energy is metered on top, PUE included)
  facility     = facility_usd_per_year   (an own data hall instead of, or besides, colocation)
  staff        = staff_usd_per_year

where power_kw = servers x power_kw_per_server and idle = idle_power_fraction. The GPU-hours
used per year are servers x gpus_per_server x 8760 x utilization, so

  amortized USD per GPU-hour = total per year / GPU-hours used.

Writing the yearly cost as F + V u (F: everything but the utilization-driven energy), on-prem
equals a cloud price p (USD per GPU-hour) at the break-even utilization u* = F / (G 8760 p - V)
(G GPUs); u* > 1 means on-prem never gets cheaper, inf that the cloud price is below the
marginal electricity. For a monthly demand of D GPU-hours, cumulative cloud spend p D m
overtakes capex + m x monthly running cost after m* = capex / (p D - running per month)
months; inf ("never") when the cloud bill does not exceed the running cost.

Defaults (in OnPremConfig's fields, with units, sources and valid ranges; DEFAULTS reads them;
from reference/onprem-tco.md) describe one NVIDIA DGX H100 in wholesale colocation; every
figure is a list or survey figure, real quotes vary.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import annotated_types
import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from pricing.catalog import price_date_bases
from pricing.gpus import UnknownGPUError, canonical_gpu, did_you_mean

FloatArray = NDArray[np.float64]
HOURS_PER_YEAR = 8760.0
HOURS_PER_MONTH = HOURS_PER_YEAR / 12.0
COMPONENTS: tuple[str, ...] = ("capex", "maintenance", "energy", "colocation", "facility", "staff")


@dataclass(frozen=True)
class Default:
    """A default value, its unit and where it comes from (source, date, confidence)."""

    value: Any
    unit: str
    source: str


class OnPremConfigError(ValueError):
    """An on-prem configuration that cannot be used, naming the file, the field and the fix."""

    def __init__(self, message: str, field: str | None = None, file: str | None = None) -> None:
        where = f"{file}: " if file else ""
        what = f"field {field!r}: " if field else ""
        super().__init__(f"{where}{what}{message}")
        self.message = message
        self.field = field
        self.file = file


def _spec(
    default: Any,
    unit: str,
    source: str,
    meaning: str,
    low: float | None = None,
    high: float | None = None,
    low_ok: bool = True,
) -> Any:
    """A config field: default, unit and source (confidence H/M/L, reference/onprem-tco.md),
    and for numbers the valid range (low excluded where low_ok is False; high included)."""
    bounds: dict[str, float] = {}
    if low is not None:
        bounds["ge" if low_ok else "gt"] = low
    if high is not None:
        bounds["le"] = high
    return Field(  # type: ignore[call-overload]
        default,
        description=meaning,
        json_schema_extra={"unit": unit, "source": source},
        **bounds,
    )


class OnPremConfig(BaseModel):
    """An on-prem GPU cluster and what it costs to own and run: the one schema behind
    `gpuplan tco --config`, `gpuplan plan --onprem` and the app's Cloud vs on-prem form.

    Each field carries its default, unit, source and valid range (Field metadata; DEFAULTS
    and defaults_frame() read them). Money in USD, power in kW, time in years/months/hours
    as named. `power_kw_per_server` None means TDP-derived (power_basis says how).
    Validated where built: an unknown GPU names the closest match, a value out of range
    raises OnPremConfigError naming the field and the valid range.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=False)

    name: str = _spec("on-prem", "", "label for rows and charts", "label for rows and charts")
    gpu_name: str = _spec(
        "H100-SXM", "canonical GPU", "NVIDIA DGX H100: 8x H100 SXM", "GPU model (gpu_specs.csv)"
    )
    servers: int = _spec(1, "servers", "one server", "whole servers", 1, 100_000)
    gpus_per_server: int = _spec(
        8, "GPUs", "NVIDIA DGX H100: 8x H100 SXM", "GPUs in one server", 1, 1024
    )
    capex_usd_per_server: float = _spec(
        199_000.0,
        "USD",
        "DGX H100 list price ~$199,000 base, discounts typical (supercluster.blog, ~2024, L); "
        "8x H100 node incl. PSUs, cooling, networking $180K-220K (theneuralbase.com, L)",
        "purchase price of one server, USD",
        0,
        1e9,
        low_ok=False,
    )
    extra_capex_usd: float = _spec(
        0.0,
        "USD",
        "site-wide capex (network fabric, storage, installation): not collected in "
        "reference/onprem-tco.md; add yours",
        "site-wide capex, USD",
        0,
        1e12,
    )
    lifetime_years: float = _spec(
        4.0,
        "years",
        "3-5 years straight-line for GPU servers; hyperscalers book 5-6 (Microsoft, Alphabet "
        "6 y from 2022-23 filings; Amazon 5 y for some servers from 2025-01-01), M",
        "years the hardware is depreciated over",
        0,
        30,
        low_ok=False,
    )
    power_kw_per_server: float | None = _spec(
        None,
        "kW",
        "TDP-derived: gpus_per_server x GPU tdp_w (planner/data/gpu_specs.csv) x "
        "(1 + host_overhead_fraction); or your measured draw",
        "average draw of one server, kW",
        0,
        1000,
        low_ok=False,
    )
    host_overhead_fraction: float = _spec(
        0.34,
        "fraction of GPU TDP",
        "calibrated so 8x 700 W lands at 7.5 kW, the middle of DGX H100's 6.5-8.5 kW typical "
        "draw (supercluster.blog, ~2024, L); DGX H100 max 10.2 kW (NVIDIA user guide via "
        "unanswered.io, M)",
        "host power as a fraction of GPU TDP",
        0,
        10,
    )
    idle_power_fraction: float = _spec(
        1.0,
        "fraction of power_kw",
        "assumption (conservative): powered servers draw their configured power all year",
        "share of power drawn while idle",
        0,
        1,
    )
    pue: float = _spec(
        1.58,
        "ratio",
        "Uptime Institute 2023 survey average (UII Update 221, 2023-11-23, H); new facilities "
        "~1.3, Google fleet 1.10",
        "facility power / IT power",
        1,
        5,
    )
    usd_per_kwh: float = _spec(
        0.1194,
        "USD/kWh",
        "EIA Electricity Monthly Update, Sept 2024, median state all sectors (Kansas) 11.94 "
        "c/kWh, H; states range 7.83 (ND) to 29.21 (CA); industrial e.g. PA 7.79 c (EIA Table "
        "5.6.B, Jul 2024 YTD)",
        "electricity price, USD/kWh",
        0,
        5,
    )
    colocation_usd_per_kw_month: float = _spec(
        184.06,
        "USD per kW-month",
        "CBRE North America Data Center Trends H2 2024 (2025-02-26): wholesale colocation, "
        "primary markets, 250-500 kW, N+1/Tier III, H",
        "USD per kW of IT load per month",
        0,
        10_000,
    )
    facility_usd_per_year: float = _spec(
        0.0, "USD/year", "own facility cost; 0 when colocation covers it", "USD per year", 0, 1e12
    )
    staff_usd_per_year: float = _spec(
        0.0,
        "USD/year",
        "staffing cost per node: not collected in reference/onprem-tco.md; add yours",
        "USD per year",
        0,
        1e12,
    )
    maintenance_fraction_per_year: float = _spec(
        0.20,
        "fraction of capex per year",
        "DGX H100 1-year support ~$39,800 = ~20% of base price (supercluster.blog, ~2024, L)",
        "support as a fraction of capex/year",
        0,
        1,
    )
    utilization: float = _spec(
        0.7,
        "fraction of the year",
        "assumption: share of the year the GPUs run paid work; compare with break-even",
        "share of the year the GPUs run paid work",
        0,
        1,
        low_ok=False,
    )

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _config_error(exc) from None

    @field_validator("name", mode="before")
    @classmethod
    def _name(cls, value: Any) -> Any:
        if not isinstance(value, str) or not value.strip():
            raise OnPremConfigError("must be a non-empty string", "name")
        return value

    @field_validator("gpu_name", mode="before")
    @classmethod
    def _gpu(cls, value: Any) -> str:
        if not isinstance(value, str):
            raise OnPremConfigError(f"{value!r} is not a GPU name", "gpu_name")
        try:
            return canonical_gpu(value)
        except UnknownGPUError as exc:
            raise OnPremConfigError(str(exc), "gpu_name") from None

    @field_validator(
        "servers", "gpus_per_server", "capex_usd_per_server", "extra_capex_usd",
        "lifetime_years", "power_kw_per_server", "host_overhead_fraction",
        "idle_power_fraction", "pue", "usd_per_kwh", "colocation_usd_per_kw_month",
        "facility_usd_per_year", "staff_usd_per_year", "maintenance_fraction_per_year",
        "utilization", mode="before",
    )  # fmt: skip
    @classmethod
    def _number(cls, value: Any, info: ValidationInfo) -> Any:
        if info.field_name == "power_kw_per_server" and value is None:
            return None
        return check_value(str(info.field_name), value)

    @model_validator(mode="after")
    def _power(self) -> OnPremConfig:
        if self.power_kw_per_server is None and not math.isfinite(self._gpu_tdp_w()):
            raise OnPremConfigError(
                f"no TDP for {self.gpu_name} in planner/data/gpu_specs.csv to derive power "
                "from; set power_kw_per_server (kW, measured or from the vendor)",
                "power_kw_per_server",
            )
        return self

    def _gpu_tdp_w(self) -> float:
        from planner.machines.specs import load_specs

        specs = load_specs()
        if self.gpu_name not in specs.index:
            return math.nan
        return float(specs.loc[self.gpu_name, "tdp_w"])

    @property
    def gpus(self) -> int:
        """GPUs in the cluster."""
        return self.servers * self.gpus_per_server

    @property
    def capex_usd(self) -> float:
        """Total capital cost: servers plus site-wide extras, USD."""
        return self.capex_usd_per_server * self.servers + self.extra_capex_usd

    @property
    def server_power_kw(self) -> float:
        """Power of one server in kW: configured, or GPUs x TDP x (1 + host overhead)."""
        if self.power_kw_per_server is not None:
            return float(self.power_kw_per_server)
        return self.gpus_per_server * self._gpu_tdp_w() / 1000.0 * (1 + self.host_overhead_fraction)

    @property
    def power_basis(self) -> str:
        """How server_power_kw was obtained, in words."""
        if self.power_kw_per_server is not None:
            return f"configured {self.power_kw_per_server:g} kW per server"
        return (
            f"TDP-derived: {self.gpus_per_server} x {self._gpu_tdp_w():g} W x "
            f"(1 + {self.host_overhead_fraction:g}) = {self.server_power_kw:.2f} kW per server"
        )

    def with_utilization(self, utilization: float) -> OnPremConfig:
        """A copy at another utilization (validated)."""
        return OnPremConfig(**{**self.model_dump(), "utilization": utilization})

    def params(self) -> dict[str, float]:
        """The numbers the cost functions use (power resolved), one value per name."""
        out = {f: float(getattr(self, f)) for f in _RANGES if f != "power_kw_per_server"}
        out["power_kw_per_server"] = self.server_power_kw
        return out


def _config_error(exc: ValidationError) -> OnPremConfigError:
    """The first problem of a ValidationError as an OnPremConfigError naming its field."""
    error = exc.errors()[0]
    field = str(error["loc"][0]) if error.get("loc") else None
    original = (error.get("ctx") or {}).get("error")
    if isinstance(original, OnPremConfigError):
        return OnPremConfigError(original.message, original.field or field)
    if error["type"] == "extra_forbidden" and field is not None:
        fix = did_you_mean(field, CONFIG_KEYS)
        return OnPremConfigError(f"unknown key {field!r}{fix} Valid keys: {', '.join(CONFIG_KEYS)}")
    return OnPremConfigError(str(error["msg"]), field)


def _field_defaults() -> dict[str, Default]:
    out = {}
    for name, info in OnPremConfig.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        out[name] = Default(info.default, str(extra.get("unit", "")), str(extra.get("source", "")))
    return out


def _field_ranges() -> dict[str, tuple[float, bool, float, bool, str]]:
    """(lowest, lowest allowed?, highest, highest allowed?, what it means) per numeric field."""
    out = {}
    for name, info in OnPremConfig.model_fields.items():
        low = high = None
        low_ok = True
        for item in info.metadata:
            if isinstance(item, annotated_types.Ge):
                low = float(item.ge)  # type: ignore[arg-type]
            elif isinstance(item, annotated_types.Gt):
                low, low_ok = float(item.gt), False  # type: ignore[arg-type]
            elif isinstance(item, annotated_types.Le):
                high = float(item.le)  # type: ignore[arg-type]
        if low is not None and high is not None:
            out[name] = (low, low_ok, high, True, str(info.description))
    return out


CONFIG_KEYS: tuple[str, ...] = tuple(OnPremConfig.model_fields)
# Defaults with their units and sources (reference/onprem-tco.md), read from the fields.
DEFAULTS: dict[str, Default] = _field_defaults()
_RANGES = _field_ranges()
_INT_FIELDS = ("servers", "gpus_per_server")


def _range_text(field: str) -> str:
    low, low_ok, high, high_ok, meaning = _RANGES[field]
    return f"{'>=' if low_ok else '>'} {low:g} and {'<=' if high_ok else '<'} {high:g} ({meaning})"


def check_value(field: str, value: Any) -> float | int:
    """A numeric field's value, type-checked and range-checked; OnPremConfigError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise OnPremConfigError(
            f"{value!r} is not a number; it must be {_range_text(field)}", field
        )
    if field in _INT_FIELDS:
        if not float(value).is_integer():
            raise OnPremConfigError(f"{value!r} is not a whole number", field)
        value = int(value)
    low, low_ok, high, high_ok, _ = _RANGES[field]
    number = float(value)
    ok = (
        math.isfinite(number)
        and (number >= low if low_ok else number > low)
        and (number <= high if high_ok else number < high)
    )
    if not ok:
        raise OnPremConfigError(
            f"{value!r} is out of range; it must be {_range_text(field)}", field
        )
    return value


# ---------------------------------------------------------------- vectorized cost model


def annual_costs(
    config: OnPremConfig | Mapping[str, ArrayLike], utilization: ArrayLike | None = None
) -> pd.DataFrame:
    """Yearly cost by component for a config (or a mapping of parameter arrays), vectorized.

    `utilization` (array) overrides the config's. Columns, USD per year unless named:
    capex_usd_per_year, maintenance_usd_per_year, energy_usd_per_year,
    colocation_usd_per_year, facility_usd_per_year, staff_usd_per_year, total_usd_per_year,
    fixed_usd_per_year (F: all but utilization-driven energy), variable_usd_per_year (V: energy
    per unit of utilization), gpus, gpu_hours_per_year (used), utilization.
    """
    p = _params(config, utilization)
    u = p["utilization"]
    capex = p["capex_usd_per_server"] * p["servers"] + p["extra_capex_usd"]
    power_kw = p["power_kw_per_server"] * p["servers"]
    energy_full = power_kw * HOURS_PER_YEAR * p["pue"] * p["usd_per_kwh"]
    idle = p["idle_power_fraction"]
    columns = {
        "capex_usd_per_year": capex / p["lifetime_years"],
        "maintenance_usd_per_year": capex * p["maintenance_fraction_per_year"],
        "energy_usd_per_year": energy_full * (idle + (1 - idle) * u),
        "colocation_usd_per_year": power_kw * p["colocation_usd_per_kw_month"] * 12.0,
        "facility_usd_per_year": p["facility_usd_per_year"],
        "staff_usd_per_year": p["staff_usd_per_year"],
    }
    shape = np.broadcast(*columns.values(), u).shape
    frame = pd.DataFrame({k: np.broadcast_to(v, shape).ravel() for k, v in columns.items()})
    frame["total_usd_per_year"] = frame[list(columns)].sum(axis=1)
    frame["variable_usd_per_year"] = np.broadcast_to(energy_full * (1 - idle), shape).ravel()
    frame["fixed_usd_per_year"] = frame["total_usd_per_year"] - frame["variable_usd_per_year"] * (
        np.broadcast_to(u, shape).ravel()
    )
    gpus = np.broadcast_to(p["servers"] * p["gpus_per_server"], shape).ravel()
    frame["gpus"] = gpus
    frame["utilization"] = np.broadcast_to(u, shape).ravel()
    frame["gpu_hours_per_year"] = gpus * HOURS_PER_YEAR * frame["utilization"]
    return frame


def amortized_usd_per_gpu_hour(
    config: OnPremConfig | Mapping[str, ArrayLike], utilization: ArrayLike | None = None
) -> FloatArray:
    """USD per GPU-hour actually used: yearly cost / (GPUs x 8760 x utilization).

    Shape follows the broadcast inputs (a 0-d array for one config and one utilization).
    """
    costs = annual_costs(config, utilization)
    values = (costs["total_usd_per_year"] / costs["gpu_hours_per_year"]).to_numpy()
    shape = np.broadcast(*_params(config, utilization).values()).shape
    return values.reshape(shape)


def cost_breakdown(config: OnPremConfig, utilization: float | None = None) -> pd.DataFrame:
    """One row per cost component and a total row.

    Columns: component, usd_per_year, usd_per_gpu_hour, share (of the total), basis (the
    formula with this config's numbers).
    """
    u = (
        config.utilization
        if utilization is None
        else float(check_value("utilization", utilization))
    )
    row = annual_costs(config, u).iloc[0]
    hours = row["gpu_hours_per_year"]
    kw = config.server_power_kw * config.servers
    idle = config.idle_power_fraction
    drawn = idle + (1 - idle) * u
    basis = {
        "capex": f"${config.capex_usd:,.0f} / {config.lifetime_years:g} years straight-line",
        "maintenance": f"{config.maintenance_fraction_per_year:.0%} of capex per year",
        "energy": f"{kw:,.1f} kW x {drawn:.0%} x 8760 h x PUE {config.pue:g} x "
        f"${config.usd_per_kwh:g}/kWh",
        "colocation": f"{kw:,.1f} kW x ${config.colocation_usd_per_kw_month:g}/kW-month x 12",
        "facility": "configured",
        "staff": "configured",
    }
    total = row["total_usd_per_year"]
    rows = [
        {
            "component": c,
            "usd_per_year": row[f"{c}_usd_per_year"],
            "usd_per_gpu_hour": row[f"{c}_usd_per_year"] / hours,
            "share": row[f"{c}_usd_per_year"] / total,
            "basis": basis[c],
        }
        for c in COMPONENTS
    ]
    rows.append(
        {
            "component": "total",
            "usd_per_year": total,
            "usd_per_gpu_hour": total / hours,
            "share": 1.0,
            "basis": f"{config.gpus} GPUs x 8760 h x {u:.0%} utilization = {hours:,.0f} GPU-h/year",
        }
    )
    return pd.DataFrame(rows)


def break_even_utilization(config: OnPremConfig, cloud_usd_per_gpu_hour: ArrayLike) -> FloatArray:
    """Utilization at which on-prem costs the same per GPU-hour as each cloud price.

    u* = F / (G x 8760 x p - V) (module docstring). Above u* on-prem is cheaper. Values > 1
    cannot be reached (on-prem is dearer even at full use); inf where the cloud price is at or
    below the marginal electricity cost per GPU-hour.
    """
    (price,) = _floats(cloud_usd_per_gpu_hour)
    row = annual_costs(config).iloc[0]
    denominator = config.gpus * HOURS_PER_YEAR * price - row["variable_usd_per_year"]
    with np.errstate(divide="ignore"):
        out = row["fixed_usd_per_year"] / np.where(denominator > 0, denominator, 1.0)
    return np.where(denominator > 0, out, np.inf)


def capacity_gpu_hours_per_month(config: OnPremConfig) -> float:
    """GPU-hours the cluster can deliver in a month (GPUs x 730 h)."""
    return config.gpus * HOURS_PER_MONTH


def break_even_months(
    config: OnPremConfig, cloud_usd_per_gpu_hour: ArrayLike, monthly_gpu_hours: float
) -> FloatArray:
    """Months until cumulative cloud spend exceeds capex + cumulative on-prem running cost.

    Capex is paid up front; running cost per month is maintenance + energy (at the utilization
    the demand implies) + colocation + facility + staff, over 12. m* = capex / (p D - running);
    inf ("never") where the cloud bill per month does not exceed the running cost.
    """
    demand = float(monthly_gpu_hours)
    capacity = capacity_gpu_hours_per_month(config)
    if not demand > 0:
        raise OnPremConfigError(
            f"{monthly_gpu_hours!r} must be > 0 GPU-hours per month", "monthly_gpu_hours"
        )
    if demand > capacity * (1 + 1e-9):
        raise OnPremConfigError(
            f"{demand:,.0f} GPU-hours per month exceeds what {config.name} delivers "
            f"({config.gpus} GPUs x 730 h = {capacity:,.0f}); add servers or lower the demand",
            "monthly_gpu_hours",
        )
    (price,) = _floats(cloud_usd_per_gpu_hour)
    row = annual_costs(config, min(demand / capacity, 1.0)).iloc[0]
    running = (row["total_usd_per_year"] - row["capex_usd_per_year"]) / 12.0
    margin = price * demand - running
    with np.errstate(divide="ignore"):
        out = config.capex_usd / np.where(margin > 0, margin, 1.0)
    return np.where(margin > 0, out, np.inf)


def compare_with_cloud(
    config: OnPremConfig,
    cloud_usd_per_gpu_hour: pd.Series,
    monthly_gpu_hours: float | None = None,
) -> pd.DataFrame:
    """Break-even figures for each cloud price (index kept), vectorized.

    `monthly_gpu_hours` None means the demand the config's utilization implies (GPUs x 730 h x
    utilization). Columns: cloud_usd_per_gpu_hour, onprem_usd_per_gpu_hour (at the config's
    utilization), cheaper ("on-prem" or "cloud" at that utilization), break_even_utilization
    (may exceed 1 or be inf: see break_even_utilization), break_even_months (inf = never),
    monthly_gpu_hours, break_even_note (words for both, for people; built row by row, so for
    thousands of prices call break_even_utilization and break_even_months directly).
    """
    demand = (
        capacity_gpu_hours_per_month(config) * config.utilization
        if monthly_gpu_hours is None
        else float(monthly_gpu_hours)
    )
    price = cloud_usd_per_gpu_hour.astype(float)
    onprem = float(amortized_usd_per_gpu_hour(config))
    util = break_even_utilization(config, price.to_numpy())
    months = break_even_months(config, price.to_numpy(), demand)
    lifetime_months = config.lifetime_years * 12
    notes = []
    for u, m in zip(util, months, strict=True):
        if not np.isfinite(u):
            first = "on-prem never cheaper: the cloud price is below on-prem electricity alone"
        elif u > 1:
            first = f"on-prem never cheaper: it would need {u:.0%} utilization"
        else:
            first = f"on-prem cheaper above {u:.1%} utilization"
        if not np.isfinite(m):
            second = "never pays back at this demand"
        elif m > lifetime_months:
            second = f"pays back after {m:,.1f} months, beyond its {lifetime_months:g}-month life"
        else:
            second = f"pays back in {m:,.1f} months"
        notes.append(f"{first}; {second}")
    return pd.DataFrame(
        {
            "cloud_usd_per_gpu_hour": price,
            "onprem_usd_per_gpu_hour": onprem,
            "cheaper": np.where(onprem < price, "on-prem", "cloud"),
            "break_even_utilization": util,
            "break_even_months": months,
            "monthly_gpu_hours": demand,
            "break_even_note": notes,
        },
        index=cloud_usd_per_gpu_hour.index,
    )


SENSITIVITY_FIELDS: tuple[str, ...] = (
    "capex_usd_per_server",
    "extra_capex_usd",
    "lifetime_years",
    "power_kw_per_server",
    "pue",
    "usd_per_kwh",
    "colocation_usd_per_kw_month",
    "facility_usd_per_year",
    "staff_usd_per_year",
    "maintenance_fraction_per_year",
    "utilization",
)


def sensitivity(
    config: OnPremConfig,
    fraction: float = 0.2,
    fields: Sequence[str] = SENSITIVITY_FIELDS,
) -> pd.DataFrame:
    """How the amortized USD per GPU-hour moves when each input moves by -/+ `fraction`.

    One-at-a-time (a tornado chart's data), all variants in one vectorized call. Fractions
    and utilization are clipped to their valid range (utilization <= 1, PUE >= 1). Columns:
    field, base_value, low_value, high_value, base_usd_per_gpu_hour, low_usd_per_gpu_hour
    (at low_value), high_usd_per_gpu_hour, swing_usd_per_gpu_hour (|high - low|); sorted by
    swing, largest first.
    """
    if not 0 < fraction < 1:
        raise ValueError(f"fraction {fraction!r} must be between 0 and 1 (0.2 = +/-20%)")
    base = config.params()
    unknown = [f for f in fields if f not in base]
    if unknown:
        fix = did_you_mean(unknown[0], list(base))
        raise ValueError(f"unknown field {unknown[0]!r}{fix} Valid: {', '.join(base)}")
    n = len(fields)
    arrays = {k: np.full(2 * n, v) for k, v in base.items()}
    lows, highs = [], []
    for i, field in enumerate(fields):
        lo_, hi_ = (
            _clip(field, base[field] * (1 - fraction)),
            _clip(field, base[field] * (1 + fraction)),
        )
        arrays[field][i], arrays[field][n + i] = lo_, hi_
        lows.append(lo_)
        highs.append(hi_)
    values = amortized_usd_per_gpu_hour(arrays)
    frame = pd.DataFrame(
        {
            "field": list(fields),
            "base_value": [base[f] for f in fields],
            "low_value": lows,
            "high_value": highs,
            "base_usd_per_gpu_hour": float(amortized_usd_per_gpu_hour(config)),
            "low_usd_per_gpu_hour": values[:n],
            "high_usd_per_gpu_hour": values[n:],
        }
    )
    frame["swing_usd_per_gpu_hour"] = (
        frame["high_usd_per_gpu_hour"] - frame["low_usd_per_gpu_hour"]
    ).abs()
    return frame.sort_values("swing_usd_per_gpu_hour", ascending=False, kind="stable").reset_index(
        drop=True
    )


def _clip(field: str, value: float) -> float:
    low, _, high, _, _ = _RANGES[field]
    if field == "utilization":
        return float(min(max(value, 1e-9), high))
    return float(min(max(value, low), high))


def _params(
    config: OnPremConfig | Mapping[str, ArrayLike], utilization: ArrayLike | None
) -> dict[str, FloatArray]:
    raw = config.params() if isinstance(config, OnPremConfig) else dict(config)
    missing = [f for f in _RANGES if f not in raw]
    if missing:
        raise ValueError(f"parameters missing: {missing}")
    out = {k: np.asarray(raw[k], dtype=float) for k in _RANGES}
    if utilization is not None:
        u = np.asarray(utilization, dtype=float)
        if not np.all((u > 0) & (u <= 1)):
            bad = np.ravel(u)[np.flatnonzero(~((np.ravel(u) > 0) & (np.ravel(u) <= 1)))[0]]
            raise OnPremConfigError(
                f"{bad!r} is out of range; it must be {_range_text('utilization')}", "utilization"
            )
        out["utilization"] = u
    return out


def _floats(*values: ArrayLike) -> tuple[FloatArray, ...]:
    return tuple(np.asarray(v, dtype=float) for v in values)


# ---------------------------------------------------------------- loading from TOML


@dataclass(frozen=True)
class LoadedConfig:
    """A config read from a file, and which keys the file left to their defaults."""

    config: OnPremConfig
    defaulted: tuple[str, ...]
    path: str

    def defaulted_notes(self) -> list[str]:
        """One line per defaulted key: its value and the value's source."""
        lines = []
        for key in self.defaulted:
            if key == "power_kw_per_server":
                value = f"{self.config.server_power_kw:.2f} kW"
            else:
                value = f"{getattr(self.config, key)!r}"
            lines.append(f"{key} = {value} ({DEFAULTS[key].source})")
        return lines


def config_from_mapping(data: Mapping[str, Any], source: str = "<config>") -> LoadedConfig:
    """An OnPremConfig from a mapping: unknown keys rejected (closest match named), missing
    keys defaulted and listed, bad values rejected with the field named."""
    for key, value in data.items():
        if isinstance(value, dict):
            raise OnPremConfigError(
                f"[{key}] is a table; an on-prem config is flat key = value pairs "
                "(see examples/onprem-dgx-h100.toml)",
                key,
                source,
            )
        if key not in CONFIG_KEYS:
            fix = did_you_mean(key, CONFIG_KEYS)
            raise OnPremConfigError(
                f"unknown key {key!r}{fix} Valid keys: {', '.join(CONFIG_KEYS)}", file=source
            )
    try:
        config = OnPremConfig(**dict(data))
    except OnPremConfigError as exc:
        raise OnPremConfigError(exc.message, exc.field, source) from None
    defaulted = tuple(k for k in CONFIG_KEYS if k not in data)
    return LoadedConfig(config, defaulted, source)


def load_onprem_config(path: str | Path) -> LoadedConfig:
    """Read an on-prem config from a TOML file (see examples/onprem-dgx-h100.toml).

    The file must be a regular UTF-8 file of at most 1 MiB nested at most 16 deep
    (planner.io.validate); anything else is an OnPremConfigError naming the file."""
    from planner.io.validate import (
        MAX_CONFIG_BYTES,
        InputPathError,
        NestingError,
        loads_toml,
        read_text_file,
        shorten,
    )

    hint = "pass a TOML file such as examples/onprem-dgx-h100.toml"
    try:
        data = loads_toml(read_text_file(path, "on-prem config", MAX_CONFIG_BYTES, hint))
    except InputPathError as exc:
        raise OnPremConfigError(str(exc)) from None
    except NestingError as exc:
        raise OnPremConfigError(f"not a usable TOML file: {exc}", file=shorten(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise OnPremConfigError(f"not valid TOML: {exc}", file=shorten(path)) from None
    return config_from_mapping(data, shorten(Path(path)))


def defaults_frame() -> pd.DataFrame:
    """The defaults table (field, default, unit, source), for docs, the CLI and the app."""
    return pd.DataFrame(
        [
            {"field": k, "default": d.value, "unit": d.unit, "source": d.source}
            for k, d in DEFAULTS.items()
        ]
    )


# ---------------------------------------------------------------- one table for the CLI and app

TCO_COLUMNS: tuple[str, ...] = (
    "option", "ref", "provider", "region", "instance_type", "gpu_name", "gpu_count",
    "pricing", "usd_per_gpu_hour", "utilization", "cheaper", "break_even_utilization",
    "break_even_months", "monthly_gpu_hours", "break_even_note",
    *(f"{c}_usd_per_gpu_hour" for c in COMPONENTS),
    "price_date", "price_date_basis", "price_source",
)  # fmt: skip


def tco_table(
    config: OnPremConfig,
    offers: pd.DataFrame,
    monthly_gpu_hours: float | None = None,
    source: str = "",
) -> pd.DataFrame:
    """The on-prem row, then one row per offer, in TCO_COLUMNS.

    `offers` are Offer rows with `usd_per_gpu_hour`, `pricing` and `ref` (pricing.refs).
    The on-prem row carries the per-component USD per GPU-hour; offer rows carry the break-even
    figures against it. Break-even values that cannot be reached (> 1 utilization, infinite
    months) are NaN here and explained in break_even_note. The on-prem row's price_source is
    `source` ("" when none; planner.render.tco_tables.worded_tco words it).
    """
    breakdown = cost_breakdown(config).set_index("component")["usd_per_gpu_hour"]
    onprem: dict[str, Any] = {
        "option": "on-prem",
        "ref": config.name,
        "provider": "on-prem",
        "region": "",
        "instance_type": f"{config.servers} x {config.gpus_per_server}-GPU server",
        "gpu_name": config.gpu_name,
        "gpu_count": float(config.gpus),
        "pricing": "amortized",
        "usd_per_gpu_hour": breakdown["total"],
        "utilization": config.utilization,
        "price_date": "",
        "price_date_basis": "",
        "price_source": source,
        **{f"{c}_usd_per_gpu_hour": breakdown[c] for c in COMPONENTS},
    }
    versus = compare_with_cloud(config, offers["usd_per_gpu_hour"], monthly_gpu_hours)
    reachable = versus["break_even_utilization"] <= 1
    cloud = pd.DataFrame(
        {
            "option": "cloud",
            "ref": offers["ref"],
            "provider": offers["provider"],
            "region": offers["region"],
            "instance_type": offers["instance_type"],
            "gpu_name": offers["gpu_name"],
            "gpu_count": offers["gpu_count"].astype(float),
            "pricing": offers["pricing"],
            "usd_per_gpu_hour": offers["usd_per_gpu_hour"],
            "utilization": config.utilization,
            "cheaper": versus["cheaper"],
            "break_even_utilization": versus["break_even_utilization"].where(reachable),
            "break_even_months": versus["break_even_months"].replace(np.inf, np.nan),
            "monthly_gpu_hours": versus["monthly_gpu_hours"],
            "break_even_note": versus["break_even_note"],
            "price_date": offers["priced_at"],
            "price_date_basis": price_date_bases(offers),
            "price_source": offers["source"],
        }
    )
    rows = pd.concat([pd.DataFrame([onprem]), cloud], ignore_index=True)
    return rows.loc[:, list(TCO_COLUMNS)]
