"""The operator benchmark: the GEMM, attention and memory rates one device achieves.

`gpuplan bench run --workload ops` times, on the device in front of it, what an
operator-level step model of LLM training is made of:

- GEMMs x (m, k) @ w (n, k)^T (nn.Linear's layout) over a grid (OpGrid): m the tokens of
  a micro-batch, n and k the widths of transformer layers after tensor-parallel splits,
  some not multiples of 128 (1376 = 11008 / 8, 2752 = 11008 / 4: Llama-2-7B's FFN over 8
  and 4 GPUs), where tile and wave quantization show; at every precision the device has:
  fp32 (TF32 off), tf32, fp16, bf16, and fp8 (e4m3 x e4m3 -> bf16 through
  torch._scaled_mm, tensor-wise scales, fp32 accumulation) on CUDA GPUs of compute
  capability 8.9 or newer;
- causal torch.nn.functional.scaled_dot_product_attention, forward + backward, over head
  dims and sequence lengths in FlashAttention-2's benchmark setup (Dao 2023, sec. 4.1:
  16k tokens per batch, hidden 2048, head dim 64 or 128), with the SDPA kernel that ran;
- copy and add on buffers far larger than the caches: memory (HBM) bandwidth.

The work per call (FLOPs, bytes) is counted by benchmarks.op_figures. One result file
(workload "ops", schema version 4) holds every figure; the planner's
planner.llm.op_efficiency reads it and divides by the spec table's dense peak.

Timing: a point runs once untimed (library heuristics, allocation), once timed as a probe,
up to `warmup` more calls untimed, then `repeats` timed calls (at most --steps, at least
MIN_REPEATS, as many as fit the grid's point_s); the figure is their median. On CUDA each
timed call sits between two CUDA events, after a 256 MB buffer is zeroed so that no call
finds the last one's operands in L2 (as triton.testing.do_bench does), and one
synchronize reads them all; on CPU perf_counter is read around each call.

Time bound: OpGrid.budget_s per device and size. The two memory ops run first (a few
calls each); attention gets ATTENTION_SHARE of the time then left, and each GEMM precision
in turn an equal part of what remains. Shapes are visited coarse to fine (bit-reversed
order), so a share that runs out still leaves a spread of shapes; a point whose estimated
time (from the fastest rate so far) does not fit its share is skipped, but the first
(smallest) point of every op and precision is always measured. Points skipped, and
precisions the device lacks, are listed in the result's config["skipped"] with the reason.

This module imports torch; nothing here knows about prices or the planner.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from benchmarks.env import collect_env, cpu_model
from benchmarks.harness import (
    BenchmarkError,
    RunOptions,
    is_out_of_memory,
    peak_memory,
    precision_flags,
)
from benchmarks.op_figures import (
    OpFigure,
    attention_flops,
    gemm_flops,
    memory_bytes,
    shape_text,
)
from benchmarks.power import PowerMonitor
from benchmarks.results import OP_SCHEMA_VERSION, BenchmarkResult, write_result
from benchmarks.summary import new_run_id, utc_now
from benchmarks.workload_names import OP_WORKLOAD

Progress = Callable[[str, int, int], None]

MIN_REPEATS = 3
L2_FLUSH_BYTES = 256 * 2**20  # triton.testing.do_bench's cache-clearing buffer
ATTENTION_SHARE = 0.25  # of the time left after the memory ops; GEMMs get the rest
# The order precisions are measured in (the most used first, so a short budget keeps them).
GEMM_ORDER = ("bf16", "fp16", "fp8", "tf32", "fp32")
CPU_ORDER = ("fp32", "bf16")
DTYPES = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16,
          "bf16": torch.bfloat16}  # fmt: skip
FP8_MIN_CAPABILITY = (8, 9)  # Ada and Hopper have fp8 tensor cores
TF32_MIN_CAPABILITY = (8, 0)  # Ampere
# SDPA's kernels as the autograd node of their output names them, first match wins.
SDPA_KERNELS = (
    ("FlashAttentionForCpu", "flash (cpu)"),
    ("FlashAttention", "flash"),
    ("EfficientAttention", "efficient"),
    ("CudnnAttention", "cudnn"),
)


@dataclass(frozen=True)
class OpGrid:
    """The shapes one run measures and its time bound (seconds)."""

    gemm_m: tuple[int, ...]
    gemm_nk: tuple[int, ...]  # every (n, k) pair of these
    attention_tokens: int  # batch x seq_len
    attention_width: int  # heads x head_dim
    head_dims: tuple[int, ...]
    seq_lens: tuple[int, ...]
    memory_buffer_bytes: int
    budget_s: float
    point_s: float  # the timed calls of one point take about this long


# n, k: hidden sizes of GPT-2 small (768), Llama-2-7B (4096) and -70B (8192), FFN sizes of
# Llama-3-8B (14336) and Llama-2/3-70B (28672), and Llama-2-7B's FFN (11008) split 4 and 8
# ways (2752, 1376: not multiples of 128).
GRIDS: dict[tuple[str, str], OpGrid] = {
    ("cuda", "full"): OpGrid(
        gemm_m=(2048, 4096, 8192, 16384),
        gemm_nk=(768, 1376, 2752, 4096, 8192, 14336, 28672),
        attention_tokens=16384, attention_width=2048, head_dims=(64, 128),
        seq_lens=(1024, 2048, 4096, 8192, 16384), memory_buffer_bytes=2 * 2**30,
        budget_s=70.0, point_s=0.1,
    ),
    ("cpu", "full"): OpGrid(
        gemm_m=(256, 512, 1024), gemm_nk=(256, 688, 1376, 2048),
        attention_tokens=1024, attention_width=256, head_dims=(64, 128),
        seq_lens=(128, 256, 512), memory_buffer_bytes=128 * 2**20,
        budget_s=15.0, point_s=0.2,
    ),
    ("cuda", "tiny"): OpGrid(
        gemm_m=(512, 1024), gemm_nk=(768, 1376),
        attention_tokens=2048, attention_width=256, head_dims=(64,),
        seq_lens=(256, 512), memory_buffer_bytes=64 * 2**20,
        budget_s=10.0, point_s=0.02,
    ),
    ("cpu", "tiny"): OpGrid(
        gemm_m=(64, 128), gemm_nk=(96, 200),
        attention_tokens=256, attention_width=128, head_dims=(64,),
        seq_lens=(64, 128), memory_buffer_bytes=8 * 2**20,
        budget_s=8.0, point_s=0.02,
    ),
}  # fmt: skip


def grid_for(device: str, size: str) -> OpGrid:
    """The grid of a device type (cpu, cuda) and size (tiny, full)."""
    return GRIDS[(device, size)]


def coarse_to_fine(count: int) -> list[int]:
    """0..count-1 in bit-reversed order: every prefix is spread over the whole range
    (0, then the middle, then the quarters, ...)."""
    bits = max(1, (count - 1).bit_length())
    return sorted(range(count), key=lambda i: int(f"{i:0{bits}b}"[::-1], 2))


# --- what the device has ------------------------------------------------------------------


def _capability(device: torch.device) -> tuple[int, int]:
    major, minor = torch.cuda.get_device_capability(device)
    return int(major), int(minor)


def unsupported(precision: str, op: str, device: torch.device) -> str | None:
    """Why `op` cannot run at `precision` on this device, or None when it can."""
    if device.type == "cpu":
        if precision == "tf32":
            return "tf32 is a CUDA tensor-core mode"
        if precision == "fp8":
            return "fp8 GEMMs are measured on CUDA GPUs only"
        return None
    capability = _capability(device)
    shown = ".".join(map(str, capability))
    if precision == "fp8":
        if op != "gemm":
            return "fp8 is measured for GEMMs only (SDPA has no fp8 kernel)"
        if torch.version.hip is not None or not hasattr(torch, "float8_e4m3fn"):
            return "fp8 GEMMs (torch._scaled_mm, e4m3) are measured on NVIDIA GPUs only"
        if capability < FP8_MIN_CAPABILITY:
            return f"fp8 needs compute capability 8.9 or newer (Ada, Hopper); this GPU is {shown}"
    if precision == "tf32":
        if op != "gemm":
            return "tf32 is measured for GEMMs only"
        if capability < TF32_MIN_CAPABILITY:
            return f"tf32 needs compute capability 8.0 or newer (Ampere); this GPU is {shown}"
    if precision == "bf16" and not torch.cuda.is_bf16_supported(including_emulation=False):
        return "this GPU has no bf16 tensor cores"
    return None


def precisions_for(op: str, requested: str, device: torch.device) -> tuple[list[str], list[Skip]]:
    """The precisions to measure `op` at (all the device has, or the one requested) and a
    Skip for each one it lacks."""
    if requested != "all":
        candidates: tuple[str, ...] = (requested,)
    elif device.type == "cpu":
        candidates = CPU_ORDER
    elif op == "gemm":
        candidates = GEMM_ORDER
    else:
        candidates = ("bf16", "fp16")
    keep, skipped = [], []
    for precision in candidates:
        why = unsupported(precision, op, device)
        if why is None:
            keep.append(precision)
        else:
            skipped.append(Skip(op, precision, why))
    return keep, skipped


# --- timing -------------------------------------------------------------------------------


@dataclass
class Skip:
    """Points of one op and precision that were not measured, and why."""

    op: str
    precision: str
    reason: str
    points: int = 1
    first: str = ""


class Timer:
    """Times calls as the device sees them (CUDA events, or perf_counter on CPU)."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.flush = (
            torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device=device)
            if device.type == "cuda"
            else None
        )

    def untimed(self, call: Callable[[], Any], count: int) -> None:
        for _ in range(count):
            call()
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def seconds(self, call: Callable[[], Any], count: int) -> list[float]:
        """Seconds of each of `count` calls."""
        if self.flush is None:
            times = []
            for _ in range(count):
                began = time.perf_counter()
                call()
                times.append(time.perf_counter() - began)
            return times
        events = [
            (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            for _ in range(count)
        ]
        for start, end in events:
            self.flush.zero_()
            start.record()
            call()
            end.record()
        torch.cuda.synchronize(self.device)
        return [start.elapsed_time(end) / 1e3 for start, end in events]

    def measure(self, call: Callable[[], Any], options: RunOptions, point_s: float) -> list[float]:
        """Seconds of the timed calls of one point (see the module docstring)."""
        self.untimed(call, 1)
        probe = max(self.seconds(call, 1)[0], 1e-9)
        self.untimed(call, min(max(options.warmup - 1, 0), int(0.25 * point_s / probe)))
        repeats = max(1, min(options.steps, max(MIN_REPEATS, int(point_s / probe))))
        return self.seconds(call, repeats)


def _spread_ms(times_s: list[float]) -> dict[str, float | int]:
    """Median, p10 and p90 of the times in ms (p10 <= median <= p90 even after rounding)."""
    p10, p50, p90 = (float(v) for v in np.percentile(np.asarray(times_s) * 1e3, [10, 50, 90]))
    return {"ms": p50, "ms_p10": min(p10, p50), "ms_p90": max(p90, p50), "repeats": len(times_s)}


# --- the operators ------------------------------------------------------------------------


def gemm_call(
    m: int, n: int, k: int, precision: str, device: torch.device, generator: torch.Generator
) -> tuple[Callable[[], Any], str]:
    """One GEMM x (m, k) @ w (n, k)^T at `precision` on random operands, and its backend."""
    if precision == "fp8":
        x = torch.randn(m, k, device=device, generator=generator).to(torch.float8_e4m3fn)
        w = torch.randn(n, k, device=device, generator=generator).to(torch.float8_e4m3fn)
        one = torch.ones((), device=device, dtype=torch.float32)
        return (
            lambda: torch._scaled_mm(x, w.t(), one, one, out_dtype=torch.bfloat16),
            "torch._scaled_mm e4m3 -> bf16",
        )
    dtype = DTYPES[precision]
    x = torch.randn(m, k, dtype=dtype, device=device, generator=generator)
    w = torch.randn(n, k, dtype=dtype, device=device, generator=generator)
    return lambda: torch.matmul(x, w.t()), "torch.matmul"


def attention_call(
    batch: int, heads: int, seq_len: int, head_dim: int, precision: str,
    device: torch.device, generator: torch.Generator,
) -> tuple[Callable[[], Any], str]:  # fmt: skip
    """Causal SDPA forward + backward (gradients of q, k and v) and the kernel that ran."""
    shape = (batch, heads, seq_len, head_dim)
    q, k, v = (
        torch.randn(
            shape, dtype=DTYPES[precision], device=device, generator=generator
        ).requires_grad_()
        for _ in range(3)
    )
    grad = torch.randn(shape, dtype=DTYPES[precision], device=device, generator=generator)

    def call() -> Any:
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return torch.autograd.grad(out, (q, k, v), grad)

    node = F.scaled_dot_product_attention(q, k, v, is_causal=True).grad_fn
    name = node.name() if node is not None else ""
    return call, next((label for mark, label in SDPA_KERNELS if mark in name), "math")


def memory_call(op: str, buffer_bytes: int, precision: str, device: torch.device) -> Any:
    """copy (b <- a) or add (c <- a + b) over buffers of `buffer_bytes`."""
    dtype = DTYPES[precision]
    numel = buffer_bytes // torch.empty((), dtype=dtype).element_size()
    a, b, c = (torch.ones(numel, dtype=dtype, device=device) for _ in range(3))
    if op == "copy":
        return lambda: c.copy_(a)
    return lambda: torch.add(a, b, out=c)


# --- the run ------------------------------------------------------------------------------


@dataclass
class _Run:
    """One run's state: the clock, the figures so far and what was skipped."""

    options: RunOptions
    grid: OpGrid
    device: torch.device
    timer: Timer
    generator: torch.Generator
    progress: Progress | None
    started: float = field(default_factory=time.perf_counter)
    figures: list[OpFigure] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    power: Any = None  # benchmarks.power.PowerReading over the whole run
    driver: str | None = None

    def left_s(self) -> float:
        return self.grid.budget_s - (time.perf_counter() - self.started)

    def skip(self, op: str, precision: str, reason: str, shape: str) -> None:
        for entry in self.skipped:
            if (entry.op, entry.precision, entry.reason) == (op, precision, reason):
                entry.points += 1
                return
        self.skipped.append(Skip(op, precision, reason, 1, shape))

    def point(
        self, op: str, precision: str, shape: dict[str, Any], work: float, deadline: float,
        make: Callable[[], tuple[Callable[[], Any], str]], rate: float,
    ) -> float:  # fmt: skip
        """Measure one point unless it would pass `deadline`; its rate per second (0 when
        skipped). `rate`: the fastest rate of this op and precision so far, 0 for its first
        point (its smallest), which is always measured: every precision gets a figure."""
        text = " ".join(f"{k} {v}" for k, v in shape.items() if k != "causal")
        calls = 2 + min(MIN_REPEATS, self.options.steps)
        if rate and time.perf_counter() + work / rate * calls > deadline:
            self.skip(op, precision, "out of time (its share of the time bound)", text)
            return 0.0
        try:
            call, backend = make()
            times = self.timer.measure(call, self.options, self.grid.point_s)
        except RuntimeError as exc:
            if self.device.type == "cuda":
                torch.cuda.empty_cache()
            reason = "out of memory" if is_out_of_memory(exc) else f"{type(exc).__name__}: {exc}"
            self.skip(op, precision, reason[:200], text)
            return 0.0
        spread = _spread_ms(times)
        seconds = float(spread["ms"]) / 1e3
        if op in ("copy", "add"):
            rates = {"gb_per_s": work / seconds / 1e9}
        else:
            rates = {"flops": work, "tflops": work / seconds / 1e12}
        self.figures.append(
            OpFigure(op=op, precision=precision, **shape, **spread, **rates, backend=backend)
        )
        return work / seconds

    def tick(self, phase: str, done: int, total: int) -> None:
        if self.progress:
            self.progress(phase, done, total)


def _deadline(run: _Run, share: float) -> float:
    return time.perf_counter() + max(run.left_s(), 0.0) * share


def _memory_phase(run: _Run) -> None:
    precision = "bf16" if run.device.type == "cuda" else "fp32"
    buffer = run.grid.memory_buffer_bytes
    if run.device.type == "cuda":  # three buffers in at most a quarter of what is free
        buffer = min(buffer, torch.cuda.mem_get_info(run.device)[0] // 12)
    for i, (op, backend) in enumerate((("copy", "Tensor.copy_"), ("add", "torch.add"))):
        work = float(memory_bytes(op, buffer))

        def make(op: str = op, backend: str = backend) -> tuple[Callable[[], Any], str]:
            return memory_call(op, buffer, precision, run.device), backend

        run.point(op, precision, {"bytes_moved": int(work)}, work, float("inf"), make, 0.0)
        run.tick("memory", i + 1, 2)


def _attention_phase(run: _Run) -> None:
    precisions, skipped = precisions_for("attention", run.options.precision, run.device)
    run.skipped.extend(skipped)
    grid = run.grid
    points = [(p, d, s) for p in precisions for d in grid.head_dims for s in grid.seq_lens]
    deadline = _deadline(run, ATTENTION_SHARE)
    fastest: dict[str, float] = {}
    for i, (precision, head_dim, seq_len) in enumerate(points):
        batch, heads = grid.attention_tokens // seq_len, grid.attention_width // head_dim
        shape = {"batch": batch, "heads": heads, "seq_len": seq_len, "head_dim": head_dim,
                 "causal": True}  # fmt: skip
        work = attention_flops(batch, heads, seq_len, head_dim, causal=True)

        def make(
            b: int = batch, h: int = heads, s: int = seq_len, d: int = head_dim,
            p: str = precision,
        ) -> tuple[Callable[[], Any], str]:  # fmt: skip
            return attention_call(b, h, s, d, p, run.device, run.generator)

        rate = run.point(
            "attention", precision, shape, work, deadline, make, fastest.get(precision, 0.0)
        )
        fastest[precision] = max(fastest.get(precision, 0.0), rate)
        run.tick("attention", i + 1, len(points))


def gemm_shapes(grid: OpGrid) -> list[tuple[int, int, int]]:
    """Every (m, n, k) of the grid, coarse to fine (smallest work first, then spread)."""
    shapes = sorted(
        ((m, n, k) for m in grid.gemm_m for n in grid.gemm_nk for k in grid.gemm_nk),
        key=lambda s: (gemm_flops(*s), s),
    )
    return [shapes[i] for i in coarse_to_fine(len(shapes))]


def _gemm_phase(run: _Run) -> None:
    precisions, skipped = precisions_for("gemm", run.options.precision, run.device)
    run.skipped.extend(skipped)
    shapes = gemm_shapes(run.grid)
    for index, precision in enumerate(precisions):
        deadline = _deadline(run, 1 / (len(precisions) - index))
        fastest = 0.0
        with precision_flags(precision, run.device.type):
            for i, (m, n, k) in enumerate(shapes):

                def make(
                    m: int = m, n: int = n, k: int = k, precision: str = precision
                ) -> tuple[Callable[[], Any], str]:
                    return gemm_call(m, n, k, precision, run.device, run.generator)

                shape = {"m": m, "n": n, "k": k}
                rate = run.point(
                    "gemm", precision, shape, gemm_flops(m, n, k), deadline, make, fastest
                )
                fastest = max(fastest, rate)
                run.tick(f"gemm {precision}", i + 1, len(shapes))


def measure(options: RunOptions, progress: Progress | None = None) -> _Run:
    """Run every phase of checked options on this device; the run with its figures."""
    if options.workload != OP_WORKLOAD:
        raise BenchmarkError(f"benchmarks.ops runs workload {OP_WORKLOAD}, not {options.workload}")
    if options.device == "cuda":
        device = torch.device("cuda", torch.cuda.current_device())
        torch.cuda.reset_peak_memory_stats(device)
    else:
        device = torch.device("cpu")
    if options.precision != "all":
        why = unsupported(options.precision, "gemm", device)
        if why:
            raise BenchmarkError(f"--precision {options.precision}: {why}")
    torch.manual_seed(options.seed)
    generator = torch.Generator(device=device).manual_seed(options.seed)
    grid = grid_for(device.type, str(options.size))
    run = _Run(options, grid, device, Timer(device), generator, progress)
    monitor = PowerMonitor(options.device, device.index or 0)
    monitor.start()
    try:
        _memory_phase(run)
        _attention_phase(run)
        _gemm_phase(run)
    finally:
        run.power = monitor.stop()
        run.driver = monitor.driver_version
    return run


def _headline(figures: list[OpFigure]) -> OpFigure:
    """The figure the result's throughput shows: the fastest GEMM at the first precision
    measured (bf16 first on CUDA), else the fastest attention."""
    for op in ("gemm", "attention"):
        rows = [f for f in figures if f.op == op]
        if rows:
            first = rows[0].precision
            return max((f for f in rows if f.precision == first), key=lambda f: f.tflops or 0.0)
    raise BenchmarkError("no GEMM or attention could be timed; see the reasons above")


def ops_result(run: _Run, run_id: str, started_at: str, elapsed_s: float) -> BenchmarkResult:
    """The run's figures as one op result (schema version 4)."""
    figures, device, power = run.figures, run.device, run.power
    try:
        best = _headline(figures)
    except BenchmarkError:
        reasons = "; ".join(f"{s.op} {s.precision}: {s.reason}" for s in run.skipped)
        raise BenchmarkError(f"no GEMM or attention could be timed ({reasons})") from None
    peak_gib, peak_source = peak_memory(device)
    measured = {
        op: sorted({f.precision for f in figures if f.op == op}, key=GEMM_ORDER.index)
        for op in ("gemm", "attention", "copy")
    }
    memory = next((f for f in figures if f.op == "copy"), None)
    notes = (
        f"best GEMM {best.tflops:,.4g} TFLOP/s {best.precision} at {shape_text(best)}"
        if best.op == "gemm"
        else f"best attention {best.tflops:,.4g} TFLOP/s {best.precision}"
    )
    if memory is not None and memory.gb_per_s:
        notes += f"; copy {memory.gb_per_s:,.0f} GB/s"
    skipped_points = sum(s.points for s in run.skipped)
    if skipped_points:
        notes += f"; {skipped_points} point(s) skipped (config.skipped says why)"
    device_name = torch.cuda.get_device_name(device) if device.type == "cuda" else cpu_model()
    return BenchmarkResult(
        schema_version=OP_SCHEMA_VERSION,
        id=run_id,
        source="measured",
        workload=OP_WORKLOAD,
        model_size=str(run.options.size),
        precision=None,
        precision_label="; ".join(f"{op}: {', '.join(p)}" for op, p in measured.items() if p),
        device=run.options.device,
        device_name=device_name,
        world_size=1,
        throughput=float(best.tflops or 0.0),
        throughput_unit="TFLOP/s",
        achieved_tflops=best.tflops,
        peak_memory_gib=round(peak_gib, 4),
        peak_memory_source=peak_source,
        **power.result_fields(),
        env=collect_env(run.options.device, run.driver),
        config={
            "grid": asdict(run.grid),
            "requested_precision": run.options.precision,
            "warmup_calls": run.options.warmup,
            "max_repeats": run.options.steps,
            "min_repeats": MIN_REPEATS,
            "elapsed_s": round(elapsed_s, 3),
            "timing": "CUDA events per call after a 256 MB L2 flush, median"
            if device.type == "cuda"
            else "perf_counter per call, median",
            "gemm": "x (m, k) @ w (n, k)^T, random normal operands; fp8: torch._scaled_mm "
            "e4m3 x e4m3 -> bf16, tensor-wise scales, use_fast_accum off",
            "attention": "causal SDPA forward + backward (autograd.grad of q, k, v); batch = "
            "attention_tokens / seq_len, heads = attention_width / head_dim",
            "memory": "copy and add over buffers of memory_buffer_bytes (bf16 on CUDA, fp32 "
            "on CPU); bytes read + written",
            "flops": "benchmarks.op_figures: gemm 2 m n k; attention FlashAttention-2's count",
            "efficiency": "not stored: planner.llm.op_efficiency divides by the spec table's "
            "dense peak",
            "headline": f"throughput = the fastest {best.op} at {best.precision}",
            "skipped": [asdict(s) for s in run.skipped],
        },
        started_at=started_at,
        notes=notes,
        op_figures=figures,
    )


def run_to_file(options: RunOptions, out_dir: Path, progress: Progress | None = None) -> Path:
    """Measure checked options on this machine's device and write the one result; its path.

    BenchmarkError when the device lacks the precision asked for or nothing could be
    timed; KeyboardInterrupt leaves no file (nothing is written before the end).
    """
    run_id = new_run_id(OP_WORKLOAD, str(options.size), options.precision, options.device, 1)
    started_at = utc_now()
    start = time.perf_counter()
    run = measure(options, progress)
    result = ops_result(run, run_id, started_at, time.perf_counter() - start)
    return write_result(result, out_dir)
