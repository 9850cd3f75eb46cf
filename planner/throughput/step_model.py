"""Step time of data-parallel training: compute + exposed communication + fixed overhead.

    t_step(N) = (t_fixed + b(N) / x_sat)(1 + σ z(N)) + exposed_comm(N)   (seconds per step)
    per-GPU throughput p(N) = b(N) / t_step(N)
    b(N) = min(b_mem, B_cap / N)                                   (samples per GPU per step)

- b_mem: the per-GPU batch the anchor figure was measured at (benchmarks such as Lambda's
  use the largest batch that fits the GPU's memory); B_cap: the workload's global batch
  cap (the largest batch its recipe keeps accuracy at; planner.workloads.catalog). Past
  N = B_cap / b_mem the per-GPU batch shrinks.
- t_fixed: a per-step floor that does not shrink with the batch: each of the step's
  kernels costs its host-side dispatch and launch plus a minimum run time even on a tiny
  batch, plus the optimizer's pass over the parameters at memory bandwidth (the
  roofline's memory-bound floor, Williams et al. 2009). The per-kernel floor is fitted
  to measured batch sweeps (KERNEL_FLOOR_S; planner.throughput.step_calibration). Hence
  the saturating curve of per-GPU throughput against per-GPU batch,
  x(b) = b / (t_fixed + b / x_sat) = x_sat · b / (b + b_half), b_half = t_fixed · x_sat.
  x_sat comes from the anchor figure: b_mem / x1 = t_fixed + b_mem / x_sat.
- Communication: hierarchical ring all-reduce of the gradients (fp32 under AMP): reduce-
  scatter inside the node, all-reduce of each GPU's 1/g shard across nodes over its own
  share of the node's network (one rail per GPU), all-gather inside the node. Bandwidth
  term 2(k−1)/k · bytes / bus per level (Patarasuk & Yuan 2009; Thakur et al. 2005); the
  levels are pipelined chunk by chunk (NCCL rings span the nodes), so the slower level
  sets the time. Latency: one all-reduce call's α inside the node plus 2·log2(nodes)
  tree levels across nodes (NCCL's double binary trees: Sanders, Speck & Träff 2009),
  both fitted to measured size sweeps (ALLREDUCE_CALL_S, ALLREDUCE_LEVEL_S;
  planner.throughput.step_calibration), paid once per gradient bucket (DDP buckets of
  25 MB: Li et al. 2020, "PyTorch Distributed"; Horovod's tensor fusion: Sergeev & Del
  Balso 2018).
- Synchronisation: a synchronous step waits for the slowest of N GPUs. With per-GPU
  step times spread by a relative σ the expected slowest is (1 + σ·z(N)), z(N) the
  expected maximum of N standard normals (Blom 1958; the straggler effect of synchronous
  SGD: Chen et al. 2016; Dean & Barroso 2013). σ = STRAGGLER_SIGMA, fitted to 1- vs
  8-GPU runs at the same per-GPU batch (planner.throughput.step_calibration).
- Overlap: DDP all-reduces a bucket as soon as its gradients are ready, so communication
  hides behind the rest of the backward pass (2/3 of the compute: backward ≈ 2 × forward,
  Kaplan et al. 2020), except the last bucket, which waits for the end of backward:
  exposed = max(T_comm − t_backward, T_comm / buckets) (Li et al. 2020, section 3.2).
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from planner.settings import KERNEL_FLOOR_S  # the fitted per-kernel floor (its sources there)

# Optimizer pass: SGD-momentum / Adam read and write fp32 weights, gradients and state:
# ~16 bytes per parameter per step (Rajbhandari et al. 2020 count 16 B of state for Adam).
OPTIMIZER_BYTES_PER_PARAM = 16.0
BUCKET_BYTES = 25e6  # torch DDP bucket_cap_mb default (Li et al. 2020)
BACKWARD_SHARE = 2.0 / 3.0  # backward ≈ 2 × forward (Kaplan et al. 2020, section 2.1)
# α of the α-β model fitted to all-reduce size sweeps (reference/calibration/
# collectives.csv, ml-engineering network/README.md @744d01e1): one call on 8 ranks in
# a node, median of the H200 and B200 sweeps, 46 µs; per tree level across nodes, from
# the 4-node B200 (EFA v4) sweep, 97 µs (step_calibration.fit_allreduce_latency).
ALLREDUCE_CALL_S = 46e-6
ALLREDUCE_LEVEL_S = 97e-6
# Relative spread of per-GPU step times: median over FlagPerf's 1- vs 8-GPU DGX
# A100-40GB pairs at the same per-GPU batch (19 models) of (x_1 / x_8 − 1) / z(8): 0.050
# (step_calibration.fit_straggler_sigma).
STRAGGLER_SIGMA = 0.050
# 10% and 90% quantiles of log(predicted / measured) per-GPU efficiency from 8 to 16 GPUs
# (two nodes) on FlagPerf's DGX A100 runs, each model predicted with the floor and σ
# fitted without it (tools/evaluate_cnn.py (i), 17 models; normal fit, mean ±
# 1.2816 sd of 0.045 ± 0.056), clipped so the band always holds the prediction:
# low = x·exp(−q90), high = x·exp(−q10).
STEP_BEYOND_LOG_ERROR = (-0.03, 0.12)
# The fits' sources, for the words beside a figure (planner.render.explain).
FLOOR_SOURCE = "FlagPerf A100 and own H200 batch sweeps"
ALLREDUCE_SOURCE = "nccl-tests-style H200/B200 sweeps"


@dataclass(frozen=True)
class StepInputs:
    """Arrays (one entry per evaluated row) the step model needs.

    x1: 1-GPU throughput at b_mem (samples/s); b_mem: per-GPU batch of that figure;
    global_batch: cap on the global batch (inf = none); kernels: kernels per step;
    params: parameters; grad_bytes: gradient bytes all-reduced per step; mem_bw_gbs: the
    GPU's memory bandwidth (GB/s); bus_intra_gbs: ring bus bandwidth inside a node per GPU
    (GB/s); net_gbs_per_gpu: network share of one GPU across nodes (GB/s); per_node: GPUs
    per node; kernel_floor_s, straggler_sigma: KERNEL_FLOOR_S and STRAGGLER_SIGMA unless a
    fit is tested.
    """

    x1: np.ndarray
    b_mem: np.ndarray
    global_batch: np.ndarray
    kernels: np.ndarray
    params: np.ndarray
    grad_bytes: np.ndarray
    mem_bw_gbs: np.ndarray
    bus_intra_gbs: np.ndarray
    net_gbs_per_gpu: np.ndarray
    per_node: np.ndarray
    kernel_floor_s: float = KERNEL_FLOOR_S
    straggler_sigma: float = STRAGGLER_SIGMA


def fixed_step_seconds(
    kernels: Any, params: Any, mem_bw_gbs: Any, kernel_floor_s: float = KERNEL_FLOOR_S
) -> np.ndarray:
    """Per-step floor t_fixed = kernels × kernel_floor_s + 16 B × params / memory bandwidth."""
    kernels = np.asarray(kernels, dtype=float)
    traffic = OPTIMIZER_BYTES_PER_PARAM * np.asarray(params, dtype=float)
    return kernels * kernel_floor_s + traffic / (np.asarray(mem_bw_gbs, dtype=float) * 1e9)


def expected_max_normal(n: Any) -> np.ndarray:
    """z(N): expected maximum of N standard normals, Blom's (1958) approximation
    Φ⁻¹((N − 0.375) / (N + 0.25)); 0 at N ≤ 1."""
    n = np.maximum(np.asarray(n, dtype=float), 1.0)
    # Φ⁻¹ from the standard library (Wichura's AS241, within 1e-15 of scipy's ndtri): a plan
    # need not import scipy; GPU counts repeat, so each distinct one is inverted once.
    levels, where = np.unique((n - 0.375) / (n + 0.25), return_inverse=True)
    inverse_cdf = NormalDist().inv_cdf
    z = np.array([inverse_cdf(p) if 0.0 < p < 1.0 else np.nan for p in levels.tolist()])
    return np.where(n > 1, z[where].reshape(n.shape), 0.0)


def per_gpu_batch(n: Any, b_mem: Any, global_batch: Any) -> np.ndarray:
    """b(N) = min(b_mem, B_cap / N) samples per GPU per step."""
    n = np.maximum(np.asarray(n, dtype=float), 1.0)
    return np.minimum(np.asarray(b_mem, dtype=float), np.asarray(global_batch, dtype=float) / n)


def hierarchical_allreduce_seconds(
    n: Any,
    per_node: Any,
    message_bytes: Any,
    bus_intra_gbs: Any,
    net_gbs_per_gpu: Any,
    bucket_bytes: float = BUCKET_BYTES,
) -> np.ndarray:
    """Time of one gradient all-reduce on N GPUs in nodes of g (see module docstring).

    Inside a node (N ≤ g): ring, 2(N−1)/N · S / B_intra + buckets · α_call.
    Across nodes: max(2(g−1)/g · S / B_intra, 2(n−1)/n · (S/g) / B_rail) (n = N/g nodes,
    each GPU's shard over its rail; the levels pipelined) + buckets · (α_call +
    2 log2(n) α_level).
    """
    n = np.maximum(np.asarray(n, dtype=float), 1.0)
    g = np.maximum(np.minimum(np.asarray(per_node, dtype=float), n), 1.0)
    size = np.asarray(message_bytes, dtype=float)
    nodes = np.maximum(n / g, 1.0)
    buckets = np.maximum(np.ceil(size / bucket_bytes), 1.0)
    intra = 2.0 * (g - 1.0) / g * size / (np.asarray(bus_intra_gbs, dtype=float) * 1e9)
    inter = 2.0 * (nodes - 1.0) / nodes * (size / g) / (np.asarray(net_gbs_per_gpu, float) * 1e9)
    latency = buckets * (
        ALLREDUCE_CALL_S
        + np.where(nodes > 1, 2.0 * np.log2(np.maximum(nodes, 1.0)) * ALLREDUCE_LEVEL_S, 0.0)
    )
    return np.where(n > 1, np.maximum(intra, inter) + latency, 0.0)


def exposed_seconds(comm_s: Any, backward_s: Any, message_bytes: Any) -> np.ndarray:
    """Communication not hidden by DDP: max(T − t_backward, T / buckets), T ≥ 0."""
    comm_s = np.asarray(comm_s, dtype=float)
    buckets = np.maximum(np.ceil(np.asarray(message_bytes, float) / BUCKET_BYTES), 1.0)
    return np.maximum(comm_s - np.asarray(backward_s, dtype=float), comm_s / buckets)


def step_breakdown(inputs: StepInputs, n: Any) -> dict[str, np.ndarray]:
    """Seconds per step at N GPUs: compute_s, comm_s (exposed), comm_total_s (before the
    overlap), overhead_s (the fixed floor plus sync_s, the wait for the slowest GPU),
    step_s, plus per_gpu_batch, batch_rate (the per-GPU rate at that batch over the rate
    at b_mem, communication and synchronisation aside: the small-batch penalty),
    per_gpu_throughput (samples/s per GPU) and throughput (all GPUs)."""
    n = np.maximum(np.asarray(n, dtype=float), 1.0)
    fixed = fixed_step_seconds(
        inputs.kernels, inputs.params, inputs.mem_bw_gbs, inputs.kernel_floor_s
    )
    anchor_step = inputs.b_mem / inputs.x1
    # x_sat from the anchor; a figure faster than the floor allows keeps a small share.
    per_sample = np.maximum(anchor_step - fixed, 0.1 * anchor_step) / inputs.b_mem
    fixed = np.minimum(fixed, 0.9 * anchor_step)
    b = per_gpu_batch(n, inputs.b_mem, inputs.global_batch)
    compute = b * per_sample
    total_comm = hierarchical_allreduce_seconds(
        n, inputs.per_node, inputs.grad_bytes, inputs.bus_intra_gbs, inputs.net_gbs_per_gpu
    )
    comm = exposed_seconds(total_comm, BACKWARD_SHARE * (compute + fixed), inputs.grad_bytes)
    sync = (compute + fixed) * inputs.straggler_sigma * expected_max_normal(n)
    step = compute + fixed + sync + comm
    per_gpu = b / step
    rate_at_limit = inputs.b_mem / (fixed + inputs.b_mem * per_sample)
    return {
        "per_gpu_batch": b,
        "batch_rate": (b / (fixed + compute)) / rate_at_limit,
        "compute_s": compute,
        "comm_s": comm,
        "comm_total_s": total_comm,
        "overhead_s": fixed + sync,
        "sync_s": sync,
        "step_s": step,
        "per_gpu_throughput": per_gpu,
        "throughput": per_gpu * n,
    }
