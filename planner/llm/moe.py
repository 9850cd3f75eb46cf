"""Mixture-of-experts terms of the LLM model: parameters, FLOPs, expert memory, grouped GEMMs
and the all-to-all that routes tokens to experts (vectorised over layouts).

A MoE decoder replaces each layer's MLP by E routed experts (SwiGLU MLPs of width f_e), of
which a learned router sends each token to its top k, plus S shared experts every token
passes through (Shazeer et al. 2017; Fedus et al. 2022, "Switch Transformers"; Dai et al.
2024, DeepSeekMoE). Notation: total parameters N, active (per token) parameters A, layers L,
width h, tokens T = b s / cp per GPU and micro-batch, tensor parallel t, expert parallel ep.

Parameters and FLOPs. Only the routed experts a token skips are inactive, so the routed
experts hold (N - A) E / (E - k) parameters. FLOPs and MFU count the ACTIVE parameters:
6 A + 12 L s h per token (Chowdhery et al. 2022, PaLM app. B, with A for N: the FLOPs a
token really costs; DeepSeek-AI 2024, DeepSeek-V3 report, sec. 3.1, counts MFU so).

Layout. Experts are spread over ep ranks carved out of the data-parallel ranks (ep divides
d; Megatron-Core's expert parallelism, Lepikhin et al. 2021, GShard) and split over the
tensor-parallel ranks (expert tensor parallelism et = t, Megatron-Core's default). A GPU
then holds E / ep experts, and the routed experts' states are sharded over et p ep GPUs,
their optimizer over the t d cp / (et ep) ranks that hold the same experts (ZeRO:
Rajbhandari et al. 2020). Megatron-Core's MoE parallel folding (et = 1, experts whole, ep
dividing t cp d: the expert ranks fold over the tensor, context and data-parallel ones,
Liu et al. 2025, "MoE Parallel Folding", arXiv:2504.14960) is the other layout weighed:
each GPU then runs its experts whole on the T / t tokens it holds, and its ep ranks are
consecutive GPUs.

Time per MoE layer and micro-batch, on one GPU:
  grouped GEMM  the E / ep local experts' up (T_r, 2 f_e / et, h) and down (T_r, h,
                f_e / et) GEMMs, forward and backward, on T_r = T k ep et / (E t) x
                LOAD_IMBALANCE tokens per expert (the busiest rank sets the pace). Each
                expert's rows are padded to the GEMM tile (MegaBlocks pads to its block
                size: Gale et al. 2023, sec. 5.1), so small per-expert token counts waste
                compute, and the grouped kernel runs at GROUPED_GEMM_EFFICIENCY of a dense
                GEMM's rate.
  all-to-all    dispatch and combine, forward and backward (4 per layer): each GPU sends
                T k / t tokens of h 16-bit values, (ep - 1) / ep of them to other ranks;
                T = α + (ep - 1)/ep x bytes / bandwidth (the α-β model of Hockney 1994),
                with the share that stays in the node over NVLink and the rest over each
                GPU's share of the network, the slower of the two setting the time. One α,
                not the (ep - 1) of a pairwise exchange (Thakur et al. 2005, sec. 4.6):
                NCCL posts every peer's send and receive in one round of one kernel, its
                channels per peer cut until all peers fit (src/graph/paths.cc,
                ncclTopoComputeP2pChannels; src/enqueue.cc, scheduleP2pTasksToPlan), and
                DeepEP's kernels send to every rank at once. A token bound for
                several experts on another node crosses the network once and is forwarded
                over NVLink there (DeepEP's internode dispatch, which Megatron-Core's flex
                dispatcher runs; DeepSeek-AI 2024, sec. 3.2.2). Not overlapped with
                compute (Megatron-Core's default dispatcher), unless LLMSettings.moe_overlap
                says it runs under another micro-batch's compute as DeepSeek-V3's DualPipe
                runs it (planner.llm.layout: only what outlasts that compute is exposed).
  memory-bound  the routed tokens' SwiGLU activation and the permutation into and out of
                expert order (read and write T k h values each way), at HBM bandwidth.

Attention is timed as multi-head (grouped-query) attention of the card's heads and head
width (Qwen3's 128-wide heads at width 4096, GPT-OSS's 64-wide at 2880); DeepSeek-V3's
multi-head latent attention, which compresses keys and values into a 512-wide latent, is
timed as multi-head attention of width h (MHA-equivalent), and GPT-OSS's alternating
128-token banded attention as full attention.
"""

from __future__ import annotations

import numpy as np

from planner.llm.ops import TILE_M, OpRates, cast_seconds, gemm_seconds

# The busiest expert-parallel rank's routed tokens over the mean: an assumption of 1.15
# within 1.1-1.2. Switch Transformers train with capacity factors 1.0-1.25 to absorb the
# imbalance left by the balancing loss (Fedus et al. 2022, sec. 2.2 and table 1); DeepSeek-V3's
# auxiliary-loss-free balancing keeps each expert's load close to the mean over a batch
# (DeepSeek-AI 2024, sec. 2.1.2 and fig. 9), which is the low end.
LOAD_IMBALANCE = 1.15
LOAD_IMBALANCE_RANGE = (1.1, 1.2)
# A grouped GEMM's rate over one dense GEMM of the same total shape, before tile padding: an
# assumption of 0.9 within 0.8-1.0. MegaBlocks' block-sparse expert kernels reach 98.6% of
# cuBLAS's batched-GEMM throughput (Gale et al. 2023, sec. 6.2); grouped kernels with
# uneven per-expert counts lose more to scheduling and their tails.
GROUPED_GEMM_EFFICIENCY = 0.9
# Dispatch and combine, forward and backward: all-to-alls per MoE layer and micro-batch.
ALL_TO_ALLS_PER_LAYER = 4.0


def expert_state_bytes(
    routed_params: float,
    precision: str,
    tp: np.ndarray,
    pp: np.ndarray,
    ep: np.ndarray,
    dp: np.ndarray,
    zero: np.ndarray,
) -> np.ndarray:
    """Routed experts' weights, gradients and optimizer state on one GPU (bytes): sharded
    over t p ep GPUs (`tp`: the expert-tensor-parallel size), nothing more (`zero` 0), the
    optimizer (ZeRO-1) or all of it (ZeRO-3) over the dp / ep ranks that hold the same
    experts (`dp`: the ranks the expert layers fold over, d cp without folding, t d cp / et
    with it)."""
    from planner.llm.memory import state_bytes_per_gpu

    ep = np.asarray(ep, float)
    return state_bytes_per_gpu(
        routed_params, 0.0, "pretrain", precision, np.asarray(tp, float) * ep, pp,
        np.maximum(np.asarray(dp, float) / ep, 1.0), zero,
    )  # fmt: skip


def expert_activation_bytes(
    tokens: np.ndarray,
    d_model: int,
    expert_ffn: int,
    top_k: int,
    tp: np.ndarray,
    value_bytes: float,
) -> np.ndarray:
    """One MoE layer's routed experts' stored activations for `tokens` per GPU (bytes),
    beyond what the layer keeps by its own widths (planner.llm.memory.layer_activation_sbh:
    its norms, attention, the MLP block's input and the shared experts' SwiGLU, no dense
    MLP): each routed copy's dispatched input and combined output (2 k h) and its SwiGLU's
    three f_e-wide tensors (3 k f_e), x LOAD_IMBALANCE; all over t."""
    routed = LOAD_IMBALANCE * top_k * (2.0 * float(d_model) + 3.0 * expert_ffn)
    return np.asarray(tokens, float) * routed * value_bytes / np.asarray(tp, float)


def grouped_gemm_seconds(
    tokens_per_expert: np.ndarray,
    local_experts: np.ndarray,
    n: np.ndarray,
    k: np.ndarray,
    rates: OpRates,
) -> np.ndarray:
    """Seconds of one grouped GEMM: `local_experts` GEMMs of (m, n) x k with m tokens each,
    every expert's rows padded to the tile (TILE_M), at GROUPED_GEMM_EFFICIENCY of the dense
    GEMM rate; never faster than moving every expert's weights and tokens over HBM. With
    measured kernels: the measured rate of one GEMM of all the experts' rows."""
    m = np.maximum(np.asarray(tokens_per_expert, float), 1.0)
    experts = np.asarray(local_experts, float)
    n, k = np.maximum(np.asarray(n, float), 1.0), np.maximum(np.asarray(k, float), 1.0)
    if rates.measured is not None and rates.measured.gemm_shapes:
        whole = gemm_seconds(m * experts, n, k, rates)
        return whole / GROUPED_GEMM_EFFICIENCY
    padding = m / (np.ceil(m / TILE_M) * TILE_M)
    flops = 2.0 * m * n * k * experts
    compute = flops / (rates.gemm_flops * GROUPED_GEMM_EFFICIENCY * padding)
    moved = rates.value_bytes * experts * (m * k + k * n + m * n) / rates.hbm_bytes_per_s
    return np.maximum(compute, moved)


def expert_layer_seconds(
    tokens: np.ndarray,
    tp: np.ndarray,
    ep: np.ndarray,
    d_model: int,
    experts: int,
    top_k: int,
    expert_ffn: int,
    rates: OpRates,
    weight_grads: bool = True,
    etp: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(grouped GEMM forward, backward, memory-bound forward, backward, fp8 casts) seconds
    of one MoE layer's routed experts and router for `tokens` per GPU (module docstring; the
    casts are planner.llm.ops.cast_seconds on each local expert's GEMMs, 0 without fp8).
    `etp`: the expert-tensor-parallel size (None: tp; 1: parallel folding)."""
    tokens = np.asarray(tokens, float)
    tp, ep = np.asarray(tp, float), np.asarray(ep, float)
    etp = tp if etp is None else np.asarray(etp, float)
    h, f = float(d_model), float(expert_ffn)
    local = experts / ep
    per_expert = tokens * top_k * ep / experts * etp / tp * LOAD_IMBALANCE  # the busiest's
    full = np.full_like(per_expert, h)
    shapes = [(2.0 * f / etp, full), (full, f / etp)]  # (n, k) of up (gate + up) and down
    forward = np.zeros_like(per_expert)
    backward = np.zeros_like(per_expert)
    for n, k in shapes:
        forward = forward + grouped_gemm_seconds(per_expert, local, n, k, rates)
        backward = backward + grouped_gemm_seconds(per_expert, local, k, n, rates)
        if weight_grads:  # (k, n, m): the tokens are the contracted dimension
            rows = np.broadcast_to(k, per_expert.shape)
            backward = backward + grouped_gemm_seconds(rows, local, n, per_expert, rates)
    router = gemm_seconds(tokens, np.full_like(tokens, float(experts)), full, rates)
    forward, backward = forward + router, backward + 2.0 * router
    routed = tokens * top_k * LOAD_IMBALANCE
    values = routed * (3.0 * f / tp + 4.0 * h / tp)  # SwiGLU, permute and unpermute
    memory = values * rates.value_bytes * rates.unfused / rates.hbm_bytes_per_s
    casts = local * cast_seconds([(per_expert, n, k) for n, k in shapes], rates, weight_grads)
    return forward, backward, memory, 2.0 * memory, casts


def all_to_all_seconds(
    nbytes: np.ndarray,
    ep: np.ndarray,
    peers_in_node: np.ndarray,
    intra_gbs: np.ndarray | float,
    network_gbs: float,
    intra_latency_s: float,
    network_latency_s: float,
    top_k: int = 0,
) -> np.ndarray:
    """One all-to-all among ep ranks, each sending `nbytes`: one latency (the network's
    when a peer is in another node, else NVLink's) + the bytes leaving for the node's other
    ep peers over NVLink or for other nodes over the GPU's network share, whichever takes
    longer (module docstring). With `top_k`, the k
    copies of each token that `nbytes` holds cross the network once per other node they
    go to and are forwarded over NVLink there (DeepEP's internode dispatch; DeepSeek-AI
    2024, sec. 3.2.2): of n = ep / peers nodes a token's k experts hit (n - 1)(1 - (1 -
    1/n)^k) others on average, instead of k (n - 1) / n copies."""
    ep = np.maximum(np.asarray(ep, float), 1.0)
    peers = np.clip(np.asarray(peers_in_node, float), 1.0, ep)
    nbytes = np.asarray(nbytes, float)
    crossing = (ep - peers) / ep  # the copies' share bound for other nodes
    forwarded = np.zeros_like(crossing)
    if top_k > 0:
        nodes = ep / peers
        forwarded = crossing  # each remote copy is forwarded over NVLink inside its node
        crossing = (nodes - 1.0) * (1.0 - (1.0 - 1.0 / nodes) ** top_k) / top_k
    intra = ((peers - 1.0) / ep + forwarded) * nbytes / (intra_gbs * 1e9)
    inter = crossing * nbytes / (network_gbs * 1e9)
    latency = np.where(ep > peers, network_latency_s, intra_latency_s)  # every peer at once
    return np.where(ep > 1, latency + np.maximum(intra, inter), 0.0)
