"""A plan's LLM throughput step: the fastest layout that fits each option, its tokens per
second and MFU (planner.llm.throughput), options where none fits left out (noted)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from planner.dropped import drop_without, drop_without_throughput
from planner.llm import throughput as llm_model
from planner.llm.user_layout import LayoutComparison, UserLayout, compare_layout
from planner.machines.network import ONPREM_NETWORK_GBPS, instance_network_gbps
from planner.notes import Note
from planner.request import PlanRequest

if TYPE_CHECKING:
    from planner.plan import Plan


def with_llm_throughput(
    opts: pd.DataFrame, request: PlanRequest, results: pd.DataFrame
) -> tuple[pd.DataFrame, list[Note], None]:
    """Options with throughput, band, source, layout (`sharding`), MFU, memory per GPU and
    LLM_DETAIL_COLUMNS, from own GPT results or the MFU prior (planner.llm.mfu).

    Raises planner.llm.records.LLMMemoryError when no layout fits any option. Leaves out,
    with a note each: options no layout fits, options whose global batch is too small for
    their layout, options without an LLM peak for the precision. The third value is None:
    LLM rows are worded from their columns (planner.render.llm).
    """
    workload, precision, settings = request.workload, request.precision, request.llm
    figures, figure_notes = llm_model.gpt_mfu_figures(results, precision)
    found = llm_model.llm_options(opts, workload, precision, figures, settings, results)
    no_room = (found["reason"] == "no_layout_fits").to_numpy()
    if len(opts) and no_room.any() and not found["fits"].any():
        raise llm_model.no_fit_error(
            workload, precision, opts, found, settings, request.gpu_limit, request.gpu_limit_field
        )
    opts = opts.join(found.drop(columns=["fits", "layout"]).assign(sharding=found["layout"]))
    small = (opts["reason"] == "batch_too_small").to_numpy()
    opts, no_layout = drop_without(
        opts, no_room, "no_layout_fits", workload=workload.name, option_count=int(no_room.sum())
    )
    small = small[~no_room]
    opts, too_small = drop_without(opts, small, "batch_too_small", option_count=int(small.sum()))
    opts = opts.drop(columns="reason")
    opts, no_peak = drop_without_throughput(opts, "no_llm_peak", request)
    return opts, no_layout + too_small + figure_notes + no_peak, None


def _check_layout_count(user: UserLayout, total: int, exact: int | None, most: int) -> None:
    """ValueError where a layout giving dp makes (`total` GPUs) another count than the
    plan's exact one, or more GPUs than it allows per option."""
    product = f"tp{user.tp} x pp{user.pp} x cp{user.cp} x dp{user.dp} = {total} GPUs"
    if exact is not None and total != exact:
        raise ValueError(
            f"{product}, but the plan asks for exactly {exact}: leave dp out (the GPU count "
            "sets it) or make them agree"
        )
    if total > most:
        raise ValueError(
            f"{product}, more than the {most} GPUs allowed per option: raise that limit or "
            "give a smaller dp"
        )


def layout_on_plan(
    plan: Plan, offers: pd.DataFrame, user: UserLayout, results: pd.DataFrame
) -> LayoutComparison | None:
    """`user`'s layout beside the best layout on the plan's fastest pick (else its first row):
    that row's GPU, GPUs per instance and network, at its GPU count or, when the layout gives
    dp, at tp x pp x cp x dp GPUs (ValueError where that is not the plan's exact GPU count,
    or more than the GPUs it allows per option). None when the plan has no row."""
    if user.gpus is not None:
        _check_layout_count(user, user.gpus, plan.request.gpu_count, plan.request.max_gpus)
    rows = plan.picks if len(plan.picks) else plan.rows
    if rows.empty:
        return None
    fastest = rows.loc[rows["pick"] == "fastest_within_budget"] if "pick" in rows else rows
    row = (fastest if len(fastest) else rows).iloc[0]
    per_node = max(1, int(float(row["gpu_count"])))
    network = ONPREM_NETWORK_GBPS
    if str(row.get("kind", "cloud")) == "cloud":
        same = (
            (offers["provider"].astype(str) == str(row["provider"]))
            & (offers["instance_type"].astype(str) == str(row["instance_type"]))
        ).to_numpy()
        if same.any():
            network = float(instance_network_gbps(offers)[0][np.flatnonzero(same)[0]])
    total = user.gpus or int(float(row["total_gpus"]))
    figures, _ = llm_model.gpt_mfu_figures(results, plan.precision)
    gpu = str(row["gpu_name"])
    board = llm_model.option_board(str(row.get("kind", "cloud")), gpu, per_node, plan.request.llm)
    settings = dataclasses.replace(plan.request.llm, board_gpus=board)
    best = llm_model.predict_layout(
        plan.workload, plan.precision, gpu, total, per_node, network, figures, settings, results
    )
    return compare_layout(best, plan.workload, gpu, user, settings)
