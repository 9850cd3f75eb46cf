"""Words for the reason codes and step figures of the rows a user is shown.

The engine returns numbers and codes (limit_code, per_gpu_batch, setup_hours, ...); the
CLI and the app call these for the few rows they display, never for every option.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from edge.format import duration

LIMIT_WORDS = {
    "cpu-bound": "CPU-bound",
    "batch-bound": "batch-bound",
}


def _get(row: Mapping[str, Any], key: str) -> float:
    value = row.get(key)
    try:
        return float(value) if value is not None else float("nan")
    except (TypeError, ValueError):
        return float("nan")


def explain_limit(row: Mapping[str, Any], unit: str = "samples/s") -> str:
    """Why a row's throughput is below its GPUs' (limit_code), or "" when nothing binds."""
    code = str(row.get("limit_code") or "")
    if code == "cpu-bound":
        vcpus = _get(row, "vcpus") * _get(row, "instances")
        return (
            f"CPU-bound: {vcpus:,.0f} vCPUs feed ~{_get(row, 'loader_ceiling'):,.0f} {unit}; "
            f"the GPUs could do ~{_get(row, 'gpu_throughput'):,.0f}"
        )
    if code == "batch-bound":
        return (
            f"batch-bound: the global batch of {_get(row, 'global_batch'):,.0f} leaves "
            f"{_get(row, 'per_gpu_batch'):.3g} samples per GPU per step on "
            f"{_get(row, 'total_gpus'):g} GPUs, so each GPU runs below its best rate"
        )
    return ""


def explain_time(row: Mapping[str, Any]) -> str:
    """Where a row's wall time goes, naming the largest part besides compute."""
    parts = {
        "compute": _get(row, "compute_hours"),
        "start-up": _get(row, "setup_hours"),
        "data staging": _get(row, "staging_hours"),
        "checkpoint writes": _get(row, "checkpoint_write_hours"),
    }
    total = _get(row, "hours_to_train")
    spot = total - sum(v for v in parts.values() if np.isfinite(v))
    if np.isfinite(spot) and spot > total * 0.01:
        parts["spot interruptions"] = spot
    shown = [f"{duration(v)} {k}" for k, v in parts.items() if np.isfinite(v) and v * 3600 >= 1]
    others = {k: v for k, v in parts.items() if k != "compute" and np.isfinite(v)}
    text = f"{duration(total)} = " + " + ".join(shown)
    if others:
        name, hours = max(others.items(), key=lambda item: item[1])
        if hours > 0:
            share = hours / total if total > 0 else 0.0
            text += f"; {name} is the largest overhead ({share:.0%} of the time)"
    saves = explain_checkpoints(row)
    if saves:
        text += f"; {saves}"
    basis = row.get("billing_basis")
    if basis:
        text += f"; billed {duration(_get(row, 'billed_hours'))}: {basis}"
    return text


def explain_step(row: Mapping[str, Any]) -> str:
    """The small-batch penalty and the exposed all-reduce of a row's step, with the
    measurements they were fitted on (planner.throughput.step_model), or "" without a step.

    Reads per_gpu_batch, batch_limit, batch_rate, comm_s, comm_total_s and total_gpus.
    """
    from planner.throughput.step_model import ALLREDUCE_SOURCE, FLOOR_SOURCE

    batch = _get(row, "per_gpu_batch")
    if not np.isfinite(batch):
        return ""
    parts = []
    rate = _get(row, "batch_rate")
    limit = _get(row, "batch_limit")
    if np.isfinite(rate) and np.isfinite(limit) and batch < limit * 0.999:
        parts.append(
            f"batch {batch:,.3g}/GPU: {rate:.0%} of the batch-{limit:,.0f} rate "
            f"(per-step floor fitted on {FLOOR_SOURCE})"
        )
    total = _get(row, "comm_total_s")
    ranks = _get(row, "total_gpus")
    if np.isfinite(total) and total > 0 and ranks > 1:
        parts.append(
            f"all-reduce {_get(row, 'comm_s') * 1e3:.2g} ms exposed of {total * 1e3:.2g} ms "
            f"per step ({ALLREDUCE_SOURCE}, {ranks:,.0f} ranks)"
        )
    return "; ".join(parts)


def explain_checkpoints(row: Mapping[str, Any]) -> str:
    """How the row checkpoints (planner.costs.checkpoint), or "" when it does not."""
    size, every = _get(row, "checkpoint_gb"), _get(row, "checkpoint_interval_hours")
    if not (np.isfinite(size) and size > 0 and np.isfinite(every) and every > 0):
        return ""
    stall = _get(row, "checkpoint_stall_s")
    return (
        f"checkpoints of {size:,.{0 if size >= 100 else 2}f} GB every {duration(every)} of "
        f"compute, each stalling training {stall:,.2g} s"
    )
