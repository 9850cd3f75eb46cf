"""Best achievable 16-bit matmul rate measured on each GPU, as a share of its dense peak.

MAMF ("maximum achievable matmul FLOPS"): the fastest bf16 GEMM over a brute-force search of
shapes with mamf-finder.py, mean of 100 iterations after 50 warm-up, from the table in
stas00/ml-engineering compute/accelerator/README.md @744d01e1 (reference/calibration/
gemm_achievable.csv); A100-SXM-40GB from FlagPerf's bf16 GEMM benchmark (mean of 8 GPUs,
base/benchmarks/computation-BF16 @1b5a0303); H200 SXM from gpuplan's own operator run on one
(reference/own_runs/h200-20261204, torch 2.11 with CUDA 13.0: the fastest of the 196 bf16
GEMM shapes it timed, 4096 x 8192 x 8192 by torch.matmul, a lower bound of its MAMF; its
fp8 best, 1,458 TFLOP/s, is the table's H200 fp8 MAMF within 0.3%). The table's A100 rows
of unstated memory are left out. A GPU's share is its TFLOP/s over the spec table's dense
bf16 peak (not the peak the source states: its MI355X row quotes the MI350X's 2.3 PF).

planner.llm.ops scales a generation's kernel efficiencies to a GPU by its share over the
H100 SXM's (REFERENCE_GPU): the same training-step GEMM code reaches a peak's share in
proportion to what that GPU's best GEMM reaches (clocks under load, power caps, the
vendor's GEMM library). A board without its own figure takes a same-silicon sibling's
(planner.machines.silicon: the H800 SXM the H100 SXM's, the A100 80GB boards the A100 SXM
40GB's); others have none (NaN).
"""

from __future__ import annotations

import math

from planner.machines.silicon import siblings_of
from planner.machines.specs import load_specs

REFERENCE_GPU = "H100-SXM"
MAMF_BF16_TFLOPS = {
    "H100-SXM": 794.5,
    "GH200": 828.6,
    "H200-SXM": 811.3,  # gpuplan's own ops run (module docstring)
    "B200": 1745.0,
    "B300": 1769.0,
    "GB200": 1822.0,
    "MI300X": 668.4,
    "MI325X": 784.9,
    "MI355X": 1565.0,
    "Gaudi2": 418.7,
    "Gaudi3": 1243.0,
    "A100-SXM-40GB": 259.2,
}


def matmul_share(gpu_name: str) -> float:
    """The GPU's best bf16 matmul over its dense bf16 peak, its own or else a same-silicon
    sibling's (NaN when neither is measured)."""
    name: str | None = gpu_name
    if name not in MAMF_BF16_TFLOPS:  # no figure of its own: a measured sibling's
        name = next((n for n in siblings_of(gpu_name) if n in MAMF_BF16_TFLOPS), None)
    if name is None:
        return math.nan
    specs = load_specs()
    peak = float(specs.loc[name, "bf16_tflops"]) if name in specs.index else math.nan
    return MAMF_BF16_TFLOPS[name] / peak if peak > 0 else math.nan


def matmul_factor(gpu_name: str) -> float:
    """matmul_share of the GPU over REFERENCE_GPU's (NaN when the GPU has none)."""
    return matmul_share(gpu_name) / matmul_share(REFERENCE_GPU)
