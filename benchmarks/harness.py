"""The training-benchmark harness: a short honest loop, timed as the device sees it.

One run: build the model on the device, synthetic data generated there, AdamW (fused
where available), the precision's autocast / GradScaler, optional channels-last and
torch.compile, optional DDP; `warmup` untimed steps; then `steps` timed steps, with a
device synchronize before every clock read (CUDA events per step on GPU, read after
one synchronize; perf_counter per step on CPU, where kernels finish before returning).
Every step time is kept. Peak memory, and on a GPU power, SM clock and energy over the
timed window (benchmarks.power), come with it. The model of the loop is nanoGPT's
bench.py: burn-in, synchronize, time, count.

This module imports torch; nothing here knows about prices or the planner.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import itertools
import math
import resource
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from benchmarks import models
from benchmarks.env import available_memory_bytes, collect_env, cpu_model
from benchmarks.power import PowerMonitor
from benchmarks.results import PRECISIONS
from benchmarks.summary import THROUGHPUT_UNITS, Measurement

Progress = Callable[[str, int, int], None]

PRECISION_LABELS = {
    "fp32": "fp32 (TF32 off)",
    "tf32": "tf32 (fp32 storage, TF32 matmul and convolution)",
    "fp16": "fp16 AMP (autocast + GradScaler)",
    "bf16": "bf16 AMP (autocast)",
}
LEARNING_RATE = 1e-4
CPU_MAX_AUTO_BATCH = 256  # CPU auto batch never goes above this: steps get too slow
GPU_MAX_AUTO_BATCH = 4096
GPU_AUTO_MEMORY_FRACTION = 0.9  # a trial batch reserving more of the GPU's memory does not fit
AUTO_BATCH_GAIN = 0.05  # doubling stops once it adds less than this to samples/s
AUTO_BATCH_WITHIN = 0.03  # the smallest batch this close to the best rate is chosen
AUTO_BATCH_TIMED_STEPS = 3  # timed steps per GPU trial batch, after one untimed
CPU_AUTO_MEMORY_FRACTION = 0.5  # of MemAvailable, shared by the run's processes
# Saved activations x this = activation memory incl. backward temporaries (CPU estimate).
CPU_ACTIVATION_FACTOR = 2.0
OPTIMIZER_COPIES = 4  # weights, gradients, AdamW exp_avg and exp_avg_sq (fp32 each)


class BenchmarkError(RuntimeError):
    """A run that cannot start or that failed; the message says why and what to change."""


class StepFailed(BenchmarkError):
    """A training step raised: the run is abandoned and no result is written."""


@dataclass(frozen=True)
class RunOptions:
    """What to run: workload and size, precision, device, batch, steps, features."""

    workload: str
    size: str | None = None
    precision: str = "fp32"
    device: str = "cpu"
    batch_size: int | None = None  # per device; None = the model's default
    batch_auto: bool = False
    steps: int = 50
    warmup: int = 10
    compile: bool = False
    channels_last: bool = True  # CNNs only
    peak_tflops: float | None = None  # per-device peak at this precision, for MFU
    max_batch: int | None = None  # cap for --batch auto
    memory_budget_gib: float | None = None  # CPU --batch auto budget per process
    seed: int = 0

    def checked(self) -> RunOptions:
        """These options with the size made canonical, or BenchmarkError naming the fix."""
        try:
            size = models.check_size(self.workload, self.size)
        except ValueError as exc:
            raise BenchmarkError(str(exc)) from None
        if self.workload in models.OP_BENCHMARKS:
            return self._checked_ops(size)
        if self.precision not in PRECISIONS:
            raise BenchmarkError(
                f"unknown precision {self.precision!r}; valid: {', '.join(PRECISIONS)}"
            )
        if self.device not in ("cpu", "cuda"):
            raise BenchmarkError(f"unknown device {self.device!r}; valid: cpu, cuda")
        if self.device == "cuda" and not torch.cuda.is_available():
            raise BenchmarkError("--device cuda: no CUDA GPU is visible to torch; use --device cpu")
        if (
            self.device == "cuda"
            and self.precision == "bf16"
            and not torch.cuda.is_bf16_supported(including_emulation=False)
        ):
            raise BenchmarkError("this GPU has no bf16 tensor cores; use --precision fp16")
        if self.device == "cpu" and self.precision == "tf32":
            raise BenchmarkError("precision tf32 is a CUDA tensor-core mode; on CPU use fp32")
        if self.steps < 1 or self.warmup < 0:
            raise BenchmarkError("--steps must be >= 1 and --warmup >= 0")
        if self.compile and self.warmup < 1:
            raise BenchmarkError("--compile needs --warmup >= 1 (the first steps compile)")
        if self.batch_size is not None and self.batch_size < 1:
            raise BenchmarkError(f"--batch must be >= 1 or 'auto' (got {self.batch_size})")
        if self.peak_tflops is not None and not self.peak_tflops > 0:
            raise BenchmarkError("--peak-tflops must be > 0")
        return dataclasses.replace(self, size=size)

    def _checked_ops(self, size: str) -> RunOptions:
        """The operator benchmark's options: a precision or "all", no model options (what
        the device lacks is refused by benchmarks.ops when it starts)."""
        if self.precision not in OP_PRECISION_CHOICES:
            raise BenchmarkError(
                f"unknown precision {self.precision!r} for {self.workload}; valid: "
                f"{', '.join(OP_PRECISION_CHOICES)} (all: every precision the device has)"
            )
        if self.device not in ("cpu", "cuda"):
            raise BenchmarkError(f"unknown device {self.device!r}; valid: cpu, cuda")
        if self.device == "cuda" and not torch.cuda.is_available():
            raise BenchmarkError("--device cuda: no CUDA GPU is visible to torch; use --device cpu")
        if self.steps < 1 or self.warmup < 0:
            raise BenchmarkError("--steps must be >= 1 and --warmup >= 0")
        given = [
            flag
            for flag, value in (
                ("--compile", self.compile),
                ("--batch", self.batch_size is not None or self.batch_auto),
                ("--peak-tflops", self.peak_tflops is not None),
                ("--max-batch", self.max_batch is not None),
                ("--memory-budget-gib", self.memory_budget_gib is not None),
            )
            if value
        ]
        if given:
            raise BenchmarkError(
                f"{', '.join(given)}: not options of {self.workload}, which times operators "
                "at fixed shapes (--size) and leaves peaks to the planner's spec table; "
                "leave them out"
            )
        return dataclasses.replace(self, size=size)


# `bench run --workload ops --precision`: one precision, or every one the device has.
OP_PRECISION_CHOICES = ("all", *PRECISIONS, "fp8")


def default_precision(workload: str, device: str) -> str:
    """The precision `bench run` uses when none is given: bf16 on CUDA, fp32 on CPU; every
    precision the device has for the operator benchmark."""
    if workload in models.OP_BENCHMARKS:
        return "all"
    return "bf16" if device == "cuda" else "fp32"


@dataclass(frozen=True)
class DistContext:
    """This process's place in a torchrun job (torch.distributed already initialised)."""

    rank: int
    local_rank: int
    world_size: int
    backend: str


@dataclass
class Prepared:
    """A model ready to train: its step function and everything the run reports."""

    bench: models.Benchmark
    model: nn.Module
    step: Callable[[], None]
    batch_size: int
    device: torch.device
    config: dict[str, Any] = field(default_factory=dict)


# --- precision, optimizer, step ---------------------------------------------------------


@contextlib.contextmanager
def precision_flags(precision: str, device: str) -> Iterator[None]:
    """Set TF32 on (tf32) or off (fp32 and AMP) for CUDA matmul/cuDNN; restore after."""
    if device != "cuda":
        yield
        return
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    on = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


AutocastFactory = Callable[[], contextlib.AbstractContextManager[Any]]


def autocast_for(precision: str, device: str) -> AutocastFactory:
    """A factory of the autocast context for this precision (a no-op for fp32/tf32)."""
    if precision in ("fp16", "bf16"):
        dtype = torch.float16 if precision == "fp16" else torch.bfloat16
        return lambda: torch.autocast(device_type=device, dtype=dtype)
    return contextlib.nullcontext


def make_optimizer(model: nn.Module) -> tuple[torch.optim.Optimizer, str]:
    """AdamW, fused (one kernel for all parameters) where this torch/device has it."""
    params = [p for p in model.parameters() if p.requires_grad]
    try:
        return torch.optim.AdamW(params, lr=LEARNING_RATE, fused=True), "AdamW (fused)"
    except (RuntimeError, TypeError, ValueError):
        return torch.optim.AdamW(params, lr=LEARNING_RATE, foreach=True), "AdamW (foreach)"


def make_step(
    model: nn.Module,
    loss_fn: Callable[[Any, tuple[Any, ...]], torch.Tensor],
    batch: tuple[torch.Tensor, ...],
    optimizer: torch.optim.Optimizer,
    autocast: AutocastFactory,
    scaler: torch.amp.GradScaler | None,
) -> Callable[[], None]:
    """One training step: forward + loss under autocast, backward, optimizer, zero grads."""
    if scaler is None:

        def step() -> None:
            with autocast():
                loss = loss_fn(model, batch)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)

        return step

    def scaled_step() -> None:
        with autocast():
            loss = loss_fn(model, batch)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)

    return scaled_step


def synchronize(device: torch.device) -> None:
    """Wait for every queued kernel on `device` (CPU kernels finish before returning)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


# --- batch size ---------------------------------------------------------------------------


def is_out_of_memory(exc: BaseException) -> bool:
    """True for a CUDA out-of-memory error or a CPU allocation failure."""
    if isinstance(exc, torch.cuda.OutOfMemoryError):
        return True
    text = str(exc).lower()
    return isinstance(exc, RuntimeError) and (
        "out of memory" in text or "can't allocate memory" in text
    )


def within_headroom(batch_size: int, reserved_bytes: int, total_bytes: int) -> bool:
    """Whether a trial batch leaves the allocator room: it reserved at most
    GPU_AUTO_MEMORY_FRACTION of the GPU's memory. A batch of 1 that trained always counts
    (a model that needs 95% of the card still gets a batch, not an out-of-memory error)."""
    return batch_size == 1 or reserved_bytes <= GPU_AUTO_MEMORY_FRACTION * total_bytes


def saturating_batch(
    rate: Callable[[int], float | None], cap: int
) -> tuple[int, dict[int, float | None]]:
    """The GPU `--batch auto` rule: the per-device batch past which throughput stops rising.

    `rate(batch)` is the samples/s a batch trains at, or None when it does not fit (out of
    memory, or past the memory headroom). Batches double from 1 (the last one is `cap`) until
    one does not fit, reaches `cap`, or gains less than AUTO_BATCH_GAIN over the best so
    far; the answer is the smallest tried batch within AUTO_BATCH_WITHIN of the best rate.
    A larger batch buys no speed past that knee and leaves the allocator no room (on an
    H200 the largest batch that fit, 3,311 at bf16, trained ResNet-50 at 3,674 img/s; batch
    256 at fp16, the same tensor-core rate, at 6,100).
    Returns (batch, {batch tried: samples/s or None}); batch 0 when not even 1 fits.
    """
    tried: dict[int, float | None] = {}
    batch, best = 1, 0.0
    while True:
        tried[batch] = samples_per_s = rate(batch)
        if samples_per_s is None or batch >= cap or samples_per_s < best * (1 + AUTO_BATCH_GAIN):
            break
        best = samples_per_s
        batch = min(batch * 2, cap)
    fitting = {b: r for b, r in tried.items() if r is not None}
    if not fitting:
        return 0, tried
    top = max(fitting.values())
    return min(b for b, r in fitting.items() if r >= (1 - AUTO_BATCH_WITHIN) * top), tried


def saved_activation_bytes(
    model: nn.Module,
    loss_fn: Callable[[Any, tuple[Any, ...]], torch.Tensor],
    batch: tuple[torch.Tensor, ...],
    autocast: AutocastFactory,
) -> int:
    """Bytes of tensors the forward pass saves for backward (parameters excluded)."""
    param_storages = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved: dict[int, int] = {}

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in param_storages:
            saved[storage.data_ptr()] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), autocast():
        loss = loss_fn(model, batch)
    del loss
    return sum(saved.values())


def cpu_batch_for_budget(
    static_bytes: float, fixed_bytes: float, per_sample_bytes: float, budget_bytes: float, cap: int
) -> int:
    """Largest batch whose estimated memory fits the budget, at most `cap` (0: none fits).

    Estimate: static + CPU_ACTIVATION_FACTOR x (fixed + per_sample x batch), where static
    is weights, gradients and AdamW state and the bracket the saved activations.
    """
    room = (budget_bytes - static_bytes) / CPU_ACTIVATION_FACTOR - fixed_bytes
    if room < per_sample_bytes:
        return 0
    if per_sample_bytes <= 0:
        return cap
    return int(min(cap, math.floor(room / per_sample_bytes)))


# --- the run ------------------------------------------------------------------------------


def _device(options: RunOptions, dist: DistContext | None) -> torch.device:
    if options.device == "cuda":
        index = dist.local_rank if dist else torch.cuda.current_device()
        torch.cuda.set_device(index)
        return torch.device("cuda", index)
    return torch.device("cpu")


def _trial_rate(
    bench: models.Benchmark,
    model: nn.Module,
    device: torch.device,
    options: RunOptions,
    optimizer: torch.optim.Optimizer,
    scaler: torch.amp.GradScaler | None,
) -> Callable[[int, int], float | None]:
    """rate(batch, timed_steps): samples/s of `timed_steps` training steps after one
    untimed step, or None when the batch runs out of memory or, on a GPU, reserves more
    than GPU_AUTO_MEMORY_FRACTION of the device's memory."""
    autocast = autocast_for(options.precision, options.device)
    generator = torch.Generator(device=device).manual_seed(options.seed)
    total = torch.cuda.get_device_properties(device).total_memory if device.type == "cuda" else 0

    def rate(batch_size: int, timed_steps: int) -> float | None:
        batch: tuple[torch.Tensor, ...] = ()
        try:
            batch = _to_layout(bench.make_batch(batch_size, device, generator), bench, options)
            step = make_step(model, bench.loss, batch, optimizer, autocast, scaler)
            if device.type == "cuda":
                torch.cuda.reset_peak_memory_stats(device)
            step()
            synchronize(device)
            start = time.perf_counter()
            for _ in range(timed_steps):
                step()
            synchronize(device)
            seconds = time.perf_counter() - start
            if total and not within_headroom(
                batch_size, torch.cuda.max_memory_reserved(device), total
            ):
                return None
            return batch_size * timed_steps / seconds
        except RuntimeError as exc:
            if not is_out_of_memory(exc):
                raise
            return None
        finally:
            optimizer.zero_grad(set_to_none=True)
            del batch
            gc.collect()
            if device.type == "cuda":
                torch.cuda.empty_cache()

    return rate


def _auto_batch(
    bench: models.Benchmark,
    model: nn.Module,
    device: torch.device,
    options: RunOptions,
    rate: Callable[[int, int], float | None],
    world_size: int,
) -> tuple[int, dict[str, Any]]:
    """The per-device batch for --batch auto (`rate`: from _trial_rate). On a GPU the
    knee of samples/s within the memory headroom (saturating_batch); on CPU the largest
    batch a memory estimate allows, backed off until it trains."""
    if device.type == "cuda":
        cap = options.max_batch or GPU_MAX_AUTO_BATCH
        batch, tried = saturating_batch(lambda b: rate(b, AUTO_BATCH_TIMED_STEPS), cap)
        if batch == 0:
            raise BenchmarkError(
                f"--batch auto: even a batch of 1 runs out of GPU memory for "
                f"{bench.workload} {bench.size}; try a smaller --size or --precision bf16"
            )
        return batch, {
            "method": (
                f"batches doubled while samples/s rose {AUTO_BATCH_GAIN:.0%} or more and "
                f"memory stayed under {GPU_AUTO_MEMORY_FRACTION:.0%} of the GPU's; the "
                f"smallest within {AUTO_BATCH_WITHIN:.0%} of the best rate"
            ),
            "cap": cap,
            "samples_per_s_by_batch": {
                str(b): None if r is None else round(r, 3) for b, r in tried.items()
            },
        }
    cap = options.max_batch or CPU_MAX_AUTO_BATCH
    autocast = autocast_for(options.precision, options.device)
    generator = torch.Generator(device=device).manual_seed(options.seed)
    one, two = (
        saved_activation_bytes(
            model,
            bench.loss,
            _to_layout(bench.make_batch(n, device, generator), bench, options),
            autocast,
        )
        for n in (1, 2)
    )
    per_sample = max(two - one, 0)
    fixed = max(one - per_sample, 0)
    static = OPTIMIZER_COPIES * sum(p.numel() * p.element_size() for p in model.parameters())
    if options.memory_budget_gib is not None:
        budget = options.memory_budget_gib * 2**30
        budget_from = "--memory-budget-gib"
    else:
        budget = CPU_AUTO_MEMORY_FRACTION * available_memory_bytes() / world_size
        budget_from = f"{CPU_AUTO_MEMORY_FRACTION:.0%} of MemAvailable / {world_size} process(es)"
    batch = cpu_batch_for_budget(static, fixed, per_sample, budget, cap)
    if batch == 0:
        need = static + CPU_ACTIVATION_FACTOR * (fixed + per_sample)
        raise BenchmarkError(
            f"--batch auto: a batch of 1 needs about {need / 2**30:.2f} GiB, over the "
            f"{budget / 2**30:.2f} GiB budget ({budget_from}); raise --memory-budget-gib"
        )
    while batch > 1 and rate(batch, 1) is None:  # the estimate was optimistic: back off
        batch //= 2
    estimate = static + CPU_ACTIVATION_FACTOR * (fixed + per_sample * batch)
    return batch, {
        "method": "memory estimate from saved activations at batch 1 and 2, then one trial",
        "cap": cap,
        "budget_gib": round(budget / 2**30, 3),
        "budget_from": budget_from,
        "estimated_gib": round(estimate / 2**30, 3),
        "per_sample_activation_mib": round(per_sample / 2**20, 3),
    }


def _to_layout(
    batch: tuple[torch.Tensor, ...], bench: models.Benchmark, options: RunOptions
) -> tuple[torch.Tensor, ...]:
    if bench.is_cnn and options.channels_last:
        return (batch[0].contiguous(memory_format=torch.channels_last), *batch[1:])
    return batch


def prepare(
    options: RunOptions, dist: DistContext | None = None, progress: Progress | None = None
) -> Prepared:
    """Build model, data, optimizer and the step function for `options` (checked)."""
    bench = models.load(options.workload, options.size)
    device = _device(options, dist)
    torch.manual_seed(options.seed)
    model = bench.build().to(device)
    if bench.is_cnn and options.channels_last:
        model = model.to(memory_format=torch.channels_last)
    n_params = sum(p.numel() for p in model.parameters())
    optimizer, optimizer_label = make_optimizer(model)
    scaler = torch.amp.GradScaler(options.device) if options.precision == "fp16" else None
    world = dist.world_size if dist else 1
    config: dict[str, Any] = {}
    if options.batch_auto:
        if progress:
            progress("batch search", 0, 1)
        rate = _trial_rate(bench, model, device, options, optimizer, scaler)
        batch_size, config["batch_auto"] = _auto_batch(bench, model, device, options, rate, world)
        if dist is not None:  # every rank trains the same batch: the smallest found
            batch_size = int(_all_reduce([batch_size], "min", device)[0])
    else:
        batch_size = options.batch_size or bench.default_batch
    rank = dist.rank if dist else 0
    generator = torch.Generator(device=device).manual_seed(options.seed + rank)
    batch = _to_layout(bench.make_batch(batch_size, device, generator), bench, options)
    train_model: nn.Module = model
    if dist is not None:
        from torch.nn.parallel import DistributedDataParallel

        train_model = DistributedDataParallel(
            model,
            device_ids=[device.index] if device.type == "cuda" else None,
            gradient_as_bucket_view=True,
        )
    if options.compile:
        train_model = torch.compile(train_model)  # type: ignore[assignment]
    step = make_step(
        train_model,
        bench.loss,
        batch,
        optimizer,
        autocast_for(options.precision, options.device),
        scaler,
    )
    config.update(
        {
            "model": dataclasses.asdict(bench.config),
            "parameters": n_params,
            "flops_formula": bench.flops_formula,
            "optimizer": optimizer_label,
            "learning_rate": LEARNING_RATE,
            "grad_scaler": scaler is not None,
            "compile": options.compile,
            "channels_last": bool(bench.is_cnn and options.channels_last),
            "warmup_steps": options.warmup,
            "timed_steps": options.steps,
            "seed": options.seed,
            "data": "synthetic, generated on the device once and reused every step",
            "ddp_backend": dist.backend if dist else None,
            "timing": "CUDA events per step" if device.type == "cuda" else "perf_counter per step",
        }
    )
    return Prepared(bench, train_model, step, batch_size, device, config)


def _all_reduce(values: list[float], op: str, device: torch.device) -> list[float]:
    import torch.distributed as torch_dist

    ops = {
        "max": torch_dist.ReduceOp.MAX,
        "min": torch_dist.ReduceOp.MIN,
        "sum": torch_dist.ReduceOp.SUM,
    }
    tensor = torch.tensor(values, dtype=torch.float64, device=device)
    torch_dist.all_reduce(tensor, op=ops[op])
    return [float(v) for v in tensor.tolist()]


def _checked_step(step: Callable[[], None], i: int, count: int, phase: str) -> None:
    """Step `i` (from 0) of `count`; StepFailed naming the phase and step when it raises."""
    try:
        step()
    except Exception as exc:
        raise StepFailed(
            f"{phase} step {i + 1} of {count} failed: {type(exc).__name__}: {exc}"
        ) from exc


def _run_steps(step: Callable[[], None], count: int, phase: str, progress: Progress | None) -> None:
    for i in range(count):
        _checked_step(step, i, count, phase)
        if progress:
            progress(phase, i + 1, count)


def time_steps(
    step: Callable[[], None], steps: int, device: torch.device, progress: Progress | None = None
) -> tuple[list[float], float]:
    """Run `steps` timed steps; (per-step seconds, seconds of the whole window).

    CUDA: an event is recorded after every step, and all are read after one final
    synchronize (the clock is the GPU's; the host never waits mid-run). CPU: a
    perf_counter read after every step. Both windows start after a synchronize.
    """
    if device.type == "cuda":
        events = [torch.cuda.Event(enable_timing=True) for _ in range(steps + 1)]
        synchronize(device)
        start = time.perf_counter()
        events[0].record()
        for i in range(steps):
            _checked_step(step, i, steps, "timed")
            events[i + 1].record()
            if progress:
                progress("measure", i + 1, steps)
        synchronize(device)
        wall = time.perf_counter() - start
        times = [a.elapsed_time(b) / 1000.0 for a, b in itertools.pairwise(events)]
        return times, wall
    times = []
    start = last = time.perf_counter()
    for i in range(steps):
        _checked_step(step, i, steps, "timed")
        now = time.perf_counter()
        times.append(now - last)
        last = now
        if progress:
            progress("measure", i + 1, steps)
    return times, last - start


def peak_memory(device: torch.device) -> tuple[float, str]:
    """(peak memory in GiB, how it was measured) of this process on `device`."""
    if device.type == "cuda":
        return (
            torch.cuda.max_memory_allocated(device) / 2**30,
            "torch.cuda.max_memory_allocated (tensors; excludes allocator cache and context)",
        )
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return kib / 2**20, "process peak RSS (getrusage ru_maxrss), includes the Python runtime"


def run(
    options: RunOptions, dist: DistContext | None = None, progress: Progress | None = None
) -> Measurement:
    """Run one benchmark; the Measurement is global (reduced over all processes).

    Raises BenchmarkError for options that cannot run, StepFailed when a step raises.
    """
    options = options.checked()
    if options.workload in models.OP_BENCHMARKS:
        raise BenchmarkError(f"{options.workload} times operators: run it with benchmarks.ops")
    world = dist.world_size if dist else 1
    with precision_flags(options.precision, options.device):
        prepared = prepare(options, dist, progress)
        device = prepared.device
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        monitor = PowerMonitor(options.device, device.index or 0)
        _run_steps(prepared.step, options.warmup, "warm-up", progress)
        synchronize(device)
        monitor.start()
        times, wall = time_steps(prepared.step, options.steps, device, progress)
        power = monitor.stop()
    peak_gib, peak_source = peak_memory(device)
    energy = power.energy_j if power.energy_j is not None else math.nan
    watts = power.mean_power_w if power.mean_power_w is not None else math.nan
    clock = power.mean_sm_clock_mhz if power.mean_sm_clock_mhz is not None else math.nan
    if dist is not None:
        times = _all_reduce(times, "max", device)  # a DDP step ends when the slowest rank does
        wall, peak_gib = _all_reduce([wall, peak_gib], "max", device)
        energy, watts, clock = _all_reduce([energy, watts, clock], "sum", device)
        clock /= world
    bench = prepared.bench
    device_name = torch.cuda.get_device_name(device) if device.type == "cuda" else cpu_model()
    is_rank0 = dist is None or dist.rank == 0
    return Measurement(
        workload=bench.workload,
        model_size=bench.size,
        precision=options.precision,
        device=options.device,
        device_name=device_name,
        world_size=world,
        batch_size_per_device=prepared.batch_size,
        step_times_s=times,
        wall_s=wall,
        flops_per_sample=bench.flops_per_sample,
        throughput_unit=THROUGHPUT_UNITS[bench.workload],
        tokens_per_sample=bench.tokens_per_sample,
        peak_memory_gib=round(peak_gib, 4),
        peak_memory_source=peak_source,
        power=dataclasses.replace(
            power,
            mean_power_w=None if math.isnan(watts) else watts,
            energy_j=None if math.isnan(energy) else energy,
            mean_sm_clock_mhz=None if math.isnan(clock) else clock,
        ),
        precision_label=PRECISION_LABELS[options.precision],
        interconnect=f"DDP over {dist.backend}" if dist and world > 1 else "",
        config=prepared.config,
        env=collect_env(options.device, monitor.driver_version) if is_rank0 else {},
    )
