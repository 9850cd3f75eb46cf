"""The buy-or-rent answer in one record: the servers sized for the work, every cost line,
the comparison with each cloud offer, the Monte Carlo band and the verdict per offer.

A short chain of named steps: size (planner.onprem.utilization) -> lines
(planner.onprem.lines) -> draws (planner.onprem.montecarlo) -> compare
(planner.onprem.breakeven, per offer) -> verdict (planner.onprem.verdict). The CLI, the
app page and the HTML report all render this record (planner.render.tco_words).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from planner.onprem.breakeven import (
    break_even_months,
    break_even_utilization,
    life_mean_price_factor,
)
from planner.onprem.config import HOURS_PER_MONTH, OnPremConfig
from planner.onprem.lines import COMPONENTS, annual_costs
from planner.onprem.montecarlo import DRAWS, SEED, TcoDraws, percentiles, simulate, versus_cloud
from planner.onprem.utilization import Sizing, size_for_work
from planner.onprem.verdict import verdict_of
from pricing.catalog import price_date_bases
from pricing.refs import GPU_HOUR_COLUMNS

# The config keys behind each line: a line is "defaulted" where any of them was.
LINE_KEYS: dict[str, tuple[str, ...]] = {
    "servers": ("capex_usd_per_server",),
    "spares": ("spares_fraction",),
    "network": ("network_usd_per_server", "fabric"),
    "storage": ("storage_usd_per_server",),
    "installation": ("installation_usd_per_server",),
    "site_capex": ("extra_capex_usd",),
    "resale": ("resale_fraction",),
    "financing": ("cost_of_capital_rate",),
    "support": ("maintenance_fraction_per_year",),
    "energy": ("power_kw_per_server", "idle_power_fraction", "pue", "usd_per_kwh"),
    "colocation": ("colocation_usd_per_kw_month",),
    "facility": ("facility_usd_per_year",),
    "staff": ("staff_usd_per_year",),
}
_LIFE_KEYS = ("lifetime_years",)

TCO_COLUMNS: tuple[str, ...] = (
    "option", "ref", "provider", "region", "instance_type", "gpu_name", "gpu_count", "tier",
    "pricing", "usd_per_gpu_hour", *GPU_HOUR_COLUMNS.values(), "utilization",
    "monthly_gpu_hours", "servers", "cheaper", "break_even_utilization", "break_even_months",
    "p_buy_cheaper", "verdict", "usd_per_gpu_hour_p10", "usd_per_gpu_hour_p50",
    "usd_per_gpu_hour_p90", "payback_months_p10", "payback_months_p50", "payback_months_p90",
    *(f"{c}_usd_per_gpu_hour" for c in COMPONENTS), "defaulted",
    "price_date", "price_date_basis", "price_source",
)  # fmt: skip


@dataclass(frozen=True)
class TcoAnswer:
    """Everything one buy-or-rent answer says.

    config: the servers the answer is for, at the utilization of the work; sizing: how
    that was found; defaulted: the config keys left to their defaults; breakdown:
    cost_breakdown(config); rows: TCO_COLUMNS, the on-prem row then one per offer;
    band: P10/P50/P90 of the amortized USD per GPU-hour; draws, seed; trend_per_year: the
    cloud price trend weighed (None: flat); pricing: the kind the offers are priced at.
    """

    config: OnPremConfig
    sizing: Sizing
    defaulted: tuple[str, ...]
    breakdown: pd.DataFrame
    rows: pd.DataFrame
    band: tuple[float, float, float]
    draws: int
    seed: int
    trend_per_year: float | None
    pricing: str

    @property
    def onprem(self) -> pd.Series:
        """The on-prem row."""
        return self.rows.iloc[0]

    @property
    def cloud(self) -> pd.DataFrame:
        """The offers' rows."""
        return self.rows.iloc[1:]

    @property
    def monthly_gpu_hours(self) -> float:
        """The work a month: as given, else what the utilization fills."""
        if self.sizing.monthly_gpu_hours is not None:
            return self.sizing.monthly_gpu_hours
        return self.config.gpus * HOURS_PER_MONTH * self.config.utilization


def defaulted_lines(defaulted: Collection[str]) -> list[str]:
    """The cost lines any of whose inputs were left to the defaults."""
    return [line for line, keys in LINE_KEYS.items() if set(keys) & set(defaulted)]


def cost_breakdown(config: OnPremConfig, defaulted: Collection[str] = ()) -> pd.DataFrame:
    """One row per cost line and a total row. Columns: component, usd_per_year,
    usd_per_gpu_hour, share (of the total), defaulted (the line's keys left to defaults,
    comma-separated; "" where all were set)."""
    row = annual_costs(config).iloc[0]
    hours = row["gpu_hours_per_year"]
    total = row["total_usd_per_year"]
    rows: list[dict[str, Any]] = [
        {
            "component": c,
            "usd_per_year": row[f"{c}_usd_per_year"],
            "usd_per_gpu_hour": row[f"{c}_usd_per_year"] / hours,
            "share": row[f"{c}_usd_per_year"] / total,
            "defaulted": ", ".join(k for k in LINE_KEYS[c] if k in defaulted),
        }
        for c in COMPONENTS
    ]
    rows.append(
        {
            "component": "total",
            "usd_per_year": total,
            "usd_per_gpu_hour": total / hours,
            "share": 1.0,
            "defaulted": ", ".join(k for k in _LIFE_KEYS if k in defaulted),
        }
    )
    return pd.DataFrame(rows)


def _onprem_row(
    config: OnPremConfig, breakdown: pd.DataFrame, band: tuple[float, float, float],
    defaulted: Collection[str], monthly_gpu_hours: float, source: str,
) -> dict[str, Any]:  # fmt: skip
    by_line = breakdown.set_index("component")["usd_per_gpu_hour"]
    return {
        "option": "on-prem",
        "ref": config.name,
        "provider": "on-prem",
        "region": "",
        "instance_type": f"{config.servers} x {config.gpus_per_server}-GPU server",
        "gpu_name": config.gpu_name,
        "gpu_count": float(config.gpus),
        "tier": "own",
        "pricing": "amortized",
        "usd_per_gpu_hour": by_line["total"],
        "utilization": config.utilization,
        "monthly_gpu_hours": monthly_gpu_hours,
        "servers": float(config.servers),
        "usd_per_gpu_hour_p10": band[0],
        "usd_per_gpu_hour_p50": band[1],
        "usd_per_gpu_hour_p90": band[2],
        **{f"{c}_usd_per_gpu_hour": by_line[c] for c in COMPONENTS},
        "defaulted": ", ".join(k for k in defaulted if k != "name"),
        "price_date": "",
        "price_date_basis": "",
        "price_source": source,
    }


def _cloud_rows(
    config: OnPremConfig, offers: pd.DataFrame, draws: TcoDraws, monthly_gpu_hours: float,
    trend_per_year: float | None,
) -> pd.DataFrame:  # fmt: skip
    price = offers["usd_per_gpu_hour"].astype(float).to_numpy()
    onprem = float(annual_costs(config).eval("total_usd_per_year / gpu_hours_per_year").iloc[0])
    life_price = price * float(life_mean_price_factor(trend_per_year or 0.0, config.lifetime_years))
    util = break_even_utilization(config, price)
    months = break_even_months(config, price, monthly_gpu_hours, trend_per_year or 0.0)
    versus = [versus_cloud(draws, p, trend_per_year) for p in price]
    sides = {c: offers.get(c, np.nan) for c in GPU_HOUR_COLUMNS.values()}
    return pd.DataFrame(
        {
            "option": "cloud",
            "ref": offers["ref"],
            "provider": offers["provider"],
            "region": offers["region"],
            "instance_type": offers["instance_type"],
            "gpu_name": offers["gpu_name"],
            "gpu_count": offers["gpu_count"].astype(float),
            "tier": offers.get("tier", ""),
            "pricing": offers["pricing"],
            "usd_per_gpu_hour": price,
            **sides,
            "utilization": config.utilization,
            "monthly_gpu_hours": monthly_gpu_hours,
            "servers": float(config.servers),
            "cheaper": np.where(onprem < life_price, "on-prem", "cloud"),
            "break_even_utilization": util,
            "break_even_months": months,
            "p_buy_cheaper": [v.p_buy_cheaper for v in versus],
            "verdict": [str(verdict_of(v.p_buy_cheaper)) for v in versus],
            "payback_months_p10": [v.payback_months_p10 for v in versus],
            "payback_months_p50": [v.payback_months_p50 for v in versus],
            "payback_months_p90": [v.payback_months_p90 for v in versus],
            "price_date": offers["priced_at"],
            "price_date_basis": price_date_bases(offers),
            "price_source": offers["source"],
        },
        index=offers.index,
    )


def tco_answer(
    config: OnPremConfig,
    offers: pd.DataFrame,
    defaulted: Collection[str] | None = None,
    monthly_gpu_hours: float | None = None,
    trend_per_year: float | None = None,
    source: str = "",
    draws: int = DRAWS,
    seed: int = SEED,
    pricing: str | None = None,
) -> TcoAnswer:
    """The answer for `config` against `offers` (planner.onprem.compare rows with
    usd_per_gpu_hour, pricing, ref, priced_at, source).

    `defaulted`: the config keys left to defaults (None: those not set when it was built);
    `monthly_gpu_hours`: the work, which sets the utilization (and the servers where it
    does not fit); None keeps the config's utilization. `trend_per_year`: the cloud price
    change per year (-0.2 = 20% cheaper each year), None = flat. Break-even utilization
    that cannot be reached (above 1 - downtime) and payback never reached are NaN in rows.
    `pricing`: the kind the offers are priced at (None: read from the offers).
    """
    from planner.onprem.load import defaulted_of

    left = tuple(defaulted) if defaulted is not None else defaulted_of(config)
    sized, sizing = size_for_work(config, monthly_gpu_hours)
    demand = (
        sizing.monthly_gpu_hours
        if sizing.monthly_gpu_hours is not None
        else sized.gpus * HOURS_PER_MONTH * sized.utilization
    )
    breakdown = cost_breakdown(sized, left)
    simulated = simulate(sized, left, draws, seed)
    band = percentiles(simulated.usd_per_gpu_hour)
    onprem = _onprem_row(sized, breakdown, band, left, demand, source)
    cloud = _cloud_rows(sized, offers.reset_index(drop=True), simulated, demand, trend_per_year)
    reachable = cloud["break_even_utilization"] <= sized.max_utilization
    cloud["break_even_utilization"] = cloud["break_even_utilization"].where(reachable)
    for column in ("break_even_months", "payback_months_p10", "payback_months_p50",
                   "payback_months_p90"):  # fmt: skip
        cloud[column] = cloud[column].replace(np.inf, np.nan)
    rows = pd.concat([pd.DataFrame([onprem]), cloud], ignore_index=True)
    kinds = [pricing] if pricing else offers["pricing"].unique().tolist() or ["on-demand"]
    return TcoAnswer(
        config=sized,
        sizing=sizing,
        defaulted=left,
        breakdown=breakdown,
        rows=rows.reindex(columns=list(TCO_COLUMNS)),
        band=band,
        draws=simulated.n,
        seed=seed,
        trend_per_year=trend_per_year,
        pricing=str(kinds[0]),
    )
