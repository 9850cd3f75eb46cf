"""The engine's structured notes (planner.notes) in words, for the CLI and the app.

Each interface names its own controls: `controls` maps a request field (max_gpus,
deadline_hours, budget_usd, interruption_rates, gpus) to how the interface calls it
(CLI_CONTROLS: the flag; the app passes its input labels).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from edge.format import duration, money
from planner.llm.fp8_recipes import UNRUNNABLE
from planner.notes import Note

CLI_CONTROLS: dict[str, str] = {
    "max_gpus": "--max-gpus",
    "gpu_count": "--gpus",
    "deadline_hours": "--deadline-hours",
    "budget_usd": "--budget-usd",
    "gpus": "--gpu",
    "pricing": "--pricing",
    "results": "--results",
    "onprem": "--onprem",
    "framework": "--framework",
    "global_batch_tokens": "--global-batch-tokens",
}
APP_CONTROLS: dict[str, str] = {
    "max_gpus": "Max GPUs per option",
    "gpu_count": "Exact GPU count",
    "deadline_hours": "Deadline (hours)",
    "budget_usd": "Budget (USD)",
    "gpus": "GPUs",
    "pricing": "Pricing",
    "results": "the Benchmarks page",
    "onprem": "On-prem configuration",
    "framework": "Framework",
    "global_batch_tokens": "the global batch (a setting of the command-line planner)",
}
DROP_WORDS = {
    "no_price": "no {pricing} price",
    "no_spec_row": "no row in planner/data/gpu_specs.csv to estimate them from",
    "no_throughput": "no {model} {precision} throughput figure or estimate",
    "no_llm_peak": "no {precision} dense peak in planner/data/gpu_specs.csv to apply an MFU to "
    "(no such tensor cores, fp16 may have one{recipe_clause})",
    "no_layout_fits": "too few GPUs to hold {workload} in any layout",
    "batch_too_small": "more data-parallel ranks than sequences in the global batch",
}
SKIP_WORDS = {
    "cpu_run": "a CPU run does not predict a GPU",
    "unknown_gpu": "its device is not a GPU in planner/data/gpu_specs.csv",
    "other_precision": "measured at {precision}, the plan is at {wanted}",
    "other_size": "model size {model_size}, the plan's is {wanted}",
    "smaller_batch": "batch {batch:g}; the same GPU, model and precision ran faster at batch "
    "{wanted}, which stands for them (the step model times smaller batches)",
}
SKIP_SHORT = {
    "cpu_run": "CPU run",
    "unknown_gpu": "unknown GPU",
    "other_precision": "other precision",
    "other_size": "other model size",
    "smaller_batch": "slower batch",
}
# A request's GPU cap in words, where the interface names no control for it.
CAP_WORDS = {"max_gpus": "max GPUs", "gpu_count": "the GPU count"}
# Notes about own results (used, skipped), apart from the warnings.
OWN_CODES = ("own_result_used", "own_result_skipped", "own_results_elsewhere")


def note_text(note: Note, controls: Mapping[str, str] = CLI_CONTROLS) -> str:
    """One note as a sentence fragment (no final period)."""
    v = note.values
    name = controls.get
    if note.code == "offers_dropped":
        blank = {"pricing": "", "model": "", "precision": "", "workload": ""}
        clause = {"recipe_clause": f"; or {UNRUNNABLE}" if v.get("precision") == "fp8" else ""}
        why = DROP_WORDS[v["reason"]].format(**{**blank, **v, **clause})
        left = f"{v['option_count']} options" if "option_count" in v else f"{v['offers']} offers"
        return f"{left} left out: {why} ({', '.join(v['gpus'])})"
    if note.code == "offers_too_big":
        cap = str(v.get("cap", "max_gpus"))
        return (
            f"{v['offers']} offers left out: more GPUs per instance than the {v['max_gpus']} "
            f"allowed ({name(cap, CAP_WORDS.get(cap, cap))})"
        )
    if note.code == "gpu_count_uneven":
        sizes = ", ".join(str(g) for g in v["sizes"])
        return (
            f"{v['offers']} offers left out: {v['gpu_count']} GPUs ({name('gpu_count')}) is "
            f"not a whole number of their instances ({sizes} GPUs each): ask for a multiple"
        )
    if note.code == "onprem_no_count":
        return f"on-prem {v['name']}: no GPU count within {name('max_gpus')} {v['max_gpus']}"
    if note.code == "deadline_unmet":
        return (
            f"nothing finishes within {duration(v['deadline_hours'])}; the fastest option is "
            f"{v['closest']} at {duration(v['closest_hours'])} ({name('deadline_hours')})"
        )
    if note.code == "budget_unmet":
        return (
            f"nothing costs {money(v['budget_usd'])} or less; the cheapest option is "
            f"{v['closest']} at {money(v['closest_usd'])} ({name('budget_usd')})"
        )
    if note.code == "stale_prices":
        bounds = v.get("bounds", {})
        listed = ", ".join(
            f"{p} catalog extract, {bounds[p]} (at most {age} d)"
            if p in bounds
            else f"{p} {d} ({age} d)"
            for p, d, age in v["providers"]
        )
        return (
            f"prices older than {v['stale_after_days']} days: {listed}; refresh without "
            "credentials with `gpuplan pricing refresh skypilot` (or `aws-public`, `azure`)"
        )
    if note.code == "no_options":
        return _nothing_left(v, name)
    if note.code == "gpus_unpriced":
        return _unpriced(v["gpus"], name)
    if note.code == "own_result_used":
        if v.get("device") == "cpu" and not math.isfinite(float(v["throughput"])):
            return (
                f"own result {v['id']} used: a CPU run ({v['precision']}) sets the per-core "
                "rate of the CPU baseline rows of its own CPU"
            )
        if v.get("workload") == "ops":
            return (
                f"own result {v['id']} used: the operator benchmark on {v['gpu_name']} sets the "
                "LLM step's GEMM, attention and memory rates on that GPU"
            )
        on = f" for {v['instance_type']} (sweep)" if v.get("instance_type") else ""
        return (
            f"own result {v['id']} used{on}: {_run(v)}, {v['throughput']:,.4g} {v['unit']}"
        ).rstrip()
    if note.code == "own_result_skipped":
        why = SKIP_WORDS[v["reason"]].format(**v)
        return f"own result {v['id']} not used: {why}"
    if note.code == "own_results_elsewhere":
        return (
            f"{v['count']} own results of other workloads ({', '.join(v['workloads'])}) "
            "not used: they measure another job"
        )
    if note.code == "cpu_run_applied":
        low, high = v["factor_low"], v["factor_high"]
        by = f"x{low:.2g}" if abs(high - low) < 0.005 * high else f"x{low:.2g}-{high:.2g}"
        return (
            f"own CPU run {v['id']} set the per-core rate of {v['moved']} CPU row(s) of its "
            f"own CPU ({', '.join(v['families'])}; {by} the datasheet default); "
            f"{v['kept']} row(s) of other CPUs keep the default"
        )
    if note.code == "gpt_results_unused":
        if v["reason"] == "cpu_run":
            return (
                f"{v['count']} GPT results from CPUs or unknown devices not used to predict GPU MFU"
            )
        return f"GPT results of size {', '.join(v['sizes'])} not used: not a parameter count"
    return str(v.get("text", note.code))


def _nothing_left(v: Mapping[str, Any], name: Callable[..., str]) -> str:
    """Why a plan has no option, in one line: a GPU no offer prices, filters that chose no
    offer, or options each left out for the reasons the other notes give."""
    unpriced: tuple[str, ...] = tuple(v.get("unpriced_gpus", ()))
    if unpriced:
        return _unpriced(unpriced, name)
    if not v.get("offers_chosen") and not v.get("onprem"):
        return "no offer matches the filters: widen the provider, region, GPU or tier asked for"
    return "no option left to plan: each was left out for the reason above"


def _unpriced(gpus: Iterable[object], name: Callable[..., str]) -> str:
    return (
        f"no priced offer of {', '.join(str(g) for g in gpus)} in the price catalog (no "
        f"provider, region or tier lists one): plan it on-prem ({name('onprem')}) or add its "
        "price with `gpuplan pricing add-custom`"
    )


def notes_text(notes: Iterable[Note], controls: Mapping[str, str] = CLI_CONTROLS) -> list[str]:
    """Each note in words, in order."""
    return [note_text(n, controls) for n in notes]


def _run(v: Mapping[str, object]) -> str:
    return f"{v['gpu_name']} x{v['world_size']} {v['precision']}"
