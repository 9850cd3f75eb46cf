"""A plan's data-parallel throughput step: every option's samples per second, its band and
source, measured sweep figures for the exact instance types they ran on, and the words of
the rows shown (planner.throughput.offers; LLM options take planner.llm.for_plan)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from planner.dropped import drop_without_throughput
from planner.notes import Note
from planner.request import PlanRequest
from planner.throughput.offers import (
    OptionThroughput,
    model_key,
    throughput_for_options,
    throughput_inputs,
)
from planner.throughput.sweep_results import apply_sweep_figures, sweep_figures


def with_columns(frame: pd.DataFrame, values: dict[str, object]) -> pd.DataFrame:
    """frame.assign(**values) (a column given anew replaces it in place, new ones follow in
    order), the new columns added in one step: assigning dozens one by one to a wide table
    costs more than the rest of a plan step."""
    new = {name: value for name, value in values.items() if name not in frame.columns}
    kept = {name: value for name, value in values.items() if name not in new}
    frame = frame.assign(**kept) if kept else frame
    if not new:
        return frame
    return pd.concat([frame, pd.DataFrame(new, index=frame.index)], axis=1)


def with_throughput(
    opts: pd.DataFrame, request: PlanRequest, results: pd.DataFrame
) -> tuple[pd.DataFrame, list[Note], OptionThroughput]:
    """Options with throughput, throughput_low/high, throughput_source and the step
    breakdown (planner.throughput.offers.throughput_for_options, global batch capped at the
    workload's), sweep figures applied, options without a throughput left out (noted).

    Returns the options, the notes, and the OptionThroughput that words the rows shown.
    """
    workload, precision = request.workload, request.precision
    inputs = throughput_inputs(results, workload, precision)
    fast = throughput_for_options(
        opts,
        inputs.figures,
        inputs.model,
        model_key(workload),
        precision,
        workload.global_batch_cap,
        inputs.figures_digest,
    )
    opts = with_columns(
        opts.join(fast.values),
        {
            "mfu": np.nan,
            "memory_per_gpu_gb": np.nan,
            "sharding": "",
            "recompute": False,
            "speed_position": np.arange(len(opts)),
        },
    )
    figures = sweep_figures(results, workload.model, workload.model_size, precision)
    opts = apply_sweep_figures(opts, figures)
    opts, dropped = drop_without_throughput(opts, "no_throughput", request)
    return opts, dropped, fast


def with_throughput_detail(shown: pd.DataFrame, details: OptionThroughput | None) -> pd.DataFrame:
    """Rows with throughput_detail: which figure, law or regression gave each throughput (a
    sweep's own words where a sweep measured the instance, a CPU baseline row's
    baseline_detail); "" for LLM rows, which
    planner.render.llm words from LLM_DETAIL_COLUMNS."""
    shown = shown.copy()
    if details is None:
        shown["throughput_detail"] = ""
        return shown
    shown["throughput_detail"] = details.details(shown["speed_position"].to_numpy())
    swept = (shown["sweep_detail"] != "").to_numpy()
    shown.loc[swept, "throughput_detail"] = shown.loc[swept, "sweep_detail"]
    if "baseline_detail" in shown.columns:  # CPU baseline rows (planner.cpu_baseline)
        cpu = (shown["baseline_detail"].fillna("") != "").to_numpy()
        shown.loc[cpu, "throughput_detail"] = shown.loc[cpu, "baseline_detail"]
    return shown
