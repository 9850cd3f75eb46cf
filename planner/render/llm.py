"""The LLM model's figures and codes (planner.llm.throughput) in words, for the CLI and the app.

The engine returns a layout's step seconds and shares, the MFU's source code and the
Shortfall records; these functions word them for the rows a user is shown only.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from planner.llm.fp8_recipes import UNRUNNABLE
from planner.llm.frameworks import FRAMEWORKS, Framework, reduces_in_fp32
from planner.llm.mfu import FP8_SPEEDUP, SMALL_WIDTH
from planner.llm.records import LLMMemoryError
from planner.llm.stack_profiles import FIT_FAMILY
from planner.llm.user_layout import LayoutComparison
from planner.plan import Plan
from planner.render.notes import CAP_WORDS, CLI_CONTROLS

# The literature behind each MFU prior code (planner.llm.mfu GENERATION_PRIORS).
PRIOR_WORDS = {
    "prior_a100": "A100 prior: 72% end to end for GPT-1.3B/2.7B on 8 A100 with "
    "FlashAttention-2 (Dao 2023, sec. 4.2); 54-56% at 22B-1T with selective recomputation on "
    "up to 2,240 A100 (Korthikanti et al. 2022, table 4); 55.2% for 175B on 12,288 A100 "
    "(Jiang et al. 2024, MegaScale)",
    "prior_hopper": "Hopper-class prior: 38-43% bf16 MFU for Llama 3 405B on 8,192-16,384 "
    "H100 with tp8 pp16, all overheads included (Dubey et al. 2024, table 4); "
    "FlashAttention-3 reaches 75% of the H100 peak in attention (Shah et al. 2024); "
    "Blackwell: no end-to-end figure published, Hopper's used",
    "prior_v100": "V100 prior: 39 TFLOP/s of 125 (30%) for a 1.2B GPT on one V100 (Shoeybi "
    "et al. 2019, Megatron-LM, sec. 5.1)",
    "prior_amd": "AMD prior: 32-38% of the MI250X peak for 175B-1T GPTs on Frontier (Dash et "
    "al. 2023); MI300X: no end-to-end figure published, MI250X's used",
    "prior_tpu": "TPU prior: 46.2% MFU for PaLM 540B on 6,144 TPU v4 (Chowdhery et al. 2022, "
    "table 3)",
    "prior_assumed": "assumed 40% (25-55%): no published LLM training MFU for this GPU class; "
    "between PaLM's 46% (Chowdhery et al. 2022) and V100's 30% (Shoeybi et al. 2019)",
}
# The literature behind each kernel-efficiency code (planner.llm.ops KERNEL_DEFAULTS).
KERNEL_WORDS = {
    "kernels_a100": "A100 kernels: Hopper's GEMM and attention efficiencies scaled by the "
    "A100's best achievable matmul share over the H100's (72% and 50% of the dense peak over "
    "a training step; FlagPerf and mamf-finder GEMM measurements)",
    "kernels_hopper": "Hopper kernels: GEMMs at 70% and attention at 48% of the dense peak over "
    "a training step (FlashAttention-3 reaches 75% forward: Shah et al. 2024; set so that "
    "Llama 3 405B on 8,192 H100, Dubey et al. 2024, is matched); a GPU with its own "
    "measured best matmul rate (mamf-finder) scales them by its share of the peak over the "
    "H100's",
    "kernels_blackwell": "Blackwell kernels: Hopper's efficiencies (nothing published), wider band",
    "kernels_volta": "Volta kernels: GEMMs at 55% of the peak (a 1.2B GPT at 30% end to end on "
    "one V100: Shoeybi et al. 2019)",
    "kernels_amd": "AMD kernels: GEMMs at 55% of the peak (32-38% end to end for 175B-1T GPTs "
    "on MI250X: Dash et al. 2023); MI300X, MI325X and MI355X at Hopper's figures scaled by "
    "their best measured matmul share over the H100's (mamf-finder: 51%, 60% and 62% of "
    "the peak against 80%)",
    "kernels_measured": "measured kernels: GEMMs by shape, attention and memory bandwidth from "
    "the operator benchmark on this GPU (gpuplan bench run --workload ops, run {run})",
    "kernels_assumed": "assumed kernels: GEMMs at 60% and attention at 40% of the peak (no "
    "published figure for this GPU class)",
}
# The training frameworks as the app names them (planner.llm.frameworks).
FRAMEWORK_WORDS = {
    "megatron": "Megatron-Core", "fsdp": "PyTorch FSDP", "fsdp2": "PyTorch FSDP2 (torchtitan)",
    "deepspeed": "DeepSpeed", "nanotron": "nanotron",
}  # fmt: skip
# A step's parts as a chart's legend names them.
PART_LABELS = {
    "gemm_share": "GEMM", "attention_share": "attention", "memory_share": "memory-bound",
    "recompute_share": "recompute", "bubble_share": "pipeline bubble",
    "tp_comm_share": "TP comm", "cp_comm_share": "CP comm", "pp_comm_share": "PP comm",
    "dp_comm_share": "DP comm", "dp_overlap_share": "DP comm under compute",
    "optimizer_share": "optimizer", "cast_share": "fp8 casts",
    "grouped_gemm_share": "expert grouped GEMM", "a2a_share": "expert all-to-all",
}  # fmt: skip
# Whether a layout fits, in a table cell (planner.llm.layout REASONS).
FIT_WORDS = {
    "fits": "yes", "no_layout_fits": "no: too little memory",
    "batch_too_small": "no: batch too small", "no_peak": "no: no peak at this precision",
}  # fmt: skip
# Why estimate-llm found no layout (planner.llm.layout REASONS).
REASON_WORDS = {
    "no_layout_fits": "does not fit: no tensor/pipeline/data-parallel layout fits GPU memory, "
    "even with ZeRO-3, FlashAttention and full recomputation (least {memory:.1f} GB per GPU "
    "of {usable:.1f} usable)",
    "batch_too_small": "the global batch has fewer sequences than any layout's data-parallel "
    "ranks: raise global_batch_tokens or use fewer GPUs",
    "no_peak": "no {precision} dense peak for this GPU in planner/data/gpu_specs.csv"
    "{recipe_clause}",
}
# Why an fp8 GPU may still have no rate: a recipe it cannot run (planner.llm.fp8_recipes).
RECIPE_CLAUSE = f" (or {UNRUNNABLE})"


def recipe_clause(precision: object) -> str:
    """RECIPE_CLAUSE at fp8, "" at every other precision."""
    return RECIPE_CLAUSE if precision == "fp8" else ""


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def mfu_source_text(row: Mapping[str, Any]) -> str:
    """What the row's compute rate rests on: kernel defaults, own GPT results (calibrating
    them), or a cited MFU prior (the older model)."""
    code = str(row.get("mfu_source") or "")
    if code in KERNEL_WORDS:
        return KERNEL_WORDS[code].format(run=row.get("mfu_run_id") or "")
    if code in PRIOR_WORDS:
        widened = f"; band widened below width {SMALL_WIDTH}" if row.get("mfu_band_widened") else ""
        return PRIOR_WORDS[code] + widened
    if not code:  # no MFU source on the row: nothing to say (never "MFU nan%")
        return ""
    source = code.removeprefix("own_")
    runs_figure = _number(row.get("mfu_runs"))
    runs = int(runs_figure) if _known(runs_figure) else 0
    run = str(row.get("mfu_run_id") or "")
    which = (
        f"median of {runs} runs"
        if runs > 1 or not run
        else (f"own run {run}" if source == "measured" else run)
    )
    size = str(row.get("mfu_model_size") or "")
    scaled = (
        f"; size {size} -> target (+/-15% per decade)"
        if _number(row.get("mfu_size_decades")) * 0.15 > 0.01
        else ""
    )
    factor = _number(row.get("calibration"))
    calibrated = f"; kernel rates x {factor:.2f}" if factor == factor and factor != 1.0 else ""
    anchor, world = _number(row.get("mfu_anchor")), _number(row.get("mfu_world_size"))
    rate = f"MFU {anchor:.0%} {source}" if _known(anchor) else f"MFU {source}"
    gpus = f", {world:g} GPU" if _known(world) else ""
    ops_run = str(row.get("kernels_run_id") or "")
    if ops_run:  # the operator benchmark's rates, scaled by the GPT runs' factor
        times = calibrated.removeprefix("; kernel rates")
        calibrated = f"; kernel rates measured by the operator benchmark (run {ops_run}){times}"
    return f"{rate} by the GPT benchmark on this GPU ({which}; {size}{gpus}){scaled}{calibrated}"


# A step's parts as the detail names them (planner.llm.throughput LLM_DETAIL_COLUMNS).
STEP_PART_WORDS = (
    ("gemm_share", "GEMM"), ("attention_share", "attention"),
    ("memory_share", "memory-bound"), ("recompute_share", "recompute"),
    ("bubble_share", "bubble"), ("tp_comm_share", "TP comm"), ("cp_comm_share", "CP comm"),
    ("pp_comm_share", "PP comm"), ("dp_comm_share", "DP comm"),
    ("dp_overlap_share", "DP comm under compute"), ("optimizer_share", "optimizer"),
    ("cast_share", "fp8 casts"),
    ("grouped_gemm_share", "expert grouped GEMM"), ("a2a_share", "expert all-to-all"),
)  # fmt: skip


def _optimizer_words(stack: Framework | None, layout: str) -> str:
    """What the optimizer part holds on `stack` at `layout` (planner.llm.layout t_opt): the
    step, below ZeRO-3 the gradient accumulation, a nanotron ZeRO-1 gather's slice copies."""
    held = ["optimizer"]
    if stack and stack.accumulate_bytes > 0 and " zero3" not in layout:
        held.append("gradient accumulation")
    if stack and stack.per_tensor_gather and " zero1" in layout:
        held.append("its weight-slice copies")
    return ", ".join(held[:-1]) + " and " + held[-1] if len(held) > 1 else held[0]


def step_parts_text(row: Mapping[str, Any]) -> str:
    """ "GEMM 61%, attention 17%, ..." for the parts above half a percent, largest first;
    the older model's rows (no operator parts) name compute, bubble and communication; the
    optimizer part says what else it holds (_optimizer_words)."""
    layout = str(row.get("layout", row.get("sharding")) or "")  # estimate-llm's | plan's
    optimizer = _optimizer_words(FRAMEWORKS.get(str(row.get("framework") or "")), layout)
    parts = [
        (optimizer if key == "optimizer_share" else words, _number(row.get(key)))
        for key, words in STEP_PART_WORDS
    ]
    if parts[0][1] != parts[0][1]:  # no operator breakdown: compute as one part
        parts = [("compute", _number(row.get("compute_share"))), *parts[4:]]
    shown = sorted((p for p in parts if p[1] == p[1] and p[1] >= 0.005), key=lambda p: -p[1])
    return ", ".join(f"{words} {share:.0%}" for words, share in shown)


def llm_detail(row: Mapping[str, Any], precision: str) -> str:
    """A fitting row's layout, where its step time goes, memory, and its rates' source."""
    layout = row.get("layout", row.get("sharding"))
    framework = str(row.get("framework") or "")
    if str(row.get("mfu_source") or "") in PRIOR_WORDS:
        anchor = _number(row.get("mfu_anchor"))
        rate = (
            f"compute at {anchor:.0%} of the bf16 peak x {FP8_SPEEDUP[0]:g} for fp8; "
            if precision == "fp8"
            else f"compute at {anchor:.0%} of the {precision} dense peak; "
        )
    else:
        rate = ""
    memory, usable = _number(row.get("memory_per_gpu_gb")), _number(row.get("usable_gb"))
    step, mfu = _number(row.get("step_s")), _number(row.get("mfu"))
    search = f"{framework} layout search" if framework else "layout search"
    moe_mfu = " (on active parameters)" if _known(_number(row.get("moe_factor"))) else ""
    # A figure the row lacks is left out of the words, never shown as "None" or "nan%".
    head = [
        f"layout {layout} ({search}: tensor/context/pipeline/data parallel)"
        if layout is not None and str(layout) not in ("", "None", "nan")
        else "",
        f"{memory:.0f} of {usable:.0f} GB per GPU" if _known(memory, usable) else "",
    ]
    parts = [
        ", ".join(h for h in head if h),
        f"step {step:.3g} s: {step_parts_text(row)}".removesuffix(": ") if _known(step) else "",
        f"MFU {mfu:.0%} of the {precision} peak{moe_mfu}{recipe_text(row)}" if _known(mfu) else "",
        f"{rate}{mfu_source_text(row)}",
        stack_text(row),
        overlap_text(row),
        moe_text(row),
    ]
    return "; ".join(p.removesuffix("; ") for p in parts if p)


def moe_text(row: Mapping[str, Any]) -> str:
    """How much slower the fit found a mixture of experts' expert parts than the operator
    model times them (planner.llm.stack_profiles moe_factor), and whether its all-to-all
    was timed under compute (LLMSettings.moe_overlap); "" for a dense model."""
    factor = _number(row.get("moe_factor"))
    if not _known(factor):
        return ""
    overlap = (
        "; all-to-all under another micro-batch's compute, only what outlasts it exposed "
        "(as asked: DualPipe-style overlap)"
        if _switched(row.get("moe_overlap"), True)
        else ""
    )
    return (
        f"expert grouped GEMMs and all-to-all at {factor:.2f}x the operator model's time "
        f"(fitted on published MoE runs: planner/data/llm_stack_fit.csv){overlap}"
    )


def overlap_text(row: Mapping[str, Any]) -> str:
    """The communication overlap, and the gradient reduction's precision, the user asked for
    where it moved this step (LLMSettings.tp_overlap, dp_overlap, fp32_reduce), and a
    switchless board (board_text); "" at the stacks' usual setting."""
    said = []
    if _switched(row.get("tp_overlap"), True) and _number(row.get("tp_comm_share")) > 0:
        said.append(
            "tensor-parallel collectives pipelined with the GEMMs, 1/tp of them exposed "
            "(as asked: --tp-overlap)"
        )
    if _switched(row.get("dp_overlap"), False) and _number(row.get("dp_comm_share")) > 0:
        said.append(
            "data-parallel collectives after the backward, exposed whole "
            "(as asked: --no-dp-overlap)"
        )
    said.append(_reduction_text(row))
    said.append(board_text(row))
    return "; ".join(s for s in said if s)


def board_text(row: Mapping[str, Any]) -> str:
    """The switchless board the collectives were timed on (planner.machines.boards), where
    the step has collectives within a node; ""."""
    board = _number(row.get("board_gpus"))
    shares = ("tp_comm_share", "dp_comm_share", "dp_overlap_share", "a2a_share")
    if not board > 1 or not any(_number(row.get(c)) > 0 for c in shares):
        return ""
    return (
        f"GPUs linked directly, without a switch, on a board of {board:.0f}: a collective "
        f"among k of them has k - 1 of each GPU's {board - 1:.0f} links"
    )


def _reduction_text(row: Mapping[str, Any]) -> str:
    """The data-parallel gradients' bytes where they differ from the stack's own (the row's
    fp32_reduce as timed) and moved this step; ""."""
    stack = str(row.get("framework") or "")
    if stack not in FRAMEWORKS or row.get("precision") in ("fp32", "tf32"):
        return ""
    moved = _number(row.get("dp_comm_share")) + _number(row.get("dp_overlap_share"))
    if not moved > 0:
        return ""
    own = reduces_in_fp32(stack, None)  # the stack's own
    if _switched(row.get("fp32_reduce"), True) and not own:
        return "data-parallel gradients reduced in fp32, 4 bytes a value (as asked: --fp32-reduce)"
    if _switched(row.get("fp32_reduce"), False) and own:
        return (
            "data-parallel gradients reduced in 16 bits, 2 bytes a value, not the stack's fp32 "
            "(as asked: --no-fp32-reduce)"
        )
    return ""


def _switched(value: object, to: bool) -> bool:
    """A record's true/false cell (a bool, or its text after CSV) equals `to`."""
    return str(value).strip().lower() == str(to).lower()


def stack_text(row: Mapping[str, Any]) -> str:
    """Which stack's fitted rates the row assumes and how far the other stacks move its
    step (planner.llm.stack_profiles), "" without them."""
    framework, spread = str(row.get("framework") or ""), _number(row.get("stack_spread"))
    if not framework or not _known(spread):
        return ""
    fitted = FIT_FAMILY.get(framework, framework)
    name = FRAMEWORK_WORDS.get(fitted, fitted)
    layouts = (
        f"{FRAMEWORK_WORDS.get(framework, framework)}'s layouts, " if fitted != framework else ""
    )
    return (
        f"{layouts}rates fitted on {name}'s published runs (planner/data/llm_stack_fit.csv); "
        f"the other stacks' fits move this step by up to {spread:.0%}"
    )


def _known(*values: float) -> bool:
    """Every value a finite number."""
    return all(math.isfinite(v) for v in values)


def estimate_detail(record: Mapping[str, Any]) -> str:
    """estimate-llm's method_detail for one planner.llm.throughput.prediction_record."""
    reason = str(record.get("reason") or "")
    if reason == "fits":
        return llm_detail(record, str(record["precision"]))
    return REASON_WORDS.get(reason, "").format(
        memory=_number(record.get("memory_per_gpu_gb")),
        usable=_number(record.get("usable_gb")),
        precision=record.get("precision", ""),
        recipe_clause=recipe_clause(record.get("precision")),
    )


def _with_details(frame: pd.DataFrame, precision: str) -> pd.DataFrame:
    if frame.empty or "mfu_source" not in frame.columns:
        return frame
    source = frame["mfu_source"]
    llm = (source.notna() & (source.astype(str) != "")).to_numpy()
    if not llm.any():
        return frame
    out = frame.copy()
    details = out["throughput_detail"].astype(object).to_numpy(copy=True)
    records = out.loc[llm].to_dict(orient="records")
    details[llm] = [llm_detail(row, precision) for row in records]
    out["throughput_detail"] = details
    return out


def with_llm_details(plan: Plan) -> Plan:
    """The plan with throughput_detail worded on its LLM rows, picks and frontier."""
    if not plan.workload.is_llm:
        return plan
    return dataclasses.replace(
        plan,
        rows=_with_details(plan.rows, plan.precision),
        picks=_with_details(plan.picks, plan.precision),
        frontier=_with_details(plan.frontier, plan.precision),
    )


def no_fit_text(error: LLMMemoryError, controls: Mapping[str, str] = CLI_CONTROLS) -> str:
    """The message for an LLM that fits on no option, naming the interface's GPU cap."""
    parts = [
        f"{s.gpu_name} x {s.gpus:g}: at least {s.need_gb:,.1f} GB per GPU of "
        f"{s.usable_gb:,.1f} usable"
        + (
            f"; {s.fewest_gpus:,} would hold it"
            if s.fewest_gpus
            else "; no count up to 131,072 holds it"
        )
        for s in error.shortfalls
    ]
    states = (
        "adapters on frozen weights"
        if error.mode in ("lora", "qlora")
        else "weights, gradients and Adam state: 16 bytes/parameter, Rajbhandari et al. 2020"
    )
    cap = controls.get(error.cap_field, CAP_WORDS.get(error.cap_field, error.cap_field))
    stack = f" under the {error.framework} stack" if error.framework else ""
    other = ""
    if error.frameworks_that_fit:
        names = ", ".join(error.frameworks_that_fit)
        flag = controls.get("framework", "the framework")
        other = (
            f" It fits under {names} (parallel dimensions the {error.framework} stack lacks: "
            f"planner/llm/frameworks.py): set {flag} to {error.frameworks_that_fit[0]}."
        )
    if error.batch_limited:
        batch = controls.get("global_batch_tokens", "the global batch")
        other += (
            " Larger counts have more data-parallel ranks than the global batch has "
            f"sequences: raise {batch} to let them run."
        )
    return (
        f"{error.workload} does not fit in GPU memory at any GPU count offered{stack}, with "
        f"any layout it allows, ZeRO-3, FlashAttention and full recomputation "
        f"({states}; sequence {error.seq_len}). Least per GPU: "
        + ("; ".join(parts) or "no layout")
        + "."
        + other
        + (" Otherwise raise" if other else " Raise")
        + f" {cap}"
        + (f" (now {error.max_gpus:g})" if error.max_gpus else "")
        + ", pick GPUs with more memory, or train a smaller model (or LoRA)."
    )


# The terms of a layout's memory per GPU (planner.llm.layout MEMORY_TERMS).
MEMORY_TERM_WORDS = {
    "states": "weights, gradients and optimizer state",
    "expert_states": "routed experts' weights, gradients and optimizer state",
    "activations": "activations",
}


def recipe_text(row: Mapping[str, object]) -> str:
    """The words ", fp8 recipe <name>" for an fp8 row (planner.llm.fp8_recipes), else ""."""
    recipe = str(row.get("fp8_recipe") or "")
    return f", fp8 recipe {recipe}" if recipe and recipe != "nan" else ""


# Why a user's layout cannot run (planner.llm.user_layout USER_REASONS).
USER_REASON_WORDS = {
    "batch_too_small": "does not run: the global batch has fewer sequences than dp x mb",
    "no_peak": "does not run: no {precision} dense peak for this GPU{recipe_clause}",
}


def _rate(tokens_per_s: float, step_s: float, mfu: float, moe: bool) -> str:
    active = " on active parameters" if moe else ""
    return f"{tokens_per_s:,.0f} tokens/s (step {step_s:.3g} s, MFU {mfu:.0%}{active})"


def user_layout_text(comparison: LayoutComparison, precision: str) -> str:
    """A user's layout beside the best one found: its speed, whether it fits and, when not,
    which memory term fills the GPU (planner.llm.user_layout)."""
    timed, best = comparison.timed, comparison.best.layout
    layout = timed.layout
    where = f"{comparison.total_gpus} x {comparison.gpu_name}"
    head = f"your layout {timed.user.text} on {where}"
    if timed.tp_nodes > 1:
        spans = f"tp{timed.user.tp} spans {timed.tp_nodes} nodes"
        head += f" ({spans}: its collectives cross the network)"
    if layout.reason in USER_REASON_WORDS:
        words = USER_REASON_WORDS[layout.reason].format(
            precision=precision, recipe_clause=recipe_clause(precision)
        )
        return f"{head}: {words}"
    terms = dict(timed.terms_gb)
    used = sum(terms.values())
    split = ", ".join(
        f"{MEMORY_TERM_WORDS[name]} {gb:,.1f}" for name, gb in timed.terms_gb if gb > 0
    )
    moe = comparison.moe
    speed = _rate(layout.tokens_per_s, layout.step_s, layout.mfu, moe)
    if layout.reason == "fits":
        memory = f"fits, {used:,.1f} of {timed.usable_gb:,.1f} GB per GPU ({split}), at"
    else:
        largest = timed.over_terms[0]
        alone = terms[largest] > timed.usable_gb
        why = (
            f"{MEMORY_TERM_WORDS[largest]} alone ({terms[largest]:,.1f} GB) exceed it"
            if alone
            else f"the largest term is {MEMORY_TERM_WORDS[largest]} ({terms[largest]:,.1f} GB)"
        )
        memory = (
            f"does NOT fit: {used:,.1f} GB per GPU of {timed.usable_gb:,.1f} usable ({split}); "
            f"{why}; it would run at"
        )
    ours = (
        f"best layout found: {best.label}, {_rate(best.tokens_per_s, best.step_s, best.mfu, moe)}"
        if best.fits
        else "the search found no layout that fits"
    )
    ratio = (
        f" (yours at {layout.tokens_per_s / best.tokens_per_s:.0%} of it)"
        if best.fits and layout.reason == "fits"
        else ""
    )
    return f"{head}: {memory} {speed}; {ours}{ratio}"
