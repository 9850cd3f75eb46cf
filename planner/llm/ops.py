"""Seconds of a transformer layer's operators on one GPU: GEMMs by shape, attention, and the
memory-bound operators, for one micro-batch, forward and backward (vectorised over layouts).

GEMM (m x k) @ (k x n), 2 m n k FLOPs (NVIDIA, "Matrix Multiplication Background User's
Guide", 2023): the GPU computes it in output tiles of TILE_M x TILE_N, a wave of one tile
per SM at a time, so it runs at

  e_gemm x tile(m, n) x wave(m, n) of the dense peak,
  tile = m n / (ceil(m/TM) TM ceil(n/TN) TN), wave = tiles / (ceil(tiles/SMs) SMs),

and never faster than it moves its operands (2-byte values: (m k + k n + m n) bytes / HBM).
e_gemm is what large, well-shaped GEMMs reach over a training step, per generation in
KERNEL_DEFAULTS (with its sources).

Per layer and micro-batch of T = b s / cp tokens per GPU (tensor parallel t, context
parallel cp), the forward GEMMs are QKV (T, (a + 2 g) d / t, h), the output projection
(T, h, a d / t) and the MLP: SwiGLU (T, 2 f / t, h) and (T, h, f / t), or GELU
(T, f / t, h) and (T, h, f / t) (Shoeybi et al. 2019, fig. 3; Korthikanti et al. 2022,
sec. 4); the backward pass computes each GEMM's input gradient (m, k, n) and its weight
gradient (k, n, m), the latter skipped for frozen weights (LoRA, QLoRA). The language-model
head (T, V / t, h) runs once per micro-batch on the last pipeline stage.

Attention (FlashAttention-2 FLOPs, Dao 2023, sec. 4.1): forward 4 b s_q s_k d heads, half
of it for causal masks, backward 2.5 x forward; under context parallelism a GPU's queries
(s / cp) meet every key in blocks of s / cp. Forward and backward run at the measured
FlashAttention share of the 16-bit peak for that block length and head dimension
(planner.llm.kernel_rates: FlashAttention-2 or -3, the stack's kernel), scaled to the GPU's
generation by e_attn over Hopper's (fp8 training keeps attention in 16 bits, as Transformer
Engine does by default). e_attn per generation in KERNEL_DEFAULTS.

FP8 casts (Transformer Engine, torchao float8): before each fp8 GEMM its 16-bit input and
weight are read and written in 8 bits (3 bytes per element), and backward the output
gradient too; the language-model head stays in 16 bits. The stack's `cast_factor`
(planner.llm.stack_profiles, fitted) scales that traffic: below 1 where casts are fused
into the norms, above where eager code casts op by op (and computes scales with amax).

Memory-bound operators per token and layer (16-bit values): two norms (read + write h each),
two residual adds (read 2 h, write h), the activation (SwiGLU: read 2 f, write f; GELU:
read f, write f), forward once and backward twice that (Korthikanti et al. 2022, sec. 4.1
count the same tensors for memory), times the framework's `unfused` factor (1 with fused
kernels, more in eager PyTorch), at HBM_FRACTION of the datasheet bandwidth. The optimizer
(Adam, mixed precision) reads and writes OPTIMIZER_BYTES_PER_PARAM per local parameter
once per step.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

import numpy as np

from planner.llm.fp8_recipes import BLACKWELL
from planner.llm.kernel_rates import attention_share
from planner.llm.matmul_rates import matmul_factor
from planner.llm.per_op_recompute import recomputed_gemm_share
from planner.settings import KERNEL_FLOOR_S

TILE_M, TILE_N = 256, 128  # cuBLAS's large-GEMM tile (NVIDIA matmul guide, "Tile quantization")
# Share of the datasheet HBM bandwidth a streaming kernel reaches, as measured: FlagPerf's
# A100-40GB device copy 85.5% (reference/calibration/memory_bandwidth.csv, main_memory-
# bandwidth @1b5a0303), gpuplan's own H200 copy 88.6% and add 91.5% (reference/own_runs/
# h200-20261204, the ops run); their mean, 0.885.
HBM_FRACTION = 0.885
HOPPER_GEMM = 0.70  # Hopper's e_gemm (KERNEL_DEFAULTS)
HOPPER_ATTENTION = 0.48  # Hopper's e_attn: the generation the measured shares are from
CAST_BYTES_PER_VALUE = 3.0  # read 2 bytes, write 1 (module docstring: FP8 casts)
# Without FlashAttention the scores are written, read and written by the softmax, and read
# by the product with V: 4 passes of b a s^2 16-bit values forward (Korthikanti et al. 2022,
# sec. 4.1 store 5 a s^2 b bytes of them), twice that backward.
SCORE_PASSES = 4.0
# Idle time between a layer's ~40 forward and backward kernels, per micro-batch (a compiled
# or fused stack's launch gaps), which matters for small models only: fitted on gpuplan's
# own compiled GPT-124M batch sweep on one H200 (batch 4/8/16/32, reference/own_runs): the
# step time's intercept against the batch, 3.08 ms, less the optimizer's 0.88 ms
# (optimizer_seconds at HBM_FRACTION of the datasheet bandwidth), over its 12 layers:
# 0.183 ms (about 4.6 µs a kernel). tests/planner/llm/test_llm_launch_gap.py refits it
# from those rows.
LAUNCH_S_PER_LAYER = 0.183e-3
# Eager PyTorch (no torch.compile, no fused kernels): each norm, activation, residual add
# and autocast cast is its own kernel, reading and writing its tensors once more than the
# fused kernel that would join it to its neighbour: twice the stack's memory-bound traffic
# (an assumption; gpuplan's own H200 GPT runs, eager over compiled at 124M/350M/1.3B:
# 0.87/0.87/0.93 measured, 0.88/0.89/0.92 predicted with the GPU's own operator rates).
EAGER_TRAFFIC_FACTOR = 2.0
# Kernels of one layer, forward and backward, in eager PyTorch under autocast: counted as
# the bench's own BERT-large's (planner.throughput.step_calibration.OWN_BERT_KERNELS, 1,300
# over 24 layers); a pre-LayerNorm GPT-2 block runs the same operators (two norms, QKV,
# attention, output, two MLP matmuls and their weight casts, an activation, two adds).
# Python dispatches each in the fitted per-kernel floor (planner.settings.KERNEL_FLOOR_S):
# a micro-batch takes at least that long, however small (the GPU waits for the host).
EAGER_KERNELS_PER_LAYER = 54.0
# Adam in mixed precision per local parameter per step: read fp32 master, m, v and the
# gradient (16 B), write master, m, v (12 B) and the 16-bit copy (2 B) (Rajbhandari et al.
# 2020, sec. 3.1: 16 bytes of state per parameter).
OPTIMIZER_BYTES_PER_PARAM = 30.0


@dataclass(frozen=True)
class KernelDefault:
    """Large-GEMM and long-sequence attention efficiency of one GPU generation (of the dense
    peak), their 10-90% bands, and the source code worded by planner.render.llm."""

    gemm: float
    attention: float
    low: float  # band factors on the compute time's efficiency
    high: float
    code: str


# (architecture regex on gpu_specs.csv's `architecture`, default). First match wins.
# In isolation large GEMMs reach "up to 80-90%" of the dense peak and FlashAttention-2
# 50-73% forward on A100 (Dao 2023, sec. 1 and 4.1), FlashAttention-3 75% forward on H100
# (Shah et al. 2024). Over a whole training step, at the clocks a GPU sustains under load
# (the dense peak is quoted at boost clock), they reach less: 0.70 of the peak for GEMMs
# and 0.48 for attention on Hopper, the values at which this model gives Llama 3 405B on
# 8,192 H100 (43% MFU, Dubey et al. 2024, table 4) within about 10%. Ampere: Hopper's
# scaled by the A100-40GB's best achievable matmul share over the H100's (planner.llm.
# matmul_rates: 0.83 / 0.80). Blackwell: Hopper's, wider band. Others: assumed, wider still.
# A GPU with its own measured matmul share scales Hopper's GEMM figure by it
# (kernel_default); each stack's fitted kernel_efficiency then scales every GPU alike
# (planner.llm.stack_profiles). A factor per generation fitted on the corpus was tried and
# dropped: each AMD stack has one source, so a fold's AMD factor is the other stack's, and
# held out it made the AMD runs worse (tools/evaluate_llm_corpus.py: 30% -> 26% overall
# without it).
KERNEL_DEFAULTS: tuple[tuple[str, KernelDefault], ...] = (
    (r"^Ampere \(GA100\)", KernelDefault(0.724, 0.496, 0.78, 1.12, "kernels_a100")),
    (r"^Hopper", KernelDefault(0.70, 0.48, 0.78, 1.12, "kernels_hopper")),
    (BLACKWELL, KernelDefault(0.70, 0.48, 0.72, 1.15, "kernels_blackwell")),
    # Volta: 1.2B GPT at 39 TFLOP/s of 125 on one V100, all of it (Shoeybi et al. 2019).
    (r"^Volta", KernelDefault(0.55, 0.35, 0.72, 1.20, "kernels_volta")),
    (r"^CDNA", KernelDefault(0.55, 0.35, 0.70, 1.25, "kernels_amd")),
)
DEFAULT_KERNELS = KernelDefault(0.60, 0.40, 0.70, 1.25, "kernels_assumed")
KERNEL_CODES = (*(k.code for _, k in KERNEL_DEFAULTS), DEFAULT_KERNELS.code, "kernels_measured")
# SMs per GPU by architecture (NVIDIA architecture whitepapers: GA100 108 in A100, GH100
# 132 in H100 SXM, GB100 148 in B200, Blackwell Ultra 160); other GPUs take 100 (wave
# quantization only).
SM_COUNTS: tuple[tuple[str, int], ...] = (
    (r"^Ampere \(GA100\)", 108),
    (r"^Hopper", 132),
    (r"^Blackwell Ultra", 160),  # NVIDIA, "Inside NVIDIA Blackwell Ultra" (2025)
    (BLACKWELL, 148),
    (r"^Volta", 80),
)
DEFAULT_SMS = 100


def kernel_default(architecture: str, gpu_name: str = "") -> KernelDefault:
    """The kernel efficiencies of a GPU generation (KERNEL_DEFAULTS); for a GPU with a
    measured best matmul share (planner.llm.matmul_rates), Hopper's GEMM efficiency times its
    share over the H100's, and the generation's attention in the same proportion."""
    generation = next(
        (k for pattern, k in KERNEL_DEFAULTS if re.search(pattern, architecture)),
        DEFAULT_KERNELS,
    )
    factor = matmul_factor(gpu_name) if gpu_name else math.nan
    if not math.isfinite(factor):
        return generation
    gemm = HOPPER_GEMM * factor
    return replace(generation, gemm=gemm, attention=generation.attention * gemm / generation.gemm)


def sm_count(architecture: str) -> int:
    """SMs of a GPU generation (SM_COUNTS), DEFAULT_SMS when not listed."""
    return next((n for pattern, n in SM_COUNTS if re.search(pattern, architecture)), DEFAULT_SMS)


@dataclass(frozen=True)
class MeasuredKernels:
    """Own operator-benchmark figures of one GPU (`gpuplan bench run --workload ops`, read by
    planner.llm.op_efficiency): GEMM shapes and their FLOP/s at the training precision,
    causal attention FLOP/s at the workload's head dim and sequence length, copy bandwidth
    in bytes/s (NaN where not measured), and the run they come from."""

    gemm_shapes: tuple[tuple[int, int, int], ...]
    gemm_flops: tuple[float, ...]
    attention_flops: float
    hbm_bytes_per_s: float
    run_id: str
    source: str


@dataclass(frozen=True)
class OpRates:
    """What one GPU's operators run at.

    gemm_flops: large-GEMM FLOP/s at the training precision (dense peak x e_gemm);
    attention_flops: long-sequence attention FLOP/s (16-bit peak x e_attn); hbm_bytes_per_s:
    achievable HBM bandwidth; sms: streaming multiprocessors (wave quantization);
    unfused: the framework's memory-bound traffic factor; value_bytes: bytes per activation;
    attention_kernel: the measured attention kernel (planner.llm.kernel_rates); cast_factor:
    the stack's fp8 cast traffic factor (0 without fp8 GEMMs); eager: PyTorch without
    torch.compile (the host dispatch floor of micro_batch_seconds).
    """

    gemm_flops: float
    attention_flops: float
    hbm_bytes_per_s: float
    sms: int
    unfused: float = 1.0
    value_bytes: float = 2.0
    measured: MeasuredKernels | None = None
    attention_kernel: str = "fa3"  # planner.llm.kernel_rates
    cast_factor: float = 0.0  # fp8 cast traffic factor (0: no fp8 GEMMs)
    eager: bool = False  # operators dispatched one by one from Python (EAGER_KERNELS_PER_LAYER)


def gemm_seconds(m: np.ndarray, n: np.ndarray, k: np.ndarray, rates: OpRates) -> np.ndarray:
    """Seconds of one (m x k) @ (k x n) GEMM (module docstring: tile and wave quantization,
    bounded below by its operands' bytes over HBM)."""
    m, n, k = (np.maximum(np.asarray(x, float), 1.0) for x in (m, n, k))
    if rates.measured is not None and rates.measured.gemm_shapes:
        return 2.0 * m * n * k / _measured_gemm_flops(rates.measured, m, n, k)
    tiles_m, tiles_n = np.ceil(m / TILE_M), np.ceil(n / TILE_N)
    tile = m * n / (tiles_m * TILE_M * tiles_n * TILE_N)
    tiles = tiles_m * tiles_n
    wave = tiles / (np.ceil(tiles / rates.sms) * rates.sms)
    compute = 2.0 * m * n * k / (rates.gemm_flops * tile * wave)
    moved = rates.value_bytes * (m * k + k * n + m * n) / rates.hbm_bytes_per_s
    return np.maximum(compute, moved)


def _measured_gemm_flops(
    measured: MeasuredKernels, m: np.ndarray, n: np.ndarray, k: np.ndarray
) -> np.ndarray:
    """FLOP/s of the measured GEMM nearest each (m, n, k) in log2 space (measured tile and
    wave effects included; no interpolation, as planner.llm.op_efficiency does)."""
    table = np.log2(np.asarray(measured.gemm_shapes, float))
    asked = np.log2(np.stack(np.broadcast_arrays(m, n, k), axis=-1))
    distances = np.linalg.norm(asked[..., None, :] - table, axis=-1)
    return np.asarray(measured.gemm_flops, float)[np.argmin(distances, axis=-1)]


@dataclass(frozen=True)
class LayerShape:
    """What the operator model needs of a decoder layer: width h, heads a of width d
    (h / a unless the model card says otherwise), key/value heads g, MLP width f (gated:
    SwiGLU's three matrices), vocabulary V, sequence s."""

    d_model: int
    n_heads: int
    n_kv_heads: int
    ffn_dim: int
    gated: bool
    vocab_size: int
    seq_len: int
    head_dim: int = 0  # each head's width; 0: d_model / n_heads

    @property
    def d_head(self) -> float:
        """Each attention head's width: head_dim, else d_model / n_heads."""
        return float(self.head_dim or self.d_model / self.n_heads)


def _gemms(shape: LayerShape, tokens: np.ndarray, tp: np.ndarray) -> list[tuple]:
    """The forward GEMMs of one layer as (m, n, k) arrays (module docstring)."""
    h, f, a, g = (float(x) for x in (shape.d_model, shape.ffn_dim, shape.n_heads, shape.n_kv_heads))
    d = shape.d_head
    up = (2.0 if shape.gated else 1.0) * f
    return [
        (tokens, (a + 2.0 * g) * d / tp, np.full_like(tokens, h)),
        (tokens, np.full_like(tokens, h), a * d / tp),
        (tokens, up / tp, np.full_like(tokens, h)),
        (tokens, np.full_like(tokens, h), f / tp),
    ]


def _train_gemm_seconds(
    gemms: list[tuple], rates: OpRates, weight_grads: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(forward, backward) seconds of these GEMMs: backward = input gradients (m, k, n) and,
    when weights train, weight gradients (k, n, m). All timed in one vectorised call."""
    shapes = [np.broadcast_arrays(*g) for g in gemms]
    calls = [(m, n, k) for m, n, k in shapes] + [(m, k, n) for m, n, k in shapes]
    if weight_grads:
        calls += [(k, n, m) for m, n, k in shapes]
    m, n, k = (np.stack([c[i] for c in calls]) for i in range(3))
    seconds = gemm_seconds(m, n, k, rates)
    count = len(shapes)
    return seconds[:count].sum(axis=0), seconds[count:].sum(axis=0)


def attention_seconds(
    shape: LayerShape, sequences: np.ndarray, tp: np.ndarray, cp: np.ndarray, rates: OpRates
) -> tuple[np.ndarray, np.ndarray]:
    """(forward, backward) seconds of causal attention for `sequences` per GPU (module
    docstring: FlashAttention-2 FLOPs at the measured kernel share for the block length and
    head dimension; an own measurement at the workload's shape as it is)."""
    s, heads = float(shape.seq_len), float(shape.n_heads)
    d = shape.d_head
    forward_flops = 4.0 * sequences * (s / cp) * s * d * (heads / tp) / 2.0
    chunk = s / cp  # the ring's blocks are s / cp long
    if rates.measured is not None and np.isfinite(rates.measured.attention_flops):
        efficiency = np.ones_like(np.asarray(chunk, float))
    else:
        efficiency = attention_share(rates.attention_kernel, chunk, d) / HOPPER_ATTENTION
    forward = forward_flops / (rates.attention_flops * efficiency)
    return forward, 2.5 * forward


def cast_seconds(gemms: list[tuple], rates: OpRates, weight_grads: bool) -> np.ndarray:
    """Seconds of the fp8 casts around these forward GEMMs, forward and backward (module
    docstring), at the stack's cast_factor (0 without fp8)."""
    if rates.cast_factor <= 0:
        return np.zeros_like(np.asarray(gemms[0][0], float))
    values = sum(m * k + k * n + (m * n if weight_grads else 0.0) for m, n, k in gemms)
    moved = CAST_BYTES_PER_VALUE * rates.cast_factor * np.asarray(values, float)
    return moved / rates.hbm_bytes_per_s


def memory_bound_seconds(
    shape: LayerShape,
    tokens: np.ndarray,
    tp: np.ndarray,
    rates: OpRates,
    sequences: np.ndarray | None = None,
    cp: np.ndarray | float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """(forward, backward) seconds of a layer's norms, residual adds and activation for
    `tokens` per GPU (module docstring). Sequence parallelism splits the norms and adds
    over the tensor-parallel ranks (Korthikanti et al. 2022, sec. 4.2.2)."""
    h, f = float(shape.d_model), float(shape.ffn_dim)
    activation = (3.0 if shape.gated else 2.0) * f
    values = tokens * ((4.0 * h + 6.0 * h) / tp + activation / tp)
    if sequences is not None:  # attention without FlashAttention: the s x s scores
        s = float(shape.seq_len)
        values = values + SCORE_PASSES * sequences * shape.n_heads / tp * (s / cp) * s
    forward = values * rates.value_bytes * rates.unfused / rates.hbm_bytes_per_s
    return forward, 2.0 * forward


@dataclass(frozen=True)
class MicroBatchTimes:
    """Seconds of one micro-batch on one GPU of a stage, forward + backward, by kind."""

    gemm: np.ndarray
    attention: np.ndarray
    memory: np.ndarray
    recompute: np.ndarray
    cast: np.ndarray | float = 0.0  # fp8 casts (cast_seconds)

    @property
    def total(self) -> np.ndarray:
        """All of it: GEMMs, attention, memory-bound operators, recomputation, fp8 casts."""
        return self.gemm + self.attention + self.memory + self.recompute + self.cast


def micro_batch_seconds(
    shape: LayerShape,
    rates: OpRates,
    stage_layers: np.ndarray,
    mb: np.ndarray,
    tp: np.ndarray,
    cp: np.ndarray,
    recompute_share: np.ndarray,
    selective: np.ndarray,
    weight_grads: bool,
    flash: bool = True,
    head: np.ndarray | float = 1.0,
    per_op: np.ndarray | bool = False,
    early_stop: bool = False,
) -> MicroBatchTimes:
    """One micro-batch of `mb` sequences through a pipeline stage of `stage_layers` layers
    plus the language-model head (the last stage's, which sets the pace), per GPU; `head`
    0 for a stage without it.

    Full recomputation of a share of the layers adds that share of their forward pass, less
    the MLP's down projection where it stops early (`early_stop`: PyTorch's non-reentrant
    checkpoint; planner.llm.frameworks recompute_early_stop); selective recomputation the
    attention forward (Korthikanti et al. 2022, sec. 5);
    per-operator recomputation (`per_op`, torchtitan's) the forward GEMMs its policy does
    not save and the forward memory-bound work (planner.llm.per_op_recompute).
    """
    tokens = mb * shape.seq_len / cp
    layer_gemms = _gemms(shape, tokens, tp)
    gemm_f, gemm_b = _train_gemm_seconds(layer_gemms, rates, weight_grads)
    attn_f, attn_b = attention_seconds(shape, mb, tp, cp, rates)
    mem_f, mem_b = memory_bound_seconds(shape, tokens, tp, rates, None if flash else mb, cp)
    mem_f = mem_f + LAUNCH_S_PER_LAYER / 3.0  # kernel gaps, a third forward
    mem_b = mem_b + LAUNCH_S_PER_LAYER * 2.0 / 3.0
    lm_head = [(tokens, shape.vocab_size / tp, np.full_like(tokens, float(shape.d_model)))]
    head_f, head_b = (head * t for t in _train_gemm_seconds(lm_head, rates, weight_grads))
    # Softmax and cross-entropy over the vocabulary: read and write the logits, forward
    # and backward (16-bit values).
    logits = head * 4.0 * tokens * shape.vocab_size / tp * rates.value_bytes / rates.hbm_bytes_per_s
    layer_forward = gemm_f + attn_f + mem_f
    if early_stop:  # the last GEMM's output is read by nothing but the residual add
        layer_forward = layer_forward - _train_gemm_seconds(layer_gemms[-1:], rates, False)[0]
    again = stage_layers * (
        recompute_share * layer_forward
        + np.where(selective, attn_f, 0.0)
        + np.where(per_op, recomputed_gemm_share(shape) * gemm_f + mem_f, 0.0)
    )
    times = MicroBatchTimes(
        gemm=stage_layers * (gemm_f + gemm_b) + head_f + head_b,
        attention=stage_layers * (attn_f + attn_b),
        memory=stage_layers * (mem_f + mem_b) + logits,
        recompute=again,
        cast=stage_layers * cast_seconds(layer_gemms, rates, weight_grads),
    )
    if not rates.eager:
        return times
    # The host dispatches every kernel; the GPU cannot finish the micro-batch sooner.
    # (per-operator recomputation launches nearly the whole forward again: counted as one)
    again_share = recompute_share + np.where(per_op, 1.0, 0.0)
    host = stage_layers * (1.0 + again_share) * EAGER_KERNELS_PER_LAYER * KERNEL_FLOOR_S
    return replace(times, memory=times.memory + np.maximum(host - times.total, 0.0))


def optimizer_seconds(local_params: np.ndarray, rates: OpRates) -> np.ndarray:
    """The optimizer step's seconds for `local_params` parameters on one GPU (Adam, mixed
    precision: OPTIMIZER_BYTES_PER_PARAM over HBM)."""
    return np.asarray(local_params, float) * OPTIMIZER_BYTES_PER_PARAM / rates.hbm_bytes_per_s
