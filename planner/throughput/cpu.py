"""Training throughput of a CPU-only instance for image and BERT workloads: the CPU baseline.

samples/s = cores x r x E(cores) / FLOPs per sample, where

- cores: the instance's physical cores (planner.machines.cpus: vCPUs / 2 on the Intel x86
  families with SMT, vCPUs on Graviton);
- r: the sustained FP32 training rate of one core, FLOP/s. From the user's own CPU
  `bench run` of the workload's benchmark model (same model and size, fp32, with a per-core
  rate recorded): r = flops_per_sample x samples_per_s_per_core / E(run's cores), the
  run's per-core rate taken back to one core. Else the default r = per-core datasheet
  peak x DEFAULT_ACHIEVED_FRACTION (docs/model.md, "CPU baseline", derives it);
- E(n) = 1 / (1 + s (n - 1)): Amdahl's law (Amdahl 1967) with serial fraction
  SERIAL_FRACTION, the share of a step that does not speed up with more cores.

CPU training runs in fp32 whatever precision the plan asks of its GPUs. The band is
central x (1 -/+ error), the error OWN_RUN_ERROR or DEFAULT_ERROR: an assumed error, not a
leave-one-out one (no CPU training figure is held out to measure it against).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from edge.format import percent
from planner.workloads.catalog import Workload

# Own measurement (2026-12, `gpuplan bench run --workload resnet50 --size full --device cpu
# --batch 8`): full ResNet-50 fp32 training, channels-last, oneDNN 3.12 in torch 2.13, on
# one core of an AMD EPYC (Zen 5, family 26: two 512-bit FMA pipes = 64 FP32 FLOPs per
# cycle) reached 87.7 GFLOP/s (3.57 images/s x 24.5 GFLOP); 2 cores reached 99 GFLOP/s
# per core (median step, on a shared machine). The VM reports a 2.6 GHz clock and the
# family boosts to about 3.7 GHz: 87.7 / (64 x 2.6..3.7) = 0.53..0.37 of peak; 0.45 is
# the middle (+-18% from the clock alone).
DEFAULT_ACHIEVED_FRACTION = 0.45
MEASURED_ON = "ResNet-50 fp32 training on 1 core of an AMD EPYC (Zen 5), own run"
# Amdahl serial fraction: assumed (the 2-core run cannot resolve it: its per-core rate was
# no lower than 1 core's). 0.005 puts one 48-core socket at 81% and 192 cores at 51%.
SERIAL_FRACTION = 0.005
# Relative error of the central figure: the clock (+-18%), another CPU family's fraction
# of peak (AVX-512 frequency licence on Intel, 128-bit NEON through oneDNN/ACL on Arm;
# +-30%) and the parallel efficiency beyond 2 cores (+-30%), in quadrature: ~46%.
DEFAULT_ERROR = 0.5
# An own run measures the model and framework; what is left is its CPU against the
# instance's and the cores it is scaled across.
OWN_RUN_ERROR = 0.3
CPU_PRECISION = "fp32"

CPU_THROUGHPUT_COLUMNS: tuple[str, ...] = (
    "throughput", "throughput_low", "throughput_high", "throughput_source",
    "cpu_gflops_per_core", "cpu_parallel_efficiency", "cpu_run_id", "baseline_detail",
)  # fmt: skip


def parallel_efficiency(cores: np.ndarray | float) -> np.ndarray:
    """Amdahl's law: speed-up over one core / cores = 1 / (1 + s (n - 1)), s = SERIAL_FRACTION."""
    n = np.maximum(np.asarray(cores, dtype=float), 1.0)
    return 1.0 / (1.0 + SERIAL_FRACTION * (n - 1.0))


def own_cpu_rate(results: pd.DataFrame, workload: Workload) -> tuple[float, str] | None:
    """(one core's FP32 training rate in GFLOP/s, the run's id) from the user's own CPU runs
    of the workload's benchmark model and size at fp32, or None when there is none.

    A run counts when it records samples_per_s_per_core (gpuplan bench run does on CPU);
    its FLOPs per sample are achieved_tflops x world_size / samples_per_s. Of several, the
    one on the most cores (the least scaled), then the latest.
    """
    needed = ("device", "workload", "model_size", "precision", "samples_per_s_per_core")
    if results.empty or any(c not in results.columns for c in needed):
        return None
    runs = results.loc[
        (results["device"].astype(str) == "cpu")
        & (results["source"].astype(str) == "measured")
        & (results["workload"].astype(str) == workload.model)
        & (results["model_size"].astype(str) == (workload.model_size or ""))
        & (results["precision"].astype(str) == CPU_PRECISION)
    ]
    per_core = pd.to_numeric(runs["samples_per_s_per_core"], errors="coerce")
    per_s = pd.to_numeric(runs["samples_per_s"], errors="coerce")
    achieved = pd.to_numeric(runs["achieved_tflops"], errors="coerce")
    ok = (per_core > 0) & (per_s > 0) & (achieved > 0)
    if not ok.any():
        return None
    runs = runs.loc[ok]
    cores = (per_s / per_core).loc[ok]
    flops = achieved.loc[ok] * 1e12 * runs["world_size"].astype(float) / per_s.loc[ok]
    single = flops * per_core.loc[ok] / parallel_efficiency(cores.to_numpy())
    order = pd.DataFrame({"cores": cores, "at": runs["started_at"].astype(str)})
    best = order.sort_values(["cores", "at"]).index[-1]
    return float(single[best]) / 1e9, str(runs.loc[best, "id"])


def cpu_throughput(
    options: pd.DataFrame, workload: Workload, results: pd.DataFrame
) -> pd.DataFrame:
    """CPU_THROUGHPUT_COLUMNS for CPU options (physical_cores, peak_gflops_per_core,
    cpu_name, cpu_arch: planner.machines.cpus.cpu_family), aligned to their index.

    Throughput is in the workload's benchmark samples per second (its FLOPs per sample /
    benchmark_samples_per_sample), as GPU rows' are. Source "scaled" from an own run,
    "estimated" from the default; baseline_detail says which, with the error.
    """
    cores = options["physical_cores"].to_numpy(float)
    eff = parallel_efficiency(cores)
    own = own_cpu_rate(results, workload)
    if own is not None:
        rate = np.full(len(options), own[0])
        error, source, run_id = OWN_RUN_ERROR, "scaled", own[1]
    else:
        rate = options["peak_gflops_per_core"].to_numpy(float) * DEFAULT_ACHIEVED_FRACTION
        error, source, run_id = DEFAULT_ERROR, "estimated", ""
    flops = workload.flops_per_sample / workload.benchmark_samples_per_sample
    speed = cores * rate * 1e9 * eff / flops
    basis = f"own run {run_id}" if run_id else _default_basis()
    details = [
        f"CPU baseline ({name}, {arch}, {CPU_PRECISION}): {n:g} {'core' if n == 1 else 'cores'}"
        f" x {r:.0f} GFLOP/s per core x {e:.2f} parallel efficiency ({basis}, "
        f"±{percent(error, 0)})"
        for name, arch, n, r, e in zip(
            options["cpu_name"], options["cpu_arch"], cores, rate, eff, strict=True
        )
    ]
    return pd.DataFrame(
        {
            "throughput": speed,
            "throughput_low": speed * (1.0 - error),
            "throughput_high": speed * (1.0 + error),
            "throughput_source": source,
            "cpu_gflops_per_core": rate,
            "cpu_parallel_efficiency": eff,
            "cpu_run_id": run_id,
            "baseline_detail": details,
        },
        index=options.index,
    )


def _default_basis() -> str:
    return (
        f"default: datasheet peak x {DEFAULT_ACHIEVED_FRACTION:g} achieved "
        f"({MEASURED_ON}); Amdahl s = {SERIAL_FRACTION:g}"
    )
