"""LLM memory per GPU for a parallel layout: model states by ZeRO stage, and activations.

Layout: tensor parallel t (with sequence parallelism), pipeline p, data parallel d; N params,
sequence s, micro-batch b, width h, heads a, layers L, vocabulary V. All in bytes.

Model states (Rajbhandari et al. 2020, "ZeRO", sec. 3.1 and 5): mixed-precision Adam keeps
16-bit weights (2) and gradients (2) and fp32 master weights, momentum and variance (12) per
parameter; fp32/tf32 training keeps 4 + 4 + 8. fp8 training (Transformer Engine; Micikevicius
et al. 2022, "FP8 Formats for Deep Learning") computes in fp8 but keeps the same states. Each
GPU holds N / (t p) of the parameters (Shoeybi et al. 2019; Narayanan et al. 2021); ZeRO-1
shards the optimizer's 12 over d, ZeRO-3/FSDP all 16. LoRA (Hu et al. 2021) keeps frozen
16-bit weights (2 bytes; QLoRA's 4-bit NF4 with double quantization 4.127 bits = 0.516 bytes,
Dettmers et al. 2023 sec. 3) and trains only the adapters, whose states are 16 bytes each.

Activations per layer and micro-batch (Korthikanti et al. 2022, "Reducing Activation
Recomputation in Large Transformer Models", eq. 5 with tensor and sequence parallelism):
  s b h (c + 5 a s / h) / t    no recomputation, attention scores stored (5 a s^2 b);
  s b h c / t                  FlashAttention (Dao et al. 2022: scores are recomputed in the
                               backward pass, never stored) or selective recomputation
                               (Korthikanti et al. 2022, sec. 5, eq. 7);
                               c counts the 16-bit tensors a layer keeps per token from its
                               own widths (layer_activation_sbh): the two norms' inputs
                               (2 h), the QKV input (h), Q, K, V and the attention output
                               (2 a d + 2 g d), the MLP's input (h) and its inner tensors
                               (3 f gated: SwiGLU's gate/up output and the down projection's
                               input, as Megatron's fused SwiGLU keeps them; 2 f for GELU),
                               x 2 bytes / h. For a 4h GELU MLP and multi-head attention that
                               is 32, Korthikanti's 34 less its two dropout masks; a
                               multi-head SwiGLU model keeps more (nanotron's 1.34B: 40);
  2 s b h / t                  full recomputation: only each layer's input (sec. 4.3), plus
                               one layer's activations while it is recomputed;
  s b h c / t                  per-operator recomputation (torchtitan's): the matmul and
                               attention outputs its policy saves, c = 16 for a 4h GELU
                               MLP and multi-head attention (planner.llm.per_op_recompute
                               gives c for the model's own widths).
16-bit activations; fp32/tf32 doubles them. The output layer adds s b (4 h + l V) / t
(sec. 4.3): l bytes per logit is the stack's (planner.llm.frameworks.Framework.logit_bytes):
4 for Megatron's vocabulary-parallel cross-entropy, which keeps the fp32 logits and works
in place (Korthikanti's 4 s b V), 10 where the loss is PyTorch's cross-entropy on upcast
logits (the 16-bit logits, the fp32 log-softmax kept for the backward pass and its fp32
gradient: 2 + 4 + 4). With 1F1B pipelining the first stage
holds min(p, m) micro-batches of its ceil(L/p) layers in flight (Narayanan et al. 2021, sec.
2.2; Korthikanti et al. 2022, sec. 4.2.3).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from planner.llm.ops import LayerShape

# Bytes per parameter: (weights, gradients, optimizer state) by precision (ZeRO sec. 3.1).
STATE_BYTES: dict[str, tuple[float, float, float]] = {
    "fp32": (4.0, 4.0, 8.0),
    "tf32": (4.0, 4.0, 8.0),
    "fp16": (2.0, 2.0, 12.0),
    "bf16": (2.0, 2.0, 12.0),
    "fp8": (2.0, 2.0, 12.0),
}
FROZEN_WEIGHT_BYTES = {"lora": 2.0, "qlora": 4.127 / 8.0}  # Hu et al. 2021; Dettmers 2023
ADAPTER_STATE_BYTES = 16.0  # adapters train in mixed precision: 2 + 2 + 12 (ZeRO sec. 3.1)
ACTIVATION_FACTOR = {"fp32": 2.0, "tf32": 2.0, "fp16": 1.0, "bf16": 1.0, "fp8": 1.0}
LAYER_SBH = 34.0  # bytes per s b h a layer keeps, 4h GELU MLP, MHA, dropout (Korthikanti)
LOGIT_BYTES = 4.0  # bytes per logit kept for the loss (Korthikanti sec. 4.3)
PER_OP_SBH = 16.0  # bytes per s b h stored under per-op recomputation, 4h GELU MLP, MHA


def state_bytes_per_gpu(
    params: float,
    adapter_params: float,
    mode: str,
    precision: str,
    tp: np.ndarray,
    pp: np.ndarray,
    dp: np.ndarray,
    zero: np.ndarray,
    grad_bytes: float = 2.0,
) -> np.ndarray:
    """Weights, gradients and optimizer state on one GPU (bytes), per layout (vectorized):
    `zero` the ZeRO stage (planner.settings.ZERO_STAGES): 0 keeps everything on every
    data-parallel rank, 1 shards the optimizer state over them, 3 everything (ZeRO sec.
    3.1); `grad_bytes` the stack's gradient buffer per parameter in 16-bit training (4
    where it keeps fp32 gradients: planner.llm.frameworks.Framework.grad_bytes)."""
    shard = np.asarray(tp, float) * np.asarray(pp, float)
    dp = np.asarray(dp, float)
    zero = np.asarray(zero, float)
    zero3 = zero == 3
    optim_share = np.where(zero >= 1, 1.0 / dp, 1.0)
    weight, grad, optim = STATE_BYTES[precision]
    grad = max(grad, grad_bytes)
    if mode in FROZEN_WEIGHT_BYTES:
        frozen = FROZEN_WEIGHT_BYTES[mode] * params / shard
        adapters = adapter_params / shard
        adapter_states = np.where(
            zero3,
            ADAPTER_STATE_BYTES * adapters / dp,
            4.0 * adapters + 12.0 * adapters * optim_share,
        )
        return np.where(zero3, frozen / dp, frozen) + adapter_states
    local = params / shard
    return np.where(
        zero3,
        (weight + grad + optim) * local / dp,
        (weight + grad) * local + optim * local * optim_share,
    )


def layer_activation_sbh(layer: LayerShape) -> float:
    """Bytes per token and unit of width a layer keeps without recomputation (module
    docstring, c): 2 (4 h + 2 a d + 2 g d + k f) / h, k = 3 gated, 2 GELU."""
    h, q, kv = float(layer.d_model), layer.n_heads * layer.d_head, layer.n_kv_heads * layer.d_head
    inner = (3.0 if layer.gated else 2.0) * float(layer.ffn_dim)
    return 2.0 * (4.0 * h + 2.0 * q + 2.0 * kv + inner) / h


def activation_bytes_per_layer(
    seq_len: int,
    micro_batch: np.ndarray,
    d_model: int,
    heads: int,
    tp: np.ndarray,
    recompute: np.ndarray,
    flash: bool,
    precision: str = "bf16",
    per_op_sbh: float = PER_OP_SBH,
    layer_sbh: float = LAYER_SBH,
) -> np.ndarray:
    """One layer's stored activations for one micro-batch (Korthikanti et al. 2022, eq. 5/7;
    `per_op_sbh`: bytes per s b h kept under per-operator recomputation)."""
    s, h = float(seq_len), float(d_model)
    sbh_t = s * np.asarray(micro_batch, float) * h / np.asarray(tp, float)
    recompute = np.asarray(recompute)
    scores = 0.0 if flash else 5.0 * heads * s / h
    per_layer = np.select(
        [recompute == "full", recompute == "selective", recompute == "per-op"],
        [2.0 * sbh_t, layer_sbh * sbh_t, per_op_sbh * sbh_t],
        sbh_t * (layer_sbh + scores),
    )
    return per_layer * ACTIVATION_FACTOR[precision]


def activation_bytes_per_gpu(
    seq_len: int,
    d_model: int,
    heads: int,
    n_layer: int,
    vocab_size: int,
    precision: str,
    tp: np.ndarray,
    pp: np.ndarray,
    micro_batch: np.ndarray,
    micro_batches: np.ndarray,
    recompute: np.ndarray,
    flash: bool,
    interleave: np.ndarray | None = None,
    per_op_sbh: float = PER_OP_SBH,
    layer_sbh: float = LAYER_SBH,
    logit_bytes: float = LOGIT_BYTES,
) -> np.ndarray:
    """Activations held by the busiest (first) pipeline stage, bytes, per layout, with the
    output layer's logits added (they sit on the last stage; the Ultra-Scale Playbook's
    pipelined runs peak as if both were on one: tools/evaluate_llm_memory.py).

    `interleave`: v virtual stages per GPU (interleaved 1F1B); the first stage then holds
    1 + (p - 1)/(p v) times as much (Korthikanti et al. 2022, sec. 4.2.3).
    """
    pp = np.asarray(pp, float)
    layers = np.ceil(n_layer / pp)
    in_flight = np.minimum(pp, np.maximum(np.asarray(micro_batches, float), 1.0))
    if interleave is not None:
        v = np.asarray(interleave, float)
        in_flight = in_flight * np.where(v > 1, 1.0 + (pp - 1.0) / (pp * v), 1.0)
    kept = activation_bytes_per_layer(
        seq_len, micro_batch, d_model, heads, tp, recompute, flash, precision, per_op_sbh,
        layer_sbh,
    )  # fmt: skip
    stored = np.asarray(recompute) == "full"
    no_recompute = np.full(stored.shape, "none")
    rebuilt = activation_bytes_per_layer(
        seq_len, micro_batch, d_model, heads, tp, no_recompute, flash, precision,
        layer_sbh=layer_sbh,
    )  # fmt: skip
    output = (
        seq_len
        * np.asarray(micro_batch, float)
        * (4.0 * d_model + logit_bytes * vocab_size)
        / np.asarray(tp, float)
    )
    return layers * in_flight * kept + np.where(stored, rebuilt, 0.0) + output


def usable_bytes(memory_gb: float, reserve_fraction: float) -> float:
    """Per-GPU bytes the model may use: spec GB x 1e9 x (1 - reserve) (CUDA context, NCCL
    buffers, allocator fragmentation; an assumption: 10% by default)."""
    return memory_gb * 1e9 * (1.0 - reserve_fraction)
