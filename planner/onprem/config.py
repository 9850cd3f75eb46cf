"""The on-prem configuration: one pydantic schema with every cost line's default and source.

Lines with a published range (planner.onprem.ranges) default to its typical value; lines
that depend on the GPU (server capex) or the fabric (network) default to the typical value
for that GPU or fabric; power defaults to the GPUs' TDP x (1 + host overhead); staff to
servers / servers_per_fte x staff_usd_per_fte_year. `resolved()` fills those in, and a
config read from a file records which keys it left to their defaults (planner.onprem.load).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import annotated_types
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from planner.onprem.ranges import FABRICS, LINES, capex_range, network_range
from pricing.gpus import UnknownGPUError, canonical_gpu, did_you_mean

HOURS_PER_YEAR = 8760.0
HOURS_PER_MONTH = HOURS_PER_YEAR / 12.0


@dataclass(frozen=True)
class Default:
    """A default value, its unit and where it comes from (source, date, confidence)."""

    value: Any
    unit: str
    source: str


# The lowest values a config may hold: below them an owner's cost per GPU-hour is beyond
# any figure worth showing (and, at the smallest floats, beyond a float: infinite).
MIN_LIFETIME_YEARS = 1 / 12  # a month: hardware used for less is rented, not owned
MIN_SERVERS_PER_FTE = 0.01  # a hundred engineers per server
MIN_UTILIZATION = 1e-6  # about half a minute of work per GPU a year


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
    """A config field: default, unit and source, and for numbers the valid range (low
    excluded where low_ok is False; high included)."""
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


# Numeric fields, in the order the config lists them; those None may leave to a default.
NUMBER_FIELDS: tuple[str, ...] = (
    "servers", "gpus_per_server", "capex_usd_per_server", "network_usd_per_server",
    "storage_usd_per_server", "installation_usd_per_server", "spares_fraction",
    "extra_capex_usd", "lifetime_years", "cost_of_capital_rate", "resale_fraction",
    "power_kw_per_server", "host_overhead_fraction", "idle_power_fraction", "pue",
    "usd_per_kwh", "colocation_usd_per_kw_month", "facility_usd_per_year",
    "staff_usd_per_year", "staff_usd_per_fte_year", "servers_per_fte",
    "maintenance_fraction_per_year", "failure_downtime_fraction", "utilization",
)  # fmt: skip
OPTIONAL_FIELDS: tuple[str, ...] = (
    "capex_usd_per_server", "network_usd_per_server", "power_kw_per_server", "staff_usd_per_year",
)  # fmt: skip
PARAMS = NUMBER_FIELDS
_INT_FIELDS = ("servers", "gpus_per_server")


def _line(field: str, meaning: str, low: float, high: float, low_ok: bool = True) -> Any:
    """A field whose default is its cited range's typical value (planner.onprem.ranges)."""
    r = LINES[field]
    source = f"typical {r.typical:g} of {r.low:g}-{r.high:g}: {r.source} ({r.date}, {r.confidence})"
    return _spec(r.typical, r.unit, source, meaning, low, high, low_ok)


class OnPremConfig(BaseModel):
    """An on-prem GPU cluster and what it costs to own and run: the one schema behind
    `gpuplan tco --config`, `gpuplan plan --onprem` and the app's Cloud vs on-prem form.

    Money in USD, power in kW, time in years/months/hours as named. None for capex,
    network, power and staff means "the typical value for this GPU / fabric / size"
    (resolved()). Validated where built: an unknown GPU names the closest match, a value
    out of range raises OnPremConfigError naming the field and the valid range.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=False, defer_build=True)

    name: str = _spec("on-prem", "", "label for rows and charts", "label for rows and charts")
    gpu_name: str = _spec(
        "H100-SXM", "canonical GPU", "NVIDIA DGX H100: 8x H100 SXM", "GPU model (gpu_specs.csv)"
    )
    servers: int = _spec(1, "servers", "one server", "whole servers", 1, 100_000)
    gpus_per_server: int = _spec(
        8, "GPUs", "NVIDIA DGX H100: 8x H100 SXM", "GPUs in one server", 1, 1024
    )
    capex_usd_per_server: float | None = _spec(
        None,
        "USD",
        "typical server price of the GPU (planner.onprem.ranges.CAPEX_BY_GPU; "
        "reference/onprem-tco.md)",
        "purchase price of one server, USD",
        0,
        1e9,
        low_ok=False,
    )
    fabric: str = _spec(
        "infiniband",
        "fabric",
        "8-GPU training servers are usually joined by InfiniBand",
        f"network between servers: {' | '.join(FABRICS)}",
    )
    network_usd_per_server: float | None = _spec(
        None,
        "USD",
        "typical for the fabric (planner.onprem.ranges.NETWORK_BY_FABRIC)",
        "network fabric per server (switches, optics, cables), USD",
        0,
        1e8,
    )
    storage_usd_per_server: float = _line(
        "storage_usd_per_server", "shared storage per server, USD", 0, 1e8
    )
    installation_usd_per_server: float = _line(
        "installation_usd_per_server", "installation per server, USD", 0, 1e8
    )
    spares_fraction: float = _line("spares_fraction", "spares as a fraction of server capex", 0, 1)
    extra_capex_usd: float = _spec(
        0.0, "USD", "site-wide capex beyond the per-server lines; add yours",
        "site-wide capex, USD", 0, 1e12,
    )  # fmt: skip
    lifetime_years: float = _line(
        "lifetime_years", "years the hardware is used and amortized over", MIN_LIFETIME_YEARS, 30
    )
    cost_of_capital_rate: float = _line(
        "cost_of_capital_rate", "cost of capital per year (0 = straight-line)", 0, 1
    )
    resale_fraction: float = _line("resale_fraction", "server capex recovered at end of life", 0, 1)
    power_kw_per_server: float | None = _spec(
        None,
        "kW",
        "TDP-derived: gpus_per_server x GPU tdp_w (planner/data/gpu_specs.csv) x "
        "(1 + host_overhead_fraction); or your measured draw",
        "draw of one busy server, kW",
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
    idle_power_fraction: float = _line(
        "idle_power_fraction", "share of busy draw drawn while idle", 0, 1
    )
    pue: float = _line("pue", "facility power / IT power", 1, 5)
    usd_per_kwh: float = _line("usd_per_kwh", "electricity price, USD/kWh", 0, 5)
    colocation_usd_per_kw_month: float = _line(
        "colocation_usd_per_kw_month", "USD per kW of IT load per month", 0, 10_000
    )
    facility_usd_per_year: float = _spec(
        0.0, "USD/year", "own facility cost; 0 when colocation covers it", "USD per year", 0, 1e12
    )
    staff_usd_per_year: float | None = _spec(
        None,
        "USD/year",
        "servers / servers_per_fte x staff_usd_per_fte_year",
        "operations staff, USD per year",
        0,
        1e12,
    )
    staff_usd_per_fte_year: float = _line(
        "staff_usd_per_fte_year", "loaded cost of one engineer, USD per year", 0, 1e8
    )
    servers_per_fte: float = _line(
        "servers_per_fte", "servers one engineer runs", MIN_SERVERS_PER_FTE, 1e6
    )
    maintenance_fraction_per_year: float = _line(
        "maintenance_fraction_per_year", "support as a fraction of server capex/year", 0, 1
    )
    failure_downtime_fraction: float = _line(
        "failure_downtime_fraction", "share of GPU-hours lost to failures and repairs", 0, 0.9
    )
    utilization: float = _spec(
        0.7,
        "fraction of the year",
        "assumption: share of the year the GPUs run paid work; set from the monthly GPU-hours "
        "the work needs where given",
        "share of the year the GPUs run paid work",
        MIN_UTILIZATION,
        1,
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

    @field_validator("fabric", mode="before")
    @classmethod
    def _fabric(cls, value: Any) -> str:
        if not isinstance(value, str) or value.lower() not in FABRICS:
            fix = did_you_mean(str(value), FABRICS)
            raise OnPremConfigError(
                f"unknown fabric {value!r}{fix} Valid: {', '.join(FABRICS)}", "fabric"
            )
        return value.lower()

    @field_validator(*NUMBER_FIELDS, mode="before")
    @classmethod
    def _number(cls, value: Any, info: ValidationInfo) -> Any:
        if info.field_name in OPTIONAL_FIELDS and value is None:
            return None
        return check_value(str(info.field_name), value)

    @model_validator(mode="after")
    def _resolvable(self) -> OnPremConfig:
        if self.power_kw_per_server is None and not math.isfinite(self._gpu_tdp_w()):
            raise OnPremConfigError(
                f"no TDP for {self.gpu_name} in planner/data/gpu_specs.csv to derive power "
                "from; set power_kw_per_server (kW, measured or from the vendor)",
                "power_kw_per_server",
            )
        if self.capex_usd_per_server is None and capex_range(self.gpu_name) is None:
            raise OnPremConfigError(
                f"no published server price for {self.gpu_name} in reference/onprem-tco.md; "
                "set capex_usd_per_server (USD, your quote)",
                "capex_usd_per_server",
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
    def server_capex_usd(self) -> float:
        """Price of one server: configured, or the GPU's typical (planner.onprem.ranges)."""
        if self.capex_usd_per_server is not None:
            return float(self.capex_usd_per_server)
        found = capex_range(self.gpu_name)
        assert found is not None  # _resolvable
        return float(found.typical)

    @property
    def network_usd(self) -> float:
        """Network fabric per server: configured, or the fabric's typical."""
        if self.network_usd_per_server is not None:
            return float(self.network_usd_per_server)
        return float(network_range(self.fabric).typical)

    @property
    def staff_usd(self) -> float:
        """Staff per year: configured, or servers / servers_per_fte x cost per FTE."""
        if self.staff_usd_per_year is not None:
            return float(self.staff_usd_per_year)
        return self.servers / self.servers_per_fte * self.staff_usd_per_fte_year

    @property
    def capex_usd(self) -> float:
        """Everything paid up front, USD: per server (price x (1 + spares) + network +
        storage + installation) x servers + site-wide extras."""
        per_server = (
            self.server_capex_usd * (1 + self.spares_fraction)
            + self.network_usd
            + self.storage_usd_per_server
            + self.installation_usd_per_server
        )
        return per_server * self.servers + self.extra_capex_usd

    @property
    def server_power_kw(self) -> float:
        """Power of one busy server in kW: configured, or GPUs x TDP x (1 + host overhead)."""
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

    @property
    def max_utilization(self) -> float:
        """The most of the year the GPUs can work: 1 less the hours lost to failures."""
        return 1.0 - self.failure_downtime_fraction

    def with_utilization(self, utilization: float) -> OnPremConfig:
        """A copy at another utilization (validated)."""
        return self._with(utilization=utilization)

    def with_servers(self, servers: int) -> OnPremConfig:
        """A copy with another number of servers (validated)."""
        return self._with(servers=servers)

    def _with(self, **changes: Any) -> OnPremConfig:
        """A copy with `changes`, validated; the fields set stay set, the others defaulted."""
        given = {k: getattr(self, k) for k in self.model_fields_set}
        return OnPremConfig(**{**given, **changes})

    def params(self) -> dict[str, float]:
        """The numbers the cost functions use (defaults resolved), one value per name."""
        out = {f: float(getattr(self, f)) for f in PARAMS if f not in OPTIONAL_FIELDS}
        out["capex_usd_per_server"] = self.server_capex_usd
        out["network_usd_per_server"] = self.network_usd
        out["power_kw_per_server"] = self.server_power_kw
        out["staff_usd_per_year"] = self.staff_usd
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
VALID_RANGES = _field_ranges()


def range_text(field: str) -> str:
    """'> 0 and <= 1 (what it means)': the valid range of a numeric field, in words."""
    low, low_ok, high, high_ok, meaning = VALID_RANGES[field]
    return f"{'>=' if low_ok else '>'} {low:g} and {'<=' if high_ok else '<'} {high:g} ({meaning})"


def check_value(field: str, value: Any) -> float | int:
    """A numeric field's value, type-checked and range-checked; OnPremConfigError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise OnPremConfigError(f"{value!r} is not a number; it must be {range_text(field)}", field)
    if field in _INT_FIELDS:
        if not float(value).is_integer():
            raise OnPremConfigError(f"{value!r} is not a whole number", field)
        value = int(value)
    low, low_ok, high, high_ok, _ = VALID_RANGES[field]
    number = float(value)
    ok = (
        math.isfinite(number)
        and (number >= low if low_ok else number > low)
        and (number <= high if high_ok else number < high)
    )
    if not ok:
        raise OnPremConfigError(f"{value!r} is out of range; it must be {range_text(field)}", field)
    return value
