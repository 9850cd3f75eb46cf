"""The figures of the operator benchmark (`gpuplan bench run --workload ops`), no torch.

One OpFigure is one operator at one shape and precision, timed on one device: its
median time per call and the rate that time gives. A result file of workload "ops"
(schema version 4, benchmarks.results) holds them in `op_figures`. The work per call is
counted by the formulas below, the same ones the figures are checked against when a file
is read, so a hand-edited rate that no longer matches its time and shape is refused.

  gemm       C = A B with A (m, k), B (k, n): 2 m n k FLOPs (one multiply and one add per
             term of each dot product, the count peak tensor FLOP/s are quoted in)
  attention  causal scaled-dot-product attention, forward + backward, as FlashAttention-2
             counts it (Dao 2023, "FlashAttention-2", sec. 4.1, and its
             benchmarks/benchmark_flash_attention.py): forward 4 b h s^2 d, halved for
             causal masking; backward 2.5 x forward; so 3.5 x forward in all
  copy, add  memory-bound: bytes read plus bytes written per call (copy 2 x the buffer,
             add c = a + b 3 x), counted as STREAM does (McCalpin 1995, "Memory bandwidth
             and machine balance"); GB/s in 10^9 bytes, as spec sheets quote bandwidth

Units are in the names: ms per call, tflops (10^12 FLOP/s), gb_per_s (10^9 B/s).
"""

from __future__ import annotations

import math
import statistics
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

OP_KINDS = ("gemm", "attention", "copy", "add")
MEMORY_OPS = {"copy": 2, "add": 3}  # buffers' worth of bytes moved per call
OP_PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "fp8")
# A stored rate may differ from flops / ms (or bytes / ms) by rounding, not more.
RATE_TOLERANCE = 0.01
ATTENTION_BACKWARD_FACTOR = 2.5  # backward FLOPs / forward FLOPs (Dao 2023, sec. 4.1)
RERUN = "re-run `gpuplan bench run --workload ops`"
# Bounds no real figure passes, whatever the GPU (the planner also checks each rate
# against its GPU's datasheet peak: planner.io.result_physics). A dimension of 2^24 is a
# 16M x 16M bf16 matrix, 512 TiB, far beyond any device's memory; the fastest dense peak
# is about 4,500 TFLOP/s (B200 fp8) and the fastest memory about 8,000 GB/s (B200 HBM3e).
MAX_DIM = 2**24  # m, n, k, batch, heads, seq_len, head_dim
MAX_BYTES_MOVED = 2**44  # 16 TiB per call
MAX_REPEATS = 10**9
MAX_TFLOPS = 20_000.0
MAX_GB_PER_S = 100_000.0


def gemm_flops(m: int, n: int, k: int) -> float:
    """FLOPs of one (m, k) x (k, n) matrix product: 2 m n k."""
    return 2.0 * m * n * k


def attention_flops(batch: int, heads: int, seq_len: int, head_dim: int, causal: bool) -> float:
    """FLOPs of attention forward + backward as FlashAttention-2 counts them (Dao 2023,
    sec. 4.1): forward 4 b h s^2 d (halved when causal), backward 2.5 x forward."""
    forward = 4.0 * batch * heads * seq_len**2 * head_dim / (2 if causal else 1)
    return forward * (1 + ATTENTION_BACKWARD_FACTOR)


def memory_bytes(op: str, buffer_bytes: int) -> int:
    """Bytes read plus written by one call of a memory op on buffers of `buffer_bytes`."""
    return MEMORY_OPS[op] * buffer_bytes


class OpFigure(BaseModel):
    """One operator at one shape and precision: median ms per call and its rate.

    gemm: m, n, k; attention: batch, heads, seq_len, head_dim, causal (forward +
    backward); copy and add: bytes_moved. `flops` (gemm, attention) or `bytes_moved`
    (copy, add) is the work of one call by the module's formulas; `tflops` = flops / ms
    / 1e9 and `gb_per_s` = bytes_moved / ms / 1e6. ms_p10 / ms_p90: the spread of the
    `repeats` timed calls. backend: the torch call (gemm) or the SDPA kernel that ran.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    op: Literal["gemm", "attention", "copy", "add"]
    precision: Literal["fp32", "tf32", "fp16", "bf16", "fp8"]
    m: int | None = Field(default=None, ge=1, le=MAX_DIM)
    n: int | None = Field(default=None, ge=1, le=MAX_DIM)
    k: int | None = Field(default=None, ge=1, le=MAX_DIM)
    batch: int | None = Field(default=None, ge=1, le=MAX_DIM)
    heads: int | None = Field(default=None, ge=1, le=MAX_DIM)
    seq_len: int | None = Field(default=None, ge=1, le=MAX_DIM)
    head_dim: int | None = Field(default=None, ge=1, le=MAX_DIM)
    causal: bool | None = None
    bytes_moved: int | None = Field(default=None, ge=1, le=MAX_BYTES_MOVED)
    flops: float | None = Field(default=None, gt=0)
    ms: float = Field(gt=0, description="median milliseconds per call")
    ms_p10: float = Field(gt=0)
    ms_p90: float = Field(gt=0)
    repeats: int = Field(ge=1, le=MAX_REPEATS)
    tflops: float | None = Field(default=None, gt=0, le=MAX_TFLOPS)
    gb_per_s: float | None = Field(default=None, gt=0, le=MAX_GB_PER_S)
    backend: str = Field(default="", max_length=100)

    @model_validator(mode="after")
    def _consistent(self) -> OpFigure:
        """Shape fields for the op, the work by the formula, the rate by the time."""
        fields = {
            "gemm": ("m", "n", "k"),
            "attention": ("batch", "heads", "seq_len", "head_dim", "causal"),
        }.get(self.op, ("bytes_moved",))
        missing = [name for name in fields if getattr(self, name) is None]
        if missing:
            raise ValueError(f"a {self.op} figure needs {', '.join(missing)}; {RERUN}")
        if not self.ms_p10 <= self.ms <= self.ms_p90:
            raise ValueError(
                f"ms_p10 {self.ms_p10:g} <= ms {self.ms:g} <= ms_p90 {self.ms_p90:g} does not "
                f"hold; restore the measured times or {RERUN}"
            )
        if self.op in MEMORY_OPS:
            _check_rate("gb_per_s", self.gb_per_s, self.bytes_moved or 0, self.ms / 1e3, 1e9)
            return self
        expected = self.work()
        if self.flops is None or not math.isclose(self.flops, expected, rel_tol=1e-9):
            raise ValueError(
                f"flops {self.flops} is not {expected:g}, what this {self.op} shape does "
                f"({_FORMULAS[self.op]}); restore it or {RERUN}"
            )
        _check_rate("tflops", self.tflops, expected, self.ms / 1e3, 1e12)
        return self

    def work(self) -> float:
        """FLOPs (gemm, attention) or bytes (copy, add) of one call, by the formulas."""
        if self.op == "gemm":
            return gemm_flops(self.m or 0, self.n or 0, self.k or 0)
        if self.op == "attention":
            return attention_flops(
                self.batch or 0, self.heads or 0, self.seq_len or 0, self.head_dim or 0,
                bool(self.causal),
            )  # fmt: skip
        return float(self.bytes_moved or 0)


_FORMULAS = {
    "gemm": "2 m n k",
    "attention": "3.5 x 4 batch heads seq_len^2 head_dim, halved when causal",
}


def _check_rate(name: str, value: float | None, work: float, seconds: float, unit: float) -> None:
    expected = work / seconds / unit
    if value is None or not math.isclose(value, expected, rel_tol=RATE_TOLERANCE):
        raise ValueError(
            f"{name} {value} does not match the work over the median time ({expected:.6g}); "
            f"a rate is measured, not set: restore it or {RERUN}"
        )


class OpFigures(tuple[OpFigure, ...]):
    """A result's op figures as one cell of the results table (benchmarks.results
    results_frame): a tuple that prints as its count, so a CSV of results stays one line
    per result (the figures themselves are in the result file and `bench show`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{len(self)} op figures"

    __str__ = __repr__


SUMMARY_COLUMNS = ("op", "precision", "points", "best", "median", "lowest", "unit", "best at")


def shape_text(figure: OpFigure) -> str:
    """The shape of a figure in words: "8192 x 4096 x 14336" (m x n x k), "d 128, s 4096"
    (head dim, sequence length), or the bytes moved per call in MB."""
    if figure.op == "gemm":
        return f"{figure.m} x {figure.n} x {figure.k}"
    if figure.op == "attention":
        return f"d {figure.head_dim}, s {figure.seq_len}"
    return f"{(figure.bytes_moved or 0) / 1e6:,.0f} MB"


def summary_rows(figures: list[OpFigure]) -> list[tuple[str, ...]]:
    """One row per (op, precision) in the order measured: SUMMARY_COLUMNS, rates with 4
    significant digits (TFLOP/s, or GB/s for copy and add)."""
    groups: dict[tuple[str, str], list[OpFigure]] = {}
    for figure in figures:
        groups.setdefault((figure.op, figure.precision), []).append(figure)
    rows: list[tuple[str, ...]] = []
    for (op, precision), group in groups.items():
        memory = op in MEMORY_OPS
        rates = sorted((f.gb_per_s if memory else f.tflops) or 0.0 for f in group)
        best = max(group, key=lambda f: (f.gb_per_s if memory else f.tflops) or 0.0)
        middle = statistics.median(rates)
        rows.append(
            (
                op, precision, str(len(group)), f"{rates[-1]:,.4g}", f"{middle:,.4g}",
                f"{rates[0]:,.4g}", "GB/s" if memory else "TFLOP/s", shape_text(best),
            )
        )  # fmt: skip
    return rows
