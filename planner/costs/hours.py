"""Hours and dollars of every option: compute time, spot interruptions, job overheads,
billing increments (planner.costs.cost, spot, overheads)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from planner.costs.checkpoint import ASYNC_FRAMEWORKS, CheckpointState, state_gb
from planner.costs.cost import dollars, fixed_hours, hours_to_train
from planner.costs.overheads import billed_hours, job_overheads
from planner.costs.spot import spot_for_offers
from planner.costs.work import nominal_speed
from planner.request import PlanRequest
from planner.throughput.for_plan import with_columns
from planner.throughput.offers import model_key
from planner.throughput.scaling import DATA_PARALLEL_MODELS
from planner.workloads.catalog import Workload, lora_adapter_params


def with_hours_and_cost(opts: pd.DataFrame, request: PlanRequest) -> pd.DataFrame:
    """Options with compute_hours (samples / throughput), hours_to_train (spot rows at their
    expected wall time with interruptions, plus start-up, staging and checkpoint hours),
    billed_hours and cost_usd (planner.costs.cost.dollars)."""
    workload = request.workload
    compute = hours_to_train(workload.samples, nominal_speed(opts, workload)["throughput"])
    opts = _with_spot(opts.assign(compute_hours=compute, hours_to_train=compute), request)
    saves = checkpoint_state(workload, request.llm.framework)
    overheads = job_overheads(
        opts, workload.dataset_gb, saves, compute.to_numpy(float), request.overheads
    )
    opts = pd.concat([opts, overheads], axis=1)  # one index: a join without the merge
    # Spot rows' checkpoints are in their expected wall time already (planner.costs.spot).
    opts.loc[opts["pricing"] == "spot", "checkpoint_write_hours"] = 0.0
    opts["hours_to_train"] = opts["hours_to_train"] + fixed_hours(opts)
    hours = opts["hours_to_train"].to_numpy(float)
    opts["billed_hours"] = billed_hours(
        hours, opts["billing_increment_s"].to_numpy(float), opts["billing_minimum_s"].to_numpy()
    )
    opts["cost_usd"] = dollars(opts, hours)
    return opts


def _with_spot(opts: pd.DataFrame, request: PlanRequest) -> pd.DataFrame:
    """Spot rows' expected wall hours, overhead factor and interruptions per GPU-instance
    hour (planner.costs.spot.spot_for_offers); other rows keep their compute hours."""
    spot = (opts["pricing"] == "spot").to_numpy()
    n = len(opts)
    hours = opts["hours_to_train"].to_numpy(float).copy()
    columns = {
        "interruptions_per_hour": np.full(n, np.nan),
        "interruptions_low_per_hour": np.full(n, np.nan),
        "interruptions_high_per_hour": np.full(n, np.nan),
        "interruption_rate_source": np.full(n, "", dtype=object),
        "spot_overhead_factor": np.full(n, np.nan),
    }
    if spot.any():
        instances = opts.loc[spot, "instances"].to_numpy()
        rows = spot_for_offers(
            opts.loc[spot],
            opts.loc[spot, "compute_hours"].to_numpy(),
            request.checkpoint_hours,
            request.restart_hours,
            request.rates,
            instances,
        )
        hours[spot] = rows["expected_wall_hours"].to_numpy()
        found = {  # the range stays per instance-hour, as the defaults
            "interruptions_per_hour": rows["interruptions_per_hour"].to_numpy() / instances,
            "interruptions_low_per_hour": rows["interruptions_low_per_hour"].to_numpy(),
            "interruptions_high_per_hour": rows["interruptions_high_per_hour"].to_numpy(),
            "interruption_rate_source": rows["rate_source"].to_numpy(),
            "spot_overhead_factor": rows["overhead_factor"].to_numpy(),
        }
        for name, values in found.items():
            columns[name][spot] = values
    return with_columns(opts, {"hours_to_train": hours, **columns})


def trained_params(workload: Workload) -> float:
    """Parameters a checkpoint saves: LoRA/QLoRA adapters only, else every parameter (the
    workload's, else its benchmark model's)."""
    shape = (workload.n_layer, workload.d_model, workload.ffn_dim, workload.n_heads)
    if workload.llm_mode in ("lora", "qlora") and None not in shape:
        heads = int(workload.n_heads or 1)
        return lora_adapter_params(
            int(workload.n_layer or 0),
            int(workload.d_model or 0),
            int(workload.ffn_dim or 0),
            heads,
            int(workload.n_kv_heads or heads),
            workload.lora_rank,
            workload.mlp_gated,
        )
    if workload.params:
        return float(workload.params)
    known = DATA_PARALLEL_MODELS.get(model_key(workload))
    return known.params if known else 0.0


def checkpoint_state(workload: Workload, framework: str) -> CheckpointState:
    """What one checkpoint of `workload` saves and whether `framework` saves it
    asynchronously (LLM stacks only; planner.costs.checkpoint)."""
    asynchronous = workload.is_llm and framework in ASYNC_FRAMEWORKS
    return CheckpointState(state_gb(trained_params(workload)), asynchronous)
