"""Training throughput of a CPU-only instance for image and BERT workloads: the CPU baseline.

samples/s = cores x r x E(cores) / FLOPs per sample, where

- cores: the instance's physical cores (planner.machines.cpus: vCPUs / 2 on the Intel x86
  families with SMT, vCPUs on Graviton);
- r: the sustained FP32 training rate of one core, FLOP/s. From the user's own CPU
  `bench run` of the workload's benchmark model (same model and size, fp32, with a per-core
  rate recorded): r = flops_per_sample x samples_per_s_per_core / E(run's cores), the
  run's per-core rate taken back to one core, for the rows of the run's own CPU only: the
  same instruction set (x86_64 or arm64) and, where the run's CPU name says it, the same
  vendor (Intel, AMD, Arm designs such as Graviton), as cpu_identity reads the names. Every
  other row (and every row without a run) takes the default r = per-core datasheet
  peak x DEFAULT_ACHIEVED_FRACTION (docs/model.md, "CPU baseline", derives it);
- E(n) = 1 / (1 + s (n - 1)): Amdahl's law (Amdahl 1967) with serial fraction
  SERIAL_FRACTION, the share of a step that does not speed up with more cores.

CPU training runs in fp32 whatever precision the plan asks of its GPUs. The band is
central x (1 -/+ error), the error OWN_RUN_ERROR or DEFAULT_ERROR: an assumed error, not a
leave-one-out one (no CPU training figure is held out to measure it against).
"""

from __future__ import annotations

from dataclasses import dataclass

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
    "cpu_gflops_per_core", "cpu_parallel_efficiency", "cpu_run_id", "cpu_run_factor",
    "baseline_detail",
)  # fmt: skip
# Words in a CPU's name that give away its instruction set and vendor (lower case).
_ARM_WORDS = ("aarch64", "arm", "graviton", "neoverse", "ampere", "axion", "cobalt")
_VENDOR_WORDS = {"intel": ("intel", "xeon"), "amd": ("amd", "epyc"), "arm": _ARM_WORDS}


@dataclass(frozen=True)
class OwnCpuRun:
    """An own CPU run's one-core rate (GFLOP/s), id and the CPU it ran on: its name,
    instruction set (x86_64 | arm64 | "" unknown) and vendor (intel | amd | arm | "")."""

    gflops_per_core: float
    run_id: str
    device_name: str
    arch: str
    vendor: str


def cpu_identity(name: str) -> tuple[str, str]:
    """(instruction set, vendor) a CPU name gives away: ("x86_64" | "arm64" | "",
    "intel" | "amd" | "arm" | "")."""
    text = str(name).lower()
    vendor = next((v for v, words in _VENDOR_WORDS.items() if any(w in text for w in words)), "")
    if vendor == "arm":
        return "arm64", vendor
    if vendor or "x86" in text or "amd64" in text:
        return "x86_64", vendor
    return "", ""


def same_cpu(run: OwnCpuRun, arch: pd.Series, names: pd.Series) -> np.ndarray:
    """Rows (their cpu_arch and cpu_name) whose CPU is the run's: the same instruction set,
    and the same vendor where both names say it. A run of unknown CPU speaks for none."""
    if not run.arch:
        return np.zeros(len(arch), dtype=bool)
    vendors = names.astype(str).map(lambda n: cpu_identity(n)[1])
    same_vendor = (vendors == "") | (vendors == run.vendor) | (run.vendor == "")
    return ((arch.astype(str) == run.arch) & same_vendor).to_numpy()


def parallel_efficiency(cores: np.ndarray | float) -> np.ndarray:
    """Amdahl's law: speed-up over one core / cores = 1 / (1 + s (n - 1)), s = SERIAL_FRACTION."""
    n = np.maximum(np.asarray(cores, dtype=float), 1.0)
    return 1.0 / (1.0 + SERIAL_FRACTION * (n - 1.0))


def own_cpu_rate(results: pd.DataFrame, workload: Workload) -> tuple[float, str] | None:
    """(one core's FP32 training rate in GFLOP/s, the run's id): own_cpu_run's."""
    run = own_cpu_run(results, workload)
    return None if run is None else (run.gflops_per_core, run.run_id)


def own_cpu_run(results: pd.DataFrame, workload: Workload) -> OwnCpuRun | None:
    """The user's own CPU run of the workload's benchmark model and size at fp32 (one
    core's FP32 training rate and the CPU it ran on), or None when there is none.

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
    name = runs.loc[best, "device_name"] if "device_name" in runs.columns else ""
    name = "" if pd.isna(name) else str(name)
    arch, vendor = cpu_identity(name)
    return OwnCpuRun(float(single[best]) / 1e9, str(runs.loc[best, "id"]), name, arch, vendor)


def cpu_throughput(
    options: pd.DataFrame, workload: Workload, results: pd.DataFrame
) -> pd.DataFrame:
    """CPU_THROUGHPUT_COLUMNS for CPU options (physical_cores, peak_gflops_per_core,
    cpu_name, cpu_arch: planner.machines.cpus.cpu_family), aligned to their index.

    Throughput is in the workload's benchmark samples per second (its FLOPs per sample /
    benchmark_samples_per_sample), as GPU rows' are. Source "scaled" on the rows of an own
    run's CPU (same_cpu), with cpu_run_factor = its rate / the default's; "estimated" from
    the default elsewhere; baseline_detail says which, with the error.
    """
    cores = options["physical_cores"].to_numpy(float)
    eff = parallel_efficiency(cores)
    default = options["peak_gflops_per_core"].to_numpy(float) * DEFAULT_ACHIEVED_FRACTION
    run = own_cpu_run(results, workload)
    moved = (
        same_cpu(run, options["cpu_arch"], options["cpu_name"])
        if run is not None
        else np.zeros(len(options), dtype=bool)
    )
    own_rate = run.gflops_per_core if run is not None else np.nan
    rate = np.where(moved, own_rate, default)
    error = np.where(moved, OWN_RUN_ERROR, DEFAULT_ERROR)
    flops = workload.flops_per_sample / workload.benchmark_samples_per_sample
    speed = cores * rate * 1e9 * eff / flops
    run_text = f"own run {run.run_id} on {run.device_name or 'its CPU'}" if run else ""
    details = [
        f"CPU baseline ({name}, {arch}, {CPU_PRECISION}): {n:g} {'core' if n == 1 else 'cores'}"
        f" x {r:.0f} GFLOP/s per core x {e:.2f} parallel efficiency "
        f"({run_text if m else _default_basis()}, ±{percent(err, 0)})"
        for name, arch, n, r, e, m, err in zip(
            options["cpu_name"], options["cpu_arch"], cores, rate, eff, moved, error, strict=True
        )
    ]
    return pd.DataFrame(
        {
            "throughput": speed,
            "throughput_low": speed * (1.0 - error),
            "throughput_high": speed * (1.0 + error),
            "throughput_source": np.where(moved, "scaled", "estimated"),
            "cpu_gflops_per_core": rate,
            "cpu_parallel_efficiency": eff,
            "cpu_run_id": np.where(moved, run.run_id if run else "", ""),
            "cpu_run_factor": np.where(moved, rate / default, np.nan),
            "baseline_detail": details,
        },
        index=options.index,
    )


def _default_basis() -> str:
    return (
        f"default: datasheet peak x {DEFAULT_ACHIEVED_FRACTION:g} achieved "
        f"({MEASURED_ON}); Amdahl s = {SERIAL_FRACTION:g}"
    )
