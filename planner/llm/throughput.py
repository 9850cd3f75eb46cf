"""LLM training throughput per option: the fastest parallel layout that fits, and its MFU.

Composes planner.llm.memory (bytes per GPU), planner.llm.ops (the operator-level step
model: GEMMs by shape, attention, memory-bound operators, at per-generation kernel
efficiencies), planner.llm.frameworks (what each training stack allows), planner.llm.mfu
(own GPT results, which calibrate the kernel rates) and planner.llm.layout (the tensor x
context x pipeline x data-parallel search). Every formula and its source is in those
modules' docstrings.

Precisions: fp32, tf32, fp16, bf16 use the spec table's dense peak (planner.machines.specs);
fp8 runs its GEMMs at the fp8 peak x FP8_GEMM_FACTOR of the 16-bit efficiency where the GPU
has fp8 tensor cores (gpu_specs.csv `fp8_tflops`), over the recipe's GEMM time factor
(planner.llm.fp8_recipes), attention and memory-bound operators in 16 bits (Transformer
Engine's default); elsewhere (or with a recipe the GPU cannot run) the reason code is
"no_peak".

Calibration: own GPT results on the GPU (planner.llm.mfu) scale the kernel rates by their
measured MFU over the operator model's MFU for the measured run (within CALIBRATION_LIMITS).

Bands (10-90%): the kernel defaults' band (planner.llm.ops KERNEL_DEFAULTS), or the own
runs' spread, and on the share of the step that is not compute OVERHEAD_LOG_ERROR, added in
quadrature.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from planner.llm.fp8_recipes import gemm_time_factor, resolved_recipe
from planner.llm.frameworks import DEFAULT_FRAMEWORK, FRAMEWORKS, framework, reduces_in_fp32
from planner.llm.kernel_rates import kernel_on
from planner.llm.layout import (
    ACHIEVABLE_FRACTION,
    NETWORK_FRACTION,
    PCIE_X16_GBS,
    Hardware,
    Layout,
    LayoutSettings,
    LLMShape,
    choose_layout,
)
from planner.llm.mfu import (
    FP8_SPEEDUP,
    SIZE_LOG_ERROR_PER_DECADE,
    MFUAnchor,
    gpt_mfu_figures,
    mfu_anchor,
    params_from_size,
)
from planner.llm.op_efficiency import (
    measured_attention_tflops,
    measured_gemm_tflops,
    measured_memory_gbps,
)
from planner.llm.ops import (
    EAGER_TRAFFIC_FACTOR,
    HBM_FRACTION,
    MeasuredKernels,
    OpRates,
    kernel_default,
    sm_count,
)
from planner.llm.records import LLM_DETAIL_COLUMNS, LLMMemoryError, Shortfall
from planner.llm.stack_profiles import (
    StackParams,
    layout_step_parts,
    stack_params,
    stack_range,
)
from planner.machines.boards import board_gpus, server_board_gpus
from planner.machines.specs import load_specs
from planner.settings import LLMSettings
from planner.workloads.catalog import (
    DEFAULT_VOCAB_SIZE,
    Workload,
    llm_workload,
    lora_adapter_params,
)
from planner.workloads.moe_shape import routed_expert_params

__all__ = [
    "LLM_DETAIL_COLUMNS",
    "LLM_PRECISIONS",
    "SIZE_LOG_ERROR_PER_DECADE",
    "LLMMemoryError",
    "LLMSettings",
    "gpt_mfu_figures",
    "llm_options",
    "llm_shape_of",
    "params_from_size",
    "predict_layout",
    "prediction_record",
]

LLM_PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "fp8")
PEAK_COLUMN = {
    "fp32": "fp32_tflops",
    "tf32": "tf32_tflops",
    "fp16": "fp16_tflops",
    "bf16": "bf16_tflops",
    "fp8": "fp8_tflops",
}
# The α-β model's exposed communication and bubble: +/-30% in log on their share of the
# step (an assumption; the ring model's held-out error inside a node is ~10%, and across
# nodes congestion and stragglers add to it).
OVERHEAD_LOG_ERROR = 0.30
# fp8 GEMMs reach less of their (twice as high) peak than 16-bit ones: per-tensor scaling
# and casts around each GEMM (Transformer Engine; DeepSeek-AI's DeepGEMM reports up to
# 1,550 of 1,979 dense fp8 TFLOP/s on H800, 78%). An assumption within that range.
FP8_GEMM_FACTOR = 0.85
# How far own GPT results may move the kernel rates (measured MFU / operator-model MFU):
# up to 2x, since the stack fit times small models on the corpus's eager stacks, well below
# what a tuned own run of a 124M model reaches.
CALIBRATION_LIMITS = (0.5, 2.0)
CALIBRATION_ROUNDS = 3  # fixed-point rounds of the factor (planner.llm.throughput._calibration)
# The rate source and band of rows whose GPU ran the operator benchmark: its kernels are
# measured, what stays uncertain is how a framework strings them together (assumed +/-10%).
MEASURED_KERNELS_CODE = "kernels_measured"
# The narrowest band side in log a stack's measured error may give (runs of one stack
# still differ by version and settings the corpus does not state): an assumption.
MIN_BAND_LOG = 0.05
MEASURED_KERNELS_BAND = (0.90, 1.10)


def llm_shape_of(workload: Workload) -> LLMShape:
    """The layout search's view of an LLM workload."""
    if not workload.is_llm or workload.params is None:
        raise ValueError(f"{workload.name} is not an LLM workload")
    layers, width = int(workload.n_layer or 0), int(workload.d_model or 0)
    heads = int(workload.n_heads or max(1, width // (64 if width <= 1024 else 128)))
    kv = int(workload.n_kv_heads or heads)
    ffn = int(workload.ffn_dim or 0) if workload.is_moe else int(workload.ffn_dim or 4 * width)
    adapters = (
        lora_adapter_params(layers, width, ffn, heads, kv, workload.lora_rank, workload.mlp_gated)
        if workload.llm_mode in ("lora", "qlora")
        else 0.0
    )
    return LLMShape(
        params=float(workload.params),
        adapter_params=adapters,
        flops_per_token=float(workload.flops_per_sample),
        n_layer=layers,
        d_model=width,
        n_heads=heads,
        n_kv_heads=kv,
        vocab_size=int(workload.vocab_size or DEFAULT_VOCAB_SIZE),
        seq_len=int(workload.seq_len or 2048),
        mode=workload.llm_mode,
        ffn_dim=ffn,
        gated=workload.mlp_gated,
        experts=workload.experts,
        top_k=workload.top_k,
        expert_ffn=int(workload.expert_ffn or 0),
        head_dim=int(workload.head_dim or 0),
        expert_params=routed_expert_params(
            float(workload.params),
            float(workload.active_params or workload.params),
            workload.experts,
            workload.top_k,
        ),
    )


@dataclass(frozen=True)
class GPUFigures:
    """What the LLM model reads from one GPU's spec row (read once per GPU)."""

    memory_gb: float
    peaks_tflops: dict[str, float]
    nvlink_gbs: float
    pcie_gen: int
    bridged_nvlink: bool
    memory_bw_gbs: float = math.nan
    architecture: str = ""


@lru_cache(maxsize=256)
def gpu_figures(gpu_name: str) -> GPUFigures | None:
    """The spec row's memory, peaks and links (None when the GPU has no row)."""
    specs = load_specs()
    if gpu_name not in specs.index:
        return None
    row = specs.loc[gpu_name]
    peaks = {p: float(row[column]) for p, column in PEAK_COLUMN.items()}
    return GPUFigures(
        memory_gb=float(row["memory_gb"]),
        peaks_tflops={p: v for p, v in peaks.items() if v > 0},
        nvlink_gbs=float(row["nvlink_gbs"]) if pd.notna(row["nvlink_gbs"]) else 0.0,
        pcie_gen=int(row["pcie_gen"]) if pd.notna(row["pcie_gen"]) else 4,
        bridged_nvlink=bool(row.get("nvlink_bridge", False)),  # the spec table's flag
        memory_bw_gbs=float(row["memory_bw_gbs"]) if pd.notna(row["memory_bw_gbs"]) else math.nan,
        architecture=str(row.get("architecture", "")),
    )


def peak_flops(gpu_name: str, precision: str) -> float:
    """Dense peak FLOP/s at a precision from gpu_specs.csv (NaN when the GPU lacks it)."""
    figures = gpu_figures(gpu_name)
    if figures is None or precision not in figures.peaks_tflops:
        return math.nan
    return figures.peaks_tflops[precision] * 1e12


def has_fp8(gpu_name: str) -> bool:
    """True when the spec table gives the GPU an fp8 tensor-core peak."""
    return bool(np.isfinite(peak_flops(gpu_name, "fp8")))


def intra_node_gbs(gpu_name: str, gpus: int) -> float:
    """Achievable GB/s per direction between GPUs of a node: NVLink (spec nvlink_gbs is
    bidirectional, so half; a bridge joins pairs only) else PCIe x16 by generation, x
    ACHIEVABLE_FRACTION."""
    figures = gpu_figures(gpu_name)
    if figures is None:
        return math.nan
    pcie = PCIE_X16_GBS.get(figures.pcie_gen, PCIE_X16_GBS[4])
    nvlink = figures.nvlink_gbs / 2.0
    usable_nvlink = nvlink > 0 and not (figures.bridged_nvlink and gpus > 2)
    return (nvlink if usable_nvlink else pcie) * ACHIEVABLE_FRACTION


@dataclass(frozen=True)
class LayoutPrediction:
    """One option's prediction: the layout, tokens/s with its 10-90% band, and the anchor."""

    layout: Layout
    tokens_per_s: float
    tokens_per_s_low: float
    tokens_per_s_high: float
    anchor: MFUAnchor
    precision: str
    params: float
    kernels: str = ""  # the kernel defaults' code (planner.llm.ops); "" for the older model
    kernels_run: str = ""  # the operator-benchmark run behind kernels_measured
    framework: str = DEFAULT_FRAMEWORK
    calibration: float = 1.0  # own GPT results' factor on the kernel rates
    stack_spread: float = math.nan  # slowest / fastest step over the fitted stacks - 1
    hardware: Hardware | None = None  # what the layouts were timed on (a user's layout too)
    fp8_recipe: str = ""  # the fp8 recipe timed (planner.llm.fp8_recipes); "" at 16 bits
    moe_overlap: bool = False  # the all-to-all timed under compute (LLMSettings.moe_overlap)
    dp_overlap: bool = True  # ZeRO-0/1's collectives timed under compute (LLMSettings)
    tp_overlap: bool = False  # tp collectives timed pipelined with the GEMMs (LLMSettings)
    fp32_reduce: bool = False  # dp gradient collectives timed in fp32 (LLMSettings, resolved)

    @property
    def rate_source(self) -> str:
        """What the compute rate rests on: own_measured | own_published (calibrating the
        operator model, or anchoring the older one), a kernels_* code, or a prior_* code."""
        return self.anchor.code if self.anchor.kind == "own" or not self.kernels else self.kernels


def predict_layout(
    workload: Workload,
    precision: str,
    gpu_name: str,
    total_gpus: int,
    gpus_per_node: int,
    network_gbps: float,
    figures: pd.DataFrame | None = None,
    settings: LLMSettings | None = None,
    ops: pd.DataFrame | None = None,
) -> LayoutPrediction:
    """The fastest layout of `workload` on `total_gpus` x `gpu_name` and its tokens/s.

    `figures`: own GPT-benchmark MFU (planner.llm.mfu.gpt_mfu_figures), which calibrates
    the kernel rates; `ops`: the results table whose operator-benchmark runs
    (planner.llm.op_efficiency) replace the kernel defaults on their GPU.
    """
    settings = settings or LLMSettings()
    shape = llm_shape_of(workload)
    anchor, measured = _gpu_inputs(shape, precision, gpu_name, figures, ops, settings.eager)
    return _predict(
        shape, precision, gpu_name, int(total_gpus), int(gpus_per_node), float(network_gbps),
        anchor, settings.batch_tokens(workload), settings, measured,
    )  # fmt: skip


def _gpu_inputs(
    shape: LLMShape,
    precision: str,
    gpu_name: str,
    figures: pd.DataFrame | None,
    ops: pd.DataFrame | None,
    eager: bool = False,
) -> tuple[MFUAnchor, MeasuredKernels | None]:
    """What a prediction takes from its GPU alone: the own-results MFU anchor (`figures`;
    a run in the plan's mode, `eager` or compiled, first) and the operator benchmark's
    kernels (`ops`; None without)."""
    figures = figures if figures is not None else pd.DataFrame()
    anchor = mfu_anchor(gpu_name, shape.params, shape.d_model, figures, eager)
    measured = measured_kernels(ops, gpu_name, precision, shape) if ops is not None else None
    return anchor, measured


def measured_kernels(
    results: pd.DataFrame, gpu_name: str, precision: str, shape: LLMShape
) -> MeasuredKernels | None:
    """The operator benchmark's figures for this GPU (own runs first: op_efficiency), GEMMs
    at the training precision and attention at 16 bits for fp8 (as it runs), or None when
    the GPU has no GEMM figures at the precision."""
    table = measured_gemm_tflops(results, gpu_name, precision)
    if table is None:
        return None
    head_dim = max(1, int(shape.layer.d_head))
    attention_precision = "bf16" if precision == "fp8" else precision
    attention = measured_attention_tflops(
        results, gpu_name, attention_precision, head_dim, shape.seq_len
    )
    memory = measured_memory_gbps(results, gpu_name)
    return MeasuredKernels(
        gemm_shapes=table.shapes,
        gemm_flops=tuple(x * 1e12 for x in table.tflops),
        attention_flops=attention * 1e12 if attention else math.nan,
        hbm_bytes_per_s=memory * 1e9 if memory else math.nan,
        run_id=table.run_id,
        source=table.source,
    )


@lru_cache(maxsize=4096)
def _predict(
    shape: LLMShape,
    precision: str,
    gpu_name: str,
    total_gpus: int,
    gpus_per_node: int,
    network_gbps: float,
    anchor: MFUAnchor,
    batch_tokens: float,
    settings: LLMSettings,
    measured: MeasuredKernels | None = None,
    scale: float | None = None,
) -> LayoutPrediction:
    per_node = max(1, min(gpus_per_node, total_gpus))
    figures = gpu_figures(gpu_name)
    peak = peak_flops(gpu_name, precision)
    half = peak_flops(gpu_name, "bf16")
    half = half if np.isfinite(half) else peak_flops(gpu_name, "fp16")
    architecture = figures.architecture if figures else ""
    kernels = kernel_default(architecture, gpu_name)
    recipe = resolved_recipe(settings.fp8_recipe, settings.framework)
    recipe_factor = gemm_time_factor(recipe, architecture)
    if precision == "fp8" and not math.isfinite(recipe_factor):
        peak = math.nan  # the recipe has no rate on this GPU (mxfp8 before Blackwell)
    if scale is None:  # own GPT results' factor on the kernel rates (1 without them)
        scale = _calibration(shape, precision, gpu_name, anchor, settings, batch_tokens)
    stack = settings.stack or stack_params(settings.framework)
    if settings.attention != "auto":  # the kernel the user names, not the stack's
        stack = dataclasses.replace(stack, attention_kernel=settings.attention)
    hardware = Hardware(
        memory_gb=figures.memory_gb if figures else math.nan,
        peak_flops=peak,
        rates=_op_rates(
            figures,
            precision,
            peak,
            half,
            kernels.gemm,
            kernels.attention,
            scale,
            stack,
            measured,
            settings.eager,
            recipe_factor,
        ),
        compute_flops=anchor.mfu * (half * FP8_SPEEDUP[0] if precision == "fp8" else peak),
        intra_gbs=intra_node_gbs(gpu_name, per_node) / stack.comm_exposure,
        network_gbs_per_gpu=network_gbps / 8.0 / per_node * NETWORK_FRACTION / stack.comm_exposure,
        total_gpus=total_gpus,
        gpus_per_node=per_node,
        tp_comm_exposure=stack.tp_comm_exposure,
        moe_factor=stack.moe_factor,
        comm_exposure=stack.comm_exposure,
        overlap_cost=stack.overlap_cost,
        board_gpus=board_gpus(gpu_name, settings.board_gpus),
    )
    layout = choose_layout(shape, hardware, layout_settings(settings, batch_tokens, precision))
    code = kernels.code if settings.step_model == "ops" else ""
    low, high = kernels.low, kernels.high
    if measured is not None and settings.step_model == "ops":
        code, (low, high) = MEASURED_KERNELS_CODE, MEASURED_KERNELS_BAND
    if not layout.fits:
        return LayoutPrediction(
            layout, math.nan, math.nan, math.nan, anchor, precision, shape.params, code,
            measured.run_id if measured else "", settings.framework, scale, math.nan, hardware,
        )  # fmt: skip
    down, up = _band(anchor, layout, precision, settings, low, high, measured is None, stack)
    fastest, slowest = stack_range(layout_step_parts(layout), stack)
    if not settings.framework_stated:  # the other stacks' answers join the band
        down = math.sqrt(down**2 + math.log(slowest) ** 2)
        up = math.sqrt(up**2 + math.log(fastest) ** 2)
    tokens = layout.tokens_per_s
    return LayoutPrediction(
        layout,
        tokens,
        tokens * math.exp(-down),
        tokens * math.exp(up),
        anchor,
        precision,
        shape.params,
        code,
        measured.run_id if measured else "",
        settings.framework,
        scale,
        slowest / fastest - 1.0,
        hardware,
        recipe if precision == "fp8" else "",
        settings.moe_overlap,
        settings.dp_overlap,
        settings.tp_overlap,
        reduces_in_fp32(settings.framework, settings.fp32_reduce),
    )


# The user's choices the layout search takes as they are (planner.settings.LLMSettings).
SEARCH_CHOICES = (
    "flash_attention", "recompute", "zero", "micro_batch", "memory_reserve_fraction",
    "framework", "step_model", "pinned", "moe_overlap", "pinned_ran", "dp_overlap", "tp_overlap",
    "fp32_reduce",
)  # fmt: skip


def layout_settings(settings: LLMSettings, batch_tokens: float, precision: str) -> LayoutSettings:
    """The layout search's settings for one prediction: the batch and precision resolved,
    the other choices as given."""
    chosen = {name: getattr(settings, name) for name in SEARCH_CHOICES}
    return LayoutSettings(global_batch_tokens=batch_tokens, precision=precision, **chosen)


def _op_rates(
    figures: GPUFigures | None,
    precision: str,
    peak: float,
    half: float,
    gemm: float,
    attention: float,
    scale: float,
    stack: StackParams,
    measured: MeasuredKernels | None = None,
    eager: bool = False,
    recipe_factor: float = 1.0,
) -> OpRates:
    """The operator model's rates on one GPU (planner.llm.ops) under the stack's fitted
    parameters (planner.llm.stack_profiles: kernel efficiency, unfused traffic, attention
    kernel; fp8: its GEMM factor over the recipe's GEMM time factor, planner.llm.
    fp8_recipes, and casts); measured operator figures where the operator
    benchmark ran on this GPU; `eager`: unfused operators (EAGER_TRAFFIC_FACTOR on the
    memory-bound traffic) each launched from Python (planner.llm.ops.micro_batch_seconds)."""
    fp8 = precision == "fp8"
    fp8_factor = stack.fp8_gemm_factor / recipe_factor if fp8 else 1.0
    gemm_efficiency = gemm * stack.kernel_efficiency * fp8_factor
    sixteen = half if fp8 else peak
    bandwidth = figures.memory_bw_gbs * 1e9 * HBM_FRACTION if figures else math.nan
    attention_flops = sixteen * attention * stack.kernel_efficiency
    if measured is not None:
        attention_flops = (
            measured.attention_flops if np.isfinite(measured.attention_flops) else attention_flops
        )
        bandwidth = measured.hbm_bytes_per_s if np.isfinite(measured.hbm_bytes_per_s) else bandwidth
    return OpRates(
        gemm_flops=peak * gemm_efficiency * scale,
        attention_flops=attention_flops * scale,
        hbm_bytes_per_s=bandwidth * scale,
        sms=sm_count(figures.architecture if figures else ""),
        unfused=stack.unfused * (EAGER_TRAFFIC_FACTOR if eager else 1.0),
        value_bytes=4.0 if precision in ("fp32", "tf32") else 2.0,
        measured=measured,
        attention_kernel=kernel_on(stack.attention_kernel, figures.architecture if figures else ""),
        cast_factor=stack.cast_factor if fp8 else 0.0,
        eager=eager,
    )


def _band(
    anchor: MFUAnchor,
    layout: Layout,
    precision: str,
    settings: LLMSettings,
    kernel_low: float,
    kernel_high: float,
    on_kernel_defaults: bool,
    stack: StackParams,
) -> tuple[float, float]:
    """(down, up) of the 10-90% band in log: the compute rate's (own runs' spread, else the
    kernel defaults' band; the older model: its MFU prior's) and OVERHEAD_LOG_ERROR on the
    share of the step that is not compute, in quadrature; on kernel defaults the stack's
    measured error instead: the 10-90% quantiles of its published runs' leave-one-source-out
    log errors (planner.llm.stack_profiles, tools/evaluate_llm_corpus.py), at fp8 at least
    the held-out fp8 runs' error (StackParams.fp8_band) each way."""
    overhead = OVERHEAD_LOG_ERROR * (1.0 - layout.compute_share)
    if anchor.kind == "own" or settings.step_model == "mfu-prior":
        rate_down, rate_up = math.log(anchor.mfu / anchor.low), math.log(anchor.high / anchor.mfu)
    else:
        rate_down, rate_up = -math.log(kernel_low), math.log(kernel_high)
    old_fp8 = precision == "fp8" and settings.step_model == "mfu-prior"
    fp8_down = math.log(FP8_SPEEDUP[0] / FP8_SPEEDUP[1]) if old_fp8 else 0.0
    fp8_up = math.log(FP8_SPEEDUP[2] / FP8_SPEEDUP[0]) if old_fp8 else 0.0
    down = math.sqrt(rate_down**2 + overhead**2 + fp8_down**2)
    up = math.sqrt(rate_up**2 + overhead**2 + fp8_up**2)
    if on_kernel_defaults and anchor.kind != "own" and settings.step_model == "ops":
        too_low, too_high = stack.band_low, stack.band_high  # residual = log(predicted / truth)
        down, up = max(too_high, MIN_BAND_LOG), max(-too_low, MIN_BAND_LOG)
        if precision == "fp8":
            down, up = max(down, stack.fp8_band), max(up, stack.fp8_band)
    return down, up


def _calibration(
    shape: LLMShape,
    precision: str,
    gpu_name: str,
    anchor: MFUAnchor,
    settings: LLMSettings,
    batch_tokens: float,
) -> float:
    """Own GPT results' MFU over the operator model's MFU for the measured model on the
    measured GPU count (one node, the same settings and batch), within CALIBRATION_LIMITS;
    1 without own results. The measured configuration itself is then predicted within
    about 1% of its measured MFU: parts of the step the factor does not scale (launch gaps,
    a stack's fixed costs) make one ratio fall short, so the ratio is applied
    CALIBRATION_ROUNDS times (a fixed-point iteration on the factor). The measured run is
    timed as it ran, eager or compiled, where the stack times both (so a plan in the other
    mode keeps its eager cost: it is neither counted twice nor cancelled)."""
    if anchor.kind != "own" or settings.step_model != "ops" or anchor.params <= 0:
        return 1.0
    ran_eager = {"yes": False, "no": True}.get(anchor.compiled, settings.eager)
    if ran_eager != settings.eager and not framework(settings.framework).eager_refusal:
        settings = dataclasses.replace(settings, eager=ran_eager)
    same = abs(anchor.params / shape.params - 1.0) < 0.02
    measured = shape if same else llm_shape_of(llm_workload(anchor.params, 1e9, shape.seq_len))
    count = max(1, int(anchor.world_size))
    plain = MFUAnchor(math.nan, math.nan, math.nan, "calibrating")
    low, high = CALIBRATION_LIMITS
    factor = 1.0
    for _ in range(CALIBRATION_ROUNDS):
        found = _predict(
            measured, precision, gpu_name, count, count, 400.0, plain, batch_tokens, settings,
            None, factor,
        )  # fmt: skip
        if not found.layout.fits or not found.layout.mfu > 0:
            return 1.0
        factor = float(np.clip(factor * anchor.mfu / found.layout.mfu, low, high))
    return factor


def prediction_source(prediction: LayoutPrediction) -> str:
    """The anchor's source (measured | published) at its own size and count; "scaled" for an
    own GPT figure carried to another size or count; "estimated" from a literature prior;
    "" when nothing fits."""
    layout, anchor = prediction.layout, prediction.anchor
    if not layout.fits:
        return ""
    if anchor.kind != "own":
        return "estimated"
    same_size = abs(anchor.params / prediction.params - 1.0) < 0.02
    same_count = anchor.world_size == layout.tp * layout.pp * layout.dp
    return anchor.source if same_size and same_count else "scaled"


def _moe_factor(prediction: LayoutPrediction) -> float:
    """The stack's fitted MoE factor (planner.llm.stack_profiles) for a mixture of experts'
    layout, NaN for a dense model."""
    layout, hardware = prediction.layout, prediction.hardware
    moe = float(layout.a2a_share or 0.0) + float(layout.grouped_gemm_share or 0.0) > 0
    return hardware.moe_factor if moe and hardware is not None else math.nan


def prediction_record(prediction: LayoutPrediction) -> dict[str, object]:
    """LLM_DETAIL_COLUMNS of one prediction, plus layout, memory_per_gpu_gb, mfu, reason and
    precision (numbers and codes only)."""
    layout, anchor = prediction.layout, prediction.anchor
    own = anchor.kind == "own"
    return {
        "layout": layout.label,
        "reason": layout.reason,
        "precision": prediction.precision,
        "memory_per_gpu_gb": layout.memory_per_gpu_gb,
        "mfu": layout.mfu,
        "step_s": layout.step_s,
        "compute_share": layout.compute_share,
        "gemm_share": layout.gemm_share,
        "attention_share": layout.attention_share,
        "memory_share": layout.memory_share,
        "recompute_share": layout.recompute_time_share,
        "bubble_share": layout.bubble_share,
        "tp_comm_share": layout.tp_share,
        "cp_comm_share": layout.cp_share,
        "pp_comm_share": layout.pp_share,
        "dp_comm_share": layout.dp_share,
        "dp_overlap_share": layout.overlap_share,
        "optimizer_share": layout.optimizer_share,
        "cast_share": layout.cast_share,
        "fp8_recipe": prediction.fp8_recipe,
        "stack_spread": prediction.stack_spread,
        "a2a_share": layout.a2a_share,
        "grouped_gemm_share": layout.grouped_gemm_share,
        "moe_factor": _moe_factor(prediction),
        "moe_overlap": prediction.moe_overlap and math.isfinite(_moe_factor(prediction)),
        "dp_overlap": prediction.dp_overlap,
        "tp_overlap": prediction.tp_overlap,
        "fp32_reduce": prediction.fp32_reduce,
        "board_gpus": prediction.hardware.board_gpus if prediction.hardware else 0,
        "usable_gb": layout.usable_gb,
        "framework": prediction.framework,
        "calibration": prediction.calibration,
        "mfu_anchor": anchor.mfu if own or not prediction.kernels else math.nan,
        "mfu_source": prediction.rate_source,
        "mfu_band_widened": anchor.widened and not prediction.kernels,
        "mfu_run_id": anchor.run_id or prediction.kernels_run,
        "mfu_runs": anchor.runs,
        "mfu_model_size": anchor.model_size,
        "mfu_world_size": anchor.world_size,
        "mfu_size_decades": anchor.size_decades,
        "kernels_run_id": prediction.kernels_run,
    }


LLM_OPTION_COLUMNS = (
    "throughput", "throughput_low", "throughput_high", "throughput_source", "mfu", "fits",
    "reason", "layout", "memory_per_gpu_gb", "recompute", *LLM_DETAIL_COLUMNS,
)  # fmt: skip


def llm_options(
    options: pd.DataFrame,
    workload: Workload,
    precision: str,
    figures: pd.DataFrame,
    settings: LLMSettings | None = None,
    ops: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """LLM_OPTION_COLUMNS per option (gpu_name, total_gpus, gpus_per_node, network_gbps),
    aligned to its index. Unique (GPU, count, node, network) rows are searched once.
    `ops`: results whose operator-benchmark runs replace the kernel defaults."""
    settings = settings or LLMSettings()
    keys = list(
        zip(
            options["gpu_name"].astype(str),
            options["total_gpus"].astype(float).round().astype(int),
            options["gpus_per_node"].astype(float).round().astype(int),
            options["network_gbps"].astype(float),
            option_boards(options, settings),
            strict=True,
        )
    )
    shape, batch = llm_shape_of(workload), settings.batch_tokens(workload)
    per_gpu: dict[str, tuple[MFUAnchor, MeasuredKernels | None]] = {}
    unique = dict.fromkeys(keys)
    rows = []
    for gpu, count, per_node, network, board in unique:
        if gpu not in per_gpu:  # once per GPU, not once per option
            per_gpu[gpu] = _gpu_inputs(shape, precision, gpu, figures, ops, settings.eager)
        anchor, measured = per_gpu[gpu]
        on_board = (
            settings
            if board == settings.board_gpus
            else dataclasses.replace(settings, board_gpus=board)
        )
        args = (shape, precision, gpu, max(count, 1), per_node, float(network), anchor, batch,
                on_board, measured)  # fmt: skip
        rows.append(_option_row(args))
    position = {key: i for i, key in enumerate(unique)}
    out = pd.DataFrame(rows).iloc[[position[key] for key in keys]].reset_index(drop=True)
    out.index = options.index
    return out.loc[:, list(LLM_OPTION_COLUMNS)]


def option_board(kind: str, gpu_name: str, gpus_per_node: int, settings: LLMSettings) -> int:
    """The switchless board one option's collectives are timed on (LLMSettings.board_gpus):
    the settings' where set, else an on-prem server's own (planner.machines.boards.
    server_board_gpus), else 0 (the GPU's platform decides)."""
    if settings.board_gpus or kind != "on-prem":
        return settings.board_gpus
    return server_board_gpus(gpu_name, gpus_per_node)


def option_boards(options: pd.DataFrame, settings: LLMSettings) -> list[int]:
    """option_board of every option; only on-prem rows are looked at (a plan of cloud
    offers has thousands)."""
    boards = [settings.board_gpus] * len(options)
    if settings.board_gpus or "kind" not in options:
        return boards
    for i in np.flatnonzero((options["kind"] == "on-prem").to_numpy()):
        row = options.iloc[i]
        per_node = round(float(row["gpus_per_node"]))
        boards[i] = option_board("on-prem", str(row["gpu_name"]), per_node, settings)
    return boards


@lru_cache(maxsize=4096)
def _option_row(predict_args: tuple[Any, ...]) -> dict[str, object]:
    """One option's LLM_OPTION_COLUMNS from _predict(*predict_args), kept for every plan
    that asks again: read, never changed."""
    found = _predict(*predict_args)
    return {
        **prediction_record(found),
        "throughput": found.tokens_per_s,
        "throughput_low": found.tokens_per_s_low,
        "throughput_high": found.tokens_per_s_high,
        "throughput_source": prediction_source(found) or None,
        "fits": found.layout.fits,
        "recompute": found.layout.recompute not in ("none", "selective", ""),
    }


def fewest_gpus(
    workload: Workload,
    precision: str,
    gpu_name: str,
    start: int,
    gpus_per_node: int,
    network_gbps: float,
    settings: LLMSettings | None = None,
    limit: int = 2**17,
) -> int | None:
    """The least power-of-two count above `start` at which some layout fits (None: none up
    to `limit`)."""
    count = 1
    while count <= start:
        count *= 2
    while count <= limit:
        found = predict_layout(
            workload, precision, gpu_name, count, gpus_per_node, network_gbps, settings=settings
        )
        if found.layout.reason != "no_layout_fits":
            return count
        count *= 2
    return None


def shortfalls(
    workload: Workload,
    precision: str,
    options: pd.DataFrame,
    found: pd.DataFrame,
    settings: LLMSettings | None = None,
) -> tuple[Shortfall, ...]:
    """Per GPU model (most memory first, four at most) the Shortfall at its largest count
    where memory is what stops it (larger counts may have more data-parallel ranks than the
    global batch has sequences)."""
    joined = options.loc[:, ["gpu_name", "total_gpus", "gpus_per_node", "network_gbps"]].join(
        found.loc[:, ["memory_per_gpu_gb", "usable_gb"]]
    )
    joined = joined.loc[np.isfinite(joined["memory_per_gpu_gb"].astype(float))]
    largest = joined.sort_values("total_gpus").drop_duplicates("gpu_name", keep="last")
    out = []
    for row in largest.sort_values("usable_gb", ascending=False).head(4).itertuples():
        if not np.isfinite(row.memory_per_gpu_gb):
            continue
        enough = fewest_gpus(
            workload, precision, str(row.gpu_name), int(row.total_gpus),
            int(row.gpus_per_node), float(row.network_gbps), settings,
        )  # fmt: skip
        need, usable = float(row.memory_per_gpu_gb), float(row.usable_gb)
        out.append(Shortfall(str(row.gpu_name), int(row.total_gpus), need, usable, enough))
    return tuple(out)


def no_fit_error(
    workload: Workload,
    precision: str,
    options: pd.DataFrame,
    found: pd.DataFrame,
    settings: LLMSettings | None = None,
    max_gpus: float | None = None,
    cap_field: str = "max_gpus",
) -> LLMMemoryError:
    """The LLMMemoryError for options where no layout fits, with its Shortfalls and the
    other training stacks that fit the largest option; `cap_field` the request field that
    set `max_gpus`."""
    settings = settings or LLMSettings()
    short = shortfalls(workload, precision, options, found, settings)
    return LLMMemoryError(
        workload.name,
        workload.llm_mode,
        int(workload.seq_len or 0),
        short,
        max_gpus,
        settings.framework,
        frameworks_that_fit(workload, precision, options, settings),
        bool((found["reason"] == "batch_too_small").any()),
        cap_field,
    )


def frameworks_that_fit(
    workload: Workload, precision: str, options: pd.DataFrame, settings: LLMSettings
) -> tuple[str, ...]:
    """The stacks other than `settings.framework` under which some layout fits an option:
    each GPU model at its largest count, the four largest counts. A stack with pipeline or
    context parallelism may hold a model or a sequence that one without cannot."""
    columns = ["gpu_name", "total_gpus", "gpus_per_node", "network_gbps"]
    largest = (
        options.loc[:, columns]
        .sort_values("total_gpus")
        .drop_duplicates("gpu_name", keep="last")
        .tail(4)
    )
    fit = []
    for name in FRAMEWORKS:
        other = dataclasses.replace(settings, framework=name, stack=None, pinned=None)
        if name != settings.framework and any(
            predict_layout(
                workload, precision, str(row.gpu_name), int(row.total_gpus),
                int(row.gpus_per_node), float(row.network_gbps), settings=other,
            ).layout.reason == "fits"
            for row in largest.itertuples()
        ):  # fmt: skip
            fit.append(name)
    # The asked stack's own kin first (fsdp -> fsdp2): the nearest change to suggest.
    return tuple(sorted(fit, key=lambda name: not name.startswith(settings.framework)))
