"""Checkpoint time of a training job: what is saved, who writes it, how often, how long
training stalls for each save.

State saved (bytes): a full training run saves bf16 weights (2 B), fp32 master weights
(4 B) and Adam's two fp32 moments (8 B): 14 B per parameter (the 16 B of model states of
Rajbhandari et al. 2020, sec. 3.1, less the 2 B of gradients, which a checkpoint does not
keep). LoRA and QLoRA save only what they train: the adapters and their optimizer state,
14 B per adapter parameter (the frozen base weights are already on disk; Hu et al. 2021).

Writers: the state is sharded and every instance writes its share in parallel (Megatron-LM
distributed checkpointing and PyTorch Distributed Checkpoint save one shard per rank), at
the instance's write bandwidth: its network (Gb/s / 8) where the catalog knows it, capped at
NODE_WRITE_CAP_GBS that one client gets from a shared file system; else
DEFAULT_NODE_WRITE_GBS (one local NVMe drive).

Asynchronous saves: Megatron-LM (`--async-save`) and PyTorch DCP (`async_save`, used by
FSDP stacks) copy each GPU's shard to host memory and write it in the background; training
stalls only for that copy at HOST_COPY_GBS per GPU, plus any part of the write still
running when the next save is due. DeepSpeed and the non-LLM workloads (torch.save) stall
for the whole write.

Interval: Young 1974, tau = sqrt(2 C M), with C the stall per save and M the job's mean
time between failures, 1 / (GPUs x GPU_FAILURES_PER_HOUR): failures grow with the GPU count.
An asynchronous save's interval is at least its background write.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from planner.costs.spot import young_interval_hours

# Bytes per trained parameter in a checkpoint: bf16 weights + fp32 master + Adam m and v.
STATE_BYTES_PER_PARAM = 14.0
# Per-GPU failure rate: 419 unexpected interruptions in 54 days of Llama 3 405B pre-training
# on 16,384 H100 GPUs (Dubey et al. 2024, "The Llama 3 Herd of Models", sec. 3.3.4):
# 419 / (54 x 24 x 16,384) = 1.97e-5 per GPU-hour (one per ~50,700 GPU-hours).
GPU_FAILURES_PER_HOUR = 419 / (54 * 24 * 16_384)
# Write bandwidth of one instance (GB/s). Network-attached: the instance network / 8,
# capped at what one client of a shared file system sustains (assumed 5 GB/s, range
# 1-10 GB/s: FSx for Lustre, Filestore, Azure Managed Lustre publish per-client rates in
# this range). Unknown network: one PCIe 4.0 NVMe drive, 2 GB/s (range 1-7 GB/s).
NODE_WRITE_CAP_GBS = 5.0
DEFAULT_NODE_WRITE_GBS = 2.0
# Device-to-host copy per GPU (GB/s): PCIe 4.0 x16 is 32 GB/s raw, ~25 GB/s achieved
# (assumed; PCIe 5.0 hosts are faster, so this is the slower case).
HOST_COPY_GBS = 25.0
# Frameworks whose checkpoints are asynchronous (planner.llm.frameworks names).
ASYNC_FRAMEWORKS: frozenset[str] = frozenset({"megatron", "fsdp", "fsdp2"})

CHECKPOINT_COLUMNS: tuple[str, ...] = (
    "checkpoint_write_hours",
    "checkpoint_interval_hours",
    "checkpoint_stall_s",
    "checkpoint_gb",
)


@dataclass(frozen=True)
class CheckpointState:
    """What one checkpoint saves (`gb`, GB) and whether it is saved asynchronously."""

    gb: float
    asynchronous: bool = False

    def __post_init__(self) -> None:
        if not np.isfinite(self.gb) or self.gb < 0:
            raise ValueError(f"checkpoint size must be >= 0 GB (got {self.gb})")


def state_gb(trained_params: float) -> float:
    """GB one checkpoint saves for `trained_params` trained parameters (14 B each)."""
    return STATE_BYTES_PER_PARAM * max(trained_params, 0.0) / 1e9


def node_write_gbs(network_gbps: np.ndarray) -> np.ndarray:
    """GB/s one instance writes: min(network / 8, NODE_WRITE_CAP_GBS); the default where
    the network is unknown."""
    network = np.asarray(network_gbps, float)
    known = np.isfinite(network) & (network > 0)
    safe = np.where(known, network, 1.0)
    return np.where(known, np.minimum(safe / 8.0, NODE_WRITE_CAP_GBS), DEFAULT_NODE_WRITE_GBS)


def checkpoint_interval_hours(stall_hours: np.ndarray, gpus: np.ndarray) -> np.ndarray:
    """Young's interval (planner.costs.spot.young_interval_hours, Young 1974) for a job whose
    time between failures is M = 1 / (gpus x GPU_FAILURES_PER_HOUR) hours."""
    mtbf = 1.0 / (np.maximum(np.asarray(gpus, float), 1.0) * GPU_FAILURES_PER_HOUR)
    return young_interval_hours(np.asarray(stall_hours, float), mtbf)


def checkpoint_times(
    options: pd.DataFrame,
    state: CheckpointState,
    compute_hours: np.ndarray,
    every_hours: float | None = None,
) -> pd.DataFrame:
    """CHECKPOINT_COLUMNS per option (gpu_count, instances, network_gbps).

    checkpoint_write_hours: training hours lost to saves (saves x stall each);
    checkpoint_interval_hours: compute between saves (Young, unless `every_hours` is given;
    0 = no checkpoints); checkpoint_stall_s: seconds training stops for one save;
    checkpoint_gb: the size of one save.
    """
    instances = np.maximum(options["instances"].astype(float).to_numpy(), 1.0)
    gpus = np.maximum(options["gpu_count"].astype(float).to_numpy() * instances, 1.0)
    write_s = state.gb / instances / node_write_gbs(options["network_gbps"].to_numpy(float))
    stall_s = state.gb / gpus / HOST_COPY_GBS if state.asynchronous else write_s
    if every_hours is None:
        interval = checkpoint_interval_hours(stall_s / 3600.0, gpus)
        if state.asynchronous:
            interval = np.maximum(interval, write_s / 3600.0)
    else:
        interval = np.full(len(options), float(every_hours))
    if state.asynchronous:  # a write still running when the next save is due stalls it
        stall_s = stall_s + np.maximum(write_s - interval * 3600.0, 0.0)
    compute = np.asarray(compute_hours, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        saves = np.where(interval > 0, np.floor(compute / interval), 0.0)
    no_state = state.gb <= 0 or every_hours == 0
    saves = np.zeros(len(options)) if no_state else np.nan_to_num(saves)
    return pd.DataFrame(
        {
            "checkpoint_write_hours": saves * stall_s / 3600.0,
            "checkpoint_interval_hours": np.where(no_state, np.nan, interval),
            "checkpoint_stall_s": np.where(no_state, 0.0, stall_s),
            "checkpoint_gb": state.gb,
        },
        index=options.index,
    )
