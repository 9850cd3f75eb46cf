"""Host seconds per weight-slice copy of a per-tensor sharded ZeRO-1 all-gather.

nanotron's ZeRO-1 (optim/zero.py ZeroDistributedOptimizer._all_gather_params, through
distributed.all_gather_coalesced) shards every weight tensor across the d data-parallel
ranks and, after the gather, copies each rank's slice of each tensor back with its own
copy: d x tensors small copies a step, each a Python slice, an unflatten view and a
`copy_` dispatch. This script runs that host-side path (the collective left out) on the
device given and prints the median microseconds per (tensor, rank) copy, which
planner.llm.layout.SLICE_COPY_HOST_S rests on. On CPU tensors it times the Python and
dispatcher part alone; on a CUDA device each copy also pays its kernel launch.

    python tools/bench_slice_copies.py [--device cuda] [--repeats 7]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors

CASES = ((170, 128), (50, 128), (482, 32), (50, 16))  # (weight tensors, data-parallel ranks)
SLICE_NUMEL = 64  # elements per slice: small, so the copies' own traffic is negligible


def gather_copies_seconds(tensors: int, ranks: int, device: str) -> float:
    """Seconds of one pass of the host path: slice every tensor per rank, flatten per rank
    (the gather's buffers), unflatten and copy each slice back."""
    weights = [torch.zeros(SLICE_NUMEL * ranks, device=device) for _ in range(tensors)]
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    start = time.perf_counter()
    per_tensor = [
        [w[r * SLICE_NUMEL : (r + 1) * SLICE_NUMEL] for r in range(ranks)] for w in weights
    ]
    per_rank = [[slices[r] for slices in per_tensor] for r in range(ranks)]
    gathered = [_flatten_dense_tensors(slices) for slices in per_rank]
    for slices, buffer in zip(per_rank, gathered, strict=True):
        for target, source in zip(slices, _unflatten_dense_tensors(buffer, slices), strict=True):
            target.copy_(source)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(1)
    per_copy = []
    for tensors, ranks in CASES:
        gather_copies_seconds(tensors, ranks, args.device)  # warm-up
        times = [gather_copies_seconds(tensors, ranks, args.device) for _ in range(args.repeats)]
        micro = statistics.median(times) / (tensors * ranks) * 1e6
        per_copy.append(micro)
        print(f"{tensors:4d} tensors x {ranks:4d} ranks: {statistics.median(times) * 1e3:8.1f} ms, "
              f"{micro:.2f} us per copy")  # fmt: skip
    median = statistics.median(per_copy)
    print(f"device {args.device}, torch {torch.__version__}: median {median:.2f} us per "
          "(tensor, rank) copy")  # fmt: skip


if __name__ == "__main__":
    main()
