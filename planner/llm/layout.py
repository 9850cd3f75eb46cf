"""The fastest tensor x context x pipeline x data parallel layout of an LLM that fits memory.

For N GPUs (g per node) every layout the training framework allows (planner.llm.frameworks)
is timed: tensor parallel t (a power of two, t <= g, t dividing the heads and key/value
heads: Shoeybi et al. 2019), context parallel c (each sequence split over c GPUs: ring
attention, Liu et al. 2023; Megatron-Core), pipeline p (a power of two up to the layers;
stages of ceil(L/p) layers), data parallel d = N / (t c p), micro-batch b in MICRO_BATCHES,
ZeRO-1 or ZeRO-3/FSDP (Rajbhandari et al. 2020; ZeRO-0, plain data parallelism, where
asked) and recomputation none / selective / partial / full (Korthikanti et al. 2022), or
per-operator where the stack has it (torchtitan's: planner.llm.per_op_recompute), and for
a mixture of experts expert parallel ep (a power of two dividing the experts and d, each
expert split over t; or folded, dividing t c d with whole experts: planner.llm.moe); the
fastest that fits memory (planner.llm.memory) wins.
Reason codes: "fits", "no_layout_fits" (no layout fits, even with FlashAttention and full
recomputation), "batch_too_small" (the global batch has fewer sequences than any layout's
data-parallel ranks x micro-batch), "no_peak" (no dense peak at this precision, e.g. fp8 on
a GPU without fp8 tensor cores).

Step time of one optimizer step, with B sequences per step and m = floor(B / (d b))
micro-batches per pipeline (1F1B schedule; Narayanan et al. 2021, sec. 2.2):

  step = (m + (p - 1)/v) (t_mb + t_tp + t_cp + t_pp) + t_dp + t_slow + t_opt

  t_mb  one micro-batch through the slowest (last) stage on one GPU, by operator
        (planner.llm.ops): its layers' GEMMs at their shapes' efficiency, attention at
        FlashAttention's rate, memory-bound operators at HBM bandwidth, the language-model
        head, and recomputation (full adds a forward pass of its share of the layers,
        selective the attention forward: Korthikanti et al. 2022, sec. 5; per-operator the
        GEMMs and memory-bound work its policy does not save). The (p - 1)/v
        extra slots are the pipeline bubble, (p - 1)/(v m) of the compute with v
        interleaved virtual stages per GPU (v = 1: plain 1F1B; v > 1 needs m a multiple of
        p and costs v times the point-to-point traffic: Narayanan et al. 2021, sec. 2.2.2;
        the first stage then holds 1 + (p - 1)/(p v) times the activations, Korthikanti et
        al. 2022).
  t_tp  4 all-reduces per layer per micro-batch of b s h / c 16-bit values among t GPUs, 6
        with full recomputation, in between for partial (Shoeybi et al. 2019, fig. 4;
        sequence parallelism moves the same bytes as reduce-scatter + all-gather,
        Korthikanti et al. 2022, sec. 4.2.2), not hidden; with LayoutSettings.tp_overlap
        each is split into t chunks pipelined with the GEMM's and one chunk's transfer
        shows, 1/t of it (Wang et al. 2023, "Overlap Communication with Dependent
        Computation via Decomposition"; Megatron-Core's --tp-comm-overlap).
  t_cp  key/value chunks around the context-parallel ring, overlapped with attention
        (_cp_seconds).
  t_pp  one activation and one gradient of b s h / (t c) values per micro-batch across a
        stage boundary (scatter/gather optimization: Narayanan et al. 2021, sec. 4.1).
  t_dp  ZeRO-0 (plain data parallelism): an all-reduce of the gradients, hidden behind the
        last micro-batch (PyTorch DDP's bucketed all-reduce, Li et al. 2020; Megatron's
        --overlap-grad-reduce), exposed whole without LayoutSettings.dp_overlap.
        ZeRO-1: reduce-scatter of the gradients + all-gather of the updated weights (the
        all-reduce volume, ZeRO sec. 7.1) over the d c ranks that hold the same weights,
        once per step, hidden behind one micro-batch of compute (gradient-reduce and
        parameter-gather overlap as in Megatron-LM's distributed optimizer; a stack that
        gathers the weights after the optimizer step instead, nanotron, exposes that
        all-gather whole and hides only the reduce-scatter; without
        LayoutSettings.dp_overlap both run after the backward, exposed whole). ZeRO-3:
        all-gather for the forward and the backward and a reduce-scatter per micro-batch
        (1.5x the all-reduce volume, ZeRO sec. 7.2; PyTorch FSDP, Zhao et al. 2023), each
        hidden behind that micro-batch's compute (prefetch). LoRA reduces only the
        adapters' gradients; ZeRO-3 still gathers the frozen weights.
  t_slow what the data-parallel collectives t_dp hides under compute still cost: their
        hidden seconds x overlap_cost (fitted, planner.llm.stack_profiles). Communication
        kernels take SMs and memory bandwidth from the GEMMs: overlapped compute ran 18.9%
        slower on average, up to 40%, on A100/H100/MI250/MI210 (Lee et al. 2025,
        "Characterizing Compute-Communication Overlap in GPU-Accelerated Distributed Deep
        Learning", arXiv:2507.03114); and overlap is never whole (the first gather and the
        last reduce-scatter of a step, stream synchronisation).
  t_opt the optimizer step over the GPU's share of the trained parameters (LoRA: the
        adapters; planner.llm.ops): its 1/(d c) of them, all of its tp x pp share under
        ZeRO-0. A stack whose ZeRO-1 gather copies each weight tensor's slice from each
        rank on its own (nanotron: planner.llm.frameworks per_tensor_gather) adds d c x
        its weight tensors x SLICE_COPY_HOST_S: the copies are too small for the GPU to
        outrun the host that launches them, and nothing runs beside them after the step.
        Below ZeRO-3 it also holds the gradient accumulation: each micro-batch's weight
        gradients added into the GPU's unsharded buffer, read and written at HBM bandwidth
        (planner.llm.frameworks accumulate_bytes: 10 bytes a parameter every micro-batch
        into fp32 buffers, 6 after the first into 16-bit .grad, none where the weight-
        gradient GEMM accumulates itself).
  MoE   the routed experts' grouped GEMMs join t_mb, their all-to-all (t_a2a) joins each
        slot, exposed (with LayoutSettings.moe_overlap only what outlasts t_mb: DualPipe's
        pairing of one micro-batch's all-to-all with another's compute, DeepSeek-AI 2024,
        sec. 3.2.1); their gradients reduce over the t d c / (et ep) ranks holding the
        same experts (et the expert-tensor-parallel size: t, or 1 folded; planner.llm.moe).

Collectives are α-β rings (Thakur et al. 2005; Patarasuk & Yuan 2009): T = k (n - 1) α +
k (n - 1)/n x bytes / bandwidth, k = 2 for an all-reduce and 1 for a reduce-scatter or
all-gather. Data-parallel collectives are hierarchical: the d ranks hold k = min(d, g // t)
peers per node (Megatron's rank order: tensor, then data, then pipeline), reduced over
NVLink/PCIe, then across n = d / k nodes over each GPU's share of the node network (rail
per GPU, network Gb/s / 8 / g), in DDP_BUCKET_BYTES buckets that each pay the latency (Li
et al. 2020, "PyTorch Distributed"); ZeRO-3's gathers and reduce-scatters pay it once per
layer (one call per FSDP unit, a decoder layer: Zhao et al. 2023, sec. 3.2; DeepSpeed's
per-module fetch). Bandwidths are ACHIEVABLE_FRACTION of NVLink's or PCIe's peak and
NETWORK_FRACTION of the network's. On a board whose GPUs link directly, without a switch
(Hardware.board_gpus: AMD's Instinct platforms, a 4-GPU NVIDIA node), a collective among k
of its g GPUs has k - 1 of each GPU's g - 1 links (planner.machines.boards.link_share): the
tensor-parallel rings, the data-parallel collectives' part within a node and the MoE
all-to-all's. Pipeline and context-parallel hops stay at the GPU's whole rate (one link
each on such a board; timed so, the 8-stage MI300X pipeline runs came out further from
their measurements: docs/model.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any

import numpy as np

from planner.llm.frameworks import DEFAULT_FRAMEWORK, framework, reduces_in_fp32
from planner.llm.memory import (
    ACTIVATION_FACTOR,
    activation_bytes_per_gpu,
    layer_activation_sbh,
    state_bytes_per_gpu,
    usable_bytes,
)
from planner.llm.moe import (
    ALL_TO_ALLS_PER_LAYER,
    all_to_all_seconds,
    expert_activation_bytes,
    expert_layer_seconds,
    expert_state_bytes,
)
from planner.llm.ops import (
    LayerShape,
    MicroBatchTimes,
    OpRates,
    micro_batch_seconds,
    optimizer_seconds,
)
from planner.llm.per_op_recompute import recomputed_gemm_share, stored_bytes_per_token
from planner.machines.boards import link_share
from planner.settings import ZERO_STAGES, StatedLayout

MICRO_BATCHES = (1, 2, 4, 8)
ACHIEVABLE_FRACTION = 0.8  # share of a link's peak a ring reaches (as planner.throughput.scaling)
# Share of a NIC's line rate a ring across nodes reaches: four p5en nodes' ring all-reduce
# measured 365 GB/s of bus bandwidth over their 8 x 400 Gb/s a node (0.91; reference/
# calibration/collectives.csv, ml-engineering), NCCL's maintainers expect 46-48 GB/s a
# 400 Gb/s NDR NIC (0.92-0.96, nccl-tests issue #290); NVLink's ring reaches 0.8 (an 8 x
# H200 ring all-reduce 363 GB/s of 450, the same file): ACHIEVABLE_FRACTION.
NETWORK_FRACTION = 0.91
NVLINK_LATENCY_S = 5e-6  # α within a node (Thakur et al. 2005 model; NCCL's order of magnitude)
NETWORK_LATENCY_S = 10e-6  # α across nodes over InfiniBand/EFA/RoCE: an assumption
# Host seconds per slice copy of a per-tensor sharded gather: 3.0 us of Python and
# dispatch measured on CPU tensors (tools/bench_slice_copies.py, median of its cases) plus
# 5 us for the CUDA kernel launch (an assumption, the low end of the 5-20 us usually
# quoted; `bench_slice_copies.py --device cuda` in tools/gpu_suite.sh measures the whole).
SLICE_COPY_HOST_S = 8e-6
# Weight tensors of a decoder layer in nanotron's Llama: fused qkv, output, fused gate-up
# and down projections, two RMSNorm weights (models/llama.py); the stage's embedding or
# final norm and head add about two.
WEIGHT_TENSORS_PER_LAYER = 6
DDP_BUCKET_BYTES = 25 * 2**20  # PyTorch DDP's default bucket_cap_mb = 25 (Li et al. 2020)
PCIE_X16_GBS = {3: 15.75, 4: 31.5, 5: 63.0, 6: 121.0}  # per direction (PCI-SIG)
REASONS = ("fits", "no_layout_fits", "batch_too_small", "no_peak")
# Full recomputation of a share of each stage's layers, the rest stored whole (Megatron-LM's
# --recompute-method block --recompute-num-layers; Korthikanti et al. 2022, sec. 5).
PARTIAL_RECOMPUTE = {"partial-25": 0.25, "partial-50": 0.5, "partial-75": 0.75}


def recompute_share(recompute: np.ndarray) -> np.ndarray:
    """Share of layers fully recomputed: 1 for full, 0 for none or selective."""
    recompute = np.asarray(recompute)
    conditions = [recompute == "full", *(recompute == k for k in PARTIAL_RECOMPUTE)]
    return np.select(conditions, [1.0, *PARTIAL_RECOMPUTE.values()], 0.0)


@dataclass(frozen=True)
class LLMShape:
    """What the layout search needs of a model (planner.workloads.catalog.Workload's LLM fields)."""

    params: float
    adapter_params: float
    flops_per_token: float
    n_layer: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    vocab_size: int
    seq_len: int
    mode: str
    ffn_dim: int = 0
    gated: bool = False
    # Mixture of experts (planner.llm.moe): routed experts, top-k, each expert's width and
    # the routed experts' parameters (of `params`); experts == 0: dense. ffn_dim is then the
    # shared experts' width.
    experts: int = 0
    top_k: int = 0
    expert_ffn: int = 0
    expert_params: float = 0.0
    head_dim: int = 0  # each attention head's width; 0: d_model / n_heads

    @property
    def layer(self) -> LayerShape:
        """The operator model's view of one decoder layer (planner.llm.ops); a MoE layer's
        dense MLP is its shared experts (width 1, a negligible stand-in for the router's
        GEMM, when it has none: the routed experts are timed by planner.llm.moe)."""
        ffn = (self.ffn_dim or 1) if self.experts else (self.ffn_dim or 4 * self.d_model)
        return LayerShape(
            self.d_model, self.n_heads, self.n_kv_heads, ffn, self.gated, self.vocab_size,
            self.seq_len, self.head_dim,
        )  # fmt: skip


@dataclass(frozen=True)
class Hardware:
    """One option's GPUs: memory, the rates its operators run at, and the links between them.

    peak_flops: dense peak at the training precision (the MFU denominator); rates: the
    operator model's GEMM, attention and HBM rates (planner.llm.ops.OpRates); compute_flops:
    MFU prior x peak, the rate of the older "mfu-prior" step model kept for comparison;
    intra_gbs / network_gbs_per_gpu: achievable GB/s per direction.
    """

    memory_gb: float
    peak_flops: float
    rates: OpRates
    compute_flops: float  # the MFU-prior model's rate (step_model "mfu-prior" only)
    intra_gbs: float
    network_gbs_per_gpu: float
    total_gpus: int
    gpus_per_node: int
    tp_comm_exposure: float = 1.0  # the stack's exposed share of the ring model's tp time
    moe_factor: float = 1.0  # the stack's MoE grouped GEMM and all-to-all over the model's
    comm_exposure: float = 1.0  # what intra_gbs and network_gbs_per_gpu are divided by
    overlap_cost: float = 0.0  # share of the hidden dp collectives' time that still shows
    board_gpus: int = 0  # GPUs of a switchless board (planner.machines.boards); 0: switched


@dataclass(frozen=True)
class LayoutSettings:
    """Choices the search may make (auto: all of them)."""

    global_batch_tokens: float
    flash_attention: bool = True
    recompute: str = "auto"  # auto | none | selective | per-op | full
    zero: str = "auto"  # auto | zero0 | zero1 | zero3
    micro_batch: int | None = None
    memory_reserve_fraction: float = 0.10
    precision: str = "bf16"
    framework: str = DEFAULT_FRAMEWORK
    step_model: str = "ops"  # ops (planner.llm.ops) | mfu-prior (prior MFU x peak)
    pinned: StatedLayout | None = None  # the sizes a run states; None: search
    moe_overlap: bool = False  # all-to-all under another micro-batch's compute (LLMSettings)
    pinned_ran: bool = False  # the pinned layout ran (a published run; LLMSettings)
    dp_overlap: bool = True  # ZeRO-0/1's collectives under the last micro-batch (LLMSettings)
    tp_overlap: bool = False  # tp collectives pipelined with the GEMMs (LLMSettings)
    fp32_reduce: bool | None = None  # fp32 gradient collectives; None: the stack's (LLMSettings)


@dataclass(frozen=True)
class Layout:
    """The chosen layout and its figures (NaN where nothing fits)."""

    reason: str
    tp: int = 0
    pp: int = 0
    dp: int = 0
    cp: int = 1  # context-parallel ranks sharing each sequence
    ep: int = 1  # expert-parallel ranks (mixture of experts), out of the dp ranks
    etp: int = 0  # expert-tensor-parallel size: 0 = tp; 1 with tp > 1: parallel folding
    micro_batch: int = 0
    micro_batches: int = 0
    interleave: int = 1  # virtual pipeline stages per GPU (interleaved 1F1B)
    zero: str = ""
    recompute: str = ""
    memory_per_gpu_gb: float = math.nan
    usable_gb: float = math.nan
    step_s: float = math.nan
    tokens_per_s: float = math.nan
    mfu: float = math.nan
    compute_share: float = math.nan  # compute / step: the rest is bubble and exposed comm
    bubble_share: float = math.nan
    tp_share: float = math.nan
    pp_share: float = math.nan
    dp_share: float = math.nan
    overlap_share: float = math.nan  # what the hidden dp collectives still cost (t_slow)
    gemm_share: float = math.nan  # the compute's parts (planner.llm.ops)
    attention_share: float = math.nan
    memory_share: float = math.nan
    recompute_time_share: float = math.nan
    cp_share: float = math.nan
    optimizer_share: float = math.nan
    cast_share: float = math.nan  # fp8 casts (planner.llm.ops.cast_seconds)
    a2a_share: float = math.nan  # MoE token all-to-all (0 for dense models)
    grouped_gemm_share: float = math.nan  # MoE routed experts' grouped GEMMs (in compute)

    @property
    def fits(self) -> bool:
        """True when a layout was chosen."""
        return self.reason == "fits"

    @property
    def folded(self) -> bool:
        """True when the experts fold over more than the data-parallel ranks
        (experts_folded)."""
        return bool(experts_folded(self.tp, self.dp, self.ep, self.etp))

    @property
    def label(self) -> str:
        """E.g. "tp8 pp2 dp4 zero1 mb1", "tp8 pp16 vpp2 dp64 zero1 mb1" ("" when nothing
        fits)."""
        if not self.fits:
            return ""
        zero = f" {self.zero}" if self.dp > 1 else ""
        rc = {"none": "", "selective": " selective-recompute", "full": " full-recompute",
              "per-op": " per-op-recompute"}  # fmt: skip
        rc |= {k: f" recompute-{v:.0%}" for k, v in PARTIAL_RECOMPUTE.items()}
        vpp = f" vpp{self.interleave}" if self.interleave > 1 else ""
        cp = f" cp{self.cp}" if self.cp > 1 else ""
        ep = f" ep{self.ep}" if self.ep > 1 else ""
        ep += f" etp{self.etp}" if self.folded else ""
        return (
            f"tp{self.tp}{cp} pp{self.pp}{vpp}{ep} dp{self.dp}{zero} mb{self.micro_batch}"
            + rc[self.recompute]
        )


def experts_folded(tp: Any, dp: Any, ep: Any, etp: Any) -> Any:
    """Whether a layout's experts fold over more than its data-parallel ranks (MoE parallel
    folding, planner.llm.moe): whole experts over tp ranks (`etp` 1 with tp > 1; 0 means
    etp = tp), or more expert ranks than data-parallel ones (ep not dividing dp). Scalars
    or arrays."""
    etp = np.asarray(etp)
    return (np.asarray(ep) > 1) & (((etp > 0) & (etp != tp)) | (np.asarray(dp) % ep != 0))


def ring_seconds(
    n: np.ndarray, nbytes: np.ndarray, gbs: np.ndarray | float, latency_s: float, k: float
) -> np.ndarray:
    """k (n-1) α + k (n-1)/n bytes / bandwidth (Thakur et al. 2005; Patarasuk & Yuan 2009)."""
    n = np.maximum(np.asarray(n, float), 1.0)
    return k * (n - 1.0) * latency_s + k * (n - 1.0) / n * np.asarray(nbytes, float) / (gbs * 1e9)


def hierarchical_seconds(
    dp: np.ndarray,
    peers_in_node: np.ndarray,
    nbytes: np.ndarray,
    hw: Hardware,
    k: float,
    calls: np.ndarray | None = None,
) -> np.ndarray:
    """A data-parallel collective: within the node over NVLink/PCIe, then across nodes on
    1/peers of the message over each GPU's network share; latency per call: per DDP bucket,
    or, where `calls` is above 0, that many (ZeRO-3's one per layer)."""
    buckets = np.maximum(1.0, np.ceil(np.asarray(nbytes, float) / DDP_BUCKET_BYTES))
    if calls is not None:
        buckets = np.where(np.asarray(calls, float) > 0, calls, buckets)
    nodes = np.asarray(dp, float) / peers_in_node
    intra_gbs = hw.intra_gbs * link_share(peers_in_node, hw.board_gpus)
    intra = ring_seconds(peers_in_node, nbytes, intra_gbs, 0.0, k)
    inter = ring_seconds(nodes, nbytes / peers_in_node, hw.network_gbs_per_gpu, 0.0, k)
    latency = (
        buckets * k * ((peers_in_node - 1.0) * NVLINK_LATENCY_S + (nodes - 1.0) * NETWORK_LATENCY_S)
    )
    return intra + inter + latency


CONTEXT_PARALLEL = (1, 2, 4, 8, 16, 32)
# Tokens per rank below which context parallelism is not weighed: Megatron-Core recommends
# it for long sequences, where activations, not weights, fill memory (an assumption: 4k).
MIN_CONTEXT_CHUNK = 4096


def _pipeline_sizes(layers: int) -> list[int]:
    """Pipeline depths weighed: every divisor of the layers (even stages, as Megatron-LM
    needs them) and every power of two up to them (uneven stages of ceil(L / p) layers, as
    Llama 3 ran 126 layers on 16 stages: Dubey et al. 2024, sec. 3.3.2)."""
    divisors = {p for p in range(1, layers + 1) if layers % p == 0}
    return sorted(divisors | {2**i for i in range(12) if 2**i <= layers})


def _grid(
    shape: LLMShape, total_gpus: int, gpus_per_node: int, settings: LayoutSettings
) -> dict[str, np.ndarray]:
    """Every candidate layout the framework allows, as parallel arrays: tensor parallel
    within a node dividing the heads, context parallel splitting each sequence into 2 cp
    chunks of at least MIN_CONTEXT_CHUNK tokens (Megatron-Core's load-balanced split),
    pipeline stages up to the layers (interleaved only where the framework does it)."""
    n = total_gpus
    profile = framework(settings.framework)
    stated = settings.pinned
    reach = gpus_per_node if stated is None else n  # a stated tp may span nodes
    tps = [t for t in (1, 2, 4, 8, 16, 32, 64) if t <= reach and n % t == 0]
    tps = [t for t in tps if shape.n_heads % t == 0 and (shape.n_kv_heads % t == 0 or t <= 1)]
    pps = _pipeline_sizes(shape.n_layer) if profile.pipeline else [1]
    cps = [
        c for c in CONTEXT_PARALLEL
        if c == 1 or (profile.context_parallel and shape.seq_len % (2 * c) == 0
                      and shape.seq_len // c >= MIN_CONTEXT_CHUNK)
    ]  # fmt: skip
    interleaves: tuple[int, ...] = (1, 2, 4) if profile.interleave else (1,)
    if stated is not None:  # a stated layout: only its sizes
        tps, pps, cps = ([x for x in xs if x == want] for xs, want in zip(
            (tps, pps, cps), (stated.tp, stated.pp, stated.cp), strict=True))  # fmt: skip
        if stated.vpp:
            interleaves = (stated.vpp,)
        elif stated.interleaved:
            interleaves = tuple(v for v in interleaves if v > 1) or interleaves
    micro = [settings.micro_batch] if settings.micro_batch else list(MICRO_BATCHES)
    zeros = profile.zero if settings.zero == "auto" else (settings.zero,)
    partial = tuple(PARTIAL_RECOMPUTE)
    per_op = ("per-op",) if profile.per_op_recompute else ()
    recomputes = {
        "auto": ("none", *per_op, *partial, "full")
        if settings.flash_attention
        else ("none", "selective", *per_op, *partial, "full"),
        "none": ("none",),
        "selective": ("selective",),
        "per-op": ("per-op",),
        "full": ("full",),
    }[settings.recompute]
    if not tps:
        return {}
    eps = expert_parallel_sizes(shape.experts, n)
    if stated is not None and stated.ep:
        eps = [e for e in eps if e == stated.ep]
    folds = [False, True] if shape.experts else [False]
    axes = np.meshgrid(
        np.array(tps), np.array(cps), np.array(pps), np.array(interleaves), np.array(micro),
        np.array([ZERO_STAGES[z] for z in zeros]), np.arange(len(recomputes)), np.array(eps),
        np.array(folds), indexing="ij",
    )  # fmt: skip
    t, c, p, v, b, z, r, e, fold = (axis.ravel() for axis in axes)
    dp = n // (t * c * p)
    keep = (n % (t * c * p) == 0) & ((v == 1) | ((p > 1) & (p * v <= shape.n_layer)))
    keep &= _experts_lay_out(t, c, dp, e, fold, stated)
    if len(zeros) > 1:
        keep &= ~((z == 3) & (dp * c == 1))  # one data-parallel rank: ZeRO-1 and -3 are alike
    if not keep.any():
        return {}
    return {
        "tp": t[keep], "cp": c[keep], "pp": p[keep], "dp": dp[keep], "mb": b[keep],
        "zero": z[keep], "recompute": np.array(recomputes)[r[keep]], "vpp": v[keep],
        "ep": e[keep], "etp": np.where(fold, 1, t)[keep],
    }  # fmt: skip


def _experts_lay_out(
    t: np.ndarray,
    c: np.ndarray,
    dp: np.ndarray,
    e: np.ndarray,
    fold: np.ndarray,
    stated: StatedLayout | None,
) -> np.ndarray:
    """Which (tp, cp, dp, ep, folded) combinations are layouts: without folding the ep
    ranks come out of the data-parallel ones (ep divides dp) and each expert is split over
    tp; folded (expert tensor parallel 1), ep divides tp x cp x dp and differs from the
    unfolded layout (tp > 1 or ep not dividing dp). A stated expert-tensor-parallel size
    keeps only its own."""
    unfolded = ~fold & (dp % e == 0)
    folded = fold & ((t * c * dp) % e == 0) & experts_folded(t, dp, e, 1)
    if stated is not None and stated.etp:
        folded &= stated.etp == 1
        unfolded &= stated.etp == t
    return unfolded | folded


def expert_parallel_sizes(experts: int, total_gpus: int) -> list[int]:
    """Expert-parallel sizes weighed: 1 for a dense model; for E experts every power of two
    dividing E, up to the GPU count (each rank holds E / ep whole experts)."""
    if experts <= 0:
        return [1]
    return [e for e in (2**i for i in range(12)) if e <= min(experts, total_gpus)
            and experts % e == 0]  # fmt: skip


@dataclass(frozen=True, eq=False)
class Candidates:
    """The layouts that fit memory and the batch, as parallel arrays, and the usable bytes."""

    tp: np.ndarray
    cp: np.ndarray
    pp: np.ndarray
    dp: np.ndarray
    mb: np.ndarray
    m: np.ndarray
    zero: np.ndarray  # the ZeRO stage (planner.settings.ZERO_STAGES)
    recompute: np.ndarray
    vpp: np.ndarray
    memory: np.ndarray
    usable: float
    ep: np.ndarray
    etp: np.ndarray  # expert-tensor-parallel size (tp, or 1 where the experts fold)


@lru_cache(maxsize=2048)
def _candidates(
    shape: LLMShape, memory_gb: float, total_gpus: int, gpus_per_node: int, settings: LayoutSettings
) -> Candidates | Layout:
    """The layouts of the grid that fit (the framework's own sharding where any does), or
    the Layout saying why none does. Independent of the network and the rates, so options
    that differ only there share it."""
    grid = _grid(shape, total_gpus, gpus_per_node, settings)
    sequences = max(1, int(settings.global_batch_tokens // shape.seq_len))
    if not grid:
        return Layout("no_layout_fits")
    tp, cp, pp, dp, mb, vpp, ep, etp = (
        grid[k].astype(float) for k in ("tp", "cp", "pp", "dp", "mb", "vpp", "ep", "etp")
    )
    m = np.floor(sequences / (dp * mb))
    # Interleaving needs whole rounds of p micro-batches (Megatron-LM's schedule).
    usable_batch = (m >= 1) & ((vpp == 1) | (np.mod(m, pp) == 0))
    if not usable_batch.any():
        return Layout("batch_too_small")
    m = np.maximum(m, 1.0)
    zero, recompute = grid["zero"], grid["recompute"]
    terms = memory_terms(shape, settings, tp, cp, pp, dp, mb, m, zero, recompute, vpp, ep, etp)
    memory = terms["states"] + terms["expert_states"] + terms["activations"]
    usable = usable_bytes(memory_gb, settings.memory_reserve_fraction)
    fits = (memory <= usable) & usable_batch
    if not fits.any() and settings.pinned_ran and settings.pinned is not None:
        fits = _smallest_that_ran(settings, zero, memory, usable_batch)
    if not fits.any():
        least = float(np.min(np.where(usable_batch, memory, np.inf)))
        return Layout("no_layout_fits", memory_per_gpu_gb=least / 1e9, usable_gb=usable / 1e9)
    ok = np.flatnonzero(fits & _preferred_sharding(settings, zero, fits))
    return Candidates(
        tp[ok], cp[ok], pp[ok], dp[ok], mb[ok], m[ok], zero[ok], recompute[ok], vpp[ok],
        memory[ok], usable, ep[ok], etp[ok],
    )  # fmt: skip


@dataclass(frozen=True, eq=False)
class StageTimes:
    """One micro-batch's seconds on one GPU of the slowest stage: the operator model's parts
    (planner.llm.ops) and, for a mixture of experts, the routed experts' grouped GEMMs
    (planner.llm.moe; their memory-bound work and recomputation are in `parts`)."""

    parts: MicroBatchTimes
    grouped: np.ndarray


def stage_times(
    shape: LLMShape, rates: OpRates, compute_flops: float, c: Candidates, settings: LayoutSettings
) -> StageTimes:
    """One micro-batch's seconds for each candidate layout in `c` (planner.llm.ops, or the
    older MFU-prior model; plus the routed experts of a MoE: planner.llm.moe)."""
    share = recompute_share(c.recompute)
    stage_layers = np.ceil(float(shape.n_layer) / c.pp)
    if settings.step_model == "mfu-prior":
        prior = _prior_micro_batch(shape, compute_flops, stage_layers, c.mb, c.tp, c.cp, share,
                                   c.recompute)  # fmt: skip
        return StageTimes(prior, np.zeros_like(share))
    weight_grads = shape.mode not in ("lora", "qlora")
    # a MoE layer's last GEMM is its routed experts' (planner.llm.moe), recomputed whole
    early_stop = framework(settings.framework).recompute_early_stop and not shape.experts

    def stage(layers: np.ndarray, head: float) -> MicroBatchTimes:
        return micro_batch_seconds(
            shape.layer, rates, layers, c.mb, c.tp, c.cp, share, c.recompute == "selective",
            weight_grads=weight_grads, flash=settings.flash_attention, head=head,
            per_op=c.recompute == "per-op", early_stop=early_stop,
        )  # fmt: skip

    if framework(settings.framework).balanced_stages:
        with_head, without = balanced_stage_layers(shape, c.pp)
        last, other = stage(with_head, 1.0), stage(without, 0.0)
        slower = other.total > last.total  # the busiest stage sets the pace
        parts = MicroBatchTimes(
            *(np.where(slower, getattr(other, f.name), getattr(last, f.name))
              for f in fields(MicroBatchTimes))
        )  # fmt: skip
    else:
        parts = stage(stage_layers, 1.0)
    if not shape.experts:
        return StageTimes(parts, np.zeros_like(share))
    tokens = c.mb * shape.seq_len / c.cp
    gemm_f, gemm_b, mem_f, mem_b, casts = expert_layer_seconds(
        tokens, c.tp, c.ep, shape.d_model, shape.experts, shape.top_k, shape.expert_ffn, rates,
        weight_grads, c.etp,
    )  # fmt: skip
    moe_parts = MicroBatchTimes(
        gemm=parts.gemm,
        attention=parts.attention,
        memory=parts.memory + stage_layers * (mem_f + mem_b),
        recompute=parts.recompute + stage_layers * share * (gemm_f + mem_f),
        cast=parts.cast + stage_layers * casts,
    )
    return StageTimes(moe_parts, stage_layers * (gemm_f + gemm_b))


def balanced_stage_layers(shape: LLMShape, pp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(layers on the stage holding the language-model head, most layers on another stage)
    per pipeline depth, as nanotron assigns its blocks: in order, each to the first stage
    whose share (rank + 1) / p of the cumulative cost it does not yet exceed, with a decoder
    layer costing 4 h^2 + 3 f h (2 f h ungated) and the head V h (nanotron's trainer and
    models/llama.py get_block_compute_costs; planner.llm.frameworks)."""
    h, f = float(shape.d_model), float(shape.layer.ffn_dim)
    layer = 4.0 * h * h + (3.0 if shape.layer.gated else 2.0) * f * h
    head = float(shape.vocab_size) * h
    found = {int(p): _greedy_stages(shape.n_layer, int(p), layer, head) for p in np.unique(pp)}
    with_head = np.array([found[int(p)][0] for p in pp], float)
    without = np.array([found[int(p)][1] for p in pp], float)
    return with_head, without


def _greedy_stages(n_layer: int, pp: int, layer: float, head: float) -> tuple[int, int]:
    """nanotron's assignment of n_layer layers and the head to pp stages (balanced_stage_layers):
    (layers beside the head, most layers on a stage without it)."""
    total = n_layer * layer + head
    layers, stage, cumulative, head_stage = [0] * pp, 0, 0.0, 0
    for block in range(n_layer + 1):
        cumulative += layer if block < n_layer else head
        if block < n_layer:
            layers[stage] += 1
        else:
            head_stage = stage
        if cumulative > total * (stage + 1) / pp and stage < pp - 1:
            stage += 1
    others = [n for i, n in enumerate(layers) if i != head_stage]
    return layers[head_stage], max(others, default=0)


@lru_cache(maxsize=2048)
def _micro_batches(
    shape: LLMShape,
    rates: OpRates,
    compute_flops: float,
    memory_gb: float,
    total_gpus: int,
    gpus_per_node: int,
    settings: LayoutSettings,
) -> StageTimes:
    """stage_times of the candidates that fit: independent of the network, so shared
    across it."""
    c = _candidates(shape, memory_gb, total_gpus, gpus_per_node, settings)
    assert isinstance(c, Candidates)
    return stage_times(shape, rates, compute_flops, c, settings)


def choose_layout(shape: LLMShape, hw: Hardware, settings: LayoutSettings) -> Layout:
    """The fastest layout that fits (module docstring), or the reason none does."""
    rate = hw.compute_flops if settings.step_model == "mfu-prior" else hw.rates.gemm_flops
    if not (hw.peak_flops > 0 and rate > 0):
        return Layout("no_peak")
    found = _candidates(shape, hw.memory_gb, hw.total_gpus, hw.gpus_per_node, settings)
    if isinstance(found, Layout):
        return found
    parts = _micro_batches(
        shape, hw.rates, hw.compute_flops, hw.memory_gb, hw.total_gpus, hw.gpus_per_node, settings
    )
    times = step_times(shape, hw, settings, found, parts)
    tokens = found.m * found.dp * found.mb * shape.seq_len / times["step"]
    return layout_at(shape, hw, found, times, int(np.argmax(tokens)))


def layout_at(
    shape: LLMShape, hw: Hardware, c: Candidates, times: dict[str, np.ndarray], best: int
) -> Layout:
    """The Layout record of candidate `best` of `c`, timed by `times` (step_times)."""
    step = float(times["step"][best])
    tokens = float(c.m[best] * c.dp[best] * c.mb[best] * shape.seq_len) / step
    shares = {name: float(times[name][best]) / step for name in STEP_PARTS}
    return Layout(
        "fits",
        tp=int(c.tp[best]),
        pp=int(c.pp[best]),
        dp=int(c.dp[best]),
        cp=int(c.cp[best]),
        ep=int(c.ep[best]),
        etp=int(c.etp[best]),
        micro_batch=int(c.mb[best]),
        micro_batches=int(c.m[best]),
        interleave=int(c.vpp[best]),
        zero=f"zero{int(c.zero[best])}",
        recompute=str(c.recompute[best]),
        memory_per_gpu_gb=float(c.memory[best]) / 1e9,
        usable_gb=c.usable / 1e9,
        step_s=step,
        tokens_per_s=tokens,
        mfu=tokens * shape.flops_per_token / (hw.total_gpus * hw.peak_flops),
        compute_share=shares["compute"],
        bubble_share=shares["bubble"],
        tp_share=shares["tp"],
        pp_share=shares["pp"],
        dp_share=shares["dp"],
        overlap_share=shares["overlap"],
        gemm_share=shares["gemm"],
        attention_share=shares["attention"],
        memory_share=shares["memory"],
        recompute_time_share=shares["recompute"],
        cp_share=shares["cp"],
        optimizer_share=shares["optimizer"],
        cast_share=shares["cast"],
        a2a_share=shares["a2a"],
        grouped_gemm_share=shares["grouped_gemm"],
    )


def _smallest_that_ran(
    settings: LayoutSettings, zero: np.ndarray, memory: np.ndarray, usable_batch: np.ndarray
) -> np.ndarray:
    """A published run's pinned layout ran, whatever the memory model says: the variant
    of it (micro-batch, recompute, sharding where not stated; the framework's own sharding
    first) the memory model finds smallest, so a memory model that overstates does not move
    the run to a layout it never used."""
    own = usable_batch & _preferred_sharding(settings, zero, usable_batch)
    least = np.min(np.where(own, memory, np.inf))
    return own & (memory <= least)


def _preferred_sharding(settings: LayoutSettings, zero: np.ndarray, fits: np.ndarray) -> np.ndarray:
    """Layouts of the framework's own sharding (the first of its ZeRO stages: Megatron's
    distributed optimizer, FSDP's FULL_SHARD) where any of them fits; the other stage is
    weighed only when none does. With `zero` set, every layout of that stage."""
    if settings.zero != "auto":
        return np.ones(len(zero), bool)
    own = zero == ZERO_STAGES[framework(settings.framework).zero[0]]
    return own if (fits & own).any() else np.ones(len(zero), bool)


# The terms of a layout's memory per GPU (memory_terms), as planner.render.llm names them.
MEMORY_TERMS = ("states", "expert_states", "activations")


def memory_terms(
    shape: LLMShape,
    settings: LayoutSettings,
    tp: np.ndarray,
    cp: np.ndarray,
    pp: np.ndarray,
    dp: np.ndarray,
    mb: np.ndarray,
    m: np.ndarray,
    zero: np.ndarray,
    recompute: np.ndarray,
    vpp: np.ndarray,
    ep: np.ndarray | None = None,
    etp: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Bytes per GPU of each layout by MEMORY_TERMS: model states (weights, gradients,
    optimizer) sharded over the dp x cp ranks that hold the same weights; a MoE's routed
    experts' states sharded over ep too (planner.llm.moe); activations of s / cp tokens per
    sequence (context parallelism splits them: Megatron-Core) for the share of layers
    stored and rebuilt, plus a MoE's routed copies on the layers not fully recomputed."""
    share = recompute_share(recompute)
    whole = np.where(share > 0, "none", recompute)
    ep = np.ones_like(np.asarray(tp, float)) if ep is None else np.asarray(ep, float)
    per_op_sbh = stored_bytes_per_token(shape.layer) / shape.d_model
    layer_sbh = layer_activation_sbh(shape.layer)
    stack = framework(settings.framework)

    def activations(mode: np.ndarray) -> np.ndarray:
        return activation_bytes_per_gpu(
            shape.seq_len, shape.d_model, shape.n_heads, shape.n_layer, shape.vocab_size,
            settings.precision, tp, pp, mb / cp, m, mode, settings.flash_attention, vpp,
            per_op_sbh, layer_sbh, stack.logit_bytes,
        )  # fmt: skip

    stored = activations(whole)
    rebuilt = activations(np.full(len(share), "full"))
    dense = shape.params - shape.expert_params
    states = state_bytes_per_gpu(
        dense, shape.adapter_params, shape.mode, settings.precision, tp, pp, dp * cp, zero,
        stack.grad_bytes,
    )  # fmt: skip
    acts = np.where(share > 0, share * rebuilt + (1.0 - share) * stored, stored)
    experts = np.zeros_like(states)
    if shape.experts:
        etp = np.asarray(tp, float) if etp is None else np.asarray(etp, float)
        experts = expert_state_bytes(
            shape.expert_params, settings.precision, etp, pp, ep, tp * dp * cp / etp, zero
        )
        kept = np.where(np.asarray(recompute) == "full", 0.0, 1.0 - share)
        in_flight = np.minimum(pp, np.maximum(np.asarray(m, float), 1.0))
        per_layer = expert_activation_bytes(
            mb * shape.seq_len / cp, shape.d_model, shape.expert_ffn, shape.top_k, tp,
            2.0 * ACTIVATION_FACTOR[settings.precision],
        )  # fmt: skip
        acts = acts + kept * np.ceil(shape.n_layer / pp) * in_flight * per_layer
    return {"states": states, "expert_states": experts, "activations": acts}


# A step's parts, in seconds per optimizer step: compute = gemm + attention + memory +
# recompute + cast + grouped_gemm (all micro-batches; cast: fp8 casts; grouped_gemm: MoE
# routed experts); then bubble and exposed tp, cp, pp, dp and MoE all-to-all (a2a)
# communication, what the hidden dp collectives still cost (overlap: t_slow), and the
# optimizer.
STEP_PARTS = (
    "compute", "gemm", "attention", "memory", "recompute", "bubble", "tp", "cp", "pp", "dp",
    "overlap", "optimizer", "cast", "a2a", "grouped_gemm",
)  # fmt: skip


def step_times(
    shape: LLMShape,
    hw: Hardware,
    settings: LayoutSettings,
    c: Candidates,
    stage: StageTimes,
) -> dict[str, np.ndarray]:
    """Seconds per optimizer step and its parts (STEP_PARTS; module docstring), per
    candidate layout, from its micro-batch's seconds (`stage`)."""
    s, h, layers = float(shape.seq_len), float(shape.d_model), float(shape.n_layer)
    tp, cp, pp, dp, mb, m, zero, vpp = c.tp, c.cp, c.pp, c.dp, c.mb, c.m, c.zero, c.vpp
    share = recompute_share(c.recompute)
    stage_layers = np.ceil(layers / pp)
    frozen = shape.mode in ("lora", "qlora")
    parts = stage.parts
    grouped = stage.grouped * hw.moe_factor
    t_mb = parts.total + grouped
    act_bytes = mb * s / cp * h * 2.0
    n_tp = 4.0 + 2.0 * share
    ring = _tp_ring_seconds(tp, act_bytes, hw)
    if settings.tp_overlap:  # tp chunks pipelined with the GEMM's: one chunk's shows
        ring = ring / tp
    t_tp = np.where(tp > 1, stage_layers * n_tp * ring * hw.tp_comm_exposure, 0.0)
    t_cp = _cp_seconds(shape, hw, tp, cp, mb, stage_layers, parts.attention / stage_layers)
    pp_gbs = hw.intra_gbs if hw.total_gpus <= hw.gpus_per_node else hw.network_gbs_per_gpu
    pp_latency = NVLINK_LATENCY_S if hw.total_gpus <= hw.gpus_per_node else NETWORK_LATENCY_S
    t_pp = np.where(pp > 1, 2.0 * vpp * (pp_latency + act_bytes / tp / (pp_gbs * 1e9)), 0.0)
    t_a2a = hw.moe_factor * _a2a_seconds(
        shape, hw, tp, cp, c.ep, mb, stage_layers, share, hw.rates.value_bytes, c.etp, dp
    )
    if settings.moe_overlap:  # under another micro-batch's compute: what outlasts it shows
        t_a2a = np.maximum(0.0, t_a2a - t_mb)
    slots = m + (pp - 1.0) / vpp
    per_slot = t_mb + t_tp + t_cp + t_pp + t_a2a
    t_dp, hidden = _dp_seconds(shape, hw, settings, tp, pp, dp * cp, m, zero, t_mb, c.ep, c.etp)
    t_slow = hw.overlap_cost * hidden
    # ZeRO-1 and -3 step 1/(d c) of the trained weights each (LoRA: of its adapters, whose
    # optimizer state they shard as planner.llm.memory does); ZeRO-0 every rank all of its own.
    shard = np.where((dp * cp > 1) & (zero != 0), dp * cp, 1.0)
    trained = (shape.adapter_params if frozen else shape.params) / (tp * pp) / shard
    t_opt = optimizer_seconds(trained, hw.rates) * np.ones_like(m)
    if framework(settings.framework).per_tensor_gather:  # module docstring, t_opt
        tensors = WEIGHT_TENSORS_PER_LAYER * stage_layers + 2.0
        t_opt = t_opt + np.where((zero == 1) & (dp * cp > 1), dp * cp * tensors, 0.0) * (
            SLICE_COPY_HOST_S
        )
    if not frozen:  # module docstring, t_opt: gradient accumulation
        t_opt = t_opt + _accumulation_seconds(shape, hw, settings.framework, c)
    if settings.step_model == "mfu-prior":
        t_opt = np.zeros_like(m)
    step = slots * per_slot + t_dp + t_slow + t_opt
    return {
        "step": step,
        "compute": m * t_mb,
        "gemm": m * parts.gemm,
        "attention": m * parts.attention,
        "memory": m * parts.memory,
        "recompute": m * parts.recompute,
        "bubble": (pp - 1.0) / vpp * per_slot,
        "tp": m * t_tp,
        "cp": m * t_cp,
        "pp": m * t_pp,
        "dp": t_dp,
        "overlap": t_slow,
        "optimizer": t_opt,
        "cast": m * parts.cast * np.ones_like(m),
        "a2a": m * t_a2a,
        "grouped_gemm": m * grouped,
    }


def _accumulation_seconds(shape: LLMShape, hw: Hardware, stack: str, c: Candidates) -> np.ndarray:
    """Seconds a step spends adding each micro-batch's weight gradients into the GPU's
    unsharded gradient buffer (planner.llm.frameworks accumulate_bytes over HBM): every
    micro-batch into fp32 buffers, after the first into 16-bit .grad; none under ZeRO-3,
    whose gradients leave each micro-batch reduce-scattered."""
    profile = framework(stack)
    adds = c.m if profile.accumulate_first else c.m - 1.0
    dense = (shape.params - shape.expert_params) / (c.tp * c.pp)
    experts = shape.expert_params / (c.etp * c.ep * c.pp)
    moved = adds * (dense + experts) * profile.accumulate_bytes
    return np.where(c.zero == 3, 0.0, moved) / hw.rates.hbm_bytes_per_s


def _tp_ring_seconds(tp: np.ndarray, act_bytes: np.ndarray, hw: Hardware) -> np.ndarray:
    """One tensor-parallel all-gather or reduce-scatter of a micro-batch's activations
    (ring_seconds, k = 2): over NVLink within a node; a stated tp spanning nodes as the
    data-parallel collectives run (hierarchical_seconds, one call): over NVLink among each
    node's g ranks, then across the nodes on 1/g of the bytes at each GPU's network share
    (NCCL spreads a collective's channels over every NIC of the node, so the node's whole
    network carries it, not one GPU's)."""
    within = np.asarray(tp) <= hw.gpus_per_node
    inside_gbs = hw.intra_gbs * link_share(tp, hw.board_gpus)
    inside = ring_seconds(tp, act_bytes, inside_gbs, NVLINK_LATENCY_S, 2.0)
    if within.all():  # the search: tp never leaves a node
        return inside
    ranks = np.maximum(np.asarray(tp, float), hw.gpus_per_node)
    peers = np.full_like(ranks, float(hw.gpus_per_node))
    across = hierarchical_seconds(ranks, peers, act_bytes, hw, 2.0, np.ones_like(ranks))
    return np.where(within, inside, across)


def _a2a_seconds(
    shape: LLMShape,
    hw: Hardware,
    tp: np.ndarray,
    cp: np.ndarray,
    ep: np.ndarray,
    mb: np.ndarray,
    stage_layers: np.ndarray,
    share: np.ndarray,
    value_bytes: float,
    etp: np.ndarray,
    dp: np.ndarray,
) -> np.ndarray:
    """Exposed MoE all-to-all per micro-batch (planner.llm.moe): ALL_TO_ALLS_PER_LAYER of
    b s / (cp t) x k tokens of h values per layer, 2 more for the share of layers fully
    recomputed; the ep ranks follow the tensor and context ranks (Megatron's order), so
    g / (t cp) of them share a node; folded (experts_folded: `etp` 1 with tp > 1, or more
    expert ranks than data-parallel ones), they are consecutive GPUs and g of them do."""
    if not shape.experts:
        return np.zeros_like(np.asarray(tp, float))
    nbytes = mb * shape.seq_len / (cp * tp) * shape.top_k * shape.d_model * value_bytes
    folded = experts_folded(tp, dp, ep, etp)
    peers = np.where(folded, hw.gpus_per_node, np.floor(hw.gpus_per_node / (tp * cp)))
    raw = hw.comm_exposure  # the ring model's links: the all-to-all is scaled by moe_factor
    intra = hw.intra_gbs * raw * link_share(np.minimum(peers, ep), hw.board_gpus)
    one = all_to_all_seconds(
        nbytes, ep, peers, intra, hw.network_gbs_per_gpu * raw, NVLINK_LATENCY_S,
        NETWORK_LATENCY_S, shape.top_k,
    )  # fmt: skip
    return stage_layers * (ALL_TO_ALLS_PER_LAYER + 2.0 * share) * one


def _prior_micro_batch(
    shape: LLMShape,
    compute_flops: float,
    stage_layers: np.ndarray,
    mb: np.ndarray,
    tp: np.ndarray,
    cp: np.ndarray,
    share: np.ndarray,
    recompute: np.ndarray,
) -> MicroBatchTimes:
    """The older step model's micro-batch: FLOPs per token x tokens (plus recomputation:
    full adds 2N + 4 L s h per token for its share, selective 4 L s h, per-operator its
    recomputed GEMMs' share of 2N) over MFU prior x peak, all of it counted as GEMM time."""
    s, h, layers = float(shape.seq_len), float(shape.d_model), float(shape.n_layer)
    forward = 2.0 * shape.params + 4.0 * layers * s * h
    extra = (
        share * forward
        + np.where(recompute == "selective", 4.0 * layers * s * h, 0.0)
        + np.where(
            recompute == "per-op", recomputed_gemm_share(shape.layer) * 2.0 * shape.params, 0.0
        )
    )
    # ceil(L/p) of the L layers per GPU: the busiest stage's share of the model's FLOPs.
    flops = (shape.flops_per_token + extra) * mb * s / cp * stage_layers / (layers * tp)
    zero = np.zeros_like(flops)
    return MicroBatchTimes(gemm=flops / compute_flops, attention=zero, memory=zero,
                           recompute=zero)  # fmt: skip


def _cp_seconds(
    shape: LLMShape,
    hw: Hardware,
    tp: np.ndarray,
    cp: np.ndarray,
    mb: np.ndarray,
    stage_layers: np.ndarray,
    attention_per_layer: np.ndarray,
) -> np.ndarray:
    """Exposed context-parallel communication per micro-batch: each layer passes its key
    and value chunks (2 b s/cp g d / t values) around the cp ring, cp - 1 hops forward and
    twice that backward (their gradients too), overlapped with the attention blocks it
    feeds (ring attention: Liu et al. 2023; Megatron-Core's context parallelism)."""
    d = shape.layer.d_head
    kv_bytes = 2.0 * mb * shape.seq_len / cp * shape.n_kv_heads * d / tp * 2.0
    within = tp * cp <= hw.gpus_per_node
    gbs = np.where(within, hw.intra_gbs, hw.network_gbs_per_gpu)
    latency = np.where(within, NVLINK_LATENCY_S, NETWORK_LATENCY_S)
    hop = latency + kv_bytes / (gbs * 1e9)
    passes = 3.0 * (cp - 1.0) * hop
    exposed = np.maximum(0.0, passes - attention_per_layer)
    return np.where(cp > 1, stage_layers * exposed, 0.0)


def _dp_seconds(
    shape: LLMShape,
    hw: Hardware,
    settings: LayoutSettings,
    tp: np.ndarray,
    pp: np.ndarray,
    dp: np.ndarray,
    m: np.ndarray,
    zero: np.ndarray,
    t_mb: np.ndarray,
    ep: np.ndarray,
    etp: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """(exposed, hidden) data-parallel communication seconds per step (module docstring):
    what shows, and what runs under compute (a share of it still shows: t_slow); a MoE's
    routed experts reduce among the tp dp / (etp ep) ranks that hold the same experts, after
    the dense weights."""
    value_bytes = 4.0 if settings.precision in ("fp32", "tf32") else 2.0
    grad_bytes = 4.0 if reduces_in_fp32(settings.framework, settings.fp32_reduce) else value_bytes
    frozen = shape.mode in ("lora", "qlora")
    dense = shape.params - shape.expert_params
    local = dense / (tp * pp)
    trained = (shape.adapter_params if frozen else dense) / (tp * pp) * grad_bytes
    weight_bytes = local * (0.516 if shape.mode == "qlora" else value_bytes)
    peers = np.clip(np.floor(hw.gpus_per_node / tp), 1.0, dp)
    # ZeRO-3 gathers and reduce-scatters one call per layer; ZeRO-0/1 in DDP buckets
    calls = np.where(zero == 3, np.ceil(shape.n_layer / pp), 0.0)
    allreduce = hierarchical_seconds(dp, peers, trained, hw, 2.0)
    gather = hierarchical_seconds(dp, peers, weight_bytes, hw, 1.0, calls)
    scatter = hierarchical_seconds(dp, peers, trained, hw, 1.0, calls)
    if shape.experts:
        ranks = np.maximum(tp * dp / (etp * ep), 1.0)  # the expert layers' data-parallel
        expert_bytes = shape.expert_params / (etp * pp * ep) * value_bytes
        expert_peers = np.clip(np.floor(hw.gpus_per_node / (etp * ep)), 1.0, ranks)
        many = ranks > 1
        allreduce = allreduce + np.where(
            many, hierarchical_seconds(ranks, expert_peers, expert_bytes, hw, 2.0), 0.0
        )
        one_way = np.where(
            many, hierarchical_seconds(ranks, expert_peers, expert_bytes, hw, 1.0, calls), 0.0
        )
        gather, scatter = gather + one_way, scatter + one_way
    # ZeRO-0 all-reduces the gradients under the last micro-batch where they overlap.
    window = t_mb if settings.dp_overlap else 0.0
    zero0, under0 = _under(allreduce, window)
    if framework(settings.framework).gather_after_step:  # only the reduce-scatter hides
        zero1, under1 = _under(scatter, window)
        zero1 = zero1 + gather
    else:
        zero1, under1 = zero0, under0  # the all-reduce's volume: reduce-scatter + all-gather
    zero3, under3 = (m * part for part in _under(2.0 * gather + scatter, t_mb))
    exposed = np.where(zero == 3, zero3, np.where(zero == 0, zero0, zero1))
    hidden = np.where(zero == 3, under3, np.where(zero == 0, under0, under1))
    return np.where(dp > 1, exposed, 0.0), np.where(dp > 1, hidden, 0.0)


def _under(comm: np.ndarray, window: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """(exposed, hidden) seconds of `comm` seconds of collectives run under `window` seconds
    of compute: what outlasts it shows, the rest hides."""
    hidden = np.minimum(comm, window)
    return comm - hidden, hidden
