"""Compose offers, throughput and cost into a ranked Plan. No algorithm of its own.

Plan rows (a DataFrame, one per offer that has both a price and a throughput):

  rank, provider, region, instance_type, gpu_name, gpu_count,
  throughput, throughput_unit, throughput_source, throughput_detail,
  hours_to_train, hours_low, hours_high, cost_usd, cost_low_usd, cost_high_usd,
  usd_per_hour, pricing, price_date, price_source

`*_low`/`*_high` follow the throughput band (high throughput -> low hours).
Ranked by cost, then hours.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import pandas as pd

from planner.cost import cost_to_train, hours_to_train
from planner.throughput import (
    llm_throughput_for_offers,
    model_key,
    throughput_for_offers,
    throughput_model_for_results,
    throughput_table,
)
from planner.workloads import Workload
from pricing.catalog import PRICING_KINDS, STALE_AFTER_DAYS, filter_offers, price_for_kind

PLAN_COLUMNS: tuple[str, ...] = (
    "rank", "provider", "region", "instance_type", "gpu_name", "gpu_count",
    "throughput", "throughput_unit", "throughput_source", "throughput_detail",
    "hours_to_train", "hours_low", "hours_high", "cost_usd", "cost_low_usd", "cost_high_usd",
    "usd_per_hour", "pricing", "price_date", "price_source",
)  # fmt: skip


@dataclass(frozen=True)
class Plan:
    """A ranked plan: rows plus the assumptions behind them and what was left out."""

    workload: Workload
    precision: str
    pricing: str
    rows: pd.DataFrame
    assumptions: tuple[str, ...] = field(default_factory=tuple)
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def records(self) -> list[dict[str, object]]:
        """Rows as a list of plain dicts (JSON-ready: NaN becomes None)."""
        frame = self.rows.astype(object).where(self.rows.notna(), None)
        return frame.to_dict(orient="records")


def make_plan(
    workload: Workload,
    precision: str,
    offers: pd.DataFrame,
    results: pd.DataFrame,
    pricing: str = "on-demand",
    providers: list[str] | None = None,
    regions: list[str] | None = None,
    gpus: list[str] | None = None,
    today: dt.date | None = None,
) -> Plan:
    """Every offer priced and timed for `workload`, ranked by cost to train."""
    if pricing not in PRICING_KINDS:
        raise ValueError(f"unknown pricing {pricing!r}; valid: {', '.join(PRICING_KINDS)}")
    chosen = filter_offers(offers, providers, regions, gpus)
    warnings: list[str] = []
    if workload.is_llm:
        speed = llm_throughput_for_offers(chosen, workload, precision)
    else:
        table = throughput_table(results, workload, precision)
        fits = throughput_model_for_results(results, workload, precision)
        speed = throughput_for_offers(
            chosen, table, fits, model_name=model_key(workload), precision=precision
        )
    price = price_for_kind(chosen, pricing)
    rows = chosen.assign(
        throughput=speed["throughput"],
        throughput_unit=workload.throughput_unit,
        throughput_source=speed["throughput_source"],
        throughput_detail=speed["throughput_detail"],
        usd_per_hour=price,
        pricing=pricing,
        price_date=chosen["priced_at"],
        price_source=chosen["source"],
    )
    no_speed = rows["throughput"].isna()
    if no_speed.any():
        missing = sorted(rows.loc[no_speed, "gpu_name"].unique())
        warnings.append(
            f"{int(no_speed.sum())} offers left out: no {workload.model} {precision} "
            f"throughput figure or estimate for {', '.join(missing)}"
        )
    no_price = rows["usd_per_hour"].isna() & ~no_speed
    if no_price.any():
        warnings.append(f"{int(no_price.sum())} offers left out: no {pricing} price")
    rows = rows.loc[~no_speed & ~no_price].copy()
    if workload.is_llm and not rows.empty:
        rows, fit_warning = _drop_llm_offers_that_do_not_fit(rows, workload)
        warnings.extend(fit_warning)
    rows["hours_to_train"] = hours_to_train(workload.samples, rows["throughput"])
    rows["hours_low"] = hours_to_train(workload.samples, speed.loc[rows.index, "throughput_high"])
    rows["hours_high"] = hours_to_train(workload.samples, speed.loc[rows.index, "throughput_low"])
    rows["cost_usd"] = cost_to_train(rows["hours_to_train"], rows["usd_per_hour"])
    rows["cost_low_usd"] = cost_to_train(rows["hours_low"], rows["usd_per_hour"])
    rows["cost_high_usd"] = cost_to_train(rows["hours_high"], rows["usd_per_hour"])
    rows = rows.sort_values(
        ["cost_usd", "hours_to_train", "provider", "region"], kind="stable"
    ).reset_index(drop=True)
    rows["rank"] = range(1, len(rows) + 1)
    rows = rows.loc[:, list(PLAN_COLUMNS)]
    warnings.extend(_stale_price_warnings(chosen, today))
    return Plan(
        workload,
        precision,
        pricing,
        rows,
        _assumptions(workload, precision, pricing),
        tuple(warnings),
    )


def _drop_llm_offers_that_do_not_fit(
    rows: pd.DataFrame,
    workload: Workload,
) -> tuple[pd.DataFrame, list[str]]:
    """Keep instances whose total GPU memory holds the model's training state.

    Mixed-precision Adam keeps 16 bytes per parameter (fp16 weights and gradients, fp32
    master weights and two moments: Rajbhandari et al. 2020, ZeRO, section 3.1), fully
    sharded across the instance's GPUs; 25% headroom for activations.
    """
    from planner.hardware import load_specs

    needed_gb = 16 * (workload.params or 0) * 1.25 / 1e9
    memory = rows["gpu_memory_gib"].fillna(rows["gpu_name"].map(load_specs()["memory_gb"]))
    fits = memory * rows["gpu_count"] >= needed_gb
    warnings = []
    if not fits.all():
        warnings.append(
            f"{int((~fits).sum())} offers left out: under {needed_gb:,.0f} GB of "
            "GPU memory per instance (16 bytes/parameter sharded, +25% activations)"
        )
    return rows.loc[fits], warnings


def _stale_price_warnings(offers: pd.DataFrame, today: dt.date | None) -> list[str]:
    """One warning listing the providers whose prices are older than STALE_AFTER_DAYS."""
    today = today or dt.date.today()
    stale = []
    for provider, priced_at in offers.groupby("provider")["priced_at"].min().items():
        age = (today - dt.date.fromisoformat(str(priced_at))).days
        if age > STALE_AFTER_DAYS:
            stale.append(f"{provider} {priced_at} ({age} d)")
    if not stale:
        return []
    return [
        f"prices older than {STALE_AFTER_DAYS} days: {', '.join(stale)}; refresh with "
        "`gpuplan pricing refresh aws|gcp|azure` where credentials allow"
    ]


def _assumptions(workload: Workload, precision: str, pricing: str) -> tuple[str, ...]:
    return (
        f"Workload {workload.name}: {workload.description}; {workload.samples:,.0f} "
        f"{workload.sample_unit} ({workload.source}).",
        f"Precision {precision}. Throughput: own measurements first, then published "
        "(Lambda PyTorch benchmarks, newest generation, median of runs); other GPU counts "
        "scaled through the law fitted to that GPU (chosen by held-out error); GPUs with "
        "no figure estimated from their specs (spec regression, cross-validated band).",
        f"Prices: {pricing}, whole instance, per-second billing, no data or storage costs.",
    )
