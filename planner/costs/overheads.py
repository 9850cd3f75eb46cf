"""What a training job costs besides its training steps: start-up, staging, checkpoints,
billing granularity, and the CPU data-loader ceiling.

Wall hours of a job = provisioning + environment start + dataset staging + compute
(+ spot losses) + checkpoint writes. Billed hours per instance = the wall hours rounded up
to the provider's billing increment, at least its minimum; cost = billed hours × the
option's $/h. Defaults are documented below with their basis and the date recorded; the
CLI's --startup-minutes, --staging-gbps, --checkpoint-every-hours override them.

Data-loader ceiling (image workloads decoded on the CPU): samples/s ≤ (vCPUs − one per
GPU for its training process) × images/s per vCPU, the per-vCPU rate from own `gpuplan
bench pipeline` results (JPEG decode + random-resized crop), else DEFAULT_IMAGES_PER_S_PER_VCPU.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchmarks.workload_names import PIPELINE_WORKLOAD
from edge.distinct import per_distinct
from planner.costs.checkpoint import CHECKPOINT_COLUMNS, CheckpointState, checkpoint_times
from planner.settings import JobOverheads

RECORDED = "2026-11"

# Provisioning: API call to a reachable instance, minutes. Assumptions of typical GPU VM
# launch times (larger multi-GPU instances boot slower: host memory and GPU checks);
# not measured here, override with --startup-minutes.
PROVISION_MINUTES: dict[str, float] = {
    "aws": 4.0,
    "gcp": 4.0,
    "azure": 6.0,
    "lambda": 5.0,
    "nebius": 5.0,
    "vast": 3.0,
    "paperspace": 5.0,
    "fluidstack": 10.0,
    "onprem": 0.0,
}
DEFAULT_PROVISION_MINUTES = 5.0
# Environment start: pull a PyTorch container image (~10 GB compressed, NGC PyTorch
# images are 9-10 GB) at registry speed, unpack and start: 2 min plus the pull at
# REGISTRY_GBPS; on-prem keeps images cached (1 min).
IMAGE_GB = 10.0
REGISTRY_GBPS = 5.0
ENV_START_MINUTES = 2.0
ONPREM_ENV_MINUTES = 1.0
# Dataset staging to local NVMe, each instance in parallel: dataset GB / min(instance
# network, STAGING_CAP_GBPS): an object store serves one instance at ~10-25 Gb/s without
# tuned parallel transfers; local NVMe writes ~2 GB/s. On-prem data is already local.
STAGING_CAP_GBPS = 16.0
# Checkpoints: size, writers, asynchronous saves and the interval in
# planner.costs.checkpoint.

# Billing: (increment seconds, minimum seconds, basis). Recorded 2026-11.
BILLING: dict[str, tuple[float, float, str]] = {
    "aws": (1.0, 60.0, "per second, 60 s minimum (EC2 Linux On-Demand, since 2017-10)"),
    "gcp": (1.0, 60.0, "per second, 1 min minimum (Compute Engine, since 2017-09)"),
    "azure": (1.0, 60.0, "per second, 60 s minimum assumed (Linux VMs, pay as you go)"),
    "lambda": (60.0, 60.0, "per minute (assumed from the provider's on-demand terms)"),
    "nebius": (60.0, 60.0, "per minute (assumed)"),
    "vast": (1.0, 60.0, "per second (marketplace; assumed 60 s minimum)"),
    "paperspace": (3600.0, 3600.0, "per hour (assumed)"),
    "fluidstack": (3600.0, 3600.0, "per hour (assumed)"),
    "onprem": (1.0, 0.0, "owned: amortized by the hour used"),
}
DEFAULT_BILLING = (3600.0, 3600.0, "per hour assumed (provider's increment not recorded)")

# Own bundled `gpuplan bench pipeline` runs (benchmarks/results/input-pipeline-*: 362-491
# images/s per core on 2 EPYC vCPUs, Pillow) put the rate near 450; used only when no
# results are given at all.
DEFAULT_IMAGES_PER_S_PER_VCPU = 450.0

OVERHEAD_COLUMNS: tuple[str, ...] = (
    "setup_hours",
    "staging_hours",
    *CHECKPOINT_COLUMNS,
    "billing_increment_s",
    "billing_minimum_s",
    "billing_basis",
)


def _provider_terms(options: pd.DataFrame) -> np.ndarray:
    """Per option, (provider key, provision minutes, billing): on-prem options are "onprem";
    looked up once per distinct (provider, kind)."""

    def terms(provider: object, kind: object) -> tuple[str, float, tuple[float, float, str]]:
        key = "onprem" if str(kind) == "on-prem" else str(provider)
        minutes = PROVISION_MINUTES.get(key, DEFAULT_PROVISION_MINUTES)
        return key, minutes, BILLING.get(key, DEFAULT_BILLING)

    return per_distinct(terms, options["provider"], options["kind"])


def job_overheads(
    options: pd.DataFrame,
    dataset_gb: float,
    checkpoint: CheckpointState,
    compute_hours: np.ndarray,
    settings: JobOverheads,
) -> pd.DataFrame:
    """OVERHEAD_COLUMNS per option (provider, kind, network_gbps, gpu_count, instances),
    aligned to its index."""
    found = _provider_terms(options)
    onprem = np.array([key == "onprem" for key, _, _ in found], dtype=bool)
    network = options["network_gbps"].astype(float).to_numpy()
    if settings.startup_minutes is not None:
        setup_min = np.full(len(options), settings.startup_minutes)
    else:
        provision = np.array([minutes for _, minutes, _ in found], dtype=float)
        pull = ENV_START_MINUTES + IMAGE_GB * 8.0 / np.minimum(network, REGISTRY_GBPS) / 60.0
        setup_min = provision + np.where(onprem, ONPREM_ENV_MINUTES, pull)
    if settings.staging_gbps is not None:
        rate = np.full(len(options), settings.staging_gbps)
    else:
        rate = np.where(onprem, 0.0, np.minimum(network, STAGING_CAP_GBPS))
    with np.errstate(divide="ignore", invalid="ignore"):
        staging = np.where(rate > 0, dataset_gb * 8.0 / rate / 3600.0, 0.0)
    saves = checkpoint_times(options, checkpoint, compute_hours, settings.checkpoint_every_hours)
    billing = [bill for _, _, bill in found]
    return pd.DataFrame(
        {
            "setup_hours": setup_min / 60.0,
            "staging_hours": staging,
            **{column: saves[column].to_numpy() for column in CHECKPOINT_COLUMNS},
            "billing_increment_s": [b[0] for b in billing],
            "billing_minimum_s": [b[1] for b in billing],
            "billing_basis": [b[2] for b in billing],
        },
        index=options.index,
    )


def billed_hours(
    wall_hours: np.ndarray, increment_s: np.ndarray, minimum_s: np.ndarray
) -> np.ndarray:
    """Hours billed: wall time rounded up to the increment, at least the minimum."""
    seconds = np.asarray(wall_hours, dtype=float) * 3600.0
    increment = np.asarray(increment_s, dtype=float)
    rounded = np.ceil(seconds / increment - 1e-9) * increment
    return np.maximum(rounded, np.asarray(minimum_s, dtype=float)) / 3600.0


def images_per_s_per_vcpu(results: pd.DataFrame) -> tuple[float, str]:
    """(images/s per vCPU, where it came from): own pipeline results' median, else default."""
    if "samples_per_s_per_core" in results.columns and "workload" in results.columns:
        rows = results.loc[results["workload"] == PIPELINE_WORKLOAD, "samples_per_s_per_core"]
        rows = pd.to_numeric(rows, errors="coerce").dropna()
        if len(rows):
            return float(rows.median()), f"median of {len(rows)} own `bench pipeline` runs"
    return DEFAULT_IMAGES_PER_S_PER_VCPU, "assumed (no `bench pipeline` results)"


def loader_ceiling(options: pd.DataFrame, per_vcpu: float) -> np.ndarray:
    """Samples/s the options' CPUs can decode: instances × (vCPUs − GPUs) × per-vCPU rate;
    NaN where the vCPUs are unknown."""
    vcpus = options["vcpus"].astype(float).to_numpy() if "vcpus" in options else np.nan
    gpus = options["gpu_count"].astype(float).to_numpy()
    free = np.maximum(np.asarray(vcpus, float) - np.ceil(gpus), 1.0)
    return options["instances"].astype(float).to_numpy() * free * per_vcpu
