"""Prices and expected throughput for `gpuplan sweep plan/run` previews (SweepData).

The sweep package reads no catalog and has no throughput model; this joins the two for
it: a target's price per hour (on-demand, or spot when the target is spot) from the
price catalog with its date and source, and a run's expected samples per second on
that GPU and count on one machine, through the same steps as a plan's rows (options,
throughput with its batch cap, loader limits: measured, published, scaled or estimated).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks.sweep.preview import PriceQuote, ThroughputGuess
from benchmarks.sweep.spec import RunItem, TargetSpec
from planner.choose.options import machine_option
from planner.costs.work import with_limits_and_work
from planner.llm.for_plan import with_llm_throughput
from planner.llm.records import LLMMemoryError
from planner.request import PlanRequest, RequestError
from planner.throughput.for_plan import with_throughput
from planner.workloads.catalog import WORKLOADS, Workload
from pricing.catalog import price_date_basis


class CatalogSweepData:
    """SweepData from the bundled/user price catalog and own + published results."""

    def __init__(self, offers: pd.DataFrame | None = None, results: pd.DataFrame | None = None):
        self._offers = offers
        self._results = results

    @cached_property
    def offers(self) -> pd.DataFrame:
        if self._offers is not None:
            return self._offers
        from pricing.catalog import load_offers

        return load_offers()

    @cached_property
    def results(self) -> pd.DataFrame:
        if self._results is not None:
            return self._results
        from planner.throughput import own_and_published_results

        return own_and_published_results([])[0]

    def predicted_vs_measured(
        self, folder: Path, result_ids: Sequence[str]
    ) -> list[dict[str, str]]:
        """`gpuplan bench calibrate` for the results of `result_ids` in `folder` (a sweep's
        results), worded (planner.render.calibration.calibration_cells)."""
        from planner.render.calibration import calibration_cells
        from planner.throughput import own_and_published_results
        from planner.throughput.calibration import calibrate

        table, _ = own_and_published_results([str(folder)])
        return calibration_cells(calibrate(table, set(result_ids)))

    def known_instances(self, provider: str) -> dict[str, set[str]]:
        rows = self.offers.loc[self.offers["provider"] == provider]
        return {str(r): set(g["instance_type"].astype(str)) for r, g in rows.groupby("region")}

    def price(self, target: TargetSpec) -> PriceQuote | None:
        if not target.is_cloud:
            return None
        o = self.offers
        rows = o.loc[
            (o["provider"] == target.provider)
            & (o["region"] == target.region)
            & (o["instance_type"] == target.instance_type)
        ]
        column = "spot_usd_per_hour" if target.spot else "usd_per_hour"
        rows = rows.loc[rows[column].notna()].sort_values("priced_at")
        if rows.empty:
            return None
        row = rows.iloc[-1]
        kind = "spot" if target.spot else "on-demand"
        return PriceQuote(
            usd_per_hour=float(row[column]),
            priced_at=str(row["priced_at"]),
            source=f"{kind}, {row['source']}",
            gpu_name=str(row["gpu_name"]),
            gpu_count=float(row["gpu_count"]),
            price_date_basis=price_date_basis(row.get("date_bound", "")),
        )

    def throughput(
        self, gpu_name: str, gpu_count: int, run: RunItem, precision: str
    ) -> ThroughputGuess | None:
        workload = _workload_for(run.options)
        if workload is None:
            return None
        option = machine_option(gpu_name, gpu_count)
        try:
            request = PlanRequest(workload=workload, precision=precision)
            timed = with_llm_throughput if workload.is_llm else with_throughput
            opts, _, _ = timed(option, request, self.results)
        except (RequestError, LLMMemoryError):
            return None
        if opts.empty:
            return None
        opts = with_limits_and_work(opts, workload, self.results)
        value = float(opts["throughput"].iloc[0])
        if not math.isfinite(value) or value <= 0:
            return None
        if workload.is_llm and workload.seq_len:
            value /= workload.seq_len  # tokens/s -> sequences/s
        return ThroughputGuess(value, str(opts["throughput_source"].iloc[0]))


def _workload_for(options: dict[str, Any]) -> Workload | None:
    """The planner workload measured by this benchmark and size (None: no such workload)."""
    for workload in WORKLOADS.values():
        if workload.model == options["workload"] and workload.model_size == options["size"]:
            return workload
    return None
