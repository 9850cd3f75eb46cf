"""Measured attention rates by shape: FlashAttention-2 and -3 on H100 SXM by sequence length,
head dimension and pass, as a share of the H100's dense 16-bit peak (989.4 TFLOP/s).

Source (reference/calibration/attention_kernels.csv, bar labels read from the figures):
Dao-AILab/flash-attention, assets/flash2_h100_fwd_bwd_benchmark.png (FlashAttention-2,
forward + backward, causal, 2023-07-17) and assets/flash3_fp16_fwd.png (FlashAttention-3
paper, Shah et al. 2024, fig. 5: forward, causal). FlashAttention-3's backward is not in the
table: its forward + backward share is taken as its forward share x FlashAttention-2's
(forward + backward) / forward ratio at the same shape (an assumption: the backward pass
loses the same share under both kernels).

A training step's causal attention (forward + backward, 3.5 x the forward FLOPs) runs at
`attention_share(kernel, block, head_dim)` of the H100's peak, interpolated in log2 of the
block length (clamped to the measured 512-16k tokens; at 64k-token blocks the 16k figure),
and in head dimension between 64 and 128 (128 for wider heads; FlashAttention-2 fwd+bwd has
no 256 column). Other GPUs scale it by their generation's factor (planner.llm.ops
KERNEL_DEFAULTS attention over Hopper's): the kernels are written for each generation, so
a share of the peak, not TFLOP/s, is what carries over.
"""

from __future__ import annotations

import re

import numpy as np

H100_PEAK_TFLOPS = 989.4
SEQ_LENS = np.array([512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0])
# TFLOP/s, causal, by head dimension (64, 128) over SEQ_LENS.
FA2_FWD_BWD = {
    64: (141.0, 192.0, 232.0, 257.0, 273.0, 284.0),
    128: (163.0, 221.0, 265.0, 294.0, 308.0, 328.0),
}
FA2_FWD = {
    64: (180.0, 229.0, 262.0, 284.0, 295.0, 299.0),
    128: (191.0, 260.0, 298.0, 319.0, 333.0, 335.0),
}
FA3_FWD = {
    64: (197.0, 265.0, 371.0, 420.0, 460.0, 473.0),
    128: (292.0, 423.0, 521.0, 579.0, 602.0, 616.0),
}
ATTENTION_KERNELS = ("fa2", "fa3")
# PyTorch SDPA with cuDNN's attention first ("cudnn"): torchtitan's ScaledDotProductAttention
# wrapper orders cuDNN, flash, efficient, math with set_priority, and torch 2.11 with cuDNN
# 9.19 does the same by itself on sm90 (gpuplan's own H200 ops run records backend cudnn, at
# 0.93-1.2x the FlashAttention-3-class shares below). On the data-center Hopper and Blackwell
# GPUs it runs FlashAttention-3-class; elsewhere SDPA's FlashAttention-2 sets the rate.
CUDNN_FIRST = re.compile(r"^(Hopper|Blackwell(?! \(GB202\))|GB200|GB300)")


def kernel_on(kernel: str, architecture: str) -> str:
    """The measured kernel class (ATTENTION_KERNELS) a stack's attention kernel runs on a GPU
    of `architecture` (gpu_specs.csv): "cudnn" as CUDNN_FIRST says, the others as named."""
    if kernel != "cudnn":
        return kernel
    return "fa3" if CUDNN_FIRST.search(architecture) else "fa2"


def _shares(kernel: str, head_dim: int) -> np.ndarray:
    """Forward + backward share of the H100 peak over SEQ_LENS at one tabled head dim."""
    fa2 = np.asarray(FA2_FWD_BWD[head_dim])
    if kernel == "fa3":
        return (
            np.asarray(FA3_FWD[head_dim]) * fa2 / np.asarray(FA2_FWD[head_dim]) / H100_PEAK_TFLOPS
        )
    return fa2 / H100_PEAK_TFLOPS


def attention_share(kernel: str, block: np.ndarray | float, head_dim: float) -> np.ndarray:
    """Share of the 16-bit dense peak that causal attention (forward + backward) reaches on
    Hopper for blocks of `block` tokens at `head_dim` (module docstring)."""
    if kernel not in ATTENTION_KERNELS:
        raise ValueError(f"attention kernel {kernel!r}: valid are {', '.join(ATTENTION_KERNELS)}")
    x = np.log2(np.clip(np.asarray(block, float), SEQ_LENS[0], SEQ_LENS[-1]))
    grid = np.log2(SEQ_LENS)
    low, high = np.interp(x, grid, _shares(kernel, 64)), np.interp(x, grid, _shares(kernel, 128))
    weight = float(np.clip((head_dim - 64.0) / 64.0, 0.0, 1.0))
    return low + weight * (high - low)
