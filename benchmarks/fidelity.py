"""Fidelity benchmark: does the gpuplan harness slow training down?

In one process, alternately (A B B A ...), it trains the same model, batch and
precision with a bare hand-written loop and with the harness (benchmarks.harness.run,
with the CLI's progress bar), and prints both medians and the ratio harness / bare.

    python -m benchmarks.fidelity --workload gpt --size tiny --rounds 8

The bare loop's throughput is timed steps x batch / wall time of the timed steps. The
harness is compared on the same definition (its timed window's wall time), and its
reported figure (median step) is printed beside it. Run on a quiet machine; noisy
neighbours are why the rounds alternate. The headline figure is the median of the
per-round ratios: both sides of a round run back to back, so a change in the machine's
load between rounds cancels in the pair, where it does not in the ratio of medians.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from typing import Any

import torch

from benchmarks import models
from benchmarks.harness import RunOptions, run


def bare_loop(
    workload: str, size: str, batch_size: int, precision: str, steps: int, warmup: int
) -> float:
    """Samples/s of a hand-written training loop: no harness code at all."""
    bench = models.load(workload, size)
    torch.manual_seed(0)
    model = bench.build()
    if bench.is_cnn:
        model = model.to(memory_format=torch.channels_last)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    generator = torch.Generator().manual_seed(0)
    batch = bench.make_batch(batch_size, torch.device("cpu"), generator)
    if bench.is_cnn:
        batch = (batch[0].contiguous(memory_format=torch.channels_last), *batch[1:])
    autocast: Any = (
        torch.autocast("cpu", dtype=torch.bfloat16)
        if precision == "bf16"
        else contextlib.nullcontext()
    )

    def step() -> None:
        with autocast:
            loss = bench.loss(model, batch)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    for _ in range(warmup):
        step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return steps * batch_size / (time.perf_counter() - start)


def harness_run(
    workload: str, size: str, batch_size: int, precision: str, steps: int, warmup: int, bar: bool
) -> tuple[float, float]:
    """(wall-clock samples/s, reported median samples/s) of the harness on the same job."""
    options = RunOptions(
        workload=workload,
        size=size,
        precision=precision,
        device="cpu",
        batch_size=batch_size,
        steps=steps,
        warmup=warmup,
    )
    if not bar:
        stats = run(options).stats
        return stats.wall_samples_per_s, stats.samples_per_s
    from rich.console import Console

    from benchmarks.progress import StepProgress, progress_bar

    progress = progress_bar(Console(stderr=True), transient=True)
    with progress:
        stats = run(options, progress=StepProgress(progress, f"{workload} {size}")).stats
    return stats.wall_samples_per_s, stats.samples_per_s


def main(argv: list[str] | None = None) -> int:
    """Alternate bare and harness rounds; print the medians and the ratio."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fidelity", description=__doc__)
    parser.add_argument("--workload", default="gpt", choices=list(models.WORKLOADS))
    parser.add_argument("--size", default="tiny")
    parser.add_argument("--batch", type=int, default=None)
    parser.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--no-progress-bar", action="store_true")
    args = parser.parse_args(argv)
    size = models.check_size(args.workload, args.size)
    batch = args.batch or models.WORKLOADS[args.workload]["default_batch"][size]
    job = (args.workload, size, batch, args.precision, args.steps, args.warmup)
    print(
        f"{args.workload} {size} {args.precision} batch {batch}, {args.steps} timed steps, "
        f"{args.rounds} rounds, torch {torch.__version__}, {torch.get_num_threads()} threads"
    )
    bare: list[float] = []
    wall: list[float] = []
    reported: list[float] = []
    for i in range(args.rounds):
        order = ("bare", "harness") if i % 2 == 0 else ("harness", "bare")
        for side in order:
            if side == "bare":
                bare.append(bare_loop(*job))
            else:
                w, r = harness_run(*job, bar=not args.no_progress_bar)
                wall.append(w)
                reported.append(r)
        print(
            f"round {i + 1}: bare {bare[-1]:,.1f}  harness {wall[-1]:,.1f} (wall) "
            f"{reported[-1]:,.1f} (reported median step) samples/s, "
            f"ratio {wall[-1] / bare[-1]:.4f}"
        )
    med_bare, med_wall, med_rep = (statistics.median(x) for x in (bare, wall, reported))
    print(f"median bare loop:          {med_bare:,.1f} samples/s")
    print(f"median harness (wall):     {med_wall:,.1f} samples/s")
    print(f"median harness (reported): {med_rep:,.1f} samples/s")
    print(f"ratio harness / bare (same wall-clock definition): {med_wall / med_bare:.3f}")
    print(f"ratio reported / bare:                             {med_rep / med_bare:.3f}")
    paired = statistics.median(w / b for w, b in zip(wall, bare, strict=True))
    print(f"median of per-round ratios harness / bare:         {paired:.3f}")
    print(
        f"fidelity ratio (harness / bare, paired rounds): {paired:.3f}  "
        "[each round runs both sides back to back, A B B A, so drift in the machine's load "
        "cancels in the pair; the ratio of medians above does not]"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
