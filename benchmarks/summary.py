"""Turn per-step times into throughput statistics and a BenchmarkResult (no torch).

Throughput is global (all devices): samples per step / step time. The reported figure
is the median step's; p10/p90 are the throughput of the p90/p10 step times (the slow
tail is p10); the coefficient of variation is std/mean of per-step throughput.
Achieved TFLOP/s is per device, from the analytic model FLOPs (torchtitan's
convention), and MFU = achieved / peak is left out when no peak is known.
"""

from __future__ import annotations

import datetime as dt
import secrets
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from benchmarks.power import NOT_MEASURED, PowerReading
from benchmarks.results import BenchmarkResult

# Units of throughput per workload: LLMs in tokens/s, the others in samples/s.
THROUGHPUT_UNITS = {"resnet50": "images/s", "bert": "sequences/s", "gpt": "tokens/s"}


@dataclass(frozen=True)
class StepStats:
    """Percentiles of step time and the matching throughput in samples/s."""

    step_time_s_p10: float
    step_time_s_p50: float
    step_time_s_p90: float
    samples_per_s: float
    samples_per_s_p10: float
    samples_per_s_p90: float
    throughput_cv: float
    wall_samples_per_s: float


def step_stats(step_times_s: list[float], samples_per_step: float, wall_s: float) -> StepStats:
    """Statistics of one run's timed steps (`wall_s`: the whole timed window)."""
    times = np.asarray(step_times_s, dtype=float)
    if times.size == 0 or np.any(times <= 0):
        raise ValueError("step times must be a non-empty list of positive seconds")
    p10, p50, p90 = np.percentile(times, [10, 50, 90])
    per_step = samples_per_step / times
    cv = float(per_step.std() / per_step.mean()) if times.size > 1 else 0.0
    return StepStats(
        step_time_s_p10=float(p10),
        step_time_s_p50=float(p50),
        step_time_s_p90=float(p90),
        samples_per_s=float(samples_per_step / p50),
        samples_per_s_p10=float(samples_per_step / p90),
        samples_per_s_p90=float(samples_per_step / p10),
        throughput_cv=cv,
        wall_samples_per_s=float(samples_per_step * times.size / wall_s),
    )


def new_run_id(workload: str, size: str, precision: str, device: str, world_size: int) -> str:
    """A unique, file-name-safe id: gpt-tiny-fp32-cpux1-20261130T050000Z-3fa2c1."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    label = f"{workload}-{size}-{precision}-{device}x{world_size}-{stamp}-{secrets.token_hex(3)}"
    return label.replace("/", "_").replace(" ", "_")


def utc_now() -> str:
    """The current time as an ISO 8601 UTC timestamp (seconds)."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


@dataclass
class Measurement:
    """What a run measured, before it becomes a result (global over all processes)."""

    workload: str
    model_size: str
    precision: str
    device: str
    device_name: str
    world_size: int
    batch_size_per_device: int
    step_times_s: list[float]
    wall_s: float
    flops_per_sample: float
    throughput_unit: str
    tokens_per_sample: int | None
    peak_memory_gib: float | None
    peak_memory_source: str
    power: PowerReading = NOT_MEASURED  # summed over devices (the clock: their mean)
    precision_label: str = ""
    interconnect: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    env: dict[str, Any] = field(default_factory=dict)

    @property
    def stats(self) -> StepStats:
        """Throughput statistics of the timed steps."""
        return step_stats(
            self.step_times_s, self.batch_size_per_device * self.world_size, self.wall_s
        )


def make_result(
    m: Measurement,
    run_id: str,
    started_at: str,
    peak_tflops: float | None = None,
    notes: str = "",
) -> BenchmarkResult:
    """The BenchmarkResult of a measurement (`peak_tflops`: per-device peak, for MFU)."""
    s = m.stats
    scale = float(m.tokens_per_sample) if m.tokens_per_sample else 1.0
    achieved = m.flops_per_sample * s.samples_per_s / m.world_size / 1e12
    mfu = achieved / peak_tflops if peak_tflops else None
    # A CPU run's rate per core used (its torch threads in every process): what a plan's
    # CPU baseline scales to other CPUs' cores (planner.throughput.cpu).
    threads = m.env.get("torch_threads") if m.device == "cpu" and m.env else None
    per_core = s.samples_per_s / (m.world_size * threads) if threads else None
    if not peak_tflops:
        notes = (notes + "; " if notes else "") + "MFU not computed: no peak TFLOP/s given"
    return BenchmarkResult(
        id=run_id,
        source="measured",
        workload=m.workload,
        model_size=m.model_size,
        precision=m.precision,
        precision_label=m.precision_label,
        device=m.device,
        device_name=m.device_name,
        gpu_name=None,
        world_size=m.world_size,
        interconnect=m.interconnect,
        batch_size_per_device=m.batch_size_per_device,
        throughput=s.samples_per_s * scale,
        throughput_unit=m.throughput_unit,
        throughput_p10=s.samples_per_s_p10 * scale,
        throughput_p90=s.samples_per_s_p90 * scale,
        throughput_cv=s.throughput_cv,
        samples_per_s=s.samples_per_s,
        samples_per_s_per_core=per_core,
        tokens_per_s=s.samples_per_s * scale if m.tokens_per_sample else None,
        step_time_s_p10=s.step_time_s_p10,
        step_time_s_p50=s.step_time_s_p50,
        step_time_s_p90=s.step_time_s_p90,
        step_times_s=[round(t, 9) for t in m.step_times_s],
        flops_per_sample=m.flops_per_sample,
        achieved_tflops=achieved,
        peak_tflops=peak_tflops,
        mfu=mfu,
        peak_memory_gib=m.peak_memory_gib,
        peak_memory_source=m.peak_memory_source,
        **m.power.result_fields(),
        env=m.env,
        config={**m.config, "wall_s": m.wall_s, "wall_samples_per_s": s.wall_samples_per_s},
        started_at=started_at,
        notes=notes,
    )
