"""Measured operator rates for an operator-level step model: GEMMs, attention, memory.

The operator benchmark (`gpuplan bench run --workload ops`, benchmarks.ops) times GEMMs
over a grid of (m, n, k) at each precision the GPU has, causal attention forward +
backward over head dims and sequence lengths, and memory copies; its result carries the
table as benchmarks.op_figures.OpFigure rows, which benchmarks.results.results_frame puts
in the `op_figures` column of planner.throughput.own_and_published_results()' table.

Here one run answers for a GPU: own measured runs before published ones, the full grid
before a tiny one, the newest first; the first that has figures of the op at the
precision asked. Nothing is mixed across runs. Shapes not measured take the nearest
measured shape in log space (no interpolation: efficiency steps with tile and wave
quantization, which a smooth fit would blur); the distance says how far that was.

Units: TFLOP/s (10^12 FLOP/s, FLOPs counted as benchmarks.op_figures does: 2 m n k per
GEMM, FlashAttention-2's count for attention), GB/s (10^9 B/s). Efficiency = measured
TFLOP/s / the spec table's dense peak at the precision (planner.machines.specs: fp32 is the
CUDA-core peak, tf32/fp16/bf16 dense tensor-core peaks, fp8 the fp8_tflops column), the
definition planner.llm.mfu uses for MFU (Chowdhery et al. 2022, "PaLM", app. B).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from benchmarks.op_figures import OpFigure
from benchmarks.workload_names import OP_FIGURES_COLUMN, OP_WORKLOAD
from planner.codes import is_published
from planner.machines.specs import load_specs
from pricing.gpus import UnknownGPUError, canonical_gpu

PEAK_COLUMNS = {
    "fp32": "fp32_tflops", "tf32": "tf32_tflops", "fp16": "fp16_tflops",
    "bf16": "bf16_tflops", "fp8": "fp8_tflops",
}  # fmt: skip
SIZE_RANK = {"full": 0}  # other sizes (tiny) after


def dense_peak_tflops(gpu_name: str, precision: str) -> float | None:
    """The spec table's dense peak TFLOP/s of a GPU at a precision; None when the GPU has
    no spec row or the chip lacks the precision."""
    column = PEAK_COLUMNS[_checked_precision(precision)]
    specs = load_specs()
    name = _canonical(gpu_name)
    if name not in specs.index:
        return None
    value = float(specs.at[name, column])
    return value if math.isfinite(value) and value > 0 else None


@dataclass(frozen=True)
class GemmPoint:
    """The measured GEMM nearest a shape: its m, n, k, TFLOP/s, efficiency (None without a
    spec peak) and log2_distance, the Euclidean distance in (log2 m, log2 n, log2 k) from
    the shape asked (0: measured exactly; 1: one dimension off by 2x)."""

    m: int
    n: int
    k: int
    tflops: float
    efficiency: float | None
    log2_distance: float


@dataclass(frozen=True, eq=False)
class GemmTable:
    """One run's GEMM figures on one GPU at one precision.

    shapes: (m, n, k) per figure, tflops: the median rate of each (same order);
    peak_tflops: the spec table's dense peak (None when unknown); run_id and source
    (measured | published) name the run.
    """

    gpu_name: str
    precision: str
    run_id: str
    source: str
    shapes: tuple[tuple[int, int, int], ...]
    tflops: tuple[float, ...]
    peak_tflops: float | None

    @cached_property
    def _log_shapes(self) -> np.ndarray:
        return np.log2(np.asarray(self.shapes, dtype=float))

    def nearest(self, m: int, n: int, k: int) -> GemmPoint:
        """The measured shape nearest (m, n, k) in log space (ties: the first measured)."""
        if min(m, n, k) < 1:
            raise ValueError(f"GEMM dimensions must be >= 1 (got m {m}, n {n}, k {k})")
        distances = np.linalg.norm(self._log_shapes - np.log2([m, n, k]), axis=1)
        i = int(np.argmin(distances))
        rate = self.tflops[i]
        efficiency = rate / self.peak_tflops if self.peak_tflops else None
        return GemmPoint(*self.shapes[i], rate, efficiency, float(distances[i]))

    def tflops_at(self, m: int, n: int, k: int) -> float:
        """Measured TFLOP/s of the nearest shape."""
        return self.nearest(m, n, k).tflops

    def efficiency_at(self, m: int, n: int, k: int) -> float | None:
        """Measured TFLOP/s of the nearest shape over the dense peak (None without one)."""
        return self.nearest(m, n, k).efficiency

    def frame(self) -> pd.DataFrame:
        """The table: m, n, k, tflops, peak_tflops, efficiency (NaN without a peak)."""
        table = pd.DataFrame(list(self.shapes), columns=["m", "n", "k"])
        table["tflops"] = list(self.tflops)
        table["peak_tflops"] = self.peak_tflops if self.peak_tflops else math.nan
        table["efficiency"] = table["tflops"] / table["peak_tflops"]
        return table


@dataclass(frozen=True)
class AttentionPoint:
    """The measured causal attention (forward + backward) nearest a head dim and sequence
    length: nearest head dim first, then nearest sequence length (both in log2), with
    its TFLOP/s, efficiency (None without a spec peak), the SDPA kernel and the run."""

    head_dim: int
    seq_len: int
    tflops: float
    efficiency: float | None
    backend: str
    run_id: str


def measured_gemm_tflops(results: pd.DataFrame, gpu_name: str, precision: str) -> GemmTable | None:
    """The measured GEMM table of a GPU at a precision (fp32, tf32, fp16, bf16, fp8), or
    None when no op result of that GPU has GEMMs at that precision.

    `results`: planner.throughput.own_and_published_results()' table (or
    benchmarks.results.results_frame()'s); the run is chosen as the module says.
    """
    found = _figures(results, gpu_name, precision, "gemm")
    if found is None:
        return None
    name, run_id, source, rows = found
    return GemmTable(
        gpu_name=name,
        precision=precision,
        run_id=run_id,
        source=source,
        shapes=tuple((int(f.m or 0), int(f.n or 0), int(f.k or 0)) for f in rows),
        tflops=tuple(float(f.tflops or 0.0) for f in rows),
        peak_tflops=dense_peak_tflops(name, precision),
    )


def measured_attention(
    results: pd.DataFrame, gpu_name: str, precision: str, head_dim: int, seq_len: int
) -> AttentionPoint | None:
    """The measured causal attention nearest (head_dim, seq_len) on a GPU at a precision,
    or None when no op result of that GPU has attention at that precision."""
    if head_dim < 1 or seq_len < 1:
        raise ValueError(f"head_dim and seq_len must be >= 1 (got {head_dim}, {seq_len})")
    found = _figures(results, gpu_name, precision, "attention")
    if found is None:
        return None
    name, run_id, _, rows = found
    dims = sorted({int(f.head_dim or 0) for f in rows})
    dim = min(dims, key=lambda d: abs(math.log2(d / head_dim)))
    same = [f for f in rows if f.head_dim == dim]
    best = min(same, key=lambda f: abs(math.log2(int(f.seq_len or 0) / seq_len)))
    rate = float(best.tflops or 0.0)
    peak = dense_peak_tflops(name, precision)
    return AttentionPoint(
        dim, int(best.seq_len or 0), rate, rate / peak if peak else None, best.backend, run_id
    )


def measured_attention_tflops(
    results: pd.DataFrame, gpu_name: str, precision: str, head_dim: int, seq_len: int
) -> float | None:
    """Measured TFLOP/s of causal attention forward + backward (FlashAttention-2's FLOP
    count) nearest (head_dim, seq_len) on a GPU at a precision; None when not measured."""
    point = measured_attention(results, gpu_name, precision, head_dim, seq_len)
    return None if point is None else point.tflops


def measured_memory_gbps(results: pd.DataFrame, gpu_name: str) -> float | None:
    """Measured memory bandwidth of a GPU in GB/s: the copy figure (bytes read + written
    per second) of its chosen op run; None when none was measured. The spec table's
    memory_bw_gbs is the peak to compare with."""
    found = _figures(results, gpu_name, None, "copy")
    return None if found is None else max(float(f.gb_per_s or 0.0) for f in found[3])


# ---------------------------------------------------------------- choosing the run


def _checked_precision(precision: str) -> str:
    if precision not in PEAK_COLUMNS:
        raise ValueError(f"unknown precision {precision!r}; valid: {', '.join(PEAK_COLUMNS)}")
    return precision


def _canonical(gpu_name: str) -> str:
    try:
        return canonical_gpu(gpu_name)
    except UnknownGPUError:
        return gpu_name


def _figures(
    results: pd.DataFrame, gpu_name: str, precision: str | None, op: str
) -> tuple[str, str, str, list[OpFigure]] | None:
    """(canonical GPU, run id, measured | published, the run's figures of `op` at
    `precision`, None: any) of the first run in the module's order that has any; None
    otherwise."""
    if precision is not None:
        _checked_precision(precision)
    if results.empty or OP_FIGURES_COLUMN not in results.columns:
        return None
    name = _canonical(gpu_name)
    runs = results.loc[
        (results["workload"] == OP_WORKLOAD)
        & (results["gpu_name"] == name)
        & results[OP_FIGURES_COLUMN].notna()
    ]
    if runs.empty:
        return None
    published = is_published(runs["source"])
    source = np.where(published, "published", "measured")
    ordered = runs.assign(
        _source=source,
        _rank=published.astype(int),
        _size=runs["model_size"].map(SIZE_RANK).fillna(len(SIZE_RANK)),
        _when=runs["started_at"].fillna("").astype(str),
    ).sort_values(["_rank", "_size", "_when"], ascending=[True, True, False], kind="stable")
    for _, row in ordered.iterrows():
        rows = [
            f for f in row[OP_FIGURES_COLUMN] if f.op == op and precision in (None, f.precision)
        ]
        if rows:
            return name, str(row["id"]), str(row["_source"]), rows
    return None
