"""How much work each option does and how fast it can be fed: the CPU data-loader ceiling,
the global batch cap, and the samples to train at each option's global batch."""

from __future__ import annotations

import numpy as np
import pandas as pd

from planner.costs.overheads import images_per_s_per_vcpu, loader_ceiling
from planner.workloads.catalog import Workload

SPEED_COLUMNS = ("throughput", "throughput_low", "throughput_high")
# The step's parts (planner.throughput.estimate.STEP_COLUMNS), NaN where no step model ran.
STEP_PART_COLUMNS = (
    "per_gpu_batch", "batch_limit", "batch_rate", "compute_s", "comm_s", "comm_total_s",
    "overhead_s",
)  # fmt: skip


def with_limits_and_work(
    opts: pd.DataFrame, workload: Workload, results: pd.DataFrame
) -> pd.DataFrame:
    """Apply the CPU data-loader ceiling (planner.costs.overheads) and size each option's job.

    Adds gpu_throughput (what the GPUs could do), loader_ceiling, limit_code
    ("cpu-bound" where the ceiling binds, "batch-bound" where the global batch cap shrinks
    the per-GPU batch below its limit, else ""), global_batch and samples_to_train
    (workload.samples_at(global batch) × benchmark samples per sample).
    """
    opts = opts.reset_index(drop=True)
    for column in STEP_PART_COLUMNS:
        if column not in opts.columns:
            opts[column] = np.nan
    x = opts["throughput"].to_numpy(float)
    opts["gpu_throughput"] = x
    ceiling = np.full(len(opts), np.nan)
    if workload.loader == "jpeg" and len(opts):
        per_vcpu, _ = images_per_s_per_vcpu(results)
        ceiling = loader_ceiling(opts, per_vcpu)
    bound = np.isfinite(ceiling) & (x > ceiling)
    factor = np.where(bound, ceiling / np.where(x > 0, x, 1.0), 1.0)
    for column in SPEED_COLUMNS:
        opts[column] = opts[column].to_numpy(float) * factor
    opts["loader_ceiling"] = ceiling
    batch = opts["per_gpu_batch"].to_numpy(float)
    total = opts["total_gpus"].to_numpy(float)
    opts["global_batch"] = batch * total
    cap = workload.global_batch_cap
    batch_bound = (
        np.isfinite(batch) & (cap is not None) & (batch * total >= (cap or np.inf) * 0.999)
    )
    opts["limit_code"] = np.where(bound, "cpu-bound", np.where(batch_bound, "batch-bound", ""))
    samples = workload.samples_at(opts["global_batch"].to_numpy(float))
    opts["samples_to_train"] = samples * workload.benchmark_samples_per_sample
    return opts


def nominal_speed(opts: pd.DataFrame, workload: Workload) -> pd.DataFrame:
    """Options with throughput and its band in units of the nominal `workload.samples`, so
    hours = workload.samples / speed also for time-to-accuracy workloads, whose samples to
    train depend on each option's global batch (samples_to_train)."""
    scale = workload.samples / opts["samples_to_train"].to_numpy(float)
    return opts.assign(**{column: opts[column] * scale for column in SPEED_COLUMNS})
