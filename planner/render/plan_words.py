"""What a plan rests on and why it picked what it did, in words (the CLI and the app).

The engine (planner.plan, planner.choose.pareto) returns figures and codes: the request, the
picks with their USD per hour saved, the constraint status with its case and figures.
This module words them: `assumption_lines` (the methods and inputs a plan rests on),
`pick_reason` (why a pick), `constraint_text` (what a constraint does to the plan), and
`worded_picks` / `worded_status` (the tables with a `why` / `note` column added, for
tables and exports).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from edge.format import duration, flops, money
from planner.costs.spot import default_rate
from planner.llm.frameworks import ATTENTION_NAMES, framework
from planner.llm.stack_profiles import ATTENTION_KERNEL
from planner.plan import Plan
from planner.render.rows import constraint_phrases, worded_rows
from planner.request import PlanRequest
from planner.settings import KERNEL_FLOOR_S
from pricing.tiers import DEFAULT_TIERS


def hours_text(value: float) -> str:
    """Hours as people read them (edge.format.duration: 49 s, 39 min, 5.2 h, 31.6 days)."""
    return duration(value)


def usd_text(value: float) -> str:
    """Dollars as people read them (edge.format.money: $0.52, $1,234, <$0.01)."""
    return money(value)


def pick_reason(row: Mapping[str, object], request: PlanRequest) -> str:
    """Why a pick (a planner.choose.pareto.picks row) was picked, for the plan's request."""
    pick = str(row["pick"])
    if pick == "cheapest_within_deadline":
        if request.deadline_hours is not None:
            return "least cost among options finishing within the deadline"
        return "least cost (no deadline given)"
    if pick == "fastest_within_budget":
        if request.budget_usd is not None:
            return "fewest hours among options within the budget"
        return "fewest hours (no budget given)"
    rate, saved, extra = (
        float(row[k])  # type: ignore[arg-type]
        for k in ("usd_per_hour_saved", "hours_saved", "extra_usd")
    )
    return (
        f"{usd_text(rate)} more per hour saved than the cheapest feasible option "
        f"({hours_text(saved)} sooner for {usd_text(extra)} more)"
    )


def constraint_text(row: Mapping[str, object], budget_met: bool = True) -> str:
    """What one planner.choose.pareto.constraint_status row says, as a sentence fragment;
    `budget_met` False (no option within the budget) words no other row "within the
    budget" (it followed "nothing costs $1.00 or less")."""
    case, option, value = str(row["case"]), str(row["option"]), float(row["value"])  # type: ignore[arg-type]

    def figure(key: str) -> float:
        return float(row[key])  # type: ignore[arg-type]

    constraint = row["constraint"]
    if constraint == "deadline_hours":
        if case == "met":
            return (
                f"the cheapest option, {option}, finishes in {hours_text(figure('option_hours'))}"
            )
        if case == "none_within":
            return (
                f"nothing finishes within {hours_text(value)}; the fastest option is {option} at "
                f"{hours_text(figure('option_hours'))}"
            )
        return (
            f"the cheapest option takes {hours_text(figure('baseline_hours'))}; meeting the "
            f"deadline costs {usd_text(figure('delta_usd'))} more ({option})"
        )
    if constraint == "budget_usd":
        if case == "met":
            return f"the fastest option, {option}, costs {usd_text(figure('option_usd'))}"
        if case == "none_within":
            return (
                f"nothing costs {usd_text(value)} or less; the cheapest option is {option} at "
                f"{usd_text(figure('option_usd'))}"
            )
        return (
            f"the fastest option costs {usd_text(figure('baseline_usd'))}; within the budget "
            f"the fastest takes {hours_text(figure('delta_hours'))} longer ({option})"
        )
    gpus = figure("option_gpus")
    if constraint == "max_gpus":
        scope = " within the budget" if case == "fastest_within_budget" and budget_met else ""
        text = f"the fastest option{scope}, {option}, uses {gpus:g} of {value:g} allowed"
        return text + "; more might be faster" * bool(row["binds"])
    if constraint == "gpu_count":
        return (
            f"every option uses exactly {value:g} GPUs, as asked; other counts might be "
            "faster or cheaper"
        )
    return f"the fastest on-prem option uses {gpus:g} of the cluster's {value:g} GPUs"


def worded_picks(plan: Plan) -> pd.DataFrame:
    """The plan's picks with `why` (pick_reason) after `pick`, their codes worded
    (planner.render.rows.worded_rows)."""
    picks = plan.picks.copy()
    reasons = [pick_reason(r, plan.request) for r in picks.to_dict(orient="records")]
    picks.insert(1 if "pick" in picks.columns else 0, "why", pd.Series(reasons, dtype=object))
    return worded_rows(picks)


def worded_status(plan: Plan) -> pd.DataFrame:
    """The plan's constraint status with `note` (constraint_text) after `binds`."""
    status = plan.constraint_status.copy()
    records = status.to_dict(orient="records")
    budget_met = not any(
        r.get("constraint") == "budget_usd" and r.get("case") == "none_within" for r in records
    )
    notes = [constraint_text(r, budget_met) for r in records]
    at = list(status.columns).index("binds") + 1 if "binds" in status.columns else 0
    status.insert(at, "note", pd.Series(notes, dtype=object))
    return status


def assumption_lines(plan: Plan) -> list[str]:
    """What the plan rests on: workload, constraints, the throughput and memory models,
    providers weighed, prices, picks, quantiles, spot rates and on-prem configs."""
    if plan.rows.empty:
        return ["Constraints: " + "; ".join(constraint_phrases(plan.request)) + "."]
    return _request_lines(plan.request, plan.rows)


def _request_lines(request: PlanRequest, rows: pd.DataFrame) -> list[str]:
    """The plan's assumptions, one paragraph each: workload, constraints, method, providers,
    prices and options, picks, bands, spot rates and on-prem configs."""
    workload = request.workload
    constraints, sample_limit, onprem = request, request.sample_limit, request.onprem
    lines = [
        f"Workload {workload.name}: {workload.description}; {workload.samples:,.0f} "
        f"{workload.sample_unit} ({workload.source}).",
        "Constraints: " + "; ".join(constraint_phrases(constraints)) + ".",
    ]
    lines += _method_lines(request) + _provider_lines(request)
    lines += [
        f"Prices: {constraints.pricing}, whole instances, billed in each provider's "
        "increment and minimum (planner.costs.overheads), no data or storage costs; wall time "
        "adds provisioning, environment start, dataset staging and checkpoint writes; "
        "capacity assumed available at every count. Options: 1, 2, 4, ... instances of an "
        "offer up to "
        f"{constraints.max_gpus} GPUs (one of a GPU slice or a marketplace listing, which is "
        "a single host); each offer shown at the count that meets the deadline at least cost "
        "(else its fastest), plus other counts on the frontier or picked.",
        "Picks: cheapest within the deadline; fastest within the budget; best cost per hour "
        "saved = among feasible frontier options faster than the cheapest feasible one, "
        "the least extra dollars per hour saved. Frontier: no other option is both no "
        "slower and no dearer (central figures: median throughput, expected spot time).",
        "P10/P50/P90: the throughput band (10-90%, which holds the scaling fit's error) read "
        "as a split normal in log space; exact for non-spot rows; spot rows on the frontier, "
        f"picked or in the best {sample_limit} by Monte Carlo ({constraints.draws:,} draws, "
        f"seed {constraints.seed}), other spot rows band x expected overhead "
        "(planner.costs.montecarlo).",
    ]
    if constraints.pricing == "spot" and len(rows):
        lines.append(_rate_line(rows, request.rates))
    for config in onprem:
        lines.append(
            f"On-prem {config.name}: {config.gpus} x {config.gpu_name}, amortized cost at "
            f"{config.utilization:.0%} utilization (planner.onprem.tco) x GPU-hours used; "
            "no queueing for the cluster."
        )
    return lines


def _method_lines(request: PlanRequest) -> list[str]:
    """How throughput was found: the LLM layout model, or figures, laws and step model."""
    workload, precision, settings = request.workload, request.precision, request.llm
    lines: list[str] = []
    if workload.is_llm:
        lines += [
            f"Precision {precision}. Throughput per option from the fastest tensor x context x "
            f"pipeline x data-parallel layout {settings.framework} allows that fits memory "
            "(Megatron-LM: Shoeybi et al. 2019, Narayanan et al. 2021; ZeRO-1 or ZeRO-3/FSDP: "
            "Rajbhandari et al. 2020), its step timed operator by operator (planner.llm.ops: "
            "GEMMs by shape, FlashAttention, memory-bound operators at HBM bandwidth, the "
            "optimizer) + pipeline bubble (p-1)/(v m) + exposed tensor-, context-, pipeline- "
            "and data-parallel communication (α-β rings over NVLink and the instance network); "
            f"{flops(workload.flops_per_sample)} per token; kernel rates measured by the "
            "operator benchmark on the GPU, else per GPU generation, calibrated by own GPT "
            "runs where there are some.",
            "Memory: model states by ZeRO stage, activations with FlashAttention (Dao et al. "
            "2022) per Korthikanti et al. 2022, full recomputation only where it is faster or "
            f"needed (recompute={settings.recompute}); "
            f"{settings.memory_reserve_fraction:.0%} of each GPU reserved; global batch "
            f"{settings.batch_tokens(workload):,.0f} tokens per step. Layout per row "
            "(sharding column): tp, cp, pp, dp, ZeRO stage, micro-batch.",
        ]
        lines.append(_attention_line(settings.framework, settings.attention))
        if settings.eager:  # the LLM model's constants, imported for eager plans only
            from planner.llm.ops import EAGER_KERNELS_PER_LAYER, EAGER_TRAFFIC_FACTOR

            lines.append(
                f"Eager PyTorch (no torch.compile): {EAGER_TRAFFIC_FACTOR:g}x the "
                f"{settings.framework} fit's memory-bound traffic, and each micro-batch no "
                f"faster than {EAGER_KERNELS_PER_LAYER:g} kernels per layer dispatched at "
                f"{KERNEL_FLOOR_S * 1e6:.0f} µs each (planner.llm.ops; the per-kernel floor "
                "fitted on batch sweeps)."
            )
        elif fitted := framework(settings.framework).fitted_kernels:
            lines.append(
                f"Kernels as the {settings.framework} fit's runs ran them: {fitted}; eager "
                "PyTorch (no torch.compile) is slower: --eager, or the Plan page's eager toggle."
            )
    else:
        lines.append(
            f"Precision {precision}. Throughput: own measurements first, then published "
            "(Lambda PyTorch benchmarks, newest generation, median of runs); other GPU counts "
            "scaled through the law fitted to that GPU (chosen by held-out error), across "
            "nodes and under the workload's global batch cap by the step-time model "
            "(planner.throughput.step_model: per-GPU batch, per-step floor and straggler "
            "wait fitted on FlagPerf runs, hierarchical all-reduce with latency fitted on "
            "all-reduce size sweeps and DDP overlap) with the instance's GPUs per node "
            "over the instance type's network (planner.machines.network: EFA/InfiniBand/GPUDirect "
            "fabrics and published Ethernet figures; 25 Gb/s assumed where none is "
            "published); image workloads capped by the vCPUs' JPEG decoding rate; a GPU "
            "with no figure takes a same-silicon sibling's, scaled by memory bandwidth and "
            "power limit (sibling); other GPUs with no figure estimated from their specs "
            "(spec regression, cross-validated band)."
        )
    return lines


def _attention_line(stack: str, asked: str) -> str:
    """The attention kernel a plan timed: the one asked for, else the stack's own."""
    if asked != "auto":
        return f"Attention: {ATTENTION_NAMES[asked]}, as asked (--attention {asked})."
    kernel = ATTENTION_KERNEL.get(stack, "fa3")
    line = (
        f"Attention: {ATTENTION_NAMES[kernel]}, the {stack} stack's own; --attention (or the "
        "Plan page's attention kernel) names another"
    )
    if kernel == "fa2":  # a PyTorch stack may run cuDNN's instead
        line += (
            ": a model on PyTorch's SDPA (torch 2.11, cuDNN 9.19) runs cuDNN's on Hopper "
            "(--attention cudnn)"
        )
    return line + "."


def _provider_lines(request: PlanRequest) -> list[str]:
    """Which providers and sizes were weighed, and any assumed reserved price."""
    lines: list[str] = []
    weighed = request.tiers or (() if request.providers else DEFAULT_TIERS)
    lines.append(
        "Providers weighed: "
        + (f"tiers {', '.join(weighed)}" if weighed else "the providers named")
        + (
            "; marketplace single hosts (Vast.ai) left out: a company buying GPU time usually "
            "cannot buy them under a contract"
            if "marketplace" not in weighed and not request.providers
            else ""
        )
        + (
            "; sizes the provider no longer sells (pricing/retired.py) left out."
            if not request.include_retired
            else "; retired sizes included on request."
        )
    )
    if request.reserved_discount is not None:
        lines.append(
            f"Reserved prices: where no {request.pricing} price is listed, assumed on-demand "
            f"less {request.reserved_discount:.0%} (a negotiated discount given by the user, "
            "not a quote); such rows say so in their price source."
        )
    return lines


def _rate_line(rows: pd.DataFrame, overrides: Mapping[str, float]) -> str:
    parts = []
    spot = rows.loc[rows["pricing"] == "spot"]
    for provider in sorted(spot["provider"].unique()):
        if provider.lower() in {p.lower() for p in overrides}:
            rate = {p.lower(): r for p, r in overrides.items()}[provider.lower()]
            parts.append(f"{provider} {rate:.3g}/h (yours)")
        else:
            d = default_rate(provider)
            parts.append(
                f"{provider} {d.interruptions_per_hour:.3g}/h, range {d.low_per_hour:.2g}-"
                f"{d.high_per_hour:.2g} drawn in P10-P90 (default for {d.provider}: "
                f"{d.basis.split('.')[0]}; {d.source})"
            )
    return (
        "Spot interruptions per instance-hour (Poisson; a job on k instances stops when any "
        "is interrupted; checkpoint and restart per planner.costs.spot, Daly 2006): "
        + "; ".join(parts)
        + ". The providers publish different measures, so set your own rates where you "
        "know them."
    )
