"""A plan's CPU baseline: CPU-only instances timed and priced beside the GPU options, so a
plan can say what a GPU buys over the CPU ("days on CPU, hours on one A100").

Image and BERT workloads only (an LLM on CPUs is not a plan anyone makes), and not where
the request fixes the GPU count (a 0-GPU option is not that count). Each CPU-only
offer (pricing.cpu_offers, within the request's providers, regions and tiers) is one
option of one instance; its throughput is planner.throughput.cpu's, its work, hours and
dollars the same steps and the one cost formula as every GPU option's
(planner.costs.work, planner.costs.hours, planner.costs.cost.dollars). The options are
then ranked together: a CPU option is on the frontier or a pick only where it truly wins.
CPU options are no offer's chosen count (chosen_count False), so the plan's rows show one
only where it is a pick or on the frontier; Plan.options (`--view options`, the app's
options table) has them all.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from benchmarks.workload_names import PIPELINE_WORKLOAD
from planner.choose.asked import cpu_offers_asked_for
from planner.choose.options import cpu_options
from planner.choose.ranking import ranked
from planner.costs.hours import with_hours_and_cost
from planner.costs.work import with_limits_and_work
from planner.dropped import drop_without
from planner.machines.cpus import cpu_family
from planner.notes import Note
from planner.request import PlanRequest
from planner.throughput.bundled import cpu_offers_digest, load_cpu_offers
from planner.throughput.cpu import cpu_throughput
from planner.throughput.disk_cache import frame_digest
from planner.throughput.for_plan import with_columns
from planner.throughput.offers import ByKey
from pricing.cpu_offers import CPU_NAME

# What a GPU option's throughput step adds that a CPU option has no figure for.
_NO_FIGURE = ("per_gpu_batch", "compute_s", "comm_s", "overhead_s", "mfu", "memory_per_gpu_gb")
# The result rows CPU options read: own CPU runs (planner.throughput.cpu) and own input
# pipeline runs (the JPEG loader's ceiling, planner.costs.work).
_CPU_RESULT_WORKLOAD = PIPELINE_WORKLOAD


def cpu_run_notes(cpu: pd.DataFrame) -> list[Note]:
    """One cpu_run_applied note when an own CPU run set the rate of some CPU rows: its id,
    the rows it moved (count, families) and by what factor, and the rows it left alone."""
    moved = cpu.loc[cpu["cpu_run_id"].astype(str) != ""]
    if moved.empty:
        return []
    factor = moved["cpu_run_factor"].astype(float)
    return [
        Note(
            "cpu_run_applied",
            {
                "id": str(moved["cpu_run_id"].iloc[0]),
                "moved": len(moved),
                "families": tuple(sorted(moved["cpu_family"].astype(str).unique())),
                "factor_low": float(factor.min()),
                "factor_high": float(factor.max()),
                "kept": len(cpu) - len(moved),
            },
        )
    ]


def with_cpu_baseline(
    opts: pd.DataFrame,
    request: PlanRequest,
    results: pd.DataFrame,
    cpu_offers: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, list[Note]]:
    """The options (timed and costed) with the CPU baseline's options added, all ranked
    (planner.choose.ranking.ranked, once); the picks of the whole; notes on CPU offers left
    out. `cpu_offers` defaults to the bundled CPU catalog (an empty table: no baseline).

    Added columns: cpu_name, cpu_arch, physical_cores, cpu_gflops_per_core,
    cpu_parallel_efficiency, cpu_run_id, baseline_detail ("" / NaN on GPU rows).
    """
    workload = request.workload
    if workload.is_llm or opts.empty or request.gpu_count is not None:
        return (*ranked(opts, request), [])
    cpu, notes = _costed_cpu_options(request, results, cpu_offers)
    if cpu.empty:
        return (*ranked(opts, request), notes)
    cpu["option_id"] = int(opts["option_id"].max()) + 1 + np.arange(len(cpu))  # GPU ids kept
    both = pd.concat([opts, cpu], ignore_index=True)
    both["baseline_detail"] = both["baseline_detail"].fillna("").astype(object)
    for column in ("cpu_name", "cpu_arch", "cpu_run_id", "cpu_family"):
        both[column] = both[column].fillna("").astype(object)
    both, picked = ranked(both, request)
    both.loc[(both["gpu_name"] == CPU_NAME).to_numpy(), "chosen_count"] = False
    return both, picked, notes


def _costed_cpu_options(
    request: PlanRequest, results: pd.DataFrame, cpu_offers: pd.DataFrame | None
) -> tuple[pd.DataFrame, list[Note]]:
    """The CPU options timed and costed, with the notes on those left out: the same for
    every plan of one request over one results table and CPU catalog, so cached by their
    content (a copy each time: the caller numbers and ranks it)."""
    catalog = cpu_offers_digest() if cpu_offers is None else frame_digest(cpu_offers)
    key = (request, _cpu_rows_digest(results), catalog)
    cpu, notes = _costed(ByKey(key, (request, results, cpu_offers)))
    return cpu.copy(), list(notes)


def _cpu_rows_digest(results: pd.DataFrame) -> str:
    """frame_digest of the results rows a CPU option reads (_CPU_RESULT_WORKLOAD and CPU
    devices), every column but the operator tables (objects)."""
    from benchmarks.workload_names import OP_FIGURES_COLUMN

    if results.empty or not {"device", "workload"} <= set(results.columns):
        return frame_digest(results.iloc[0:0, 0:0])
    rows = (results["device"] == "cpu") | (results["workload"] == _CPU_RESULT_WORKLOAD)
    columns = [c for c in results.columns if c != OP_FIGURES_COLUMN]
    return frame_digest(results.loc[rows.to_numpy(), columns])


@lru_cache(maxsize=16)
def _costed(key: ByKey) -> tuple[pd.DataFrame, tuple[Note, ...]]:
    request, results, cpu_offers = key.payload
    workload = request.workload
    offers = load_cpu_offers() if cpu_offers is None else cpu_offers  # read on a miss only
    cpu = cpu_options(cpu_offers_asked_for(request, offers), request.pricing)
    cpu, notes = drop_without(
        cpu, cpu["option_usd_per_hour"].isna(), "no_price", pricing=request.pricing
    )
    if cpu.empty:
        return cpu, tuple(notes)
    cpu = cpu.join(cpu_family(cpu))
    cpu, unknown = drop_without(cpu, cpu["cpu_family"] == "", "no_spec_row")
    notes += unknown
    if cpu.empty:
        return cpu, tuple(notes)
    cpu = cpu.join(cpu_throughput(cpu, workload, results))
    notes += cpu_run_notes(cpu)
    cpu = with_columns(
        cpu,
        {
            "sharding": "",
            "recompute": False,
            "speed_position": -1,
            "sweep_detail": "",
            **dict.fromkeys(_NO_FIGURE, np.nan),
        },
    )
    cpu = with_hours_and_cost(with_limits_and_work(cpu, workload, results), request)
    return cpu, tuple(notes)
