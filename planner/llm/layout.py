"""The fastest tensor x pipeline x data parallel layout of an LLM that fits GPU memory.

For N GPUs (g per node) every layout with tensor parallel t (a power of two, t <= g, t
dividing the heads and key/value heads: Shoeybi et al. 2019), pipeline p (a power of two up
to the layers; stages of ceil(L/p) layers), data parallel d = N / (t p), micro-batch b in
MICRO_BATCHES, ZeRO-1 or ZeRO-3/FSDP (Rajbhandari et al. 2020) and recomputation none /
selective / full (Korthikanti et al. 2022) is timed; the fastest that fits memory
(planner.llm.memory) wins. Reason codes: "fits", "no_layout_fits" (no layout fits, even with
FlashAttention and full recomputation), "batch_too_small" (the global batch has fewer
sequences than any layout's data-parallel ranks x micro-batch), "no_peak" (no dense peak at
this precision, e.g. fp8 on a GPU without fp8 tensor cores).

Step time of one optimizer step, with B sequences per step and m = floor(B / (d b))
micro-batches per pipeline (1F1B schedule; Narayanan et al. 2021, sec. 2.2):

  step = (m + (p - 1)/v) (t_mb + t_tp + t_pp) + t_dp

  t_mb  compute of one micro-batch on one GPU: FLOPs/token x b s x recompute factor x
        ceil(L/p) p / L / (t p) over the rate (MFU anchor x dense peak; fp8: the bf16 rate
        x FP8_SPEEDUP). The (p - 1)/v extra slots are the pipeline bubble, (p - 1)/(v m) of
        the compute with v interleaved virtual stages per GPU (v = 1: plain 1F1B; v > 1 needs
        m a multiple of p and costs v times the point-to-point traffic: Narayanan et al.
        2021, sec. 2.2.2; the first stage then holds 1 + (p - 1)/(p v) times the activations,
        Korthikanti et al. 2022). The bubble is (p - 1)/m of the
        compute (Narayanan et al. 2021, eq. 1). Recompute factor: full adds a forward pass
        (2N + 4 L s h FLOPs per token), partial the same for its share of the layers,
        selective the attention core (4 L s h) (Korthikanti et al. 2022, sec. 5).
  t_tp  4 all-reduces per layer per micro-batch of b s h 16-bit values among t GPUs, 6 with
        full recomputation, in between for partial (Shoeybi et al. 2019, fig. 4; sequence
        parallelism moves the same bytes as reduce-scatter + all-gather, Korthikanti et al.
        2022, sec. 4.2.2), not hidden.
  t_pp  one activation and one gradient of b s h / t values per micro-batch across a stage
        boundary (scatter/gather optimization: Narayanan et al. 2021, sec. 4.1).
  t_dp  ZeRO-1: reduce-scatter of the gradients + all-gather of the updated weights (the
        all-reduce volume, ZeRO sec. 7.1) once per step, hidden behind one micro-batch of
        compute (gradient-reduce and parameter-gather overlap as in Megatron-LM's
        distributed optimizer). ZeRO-3: all-gather for the forward and the backward and a
        reduce-scatter per micro-batch (1.5x the all-reduce volume, ZeRO sec. 7.2; PyTorch
        FSDP, Zhao et al. 2023), each hidden behind that micro-batch's compute (prefetch).
        LoRA reduces only the adapters' gradients; ZeRO-3 still gathers the frozen weights.

Collectives are α-β rings (Thakur et al. 2005; Patarasuk & Yuan 2009): T = k (n - 1) α +
k (n - 1)/n x bytes / bandwidth, k = 2 for an all-reduce and 1 for a reduce-scatter or
all-gather. Data-parallel collectives are hierarchical: the d ranks hold k = min(d, g // t)
peers per node (Megatron's rank order: tensor, then data, then pipeline), reduced over
NVLink/PCIe, then across n = d / k nodes over each GPU's share of the node network (rail
per GPU, network Gb/s / 8 / g), in DDP_BUCKET_BYTES buckets that each pay the latency (Li
et al. 2020, "PyTorch Distributed"). Bandwidths are ACHIEVABLE_FRACTION of the link peak.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from planner.llm.memory import activation_bytes_per_gpu, state_bytes_per_gpu, usable_bytes

MICRO_BATCHES = (1, 2, 4, 8)
ACHIEVABLE_FRACTION = 0.8  # share of a link's peak a ring reaches (as planner.throughput.scaling)
NVLINK_LATENCY_S = 5e-6  # α within a node (Thakur et al. 2005 model; NCCL's order of magnitude)
NETWORK_LATENCY_S = 10e-6  # α across nodes over InfiniBand/EFA/RoCE: an assumption
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


@dataclass(frozen=True)
class Hardware:
    """One option's GPUs: memory, the rate compute runs at, and the links between them.

    peak_flops: dense peak at the training precision (the MFU denominator);
    compute_flops: the FLOP/s the model's math runs at (MFU anchor x peak, or for fp8 the
    bf16 rate x FP8_SPEEDUP); intra_gbs / network_gbs_per_gpu: achievable GB/s per direction.
    """

    memory_gb: float
    peak_flops: float
    compute_flops: float
    intra_gbs: float
    network_gbs_per_gpu: float
    num_gpus: int
    gpus_per_node: int


@dataclass(frozen=True)
class LayoutSettings:
    """Choices the search may make (auto: all of them)."""

    global_batch_tokens: float
    flash_attention: bool = True
    recompute: str = "auto"  # auto | none | selective | full
    zero: str = "auto"  # auto | zero1 | zero3
    micro_batch: int | None = None
    memory_reserve_fraction: float = 0.10
    precision: str = "bf16"


@dataclass(frozen=True)
class Layout:
    """The chosen layout and its figures (NaN where nothing fits)."""

    reason: str
    tp: int = 0
    pp: int = 0
    dp: int = 0
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

    @property
    def fits(self) -> bool:
        """True when a layout was chosen."""
        return self.reason == "fits"

    @property
    def label(self) -> str:
        """E.g. "tp8 pp2 dp4 zero1 mb1", "tp8 pp16 vpp2 dp64 zero1 mb1" ("" when nothing
        fits)."""
        if not self.fits:
            return ""
        zero = f" {self.zero}" if self.dp > 1 else ""
        rc = {"none": "", "selective": " selective-recompute", "full": " full-recompute"}
        rc |= {k: f" recompute-{v:.0%}" for k, v in PARTIAL_RECOMPUTE.items()}
        vpp = f" vpp{self.interleave}" if self.interleave > 1 else ""
        return (
            f"tp{self.tp} pp{self.pp}{vpp} dp{self.dp}{zero} mb{self.micro_batch}"
            + rc[self.recompute]
        )


def ring_seconds(
    n: np.ndarray, nbytes: np.ndarray, gbs: float, latency_s: float, k: float
) -> np.ndarray:
    """k (n-1) α + k (n-1)/n bytes / bandwidth (Thakur et al. 2005; Patarasuk & Yuan 2009)."""
    n = np.maximum(np.asarray(n, float), 1.0)
    return k * (n - 1.0) * latency_s + k * (n - 1.0) / n * np.asarray(nbytes, float) / (gbs * 1e9)


def hierarchical_seconds(
    dp: np.ndarray, peers_in_node: np.ndarray, nbytes: np.ndarray, hw: Hardware, k: float
) -> np.ndarray:
    """A data-parallel collective: within the node over NVLink/PCIe, then across nodes on
    1/peers of the message over each GPU's network share; latency per DDP bucket."""
    buckets = np.maximum(1.0, np.ceil(np.asarray(nbytes, float) / DDP_BUCKET_BYTES))
    nodes = np.asarray(dp, float) / peers_in_node
    intra = ring_seconds(peers_in_node, nbytes, hw.intra_gbs, 0.0, k)
    inter = ring_seconds(nodes, nbytes / peers_in_node, hw.network_gbs_per_gpu, 0.0, k)
    latency = (
        buckets * k * ((peers_in_node - 1.0) * NVLINK_LATENCY_S + (nodes - 1.0) * NETWORK_LATENCY_S)
    )
    return intra + inter + latency


def _grid(shape: LLMShape, hw: Hardware, settings: LayoutSettings) -> dict[str, np.ndarray]:
    """Every candidate layout as parallel arrays."""
    n = hw.num_gpus
    tps = [t for t in (1, 2, 4, 8, 16, 32, 64) if t <= hw.gpus_per_node and n % t == 0]
    tps = [t for t in tps if shape.n_heads % t == 0 and (shape.n_kv_heads % t == 0 or t <= 1)]
    pps = [p for p in (2**i for i in range(12)) if p <= shape.n_layer]
    interleaves = (1, 2, 4)
    micro = [settings.micro_batch] if settings.micro_batch else list(MICRO_BATCHES)
    zeros = {"auto": ("zero1", "zero3"), "zero1": ("zero1",), "zero3": ("zero3",)}[settings.zero]
    partial = tuple(PARTIAL_RECOMPUTE)
    recomputes = {
        "auto": ("none", *partial, "full")
        if settings.flash_attention
        else ("none", "selective", *partial, "full"),
        "none": ("none",),
        "selective": ("selective",),
        "full": ("full",),
    }[settings.recompute]
    if not tps:
        return {}
    axes = np.meshgrid(
        np.array(tps), np.array(pps), np.array(interleaves), np.array(micro),
        np.array([z == "zero3" for z in zeros]), np.arange(len(recomputes)), indexing="ij",
    )  # fmt: skip
    t, p, v, b, z3, r = (axis.ravel() for axis in axes)
    dp = n // (t * p)
    keep = (n % (t * p) == 0) & ((v == 1) | ((p > 1) & (p * v <= shape.n_layer)))
    if len(zeros) > 1:
        keep &= ~(z3 & (dp == 1))  # one data-parallel rank: ZeRO-1 and -3 are the same
    if not keep.any():
        return {}
    return {
        "tp": t[keep], "pp": p[keep], "dp": dp[keep], "mb": b[keep], "zero3": z3[keep],
        "recompute": np.array(recomputes)[r[keep]], "vpp": v[keep],
    }  # fmt: skip


def choose_layout(shape: LLMShape, hw: Hardware, settings: LayoutSettings) -> Layout:
    """The fastest layout that fits (module docstring), or the reason none does."""
    if not (hw.peak_flops > 0 and hw.compute_flops > 0):
        return Layout("no_peak")
    grid = _grid(shape, hw, settings)
    sequences = max(1, int(settings.global_batch_tokens // shape.seq_len))
    if not grid:
        return Layout("no_layout_fits")
    tp, pp, dp, mb, vpp = (grid[k].astype(float) for k in ("tp", "pp", "dp", "mb", "vpp"))
    m = np.floor(sequences / (dp * mb))
    # Interleaving needs whole rounds of p micro-batches (Megatron-LM's schedule).
    usable_batch = (m >= 1) & ((vpp == 1) | (np.mod(m, pp) == 0))
    if not usable_batch.any():
        return Layout("batch_too_small")
    m = np.maximum(m, 1.0)
    zero3, recompute = grid["zero3"], grid["recompute"]
    share = recompute_share(recompute)
    whole = np.where(share > 0, "none", recompute)

    def activations(mode: np.ndarray) -> np.ndarray:
        return activation_bytes_per_gpu(
            shape.seq_len, shape.d_model, shape.n_heads, shape.n_layer, shape.vocab_size,
            settings.precision, tp, pp, mb, m, mode, settings.flash_attention, vpp,
        )  # fmt: skip

    stored = activations(whole)
    rebuilt = activations(np.full(len(share), "full"))
    memory = state_bytes_per_gpu(
        shape.params, shape.adapter_params, shape.mode, settings.precision, tp, pp, dp, zero3
    ) + np.where(share > 0, share * rebuilt + (1.0 - share) * stored, stored)
    usable = usable_bytes(hw.memory_gb, settings.memory_reserve_fraction)
    fits = (memory <= usable) & usable_batch
    if not fits.any():
        least = float(np.min(np.where(usable_batch, memory, np.inf)))
        return Layout("no_layout_fits", memory_per_gpu_gb=least / 1e9, usable_gb=usable / 1e9)
    times = _step_times(shape, hw, settings, tp, pp, dp, mb, m, zero3, recompute, vpp)
    tokens = m * dp * mb * shape.seq_len / times["step"]
    best = int(np.argmax(np.where(fits, tokens, -np.inf)))
    step = float(times["step"][best])
    return Layout(
        "fits",
        tp=int(tp[best]),
        pp=int(pp[best]),
        dp=int(dp[best]),
        micro_batch=int(mb[best]),
        micro_batches=int(m[best]),
        interleave=int(vpp[best]),
        zero=str(np.where(zero3, "zero3", "zero1")[best]),
        recompute=str(recompute[best]),
        memory_per_gpu_gb=float(memory[best]) / 1e9,
        usable_gb=usable / 1e9,
        step_s=step,
        tokens_per_s=float(tokens[best]),
        mfu=float(tokens[best]) * shape.flops_per_token / (hw.num_gpus * hw.peak_flops),
        compute_share=float(times["compute"][best]) / step,
        bubble_share=float(times["bubble"][best]) / step,
        tp_share=float(times["tp"][best]) / step,
        pp_share=float(times["pp"][best]) / step,
        dp_share=float(times["dp"][best]) / step,
    )


def _step_times(
    shape: LLMShape,
    hw: Hardware,
    settings: LayoutSettings,
    tp: np.ndarray,
    pp: np.ndarray,
    dp: np.ndarray,
    mb: np.ndarray,
    m: np.ndarray,
    zero3: np.ndarray,
    recompute: np.ndarray,
    vpp: np.ndarray,
) -> dict[str, np.ndarray]:
    """Seconds per optimizer step and its parts (module docstring), per layout."""
    s, h, layers = float(shape.seq_len), float(shape.d_model), float(shape.n_layer)
    forward = 2.0 * shape.params + 4.0 * layers * s * h
    share = recompute_share(recompute)
    extra = share * forward + np.where(recompute == "selective", 4.0 * layers * s * h, 0.0)
    stage_layers = np.ceil(layers / pp)
    imbalance = stage_layers * pp / layers
    flops_mb = (shape.flops_per_token + extra) * mb * s * imbalance / (tp * pp)
    t_mb = flops_mb / hw.compute_flops
    act_bytes = mb * s * h * 2.0
    n_tp = 4.0 + 2.0 * share
    t_tp = np.where(
        tp > 1,
        stage_layers * n_tp * ring_seconds(tp, act_bytes, hw.intra_gbs, NVLINK_LATENCY_S, 2.0),
        0.0,
    )
    pp_gbs = hw.intra_gbs if hw.num_gpus <= hw.gpus_per_node else hw.network_gbs_per_gpu
    pp_latency = NVLINK_LATENCY_S if hw.num_gpus <= hw.gpus_per_node else NETWORK_LATENCY_S
    t_pp = np.where(pp > 1, 2.0 * vpp * (pp_latency + act_bytes / tp / (pp_gbs * 1e9)), 0.0)
    slots = m + (pp - 1.0) / vpp
    per_slot = t_mb + t_tp + t_pp
    t_dp = _dp_seconds(shape, hw, settings, tp, pp, dp, m, zero3, t_mb)
    step = slots * per_slot + t_dp
    return {
        "step": step,
        "compute": m * t_mb,
        "bubble": (pp - 1.0) / vpp * per_slot,
        "tp": m * t_tp,
        "pp": m * t_pp,
        "dp": t_dp,
    }


def _dp_seconds(
    shape: LLMShape,
    hw: Hardware,
    settings: LayoutSettings,
    tp: np.ndarray,
    pp: np.ndarray,
    dp: np.ndarray,
    m: np.ndarray,
    zero3: np.ndarray,
    t_mb: np.ndarray,
) -> np.ndarray:
    """Exposed data-parallel communication per step (module docstring)."""
    value_bytes = 4.0 if settings.precision in ("fp32", "tf32") else 2.0
    frozen = shape.mode in ("lora", "qlora")
    local = shape.params / (tp * pp)
    trained = (shape.adapter_params if frozen else shape.params) / (tp * pp) * value_bytes
    weight_bytes = local * (0.516 if shape.mode == "qlora" else value_bytes)
    peers = np.clip(np.floor(hw.gpus_per_node / tp), 1.0, dp)
    allreduce = hierarchical_seconds(dp, peers, trained, hw, 2.0)
    gather = hierarchical_seconds(dp, peers, weight_bytes, hw, 1.0)
    scatter = hierarchical_seconds(dp, peers, trained, hw, 1.0)
    zero1 = np.maximum(0.0, allreduce - t_mb)
    zero3_exposed = m * np.maximum(0.0, 2.0 * gather + scatter - t_mb)
    return np.where(dp > 1, np.where(zero3, zero3_exposed, zero1), 0.0)
