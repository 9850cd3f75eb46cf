"""LLM pre-training: does it fit in GPU memory, and how many tokens/s from measured MFU.

Memory per GPU (bytes; `params` = N, sequence s, micro-batch b, width h, heads a, layers L):

  model states   16 N: fp16 weights (2) + fp16 gradients (2) + fp32 master weights, Adam
                 momentum and variance (12): mixed-precision Adam (Rajbhandari et al. 2020,
                 "ZeRO", section 3.1). fp32/tf32 training also keeps 16 N (4 + 4 + 8).
                 ZeRO-3 / FSDP full sharding divides all of it by the GPU count (section 5).
  activations    s b h (34 + 5 a s / h) per layer with 16-bit activations and no
                 recomputation (Korthikanti et al. 2022, "Reducing Activation Recomputation
                 in Large Transformer Models", eq. 1; no FlashAttention, so the 5 a s^2 b
                 attention-score term is kept); x2 for fp32/tf32 activations. Full
                 recomputation keeps each layer's input, 2 s b h per layer (Korthikanti et
                 al. 2022, table 2), plus one layer's full activations while it is recomputed.
                 Activations are not sharded by ZeRO (data parallel: each GPU holds its own).
  usable         memory_gb x 1e9 x (1 - reserve): the spec table's GB, less a reserve for the
                 CUDA context, NCCL buffers, allocator fragmentation and the layer ZeRO-3
                 gathers (an assumption: 10%).

Minimum GPUs: without sharding 1 if states + activations fit one GPU, else none (plain data
parallelism replicates everything; tensor and pipeline parallelism are not modelled); with
ZeRO-3, ceil(16 N / (usable - activations)), none when activations alone overflow a GPU.
`recompute = "auto"` tries, in order: no sharding, ZeRO-3, no sharding + full recompute,
ZeRO-3 + full recompute (recompute costs a forward pass: model FLOPs 6N of 8N done, so MFU
falls to 3/4 at the same hardware FLOPs utilization; Chowdhery et al. 2022, appendix B).

Throughput (tokens/s) on N GPUs = MFU(N) x dense peak FLOP/s x N / training FLOPs per token
(MFU as defined by Chowdhery et al. 2022, "PaLM", appendix B). MFU comes from, in order:

  measured / published  the GPT benchmark on this GPU (own results, workload "gpt", field
                        `mfu`), at this model size and GPU count; `scaled` when the size or
                        count differs (nearest measured size in log-parameters, then the
                        nearest count)
  estimated (transfer)  other GPUs' measured MFU (median over GPUs, each at its size
                        nearest the target), when this GPU has none
  estimated (assumed)   no GPT measurement at all: planner.throughput.ASSUMED_LLM_MFU (40%,
                        band 25-55%, cited there)

Only GPU results with a known size count: CPU runs (device "cpu", or no canonical GPU) and
sizes that do not parse as a parameter count ("tiny") never predict GPU MFU. fp16 and bf16
MFUs stand in for each other (same dense peak where a GPU has both).

Across GPU counts MFU(N) = MFU(W) x E(N) / E(W), W the anchor's count and E the ring
all-reduce efficiency (throughput.scaling.comm_efficiency) of the gradients (x1.5 with ZeRO-3,
which moves 3N instead of 2N: Rajbhandari et al. 2020, section 7.2) against the compute of
a global batch of `global_batch_tokens` split over N GPUs, with the option's GPUs per node.

Bands (10%-90%, log half-widths added in quadrature): the anchor's own spread (min..max of
runs, or its P10/P90 for one run); SIZE_LOG_ERROR_PER_DECADE per decade between the measured
and the target parameter count; TRANSFER_LOG_ERROR for another GPU's MFU;
COMM_LOG_ERROR_PER_DOUBLING per doubling between W and N. These three are assumptions,
stated with their reasons below.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from planner.hardware import PEAK_COLUMN_BY_PRECISION, load_specs, peak_tflops
from planner.throughput import ASSUMED_LLM_MFU, ASSUMED_LLM_MFU_BAND
from planner.throughput.scaling import (
    GRADIENT_BYTES_PER_PARAM,
    CommModel,
    bus_bandwidth_gbs,
    comm_efficiency,
)
from planner.workloads import LLM_PRESETS, Workload

STATE_BYTES_PER_PARAM = 16.0  # Rajbhandari et al. 2020, section 3.1 (K = 12, + 2 + 2)
ZERO3_COMM_FACTOR = 1.5  # 3N vs 2N elements moved per step (Rajbhandari et al. 2020, 7.2)
RECOMPUTE_MFU_FACTOR = 6.0 / 8.0  # full recompute: one more forward (2N of 8N FLOPs/token)
# 16-bit activations in Korthikanti et al.'s count; fp32/tf32 training stores 4-byte ones.
ACTIVATION_BYTES_FACTOR = {"fp16": 1.0, "bf16": 1.0, "tf32": 2.0, "fp32": 2.0}
# MFU is relative to the precision's peak, so half-precision MFUs transfer between fp16 and
# bf16 (gpu_specs: bf16_tflops == fp16_tflops wherever both exist).
PRECISION_FAMILY = {"fp16": "half", "bf16": "half", "tf32": "tf32", "fp32": "fp32"}
# Assumptions behind the bands (not fitted; revisit when more GPT results exist):
# - MFU moves with model size: Narayanan et al. 2021 (table 1) report 44-52% of peak from
#   1.7B to 1T parameters; sub-billion models sit lower. 0.15 in log per decade (x1.16)
#   covers that spread over the decades such runs span.
SIZE_LOG_ERROR_PER_DECADE = 0.15
# - MFU of one GPU used for another (kernels, memory bandwidth and maturity differ): x1.3.
TRANSFER_LOG_ERROR = math.log(1.3)
# - The ring all-reduce model's held-out error on the published 2- and 4-GPU figures is
#   about 10% MAPE (tools/evaluate_estimator.py), i.e. ~0.05 in log per doubling.
COMM_LOG_ERROR_PER_DOUBLING = 0.05
Z90 = 1.2815515655446004  # standard normal 90% quantile: a 10%-90% band is +/- 1.2816 sigma
SIZE_LABEL = re.compile(r"^(\d+(?:\.\d+)?)([kmbt])$")
_SCALE = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}
SOURCE_RANK = {"measured": 0, "published": 1}


class LLMMemoryError(ValueError):
    """An LLM that fits on no option: names the memory needed and what would fit."""


@dataclass(frozen=True)
class LLMSettings:
    """How the LLM is trained (all settable; defaults and their sources).

    micro_batch: sequences per GPU per forward pass (1: the least memory).
    global_batch_tokens: tokens per optimizer step, over all GPUs (4M: LLaMA, Touvron et
      al. 2023; GPT-3 used 3.2M at 175B, Brown et al. 2020).
    recompute: "auto" (only where needed to fit), "none" or "full".
    memory_reserve_fraction: share of each GPU's memory not available to the model.
    head_dim: width of an attention head (128 in LLaMA and GPT-3 XL; 64 at d_model <= 1024,
      as in GPT-2).
    """

    micro_batch: int = 1
    global_batch_tokens: float = 4_194_304.0
    recompute: str = "auto"
    memory_reserve_fraction: float = 0.10
    head_dim: int = 128

    def __post_init__(self) -> None:
        if self.micro_batch < 1:
            raise ValueError(f"micro_batch must be >= 1 sequence, got {self.micro_batch}")
        if not self.global_batch_tokens > 0:
            raise ValueError("global_batch_tokens must be > 0 (tokens per optimizer step)")
        if self.recompute not in ("auto", "none", "full"):
            raise ValueError(f"recompute {self.recompute!r}: valid are auto, none, full")
        if not 0.0 <= self.memory_reserve_fraction < 1.0:
            raise ValueError("memory_reserve_fraction must be in [0, 1)")
        if self.head_dim < 1:
            raise ValueError("head_dim must be >= 1")


# ---------------------------------------------------------------- memory


def n_heads(d_model: int, head_dim: int = 128) -> int:
    """Attention heads: d_model / head_dim (head width 64 for d_model <= 1024, as GPT-2)."""
    width = 64 if d_model <= 1024 else head_dim
    return max(1, d_model // width)


def state_bytes(params: float) -> float:
    """Weights, gradients and Adam state: 16 bytes per parameter (Rajbhandari et al. 2020)."""
    return STATE_BYTES_PER_PARAM * params


def activation_bytes_per_layer(
    seq_len: int, micro_batch: int, d_model: int, heads: int, precision: str = "bf16"
) -> float:
    """s b h (34 + 5 a s / h) bytes: one layer, no recomputation (Korthikanti et al. 2022 eq. 1).

    For 16-bit activations; fp32/tf32 doubles it (ACTIVATION_BYTES_FACTOR).
    """
    s, b, h = float(seq_len), float(micro_batch), float(d_model)
    return s * b * h * (34.0 + 5.0 * heads * s / h) * ACTIVATION_BYTES_FACTOR[precision]


def activation_bytes(
    workload: Workload, precision: str, settings: LLMSettings, recompute: bool
) -> float:
    """Activation bytes per GPU for the whole model, with or without full recomputation.

    Without: L x the per-layer figure. With: 2 s b h per layer kept (Korthikanti et al.
    2022, table 2) plus one layer's activations while it is recomputed.
    """
    s, h, layers = _shape(workload)
    b = settings.micro_batch
    one = activation_bytes_per_layer(s, b, h, n_heads(h, settings.head_dim), precision)
    if not recompute:
        return layers * one
    return layers * 2.0 * s * b * h * ACTIVATION_BYTES_FACTOR[precision] + one


def usable_bytes(memory_gb: np.ndarray | pd.Series, settings: LLMSettings) -> np.ndarray:
    """Per-GPU bytes the model may use: spec GB x 1e9 x (1 - reserve)."""
    return np.asarray(memory_gb, dtype=float) * 1e9 * (1.0 - settings.memory_reserve_fraction)


MEMORY_COLUMNS = ("fits", "sharding", "recompute", "memory_per_gpu_gb", "usable_gb")


def memory_check(
    workload: Workload,
    precision: str,
    memory_gb: np.ndarray,
    total_gpus: np.ndarray,
    settings: LLMSettings | None = None,
) -> pd.DataFrame:
    """Per option (GPU memory, GPU count): does it fit, and how (vectorized).

    Columns: fits (bool), sharding ("none" | "zero3"), recompute (bool), memory_per_gpu_gb
    (what the chosen way needs per GPU; the least-memory way where nothing fits), usable_gb.
    """
    settings = settings or LLMSettings()
    states = state_bytes(_params(workload))
    n = np.maximum(np.asarray(total_gpus, dtype=float), 1.0)
    usable = usable_bytes(memory_gb, settings)
    act = {rc: activation_bytes(workload, precision, settings, rc) for rc in (False, True)}
    recomputes = {"auto": (False, True), "none": (False,), "full": (True,)}[settings.recompute]
    ways = [(shard, rc) for rc in recomputes for shard in (False, True)]
    need = {
        (shard, rc): np.where(shard & (n > 1), states / n, states) + act[rc] for shard, rc in ways
    }
    chosen = np.full(len(n), -1)
    for i, way in reversed(list(enumerate(ways))):
        chosen = np.where(need[way] <= usable, i, chosen)
    fits = chosen >= 0
    stacked = np.stack([need[w] for w in ways])
    pick = np.where(fits, chosen, len(ways) - 1)
    shard = np.array([w[0] for w in ways])[pick] & (n > 1)
    return pd.DataFrame(
        {
            "fits": fits,
            "sharding": np.where(shard, "zero3", "none"),
            "recompute": np.array([w[1] for w in ways])[pick],
            "memory_per_gpu_gb": stacked[pick, np.arange(len(n))] / 1e9,
            "usable_gb": usable / 1e9,
        }
    )


def min_gpus(
    workload: Workload, precision: str, memory_gb: float, settings: LLMSettings | None = None
) -> dict[str, float]:
    """Fewest GPUs of `memory_gb` that hold the model: unsharded and with ZeRO-3.

    Keys: unsharded (1 or inf), zero3 (ceil(16 N / (usable - activations)), inf when the
    activations alone overflow a GPU), recompute (bool: whether the zero3 figure needs full
    recomputation), states_gb, activations_gb (at that figure's recompute setting).
    Follows `settings.recompute` ("auto": the least GPUs, recomputing only if that lowers it).
    """
    settings = settings or LLMSettings()
    states = state_bytes(_params(workload))
    usable = float(usable_bytes(np.array([memory_gb]), settings)[0])
    allowed = {"auto": (False, True), "none": (False,), "full": (True,)}[settings.recompute]
    unsharded: tuple[float, bool] = (math.inf, False)
    zero3: tuple[float, bool, float] = (math.inf, False, 0.0)
    for rc in allowed:  # no recompute first: it wins ties
        act = activation_bytes(workload, precision, settings, rc)
        if states + act <= usable and unsharded[0] > 1:
            unsharded = (1.0, rc)
        count = math.ceil(states / (usable - act)) if usable > act else math.inf
        if count < zero3[0] or (zero3[0] == math.inf and rc == allowed[0]):
            zero3 = (count, rc, act)
    return {
        "unsharded": unsharded[0],
        "zero3": zero3[0],
        "recompute": zero3[1],
        "states_gb": states / 1e9,
        "activations_gb": zero3[2] / 1e9,
    }


def no_fit_message(
    workload: Workload,
    precision: str,
    gpu_memory: pd.DataFrame,
    max_gpus: float,
    settings: LLMSettings | None = None,
) -> str:
    """Why nothing fits: memory needed, and per GPU model the fewest GPUs that would hold it.

    `gpu_memory`: gpu_name, memory_gb, most_gpus (the largest count an option offered).
    """
    settings = settings or LLMSettings()
    states = state_bytes(_params(workload)) / 1e9
    parts = []
    for row in gpu_memory.sort_values("memory_gb", ascending=False).head(4).itertuples():
        need = min_gpus(workload, precision, float(row.memory_gb), settings)
        if math.isinf(need["zero3"]):
            parts.append(
                f"{row.gpu_name} ({row.memory_gb:g} GB): never, activations alone take "
                f"{need['activations_gb']:,.1f} GB per GPU"
            )
        else:
            parts.append(
                f"{row.gpu_name} ({row.memory_gb:g} GB): at least {need['zero3']:,.0f} GPUs "
                f"with ZeRO-3{' and full recompute' if need['recompute'] else ''} "
                f"(options here go up to {row.most_gpus:g})"
            )
    return (
        f"{workload.name} does not fit in GPU memory at any GPU count offered: it needs "
        f"{states:,.0f} GB of weights, gradients and Adam state (16 bytes/parameter, "
        f"Rajbhandari et al. 2020) plus activations (micro-batch {settings.micro_batch}, "
        f"sequence {workload.seq_len}). " + "; ".join(parts) + ". Allow more GPUs "
        f"per option (now {max_gpus:g}), pick GPUs with more memory, or train a smaller model."
    )


def memory_note(
    workload: Workload,
    precision: str,
    options: pd.DataFrame,
    fits: np.ndarray,
    settings: LLMSettings | None = None,
) -> list[str]:
    """A warning for options with too few GPUs to hold the model, and the fewest that do.

    `options`: offer_key, gpu_name, gpu_memory_gb (one row per option); `fits` aligned.
    """
    fits = np.asarray(fits, dtype=bool)
    if fits.all():
        return []
    settings = settings or LLMSettings()
    gone = options.loc[~fits]
    kept_keys = set(options.loc[fits, "offer_key"])
    whole = gone.loc[~gone["offer_key"].isin(kept_keys), "offer_key"].nunique()
    models = (
        gone.loc[:, ["gpu_name", "gpu_memory_gb"]]
        .drop_duplicates("gpu_name")
        .sort_values("gpu_memory_gb", ascending=False)
    )
    parts = []
    for name, memory in zip(models["gpu_name"], models["gpu_memory_gb"], strict=True):
        if not np.isfinite(memory):
            continue
        need = min_gpus(workload, precision, float(memory), settings)["zero3"]
        parts.append(f"{name} {'never' if math.isinf(need) else f'{need:g}'}")
    more = f", and {len(parts) - 12} more" if len(parts) > 12 else ""
    return [
        f"{int((~fits).sum())} options with too few GPUs to hold {workload.name} left out "
        f"({whole} offers at every count): 16 bytes/parameter + activations; fewest GPUs "
        "with ZeRO-3: " + ", ".join(parts[:12]) + more
    ]


# ---------------------------------------------------------------- MFU figures


def params_from_size(label: str) -> float | None:
    """Parameters of a GPT benchmark size label ("124m", "1.3b", "7b"); None for "tiny"."""
    text = str(label).strip().lower()
    if text in LLM_PRESETS:
        return LLM_PRESETS[text][0]
    match = SIZE_LABEL.match(text)
    if not match:
        return None
    return float(match.group(1)) * _SCALE[match.group(2)]


MFU_COLUMNS = (
    "gpu_name", "model_size", "params", "world_size", "mfu", "mfu_low", "mfu_high", "runs",
    "source", "detail",
)  # fmt: skip


def peak_or_nan(gpu_name: str, precision: str) -> float:
    """Dense peak TFLOP/s of a GPU at a precision, NaN when unknown (planner.hardware)."""
    try:
        return peak_tflops(str(gpu_name), str(precision))
    except (ValueError, KeyError):
        return float("nan")


def gpt_mfu_figures(results: pd.DataFrame, precision: str) -> tuple[pd.DataFrame, list[str]]:
    """GPT-benchmark MFU per (GPU, size, GPU count), measured before published.

    `results` is planner.throughput.own_and_published_results()'s table. Keeps GPU rows of
    workload "gpt" with an `mfu`, at `precision` or its half-precision sibling, whose size
    parses as a parameter count. Returns the figures (MFU_COLUMNS: median of runs, band
    min..max, or P10/P90 of a single run's throughput) and notes on rows left out.
    """
    notes: list[str] = []
    if results.empty or "mfu" not in results.columns:
        return pd.DataFrame(columns=list(MFU_COLUMNS)), notes
    gpt = results.loc[results["workload"] == "gpt"]
    if gpt.empty:
        return pd.DataFrame(columns=list(MFU_COLUMNS)), notes
    family = PRECISION_FAMILY.get(precision)
    gpt = gpt.loc[gpt["precision"].map(PRECISION_FAMILY) == family]
    on_cpu = (gpt["device"].astype(str) == "cpu") | gpt["gpu_name"].isna()
    if on_cpu.any():
        notes.append(
            f"{int(on_cpu.sum())} GPT results from CPUs or unknown devices not used to "
            "predict GPU MFU"
        )
    gpt = gpt.loc[~on_cpu].copy()
    # A run made without --peak-tflops has no MFU: achieved TFLOP/s per device over the
    # spec table's dense peak at its precision is the same definition (PaLM app. B).
    if "achieved_tflops" in gpt.columns:
        missing = gpt["mfu"].isna()
        peak = pd.Series(
            [peak_or_nan(g, p) for g, p in zip(gpt["gpu_name"], gpt["precision"], strict=True)],
            index=gpt.index,
            dtype=float,
        )
        gpt.loc[missing, "mfu"] = gpt.loc[missing, "achieved_tflops"] / peak[missing]
    gpt = gpt.loc[gpt["mfu"].notna() & (gpt["mfu"] > 0)]
    params = gpt["model_size"].map(params_from_size)
    unsized = params.isna()
    if unsized.any():
        sizes = ", ".join(sorted(gpt.loc[unsized, "model_size"].astype(str).unique()))
        notes.append(f"GPT results of size {sizes} not used: not a parameter count")
    gpt = gpt.loc[~unsized].assign(params=params[~unsized].astype(float))
    if gpt.empty:
        return pd.DataFrame(columns=list(MFU_COLUMNS)), notes
    kind = np.where(gpt["source"].astype(str).str.startswith("published"), "published", "measured")
    p10 = (gpt["throughput_p10"] / gpt["throughput"]).fillna(1.0).clip(upper=1.0)
    p90 = (gpt["throughput_p90"] / gpt["throughput"]).fillna(1.0).clip(lower=1.0)
    gpt = gpt.assign(
        kind=kind, single_low=gpt["mfu"] * p10, single_high=gpt["mfu"] * p90, _id=gpt["id"]
    )
    keys = ["gpu_name", "model_size", "params", "world_size", "kind"]
    table = (
        gpt.groupby(keys)
        .agg(
            mfu=("mfu", "median"),
            mfu_low=("mfu", "min"),
            mfu_high=("mfu", "max"),
            single_low=("single_low", "first"),
            single_high=("single_high", "first"),
            runs=("mfu", "size"),
            first_id=("_id", "first"),
        )
        .reset_index()
    )
    one = table["runs"] == 1
    table.loc[one, "mfu_low"] = table.loc[one, "single_low"]
    table.loc[one, "mfu_high"] = table.loc[one, "single_high"]
    table["detail"] = np.where(
        one,
        np.where(table["kind"] == "measured", "own run ", "") + table["first_id"].astype(str),
        "median of " + table["runs"].astype(str) + " runs",
    )
    table = table.rename(columns={"kind": "source"})
    table["_rank"] = table["source"].map(SOURCE_RANK)
    table = table.sort_values([*keys[:4], "_rank"]).drop_duplicates(keys[:4])
    return table.loc[:, list(MFU_COLUMNS)].reset_index(drop=True), notes


# ---------------------------------------------------------------- throughput


THROUGHPUT_COLUMNS = (
    "throughput", "throughput_low", "throughput_high", "throughput_source",
    "throughput_detail", "mfu",
)  # fmt: skip


def llm_throughput(
    options: pd.DataFrame,
    workload: Workload,
    precision: str,
    figures: pd.DataFrame,
    memory: pd.DataFrame | None = None,
    settings: LLMSettings | None = None,
    comm: CommModel | None = None,
) -> pd.DataFrame:
    """Tokens/s per option (gpu_name, total_gpus, gpus_per_node), aligned to its index.

    `figures` from gpt_mfu_figures; `memory` from memory_check (its sharding and recompute
    set the communication volume and the recompute factor; None: unsharded, no recompute).
    Columns: THROUGHPUT_COLUMNS (NaN throughput where the GPU has no peak at `precision`).
    """
    settings = settings or LLMSettings()
    comm = comm or CommModel()
    gpus = options["gpu_name"].astype(str).reset_index(drop=True)
    n = options["total_gpus"].to_numpy(dtype=float)
    per_node = options["gpus_per_node"].to_numpy(dtype=float)
    network = (
        options["network_gbps"].to_numpy(dtype=float)
        if "network_gbps" in options.columns
        else np.full(len(options), comm.network_gbps_per_node)
    )
    peak = gpus.map(load_specs()[PEAK_COLUMN_BY_PRECISION[precision]]).to_numpy(float) * 1e12
    target = _params(workload)
    anchor = _anchors(gpus, n, target, figures)
    zero3 = np.zeros(len(n), bool) if memory is None else (memory["sharding"].to_numpy() == "zero3")
    recompute = np.zeros(len(n), bool) if memory is None else memory["recompute"].to_numpy(bool)
    mfu_w = anchor["mfu"].to_numpy(float)
    w = anchor["world_size"].to_numpy(float)
    grad = target * GRADIENT_BYTES_PER_PARAM.get(precision, 4.0) * np.where(zero3, 1.5, 1.0)
    batch_s = settings.global_batch_tokens * workload.flops_per_sample / (mfu_w * peak)

    def efficiency(count: np.ndarray) -> np.ndarray:
        bus = bus_bandwidth_gbs(gpus, count, comm, per_node, network)
        with np.errstate(invalid="ignore", divide="ignore"):
            return comm_efficiency(count, batch_s, grad, bus, comm, True)

    e_n, e_w = efficiency(n), efficiency(w)
    ratio = e_n / e_w
    factor = np.where(recompute, RECOMPUTE_MFU_FACTOR, 1.0)
    mfu = mfu_w * ratio * factor
    tokens = mfu * peak * n / workload.flops_per_sample
    doublings = np.abs(np.log2(n / w))
    decades = np.abs(np.log10(target / anchor["params"].to_numpy(float)))
    size_w = np.where(anchor["kind"] == "assumed", 0.0, SIZE_LOG_ERROR_PER_DECADE * decades)
    transfer_w = np.where(anchor["kind"] == "transfer", TRANSFER_LOG_ERROR, 0.0)
    comm_w = COMM_LOG_ERROR_PER_DOUBLING * doublings
    with np.errstate(divide="ignore", invalid="ignore"):
        own_down = np.log(mfu_w / anchor["mfu_low"].to_numpy(float))
        own_up = np.log(anchor["mfu_high"].to_numpy(float) / mfu_w)
    down = np.sqrt(own_down**2 + size_w**2 + transfer_w**2 + comm_w**2)
    up = np.sqrt(own_up**2 + size_w**2 + transfer_w**2 + comm_w**2)
    ok = np.isfinite(tokens) & (tokens > 0)
    source = _sources(anchor, n, target)
    detail = _llm_details(anchor, n, target, ratio, recompute, zero3, network, precision)
    no_peak = (
        f"no {precision} peak for this GPU in planner/data/gpu_specs.csv (no {precision} "
        "tensor cores, or no spec row)"
    )
    out = pd.DataFrame(
        {
            "throughput": np.where(ok, tokens, np.nan),
            "throughput_low": np.where(ok, tokens * np.exp(-down), np.nan),
            "throughput_high": np.where(ok, tokens * np.exp(up), np.nan),
            "throughput_source": pd.Series(source, dtype=object).where(ok, None).to_numpy(),
            "throughput_detail": np.where(ok, detail, no_peak),
            "mfu": np.where(ok, mfu, np.nan),
        },
        index=options.index,
    )
    return out


def _anchors(gpus: pd.Series, n: np.ndarray, target: float, figures: pd.DataFrame) -> pd.DataFrame:
    """Per option the MFU it starts from: this GPU's, other GPUs' pooled, or assumed."""
    assumed = {
        "mfu": ASSUMED_LLM_MFU,
        "mfu_low": ASSUMED_LLM_MFU_BAND[0],
        "mfu_high": ASSUMED_LLM_MFU_BAND[1],
        "world_size": 1.0,
        "params": target,
        "model_size": "",
        "source": "estimated",
        "detail": "",
        "kind": "assumed",
        "gpu_from": "",
    }
    base = pd.DataFrame({k: [v] * len(n) for k, v in assumed.items()})
    if figures.empty:
        return base
    figs = figures.assign(
        size_d=np.abs(np.log10(figures["params"].astype(float) / target)),
        _rank=figures["source"].map(SOURCE_RANK),
    )
    # Other GPUs pooled: each GPU's figure nearest the target size, smallest count.
    per_gpu = figs.sort_values(["gpu_name", "size_d", "world_size", "_rank"]).drop_duplicates(
        "gpu_name"
    )
    pooled = {
        "mfu": float(per_gpu["mfu"].median()),
        "mfu_low": float(per_gpu["mfu_low"].min()),
        "mfu_high": float(per_gpu["mfu_high"].max()),
        "world_size": float(per_gpu["world_size"].median()),
        "params": float(np.exp(np.log(per_gpu["params"].astype(float)).mean())),
        "model_size": ", ".join(per_gpu["model_size"].astype(str).unique()),
        "source": "estimated",
        "detail": "",
        "kind": "transfer",
        "gpu_from": ", ".join(per_gpu["gpu_name"].astype(str)),
    }
    out = base.copy()
    for key, value in pooled.items():
        out[key] = value
    # This GPU's own figure: nearest size, then nearest count, then measured first.
    opts = pd.DataFrame({"gpu_name": gpus.to_numpy(), "n": n, "_pos": np.arange(len(n))})
    joined = opts.merge(figs, on="gpu_name", how="inner")
    if not joined.empty:
        joined["count_d"] = np.abs(np.log2(joined["n"] / joined["world_size"].astype(float)))
        best = joined.sort_values(["_pos", "size_d", "count_d", "_rank"]).drop_duplicates("_pos")
        pos = best["_pos"].to_numpy()
        out.loc[pos, "mfu"] = best["mfu"].to_numpy(float)
        out.loc[pos, "mfu_low"] = best["mfu_low"].to_numpy(float)
        out.loc[pos, "mfu_high"] = best["mfu_high"].to_numpy(float)
        out.loc[pos, "world_size"] = best["world_size"].to_numpy(float)
        out.loc[pos, "params"] = best["params"].to_numpy(float)
        out.loc[pos, "model_size"] = best["model_size"].astype(str).to_numpy()
        out.loc[pos, "source"] = best["source"].to_numpy()
        out.loc[pos, "detail"] = best["detail"].astype(str).to_numpy()
        out.loc[pos, "kind"] = "own"
        out.loc[pos, "gpu_from"] = best["gpu_name"].to_numpy()
    return out


def _sources(anchor: pd.DataFrame, n: np.ndarray, target: float) -> np.ndarray:
    own = anchor["kind"].to_numpy() == "own"
    same_size = np.abs(anchor["params"].to_numpy(float) / target - 1.0) < 0.02
    exact = own & same_size & (anchor["world_size"].to_numpy(float) == n)
    return np.where(exact, anchor["source"], np.where(own, "scaled", "estimated"))


def _llm_details(
    anchor: pd.DataFrame,
    n: np.ndarray,
    target: float,
    ratio: np.ndarray,
    recompute: np.ndarray,
    zero3: np.ndarray,
    network_gbps: np.ndarray,
    precision: str,
) -> np.ndarray:
    kind = anchor["kind"].to_numpy()
    pct = (anchor["mfu"] * 100).round(0).astype(int).astype(str).to_numpy()
    w = anchor["world_size"].astype(float).map("{:g}".format).to_numpy()
    size = anchor["model_size"].astype(str).to_numpy()
    low = (anchor["mfu_low"] * 100).round(0).astype(int).astype(str).to_numpy()
    high = (anchor["mfu_high"] * 100).round(0).astype(int).astype(str).to_numpy()
    band = " (" + low + "-" + high + "%)"
    head = np.select(
        [kind == "own", kind == "transfer"],
        [
            "MFU " + pct + "%" + band + " " + anchor["source"].to_numpy() + " by the GPT "
            "benchmark on this GPU ("
            + anchor["detail"].astype(str).to_numpy()
            + "; "
            + size
            + ", "
            + w
            + " GPU)",
            "MFU "
            + pct
            + "%"
            + band
            + " transferred from GPT runs on "
            + anchor["gpu_from"].astype(str).to_numpy()
            + " ("
            + size
            + "; +/-30% for another GPU)",
        ],
        "assumed MFU " + pct + "%" + band + " (no GPT benchmark result; PaLM 46%, "
        "Megatron-LM 54%, public runs 30-50%)",
    )
    same_size = np.abs(anchor["params"].to_numpy(float) / target - 1.0) < 0.02
    size_text = np.where(
        (kind != "assumed") & ~same_size,
        "; size " + size + " -> target (+/-15% per decade)",
        "",
    )
    ratio_text = pd.Series(ratio).map(lambda r: f"{r:.2f}" if np.isfinite(r) else "?").to_numpy()
    count_text = np.where(
        n != anchor["world_size"].to_numpy(float),
        "; x "
        + ratio_text
        + " ring all-reduce efficiency "
        + w
        + " -> "
        + pd.Series(n).map("{:g}".format).to_numpy()
        + " GPUs ("
        + pd.Series(network_gbps).map("{:g}".format).to_numpy()
        + " Gb/s per node)",
        "",
    )
    extras = np.where(zero3, "; ZeRO-3 (x1.5 comm)", "") + np.where(
        recompute, "; full recompute (x0.75)", ""
    )
    return (
        head + size_text + count_text + extras + f"; x {precision} dense peak from gpu_specs"
    ).astype(object)


def _shape(workload: Workload) -> tuple[int, int, int]:
    if not workload.is_llm or workload.params is None:
        raise ValueError(f"{workload.name} is not an LLM workload")
    return int(workload.seq_len or 2048), int(workload.d_model or 0), int(workload.n_layer or 0)


def _params(workload: Workload) -> float:
    if workload.params is None:
        raise ValueError(f"{workload.name} has no parameter count")
    return float(workload.params)
