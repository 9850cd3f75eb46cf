"""Own results checked against their GPU's datasheet: no measured rate above the peak.

A result file can claim any figure; benchmarks.results bounds what no device reaches at
all (world size, MFU 1, 20,000 TFLOP/s). Here each figure is held to its own GPU's spec
row (planner.machines.specs, dense peaks from vendor datasheets): a model's achieved
TFLOP/s per device, an operator benchmark's GEMM or attention TFLOP/s at its precision,
and its copy or add GB/s against the memory bandwidth. A measurement can come close to a
peak, never beyond it; PEAK_MARGIN leaves room for clocks boosted above the datasheet's
and for rounding. A result whose GPU has no spec row (a CPU run, an unknown device) is
not checked here.

`physics_problem(result)` is the message naming the field, the figure and the bound, or
None; `split_physical(results)` keeps the results that pass and words the others, so a
results folder with one impossible file still plans without it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from benchmarks.op_figures import MEMORY_OPS
from benchmarks.results import BenchmarkResult
from planner.machines.specs import load_specs
from pricing.gpus import canonical_gpu, gpu_from_device_name

PEAK_MARGIN = 1.1  # a figure may exceed its datasheet peak by 10% (boost clocks), not more
# Spec columns a precision's figure may reach: fp32 training may run its convolutions in
# TF32 (cuDNN's default), fp16 GEMMs may accumulate in fp16 (a faster peak on some chips).
PEAK_COLUMNS = {
    "fp32": ("fp32_tflops", "tf32_tflops"),
    "tf32": ("tf32_tflops",),
    "fp16": ("fp16_tflops", "fp16_fp16acc_tflops", "bf16_tflops"),
    "bf16": ("bf16_tflops", "fp16_tflops"),
    "fp8": ("fp8_tflops",),
}
OP_PEAK_COLUMNS = PEAK_COLUMNS | {"fp32": ("fp32_tflops",)}  # ops time fp32 with TF32 off


def _gpu_row(result: BenchmarkResult) -> dict[str, float] | None:
    if result.device == "cpu":
        return None
    name = result.gpu_name or gpu_from_device_name(result.device_name)
    if not name:
        return None
    try:
        name = canonical_gpu(name)
    except ValueError:
        return None
    specs = load_specs()
    if name not in specs.index:
        return None
    return {str(k): v for k, v in specs.loc[name].to_dict().items()}


def _bound(row: dict[str, float], columns: Iterable[str]) -> float | None:
    values = [float(row.get(c, math.nan)) for c in columns]
    finite = [v for v in values if math.isfinite(v) and v > 0]
    return max(finite) * PEAK_MARGIN if finite else None


def physics_problem(result: BenchmarkResult) -> str | None:
    """Why `result` cannot have been measured on its GPU (the field, the figure and the
    bound: PEAK_MARGIN x the datasheet peak), or None when every figure is within it."""
    row = _gpu_row(result)
    if row is None:
        return None
    gpu = row["gpu_name"]
    if result.achieved_tflops is not None and result.precision is not None:
        bound = _bound(row, PEAK_COLUMNS[result.precision])
        if bound is not None and result.achieved_tflops > bound:
            return (
                f"field 'achieved_tflops': {result.achieved_tflops:,.4g} TFLOP/s per device is "
                f"above {PEAK_MARGIN:g} x the {gpu} {result.precision} dense peak "
                f"({bound:,.4g}); no run measures that"
            )
    for i, figure in enumerate(result.op_figures or []):
        if figure.op in MEMORY_OPS:
            bound = _bound(row, ("memory_bw_gbs",))
            value, unit, what = figure.gb_per_s, "GB/s", "memory bandwidth"
            field = "gb_per_s"
        else:
            bound = _bound(row, OP_PEAK_COLUMNS[figure.precision])
            value, unit, what = figure.tflops, "TFLOP/s", f"{figure.precision} dense peak"
            field = "tflops"
        if bound is not None and value is not None and value > bound:
            return (
                f"field 'op_figures.{i}.{field}': {figure.op} at {value:,.4g} {unit} is above "
                f"{PEAK_MARGIN:g} x the {gpu} {what} ({bound:,.4g}); no run measures that"
            )
    return None


def split_physical(
    results: Iterable[BenchmarkResult], where: str = ""
) -> tuple[list[BenchmarkResult], list[str]]:
    """The results within their GPU's peaks, and one message per result left out (its id,
    `where` it was read from when given, and physics_problem's words)."""
    kept: list[BenchmarkResult] = []
    problems: list[str] = []
    for result in results:
        problem = physics_problem(result)
        if problem is None:
            kept.append(result)
        else:
            place = f" in {where}" if where else ""
            problems.append(f"result {result.id!r}{place}: {problem}; left out")
    return kept, problems
