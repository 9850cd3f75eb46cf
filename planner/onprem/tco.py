"""On-prem total cost of ownership: the names the rest of the planner imports, in one place.

The model lives in small modules, one job each: config (the schema and its defaults),
ranges (every line's cited low/typical/high), load (TOML), lines (the yearly cost lines,
vectorized), utilization (from the work's GPU-hours), breakeven (utilization and payback
against a cloud price), uncertain + montecarlo (the band), sensitivity (the tornado),
verdict (buy, rent or too close), compare (the offers weighed) and answer (all of it in
one record). See docs/tco.md for the formulas and their sources.
"""

from __future__ import annotations

import pandas as pd

from planner.onprem.answer import TCO_COLUMNS, TcoAnswer, cost_breakdown, tco_answer
from planner.onprem.breakeven import break_even_months, break_even_utilization
from planner.onprem.config import (
    CONFIG_KEYS,
    DEFAULTS,
    HOURS_PER_MONTH,
    HOURS_PER_YEAR,
    Default,
    OnPremConfig,
    OnPremConfigError,
    check_value,
)
from planner.onprem.lines import COMPONENTS, amortized_usd_per_gpu_hour, annual_costs
from planner.onprem.load import (
    LoadedConfig,
    config_from_mapping,
    defaults_frame,
    load_onprem_config,
)
from planner.onprem.sensitivity import sensitivity
from planner.onprem.utilization import capacity_gpu_hours_per_month

__all__ = [
    "COMPONENTS", "CONFIG_KEYS", "DEFAULTS", "HOURS_PER_MONTH", "HOURS_PER_YEAR", "TCO_COLUMNS",
    "Default", "LoadedConfig", "OnPremConfig", "OnPremConfigError", "TcoAnswer",
    "amortized_usd_per_gpu_hour", "annual_costs", "break_even_months", "break_even_utilization",
    "capacity_gpu_hours_per_month", "check_value", "config_from_mapping", "cost_breakdown",
    "defaults_frame", "load_onprem_config", "sensitivity", "tco_answer", "tco_table",
]  # fmt: skip


def tco_table(
    config: OnPremConfig,
    offers: pd.DataFrame,
    monthly_gpu_hours: float | None = None,
    source: str = "",
) -> pd.DataFrame:
    """The on-prem row, then one row per offer, in TCO_COLUMNS (tco_answer(...).rows)."""
    return tco_answer(config, offers, monthly_gpu_hours=monthly_gpu_hours, source=source).rows
