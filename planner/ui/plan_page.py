"""The Plan page: a training job, its deadline, budget and where it may run -> the named
picks, the time-vs-cost chart with the frontier and P10-P90 whiskers, the ranked options.

Every figure comes from planner.plan.make_plan (through planner.ui.data.plan, cached); this
module asks for the inputs, checks them and lays the page out; planner.ui.plan_view formats
the plan, draws the chart and builds the downloads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import streamlit as st

from edge.format import duration, money
from planner.choose.constraints import DEFAULT_MAX_GPUS
from planner.choose.pareto import PICKS
from planner.costs.spot import default_rate
from planner.llm.fp8_recipes import AUTO, RECIPES
from planner.llm.frameworks import DEFAULT_FRAMEWORK, eager_stacks, tp_overlap_refusal
from planner.llm.records import LLMMemoryError
from planner.llm.user_layout import LAYOUT_FORM
from planner.onprem.tco import LoadedConfig, OnPremConfigError
from planner.plan import Plan
from planner.render.llm import FRAMEWORK_WORDS, no_fit_text
from planner.render.notes import APP_CONTROLS, OWN_CODES, notes_text
from planner.render.plan_words import assumption_lines, pick_reason, worded_status
from planner.render.rows import worded_rows
from planner.request import PlanRequest, RequestError
from planner.settings import LLMSettings
from planner.ui import data
from planner.ui.cache import drawn, fingerprint
from planner.ui.compare import chosen_options, compare_choices, compare_section
from planner.ui.export import download_csv, download_report
from planner.ui.inputs import OfferFilters, number, offer_filters, optional_number, worded_radio
from planner.ui.llm_shape import ShapeInputs, reshaped, shape_inputs
from planner.ui.onprem_page import PAGE as ONPREM_PAGE
from planner.ui.onprem_page import config_from_inputs
from planner.ui.plan_view import (
    CONSTRAINT_NAMES,
    PICK_TITLES,
    SOURCE_WORDS,
    band_text,
    column_config,
    gpus_text,
    headline,
    no_pick_reason,
    option_text,
    plan_report,
    price_dates,
    price_text,
    sentence,
    throughput_text,
    warning_lines,
)
from planner.ui.state import PageState, remembered_inputs
from planner.ui.tables import show_table
from planner.ui.text import md_text
from planner.workloads.catalog import (
    LLM_DEFAULT_SEQ_LEN,
    WORKLOADS,
    Workload,
    llm_workload,
    moe_workload,
)
from planner.workloads.llm_presets import LLM_PRESETS
from pricing.catalog import PRICING_KINDS
from pricing.reserved import RESERVED_KINDS

PAGE = "plan"
TITLE = "gpuplan: where to train, for how much"
# A warning is cut here (with its length said): long enough for the stale-prices warning of
# every bundled provider and its fix, short enough to bound a hostile results file's text.
WARNING_CHARS = 1000
PRECISIONS = ["fp16", "bf16", "tf32", "fp32"]
DEFAULT_WORKLOAD = "resnet50-imagenet-90ep"
MAX_GPUS_LIMIT = 8192
JOBS = {"catalog": "From the catalog", "llm": "Describe an LLM"}
LLM_MODE_WORDS = {
    "pretrain": "Pre-train",
    "finetune": "Full fine-tune",
    "lora": "LoRA",
    "qlora": "QLoRA (4-bit)",
}
PRESET_SIZES = ", ".join(
    f"{p.params / 1e9:.3g} ({p.reference.split(' (')[0]})" for p in LLM_PRESETS.values()
)


def _optional(label: str, step: float, help: str, **kwargs: Any) -> dict[str, Any]:
    """A number input that starts empty ("none": not set), at least 0 unless `kwargs` say."""
    spec = {"min_value": 0.0, "format": "%g", "placeholder": "none", **kwargs}
    return {"label": label, "default": None, "step": step, "help": help, **spec}


def _gpus(label: str, default: int | None, help: str, **kwargs: Any) -> dict[str, Any]:
    """A GPU count's number input: a whole number from 1 to MAX_GPUS_LIMIT."""
    spec = {"min_value": 1, "max_value": MAX_GPUS_LIMIT, "step": 1, **kwargs}
    return {"label": label, "default": default, "help": help, **spec}


def _billions(label: str, default: float, step: float, help: str) -> dict[str, Any]:
    """A number of billions (parameters, tokens): at least 0, shown as typed."""
    spec = {"min_value": 0.0, "step": step, "format": "%g"}
    return {"label": label, "default": default, "help": help, **spec}


# The Deadline and budget inputs in their order (key: plan.<name>, the PlanRequest field).
LIMIT_FIELDS: dict[str, dict[str, Any]] = {
    "deadline_hours": _optional(
        "Deadline (hours)", 1.0, "Wall-clock hours the run must finish in. Empty: no deadline."
    ),
    "budget_usd": _optional("Budget (USD)", 100.0, "Most the run may cost. Empty: no budget."),
    "max_gpus": _gpus(
        "Max GPUs per option",
        DEFAULT_MAX_GPUS,
        "Each offer is weighed at 1, 2, 4, ... instances up to this many GPUs.",
    ),
    "gpu_count": _gpus(
        "Exact GPU count",
        None,
        "Only options with exactly this many GPUs in all (e.g. 8 for one 8-GPU server). "
        "Empty: every count up to the most GPUs per option.",
        placeholder="any",
    ),
}
# The described LLM's number inputs (key: plan.<name>).
LLM_FIELDS: dict[str, dict[str, Any]] = {
    "params_b": _billions(
        "Parameters (billions)",
        7.0,
        1.0,
        "Decoder LLM size. Within 1% of a preset it takes that model's published shape: "
        f"{PRESET_SIZES}; else GPT-3's aspect ratio (planner.workloads.catalog.llm_shape).",
    ),
    "seq_len": {
        "label": "Sequence length (tokens)",
        "default": LLM_DEFAULT_SEQ_LEN,
        "min_value": 1,
        "step": 1024,
        "help": "Tokens per sequence: sets activation memory and attention FLOPs.",
    },
    "active_b": _optional(
        "Active parameters (billions, mixture of experts)",
        1.0,
        "Parameters each token passes through in a mixture-of-experts model (e.g. 22 for "
        "Qwen3-235B-A22B); FLOPs and MFU count these, memory holds all the parameters. Counts "
        "of a preset (DeepSeek-V3, Qwen3, GPT-OSS, Mixtral) take its published shape. Empty: "
        "a dense model.",
    ),
    "tokens_b": _billions(
        "Training tokens (billions)",
        140.0,
        10.0,
        "Tokens to train on; ~20 per parameter is compute-optimal (Hoffmann et al. 2022).",
    ),
}
RESERVED_DISCOUNT = _optional(
    "Reserved discount (% off on-demand)",
    5.0,
    "Where no reserved price is listed, assume on-demand less this (your negotiated "
    "discount); every row it touches says so.",
    min_value=1.0,
    max_value=99.0,
    placeholder="none: listed reserved prices only",
)
# The sidebar input behind each PlanRequest field, and how to fix a bad value.
INPUT_LABELS = {
    **{name: str(field["label"]) for name, field in LIMIT_FIELDS.items()},
    "interruption_rates": "Spot interruption rates",
}
INPUT_FIXES = {
    "deadline_hours": "Enter a larger value, or clear the field for no deadline",
    "budget_usd": "Enter a larger value, or clear the field for no budget",
    "gpu_count": "Raise Max GPUs per option, or clear the field for any count",
}
ONPREM_SOURCES = {
    "example": "Example: 4 x DGX H100 (examples/onprem-dgx-h100.toml)",
    "onprem_page": "My inputs on the Cloud vs on-prem page",
}
RETIRED_HELP = (
    "Sizes the provider no longer sells (pricing/retired.py), such as Azure's K80 Promo sizes."
)


@dataclass(frozen=True)
class JobInputs:
    """The job: a catalog training run, or an LLM described by its size and tokens."""

    kind: str  # a key of JOBS
    workload_name: str | None = None
    params_b: float | None = None
    tokens_b: float | None = None
    llm_mode: str = "pretrain"
    seq_len: int = LLM_DEFAULT_SEQ_LEN
    framework: str = DEFAULT_FRAMEWORK
    eager: bool = False  # PyTorch without torch.compile (LLMSettings.eager; eager_stacks())
    active_b: float | None = None  # a mixture of experts' active parameters (None: dense)
    moe_overlap: bool = False  # its all-to-all under compute (LLMSettings.moe_overlap)
    tp_overlap: bool = False  # tp collectives pipelined with the GEMMs (LLMSettings)
    dp_overlap: bool = True  # ZeRO-0/1's collectives under compute (LLMSettings)
    fp32_reduce: bool | None = None  # fp32 gradient collectives; None: the stack's own
    layout: str = ""  # the user's own layout, timed beside the best one ("": none)
    attention: str = "auto"  # the attention kernel (LLMSettings.attention); auto: the stack's
    # a described dense LLM's shape (planner.ui.llm_shape); empty: the preset's
    shape: ShapeInputs = field(default_factory=ShapeInputs)


EAGER_HELP = (
    "Each norm, activation and add its own kernel: twice the memory-bound traffic of the "
    "compiled or fused runs the FSDP and DeepSpeed fits rest on (a Hugging Face model under "
    "DeepSpeed runs eager), and no faster than Python dispatches the kernels "
    "(gpuplan's own H200 runs: eager at 0.87-0.93 of compiled)."
)
OVERLAP_HELP = (
    "The experts' all-to-all runs while another micro-batch computes and shows only where "
    "it outlasts it (DeepSeek-V3's DualPipe, Megatron-Core's expert-parallel overlap). Off: "
    "exposed in full, as in most of the published MoE runs the model is fitted on."
)
TP_OVERLAP_HELP = (
    "Tensor-parallel all-gathers and reduce-scatters split into chunks pipelined with the "
    "GEMMs, so about 1/tp of them shows (Megatron-Core's --tp-comm-overlap, torchtitan's "
    "async tensor parallel). Off: they run between the GEMMs, Megatron-Core's default."
)
DP_OVERLAP_HELP = (
    "The gradient all-reduce (ZeRO-0) or ZeRO-1's gradient reduce-scatter and weight "
    "all-gather run under the last micro-batch "
    "(Megatron-Core's --overlap-grad-reduce --overlap-param-gather, on in NVIDIA's recipes). "
    "Off: they run after the backward pass, exposed whole."
)
FP32_REDUCE_HELP = (
    "What the data-parallel gradient collectives move: fp32, 4 bytes a value (FSDP2's "
    "MixedPrecisionPolicy(reduce_dtype=torch.float32), as torchtitan sets it; nanotron's "
    "fp32 gradient accumulation) or the 16-bit compute precision's 2. The stack's own: fp32 "
    "on nanotron, 16 bits on the others."
)
# The gradient reduction's choices (LLMSettings.fp32_reduce) as the Plan page words them.
FP32_REDUCE_WORDS = {"auto": "the stack's own", "fp32": "fp32", "16-bit": "16 bits"}
FP32_REDUCE_SETTINGS = {"auto": None, "fp32": True, "16-bit": False}
# The attention kernels (planner.llm.frameworks.ATTENTION_CHOICES) as the Plan page words them.
ATTENTION_WORDS = {
    "auto": "the stack's own", "fa2": "FlashAttention-2", "fa3": "FlashAttention-3",
    "cudnn": "cuDNN (PyTorch SDPA)",
}  # fmt: skip
ATTENTION_HELP = (
    "The kernel the attention runs, timed at its measured rates by sequence length and head "
    "size (planner/llm/kernel_rates.py). The stack's own: FlashAttention-3-class on Megatron "
    "(Transformer Engine), cuDNN's on FSDP2 (torchtitan puts it first), FlashAttention-2 on "
    "FSDP, DeepSpeed and nanotron. cuDNN: PyTorch's scaled_dot_product_attention with "
    "cuDNN's backend first, as torch 2.11 with cuDNN 9.19 picks on Hopper "
    "(FlashAttention-3-class on Hopper and data-center Blackwell, FlashAttention-2's "
    "elsewhere)."
)
LAYOUT_HELP = (
    "Time your own layout beside the best one found, on the fastest pick's GPUs: tokens "
    f"{LAYOUT_FORM}. dp left out: GPUs / (tp pp cp); "
    "etp1: whole experts folded over tp x cp x dp, as Megatron-Core's MoE parallel folding. "
    "Empty: only the best layout."
)


@dataclass(frozen=True)
class Limits:
    """The deadline, budget and GPU counts asked for (None: not set)."""

    deadline_hours: float | None
    budget_usd: float | None
    max_gpus: int
    gpu_count: int | None


@dataclass(frozen=True)
class PricingInputs:
    """The pricing kind, spot interruption rates given, and the reserved discount."""

    pricing: str
    rates: dict[str, float] = field(default_factory=dict)
    reserved_discount: float | None = None


@dataclass(frozen=True)
class PlanInputs:
    """What the sidebar asks for."""

    job: JobInputs
    precision: str
    limits: Limits
    where: OfferFilters
    prices: PricingInputs
    onprem_source: str | None  # a key of ONPREM_SOURCES; None: no on-prem options
    fp8_recipe: str = AUTO  # planner.llm.fp8_recipes; "auto": the stack's default


# ---------------------------------------------------------------- inputs


def _inputs(ps: PageState) -> PlanInputs:
    """The sidebar, section by section: the job and its precision, deadline and budget,
    where and at what pricing, own servers."""
    with st.sidebar:
        job = _job_inputs(ps)
        llm = job.kind == "llm" or WORKLOADS[str(job.workload_name)].is_llm
        precision = _precision_input(ps, job.kind, llm)
        recipe = _recipe_input(ps) if precision == "fp8" else AUTO
        limits = _limit_inputs(ps)
        st.header("Where")
        where = offer_filters(ps, RETIRED_HELP, gpus_help="Plan only on these GPU models.")
        prices = _pricing_inputs(ps, where.providers)
        onprem_source = _onprem_inputs(ps)
    return PlanInputs(job, precision, limits, where, prices, onprem_source, recipe)


def _job_inputs(ps: PageState) -> JobInputs:
    """The Job section: a run from the catalog, or an LLM described."""
    st.header("Job")
    kind = worded_radio(ps, "Workload", JOBS, name="job", default="catalog", horizontal=True)
    if kind != "catalog":
        return _llm_inputs(ps)
    workload_name = ps.selectbox(
        "Training run",
        list(WORKLOADS),
        name="workload",
        default=DEFAULT_WORKLOAD,
        help="What one training run is: samples (or tokens) and FLOPs per sample "
        "(`gpuplan workloads`).",
    )
    chosen = WORKLOADS[str(workload_name)]
    layout = _layout_input(ps) if chosen.is_llm else ""
    overlap = chosen.is_moe and _overlap_input(ps)
    comm = _comm_inputs(ps, DEFAULT_FRAMEWORK) if chosen.is_llm else {}
    return JobInputs(kind, workload_name=workload_name, layout=layout, moe_overlap=overlap, **comm)


def _comm_inputs(ps: PageState, stack: str) -> dict[str, Any]:
    """JobInputs' tp_overlap, dp_overlap, fp32_reduce and attention kernel as asked;
    tensor-parallel overlap only where `stack` runs it."""
    tp = not tp_overlap_refusal(stack) and ps.toggle(
        "Tensor-parallel communication under the GEMMs", name="tp_overlap", help=TP_OVERLAP_HELP
    )
    dp = ps.toggle(
        "Data-parallel communication under compute", name="dp_overlap", default=True,
        help=DP_OVERLAP_HELP,
    )  # fmt: skip
    reduction = worded_radio(
        ps, "Gradient reduction", FP32_REDUCE_WORDS, name="fp32_reduce", default="auto",
        horizontal=True, help=FP32_REDUCE_HELP,
    )  # fmt: skip
    attention = worded_radio(
        ps, "Attention kernel", ATTENTION_WORDS, name="attention", default="auto",
        help=ATTENTION_HELP,
    )  # fmt: skip
    return {
        "tp_overlap": bool(tp), "dp_overlap": bool(dp),
        "fp32_reduce": FP32_REDUCE_SETTINGS[str(reduction)], "attention": str(attention),
    }  # fmt: skip


def _overlap_input(ps: PageState) -> bool:
    """Whether a mixture of experts' all-to-all runs under compute (asked for MoE only)."""
    return ps.toggle("All-to-all under compute", name="moe_overlap", help=OVERLAP_HELP)


def _layout_input(ps: PageState) -> str:
    """The user's own LLM layout, as typed."""
    return ps.text_input("Your layout (optional)", name="layout", help=LAYOUT_HELP,
                         placeholder="tp4 pp2 ep8 mb1 zero1")  # fmt: skip


def _llm_inputs(ps: PageState) -> JobInputs:
    """An LLM: its size, how it is trained, its sequence length and training tokens."""
    params_b = number(ps, "params_b", LLM_FIELDS["params_b"])
    active_b = number(ps, "active_b", LLM_FIELDS["active_b"])
    llm_mode = _llm_choice(ps, "llm_mode")
    seq_len = int(number(ps, "seq_len", LLM_FIELDS["seq_len"]))
    tokens_b = number(ps, "tokens_b", LLM_FIELDS["tokens_b"])
    framework = _llm_choice(ps, "framework")
    eager = framework in eager_stacks() and ps.toggle(
        "Eager PyTorch (no torch.compile)", name="eager", help=EAGER_HELP
    )
    overlap = active_b is not None and _overlap_input(ps)
    shape = shape_inputs(ps) if active_b is None else ShapeInputs()
    return JobInputs(
        "llm",
        params_b=params_b,
        tokens_b=tokens_b,
        llm_mode=llm_mode,
        seq_len=seq_len,
        framework=framework,
        eager=eager,
        active_b=active_b,
        moe_overlap=overlap,
        **_comm_inputs(ps, framework),
        layout=_layout_input(ps),
        shape=shape,
    )


# The LLM's radio choices: (label, words per value, default, help).
LLM_CHOICES: dict[str, tuple[str, dict[str, str], str, str]] = {
    "llm_mode": (
        "Training", LLM_MODE_WORDS, "pretrain",
        "Full fine-tuning costs what pre-training does per token; LoRA trains adapters on "
        "frozen weights, ~4N instead of 6N FLOPs per token (Hu et al. 2021); QLoRA keeps "
        "those weights in 4 bits (Dettmers et al. 2023).",
    ),
    "framework": (
        "Framework", FRAMEWORK_WORDS, DEFAULT_FRAMEWORK,
        "The training stack decides which layouts are weighed: Megatron-Core (tensor, "
        "context and pipeline parallel), PyTorch FSDP (sharded data parallel, tensor "
        "parallel within a node), FSDP2 as torchtitan runs it (adds pipeline and context "
        "parallel) or DeepSpeed (ZeRO with its pipeline engine).",
    ),
}  # fmt: skip


def _llm_choice(ps: PageState, name: str) -> str:
    """One of the LLM's radio choices (LLM_CHOICES), its values shown as words."""
    label, words, default, help_text = LLM_CHOICES[name]
    return str(
        worded_radio(ps, label, words, name=name, default=default, horizontal=True, help=help_text)
    )


def _precision_input(ps: PageState, kind: str, llm: bool) -> str:
    """The precision, bf16 first for an LLM; fp8 only for an LLM described by its size."""
    return str(
        ps.radio(
            "Precision",
            PRECISIONS + (["fp8"] if kind == "llm" else []),
            name="precision",
            default="bf16" if llm else "fp16",
            horizontal=True,
            help="fp16 is mixed precision (AMP), as published; LLMs start at bf16, as they "
            "train; fp8 (LLMs) only on GPUs with fp8 tensor cores (Hopper, Ada, Blackwell).",
        )
    )


RECIPE_HELP = (
    "How the fp8 GEMMs scale their operands, timed from Transformer Engine's measured "
    "per-layer GEMM times (planner/llm/fp8_recipes.py): delayed and tensorwise per-tensor "
    "scales, rowwise and blockwise finer scales (slower GEMMs), rowwise_with_gw_hp keeps the "
    "weight-gradient GEMM in 16 bits, mxfp8 on Blackwell only. auto: the framework's "
    "default (delayed for Megatron and DeepSpeed, tensorwise for FSDP)."
)


def _recipe_input(ps: PageState) -> str:
    """The fp8 recipe (asked only at fp8)."""
    return str(ps.selectbox("FP8 recipe", [AUTO, *RECIPES], name="fp8_recipe", default=AUTO,
                            help=RECIPE_HELP))  # fmt: skip


def _limit_inputs(ps: PageState) -> Limits:
    """The Deadline and budget section: deadline, budget, most GPUs and an exact count."""
    st.header("Deadline and budget")
    given = {name: number(ps, name, spec) for name, spec in LIMIT_FIELDS.items()}
    count = given["gpu_count"]
    return Limits(
        deadline_hours=given["deadline_hours"],
        budget_usd=given["budget_usd"],
        max_gpus=int(given["max_gpus"]),
        gpu_count=None if count is None else int(count),
    )


def _pricing_inputs(ps: PageState, providers: Sequence[str]) -> PricingInputs:
    """The pricing kind; spot interruption rates or a reserved discount where it applies."""
    pricing = ps.radio(
        "Pricing",
        list(PRICING_KINDS),
        name="pricing",
        default="on-demand",
        help="Spot hours include the expected time lost to interruptions; reserved "
        "prices come from refreshed catalogs (`gpuplan pricing refresh`).",
    )
    if pricing == "spot":
        return PricingInputs(pricing, rates=_rate_inputs(ps, providers))
    if pricing not in RESERVED_KINDS:
        return PricingInputs(pricing)
    percent = number(ps, "reserved_discount", RESERVED_DISCOUNT)
    discount = None if percent is None else float(percent) / 100
    return PricingInputs(pricing, reserved_discount=discount)


def _rate_inputs(ps: PageState, providers: Sequence[str]) -> dict[str, float]:
    """Each provider's spot interruption rate, where one is given (else its default)."""
    rates = {}
    with st.expander("Spot interruption rates"):
        st.caption("Interruptions per instance-hour. Empty: the documented default.")
        for provider in providers:
            known = default_rate(provider)
            rate = optional_number(
                ps,
                md_text(provider),
                f"rate_{provider}",
                min_value=0.0,
                step=0.01,
                format="%g",
                placeholder=f"default {known.interruptions_per_hour:g}",
                help=md_text(
                    f"Default {known.interruptions_per_hour:g}/h: "
                    f"{known.basis.split('.')[0]} ({known.source})"
                ),
            )
            if rate is not None:
                rates[provider] = float(rate)
    return rates


def _onprem_inputs(ps: PageState) -> str | None:
    """The Own servers section: which on-prem configuration to compare with, if any."""
    st.header("Own servers")
    onprem = ps.toggle(
        "Compare with on-prem",
        name="onprem",
        default=False,
        help="Add an on-prem cluster as options, priced at its amortized cost per "
        "GPU-hour (planner.onprem.tco).",
    )
    if not onprem:
        return None
    return str(
        worded_radio(
            ps,
            "On-prem configuration",
            ONPREM_SOURCES,
            name="onprem_config",
            default="example",
            help="A link carries this choice, not the Cloud vs on-prem page's inputs: "
            "opened elsewhere it falls back to the example.",
        )
    )


# ---------------------------------------------------------------- checks


def _workload(inputs: PlanInputs) -> Workload | None:
    """The catalog workload or the described LLM; None after an inline error."""
    job = inputs.job
    if job.kind == "catalog":
        return WORKLOADS[str(job.workload_name)]
    params = float(job.params_b or 0.0)
    tokens = float(job.tokens_b or 0.0)
    if job.active_b is not None:
        try:
            return moe_workload(params * 1e9, job.active_b * 1e9, tokens * 1e9, job.seq_len,
                                mode=job.llm_mode)  # fmt: skip
        except ValueError as exc:
            st.error(
                f"**Parameters (billions)** {params:g}, **Active parameters** "
                f"{job.active_b:g} and **Training tokens** {tokens:g}: {md_text(exc)}. Enter "
                "active parameters up to the total, or clear them for a dense model.",
                icon=":material/error:",
            )
            return None
    try:
        dense = llm_workload(params * 1e9, tokens * 1e9, seq_len=job.seq_len, mode=job.llm_mode)
    except ValueError as exc:
        st.error(
            f"**Parameters (billions)** {params:g} and **Training tokens (billions)** "
            f"{tokens:g}: {md_text(exc)}. Enter both above 0.",
            icon=":material/error:",
        )
        return None
    return reshaped(dense, job.shape)


def _request(
    inputs: PlanInputs, workload: Workload, onprem: Sequence[LoadedConfig]
) -> PlanRequest | None:
    """The plan request of the inputs; None after an inline error naming the input."""
    try:
        return PlanRequest(
            workload=workload,
            precision=inputs.precision,
            pricing=inputs.prices.pricing,
            providers=tuple(inputs.where.providers),
            regions=tuple(inputs.where.regions),
            gpus=tuple(inputs.where.gpus),
            gpu_count=inputs.limits.gpu_count,
            deadline_hours=inputs.limits.deadline_hours,
            budget_usd=inputs.limits.budget_usd,
            max_gpus=inputs.limits.max_gpus,
            onprem=tuple(c.config for c in onprem),
            onprem_sources=tuple(c.path for c in onprem),
            interruption_rates=tuple(sorted(inputs.prices.rates.items())),
            tiers=tuple(inputs.where.tiers),
            include_retired=inputs.where.include_retired,
            reserved_discount=inputs.prices.reserved_discount,
            llm=LLMSettings(
                framework=inputs.job.framework,
                eager=inputs.job.eager,
                fp8_recipe=inputs.fp8_recipe,
                moe_overlap=inputs.job.moe_overlap,
                tp_overlap=inputs.job.tp_overlap,
                dp_overlap=inputs.job.dp_overlap,
                fp32_reduce=inputs.job.fp32_reduce,
                attention=inputs.job.attention,
            ),
        )
    except RequestError as exc:
        label = INPUT_LABELS.get(exc.field, exc.field)
        fix = INPUT_FIXES.get(exc.field, "Change it")
        st.error(f"**{label}**: {md_text(exc.message)}. {fix}.", icon=":material/error:")
        return None


def _onprem(inputs: PlanInputs) -> list[LoadedConfig] | None:
    """The on-prem configuration asked for ([] when off); None after an inline error."""
    if inputs.onprem_source is None:
        return []
    try:
        if inputs.onprem_source == "onprem_page":
            remembered = remembered_inputs(ONPREM_PAGE)
            if remembered:
                return [config_from_inputs(remembered)]
            st.info(
                "The Cloud vs on-prem page has not been opened in this session, so there are "
                "no inputs of yours to use: comparing with the example configuration "
                "(examples/onprem-dgx-h100.toml) instead.",
                icon=":material/info:",
            )
        return [data.onprem_example()]
    except OnPremConfigError as exc:
        st.error(
            f"On-prem configuration: {md_text(exc)}. Fix it on the Cloud vs on-prem page, or "
            "compare with the example configuration.",
            icon=":material/error:",
        )
        return None


# ---------------------------------------------------------------- the page


def _picks(plan: Plan) -> None:
    cols = st.columns(len(PICKS))
    for col, name in zip(cols, PICKS, strict=True):
        row = plan.pick(name)
        with col.container(border=True, key=f"{PAGE}_pick_{name}"):
            if row is None:
                st.metric(PICK_TITLES[name], "none")
                st.caption(md_text(sentence(no_pick_reason(plan, name))))
                continue
            st.metric(
                PICK_TITLES[name],
                md_text(headline(row)),
                help=md_text(
                    f"{pick_reason(row, plan.request)}. Throughput {row['throughput_source']}: "
                    f"{row['throughput_detail']}"
                ),
            )
            st.markdown(f"**{md_text(option_text(row))}**")
            st.caption(
                md_text(
                    f"{money(row['cost_usd'])} in {duration(row['hours_to_train'])} on "
                    f"{gpus_text(row)} · {throughput_text(row)} · {price_text(row)}"
                )
                + f"  \n{md_text(band_text(row))}"
            )


def _own_layout(
    plan: Callable[[], Plan], workload: Workload, inputs: PlanInputs, directory: str
) -> None:
    """The user's own layout beside the best one found (planner.llm.user_layout), or what is
    wrong with it; nothing when none is typed (`plan`: the plan, asked for only then)."""
    text = inputs.job.layout
    if not text.strip() or not workload.is_llm:
        return
    from planner.llm.for_plan import layout_on_plan
    from planner.llm.user_layout import parse_layout
    from planner.render.llm import user_layout_text

    table, _ = data.results(directory)
    try:
        found = layout_on_plan(plan(), data.offers(), parse_layout(text), table)
    except ValueError as exc:
        st.error(f"**Your layout**: {md_text(exc)}.", icon=":material/error:")
        return
    if found is not None:
        words = sentence(user_layout_text(found, inputs.precision))
        fits = found.timed.layout.reason == "fits"
        (st.info if fits else st.warning)(md_text(words), icon=":material/tune:")


def _status(plan: Plan) -> None:
    for row in worded_status(plan).itertuples():
        if row.unmet:
            continue  # said in the warning above the picks
        word = "binds" if row.binds else "does not bind"
        name = CONSTRAINT_NAMES.get(str(row.constraint), str(row.constraint))
        st.caption(f":material/tune: **{name} {word}**: {md_text(sentence(str(row.note)))}")


def _cpu_baseline(plan: Plan) -> None:
    """The plan's CPU-only instances (planner.cpu_baseline), folded: what a GPU buys."""
    from planner.render.plan_tables import cpu_baseline_table

    table = cpu_baseline_table(plan)
    if table.empty:
        return
    with st.expander(f"CPU baseline: {len(table)} CPU-only instances, fastest first"):
        st.caption(
            "The same job on CPUs only (fp32), timed and priced like the GPU options, to "
            "show what a GPU buys over the CPU. Basis: cores x per-core rate x parallel "
            "efficiency, from your own CPU runs or a default (docs/model.md, CPU baseline)."
        )
        show_table(table, {}, key=f"{PAGE}.cpu")


def _notes(plan: Plan, problems: Sequence[str], directory: str) -> None:
    with st.expander("Own results: used and skipped"):
        own = notes_text(plan.notes_of(*OWN_CODES), APP_CONTROLS)
        folder = Path(directory).expanduser().resolve()
        lines = [
            f"own results are read from {folder} (GPUPLAN_RESULTS_DIR, else ./results); the "
            "bundled samples (benchmarks/results/) are not counted",
            *(own or ["no own results there: add them on the Benchmarks page"]),
        ]
        st.markdown("\n".join(f"- {md_text(sentence(line))}" for line in lines))
    with st.expander("Assumptions and warnings"):
        # One element per list, not per line: each element costs the browser a render.
        bullets = [f"- {md_text(line)}" for line in assumption_lines(plan)]
        bullets += [
            f"- :material/warning: {md_text(line, WARNING_CHARS)}"
            for line in [*warning_lines(plan), *problems]
        ]
        st.markdown("\n".join(bullets))


def render() -> None:
    """Draw the Plan page."""
    ps = PageState(PAGE)
    st.title(TITLE)
    inputs = _inputs(ps)
    ps.sync()
    manifest = data.manifest()
    st.caption(md_text(price_dates(manifest, inputs.where.providers)))
    if not inputs.where.providers:
        st.info("Pick at least one provider in the sidebar.", icon=":material/info:")
        return
    workload = _workload(inputs)
    onprem = _onprem(inputs)
    if workload is None or onprem is None:
        return
    request = _request(inputs, workload, onprem)
    if request is None:
        return
    directory = data.results_dir()
    # Every session asking for this plan is shown the same outputs: drawn once, replayed
    # (keyed by the request's fingerprint: hashed once here, not by every cache below).
    asked = (directory, fingerprint(request))

    def plan() -> Plan:
        """The plan (cached): computed or read only where something is drawn anew."""
        return data.plan(directory, request)

    try:
        if not drawn(f"{PAGE}.head", asked, lambda: _head(plan(), onprem, directory)):
            ps.share_box()
            return
    except LLMMemoryError as exc:
        st.error(md_text(sentence(no_fit_text(exc, APP_CONTROLS))), icon=":material/error:")
        return
    except ValueError as exc:
        st.error(md_text(sentence(str(exc))), icon=":material/error:")
        return
    _own_layout(plan, workload, inputs, directory)
    drawn(f"{PAGE}.body", asked, lambda: _body(plan(), directory, request))
    stem = f"{workload.name}-{request.pricing}"
    with st.container(horizontal=True):
        download_csv(lambda: worded_rows(plan().rows), f"plan-{stem}.csv", key=f"{PAGE}.csv")
        link = ps.link()  # read now: the report is built on click, outside the script run
        download_report(
            lambda: plan_report(plan(), manifest, link), f"plan-{stem}.html", key=f"{PAGE}.report"
        )
    drawn(f"{PAGE}.cpu", asked, lambda: _cpu_baseline(plan()))
    compare_section(
        PAGE,
        _compare_choices(directory, asked[1], request),
        lambda labels: chosen_options(data.plan_candidates(directory, request), labels),
        stem,
        asked,
    )
    drawn(f"{PAGE}.notes", asked, lambda: _notes(plan(), data.results(directory)[1], directory))
    ps.share_box()


@data.from_results
@st.cache_data(show_spinner=False, max_entries=64, ttl=3600)
def _compare_choices(
    directory: str, fingerprint: str, _request: PlanRequest
) -> tuple[list[str], list[str]]:
    """compare_choices of the plan of `_request` (whose fingerprint is `fingerprint`)."""
    return compare_choices(
        data.plan(directory, _request), data.plan_candidates(directory, _request)
    )


def _description(plan: Plan, onprem: Sequence[LoadedConfig]) -> None:
    """The job in a line: what it is, how many samples, the on-prem configs compared."""
    workload = plan.workload
    st.markdown(
        f"**{md_text(workload.description)}**: "
        + md_text(
            f"{workload.samples:,.0f} {workload.sample_unit}"
            + "".join(f"; on-prem {c.config.name} from {c.path}" for c in onprem)
            + "."
        )
    )


def _head(plan: Plan, onprem: Sequence[LoadedConfig], directory: str) -> bool:
    """The job, the unmet deadline or budget, and the picks; False (the job, why nothing
    is planned, and the notes) where no option is left."""
    if plan.rows.empty:
        _description(plan, onprem)
        st.warning(
            "No option to plan with these inputs: "
            + "; ".join(md_text(line, WARNING_CHARS) for line in warning_lines(plan)),
            icon=":material/warning:",
        )
        _notes(plan, data.results(directory)[1], directory)
        return False
    _description(plan, onprem)
    for line in notes_text(plan.notes_of("deadline_unmet", "budget_unmet"), APP_CONTROLS):
        st.warning(md_text(sentence(line)), icon=":material/warning:")
    _picks(plan)
    return True


def _body(plan: Plan, directory: str, request: PlanRequest) -> None:
    """The constraints, the time-vs-cost chart and the ranked options."""
    _status(plan)
    st.plotly_chart(data.plan_chart(directory, request), key=f"{PAGE}.chart")
    st.caption(
        "Each dot is an offer at the GPU count that meets the deadline at least cost (else its "
        "fastest); whiskers span P10–P90 of hours and cost. The black line is the frontier: "
        "no option is both faster and cheaper than one on it. Stars are the picks. Hover a "
        "dot for its instance, GPUs, throughput source and price date."
    )
    st.subheader(f"Ranked options: {len(plan.rows)} offers at their best GPU count")
    st.caption(
        "Feasible first, then by cost, then hours. Throughput source: "
        + SOURCE_WORDS
        + ". P10/P90: the 10th and 90th percentiles. Prices with their date and source."
    )
    show_table(data.plan_table(directory, request), column_config(), key=f"{PAGE}.table")
