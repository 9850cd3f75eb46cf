"""`gpuplan plan`: every offer at its best GPU count, the time/cost frontier and the picks.

The command takes its flags as one PlanFlags, checks them, reads the inputs (workload,
offers, on-prem configs, own results), builds one PlanRequest, runs the engine
(planner.plan.make_plan) and prints the Plan (planner.render). The engine is imported
when the command runs: `gpuplan --help` loads no pandas.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Annotated

import typer

from benchmarks.folders import default_results_dir
from edge.console import abort, note, working
from edge.output import emit
from planner.cli.options import (
    Attention,
    DPOverlap,
    Eager,
    Format,
    Fp8Recipe,
    FP32Reduce,
    MoEOverlap,
    TPOverlap,
    Wide,
    check_format,
)
from planner.defaults import (
    DEFAULT_CHECKPOINT_HOURS,
    DEFAULT_DRAWS,
    DEFAULT_MAX_GPUS,
    DEFAULT_RESTART_HOURS,
)
from planner.io.validate import check_flags, warn_lines
from planner.llm.frameworks import DEFAULT_FRAMEWORK
from planner.workloads.moe_presets import MOE_PRESETS
from pricing.cli import tier_option_help

if TYPE_CHECKING:
    import pandas as pd

    from planner.onprem.tco import LoadedConfig
    from planner.plan import Plan
    from planner.request import PlanRequest
    from planner.settings import JobOverheads, LLMSettings
    from planner.workloads.catalog import Workload

# The flag that sets each PlanRequest field, to name it in errors.
REQUEST_FLAGS = {
    "deadline_hours": "--deadline-hours",
    "budget_usd": "--budget-usd",
    "max_gpus": "--max-gpus",
    "gpu_count": "--gpus",
    "draws": "--draws",
    "seed": "--seed",
    "checkpoint_hours": "--checkpoint-minutes",
    "restart_hours": "--restart-minutes",
    "interruption_rates": "--interruption-rate",
    "precision": "--precision",
    "pricing": "--pricing",
    "tiers": "--tier",
    "reserved_discount": "--reserved-discount",
}
NO_FP8_GPU = (
    "--precision fp8: none of the GPUs offered has fp8 tensor cores (no fp8 peak in "
    "planner/data/gpu_specs.csv; fp8 needs Hopper, Ada, Blackwell, MI300 or Gaudi); "
    "use bf16, or choose such GPUs with --gpu"
)
CPU_BOUND_SHOWN = 5  # CPU-bound rows explained one by one; the others are counted


@dataclass(frozen=True)
class PlanFlags:
    """The options of one `gpuplan plan` as given, by parameter name (None: not given)."""

    workload: str
    precision: str
    provider: list[str] | None
    region: list[str] | None
    gpu: list[str] | None
    spot: bool
    pricing: str
    tier: list[str] | None
    include_retired: bool
    reserved_discount: float | None
    deadline_hours: float | None
    budget_usd: float | None
    max_gpus: int
    gpus: int | None
    onprem: list[str] | None
    interruption_rate: list[str] | None
    checkpoint_minutes: float
    restart_minutes: float
    startup_minutes: float | None
    staging_gbps: float | None
    checkpoint_every_hours: float | None
    seed: int
    draws: int
    recompute: str
    framework: str
    eager: bool
    fp8_recipe: str
    moe_overlap: bool
    dp_overlap: bool
    tp_overlap: bool
    fp32_reduce: bool | None
    attention: str
    global_batch_tokens: float | None
    seq_len: int | None
    n_layer: int | None
    d_model: int | None
    ffn: int | None
    heads: int | None
    kv_heads: int | None
    vocab: int | None
    mlp: str | None
    embeddings: str | None
    layout: str | None
    view: str
    wide: bool
    explain: bool
    top: int | None
    results: list[str] | None
    fmt: str

    @property
    def pricing_kind(self) -> str:
        """What prices the plan: --pricing, or spot with --spot."""
        return "spot" if self.spot else self.pricing


@dataclass(frozen=True)
class PlanInputs:
    """What a plan is made of, read and checked: the workload (reshaped where asked), the
    LLM settings, the offers, spot interruption rates, on-prem configs, and the results
    table with the problems met reading it."""

    workload: Workload
    llm: LLMSettings
    offers: pd.DataFrame
    rates: dict[str, float]
    onprem: list[LoadedConfig]
    results: pd.DataFrame
    problems: list[str]


# The options are declared in the signature, as typer reads them; the body hands them on.
def plan(
    workload: Annotated[
        str,
        typer.Option(
            "--workload",
            "-w",
            help="catalog name (gpuplan workloads) or llm-<params>-<tokens> with -finetune, "
            "-lora or -qlora after the params (llm-7b-140b, llm-69b-lora-1b); a mixture of "
            f"experts as a preset and its tokens ({', '.join(MOE_PRESETS)}: deepseek-v3-1t) "
            "or llm-<total>-a<active>-<tokens> (llm-30b-a3b-1t)",
        ),
    ],
    precision: Annotated[
        str,
        typer.Option(
            help="auto | fp32 | tf32 | fp16 | bf16 | fp8 (LLMs on fp8 GPUs); auto: bf16 for "
            "LLMs, fp16 mixed precision (AMP, as the benchmarks are published) otherwise"
        ),
    ] = "auto",
    provider: Annotated[
        list[str] | None,
        typer.Option("--provider", help="aws, gcp, azure, lambda, ...; repeatable"),
    ] = None,
    region: Annotated[list[str] | None, typer.Option("--region", help="repeatable")] = None,
    gpu: Annotated[
        list[str] | None, typer.Option("--gpu", help="GPU name or family; repeatable")
    ] = None,
    spot: Annotated[bool, typer.Option("--spot", help="price at spot (= --pricing spot)")] = False,
    pricing: Annotated[
        str, typer.Option(help="on-demand | spot | reserved-1y | reserved-3y")
    ] = "on-demand",
    tier: Annotated[list[str] | None, typer.Option("--tier", help=tier_option_help())] = None,
    include_retired: Annotated[
        bool,
        typer.Option("--include-retired", help="also weigh sizes the provider no longer sells"),
    ] = False,
    reserved_discount: Annotated[
        float | None,
        typer.Option(
            help="reserved pricing: where no reserved price is listed, assume on-demand less "
            "this fraction (0.35 = 35%; labelled an assumption in every row it touches)"
        ),
    ] = None,
    deadline_hours: Annotated[
        float | None, typer.Option("--deadline-hours", help="finish within this many hours")
    ] = None,
    budget_usd: Annotated[
        float | None, typer.Option("--budget-usd", help="spend at most this many USD")
    ] = None,
    max_gpus: Annotated[
        int, typer.Option("--max-gpus", help="most GPUs one option may use (all instances)")
    ] = DEFAULT_MAX_GPUS,
    gpus: Annotated[
        int | None,
        typer.Option(
            "--gpus",
            help="plan only options of exactly this many GPUs in all (instances x GPUs)",
        ),
    ] = None,
    onprem: Annotated[
        list[str] | None,
        typer.Option(
            "--onprem",
            help="on-prem config TOML, or example:onprem-dgx-h100 (gpuplan examples), to weigh "
            "as options; repeatable",
        ),
    ] = None,
    interruption_rate: Annotated[
        list[str] | None,
        typer.Option(
            "--interruption-rate",
            help="PROVIDER=RATE spot interruptions per instance-hour (e.g. aws=0.01), "
            "instead of the documented default; repeatable",
        ),
    ] = None,
    checkpoint_minutes: Annotated[
        float, typer.Option(help="minutes to write one checkpoint (spot)")
    ] = DEFAULT_CHECKPOINT_HOURS * 60,
    restart_minutes: Annotated[
        float, typer.Option(help="minutes to restart after an interruption (spot)")
    ] = DEFAULT_RESTART_HOURS * 60,
    startup_minutes: Annotated[
        float | None,
        typer.Option(
            help="minutes from request to training: provisioning + environment start "
            "(default: per provider, see README)"
        ),
    ] = None,
    staging_gbps: Annotated[
        float | None,
        typer.Option(help="Gb/s to copy the dataset to each instance; 0 = already there"),
    ] = None,
    checkpoint_every_hours: Annotated[
        float | None,
        typer.Option(
            help="compute hours between checkpoint writes; 0 = none (default: Young's "
            "interval from the job's GPU failure rate)"
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Monte Carlo seed (same seed, same figures)")] = 0,
    draws: Annotated[int, typer.Option(help="Monte Carlo draws for spot rows")] = DEFAULT_DRAWS,
    recompute: Annotated[
        str,
        typer.Option(
            help="LLM activation recomputation: auto | none | selective | per-op "
            "(fsdp/fsdp2) | full"
        ),
    ] = "auto",
    framework: Annotated[
        str,
        typer.Option(
            help="LLM training stack, which decides the layouts weighed and the fitted rates: "
            "megatron | fsdp | fsdp2 | deepspeed | nanotron (not given: "
            f"{DEFAULT_FRAMEWORK}, and the band also spans the other stacks)"
        ),
    ] = "",
    eager: Eager = False,
    fp8_recipe: Fp8Recipe = "auto",
    moe_overlap: MoEOverlap = False,
    dp_overlap: DPOverlap = True,
    tp_overlap: TPOverlap = False,
    fp32_reduce: FP32Reduce = None,
    attention: Attention = "auto",
    global_batch_tokens: Annotated[
        float | None,
        typer.Option(
            help="LLM tokens per optimizer step, all GPUs (default 4,194,304 for pre-training, "
            "262,144 for fine-tuning)"
        ),
    ] = None,
    seq_len: Annotated[
        int | None, typer.Option(help="LLM sequence length in tokens (default 2048)")
    ] = None,
    n_layer: Annotated[
        int | None, typer.Option(help="LLM layers (default: the preset's or GPT-3-like)")
    ] = None,
    d_model: Annotated[
        int | None, typer.Option(help="LLM width (default: the preset's or GPT-3-like)")
    ] = None,
    ffn: Annotated[
        int | None,
        typer.Option(
            help="LLM MLP hidden width; != 4 x d-model is taken as a gated (SwiGLU) MLP "
            "unless --mlp says"
        ),
    ] = None,
    heads: Annotated[int | None, typer.Option(help="LLM attention heads")] = None,
    kv_heads: Annotated[
        int | None, typer.Option(help="LLM key/value heads (< heads: grouped-query attention)")
    ] = None,
    vocab: Annotated[int | None, typer.Option(help="LLM vocabulary size")] = None,
    mlp: Annotated[
        str | None,
        typer.Option(
            help="LLM MLP: gelu (2 matrices, GPT) | swiglu (3 gated matrices, LLaMA); default: "
            "swiglu where --ffn is not 4 x d-model"
        ),
    ] = None,
    embeddings: Annotated[
        str | None,
        typer.Option(
            help="LLM: tied (the output layer shares the input embedding: GPT-2, Llama 3.2 "
            "1B) | untied; default: tied with a gelu MLP, untied with swiglu"
        ),
    ] = None,
    layout: Annotated[
        str | None,
        typer.Option(
            help='LLM: time your own layout beside the best one found, e.g. "tp4 pp2 cp1 ep8 '
            'dp16 mb1 zero1 recompute=selective" (dp left out: GPUs / (tp pp cp))'
        ),
    ] = None,
    view: Annotated[
        str,
        typer.Option(
            help="what to print: rows (picks, binding constraints, one row per offer) | "
            "picks | frontier | options (every count) | constraints"
        ),
    ] = "rows",
    wide: Wide = False,
    explain: Annotated[
        bool,
        typer.Option("--explain", help="every assumption, own result and warning in full"),
    ] = False,
    top: Annotated[int | None, typer.Option(help="show the N best rows")] = None,
    results: Annotated[
        list[str] | None,
        typer.Option(
            "--results",
            help="folder of own benchmark results (default $GPUPLAN_RESULTS_DIR "
            "or ./results); repeatable",
        ),
    ] = None,
    fmt: Format = "table",
) -> None:
    """Plan a training run: every offer at its best GPU count, the time/cost frontier and picks.

    Each offer (and --onprem config) is weighed at 1, 2, 4, ... instances up to --max-gpus;
    its row is the count that meets --deadline-hours at the least cost. Rows say where the
    throughput came from and carry P10-P90 hours and cost; * marks the Pareto frontier.
    """
    flags = PlanFlags(**locals())  # first statement: locals() is exactly the options above
    flags = _with_precision(flags)
    result, problems, layout_lines = _checked_plan(flags)
    _show_plan(result, problems, flags, layout_lines)


def _with_precision(flags: PlanFlags) -> PlanFlags:
    """`flags` with --precision auto resolved: bf16 for an LLM (the precision LLMs train in),
    fp16 mixed precision otherwise (the benchmarks' published precision). A name no
    workload has is left for the workload check to refuse."""
    if flags.precision != "auto":
        return flags
    from planner.workloads.catalog import get_workload

    try:
        llm = get_workload(flags.workload).is_llm
    except ValueError:
        llm = False
    return replace(flags, precision="bf16" if llm else "fp16")


def _layout_lines(result: Plan, flags: PlanFlags, inputs: PlanInputs) -> list[str]:
    """--layout: the user's layout beside the best one found, in words (none without it)."""
    if not flags.layout:
        return []
    from planner.llm.for_plan import layout_on_plan
    from planner.llm.user_layout import parse_layout
    from planner.render.llm import user_layout_text

    try:
        found = layout_on_plan(result, inputs.offers, parse_layout(flags.layout), inputs.results)
    except ValueError as exc:
        abort(f"--layout: {exc}")
    return [user_layout_text(found, result.precision)] if found else []


def _checked_plan(flags: PlanFlags) -> tuple[Plan, list[str], list[str]]:
    """The Plan `flags` ask for, the problems met reading own results and the --layout
    comparison's words; exit 2 naming the flag, file or GPU the request is refused for."""
    from planner.llm.records import LLMMemoryError
    from planner.plan import make_plan
    from planner.request import RequestError

    try:
        _check_plan_flags(flags)
        inputs = _read_inputs(flags)
        _check_layout_flag(flags, inputs.workload)
        _check_batch_flag(flags, inputs.workload)
        request = _request(flags, inputs)
        with working(f"planning {request.workload.name}: every offer at every GPU count"):
            result = make_plan(request, inputs.offers, inputs.results)
        if result.workload.is_llm:  # the LLM words are imported for LLM plans only
            from planner.render.llm import with_llm_details

            result = with_llm_details(result)
    except RequestError as exc:
        fix = (
            f": raise {REQUEST_FLAGS.get(exc.raise_field, exc.raise_field)} or ask for fewer"
            if exc.raise_field
            else ""
        )
        abort(f"{REQUEST_FLAGS.get(exc.field, exc.field)}: {exc.message}{fix}")
    except LLMMemoryError as exc:
        from planner.render.llm import no_fit_text

        abort(no_fit_text(exc))
    except ValueError as exc:  # a bad choice, config, snapshot or GPU name says what it is
        abort(str(exc))
    if flags.precision == "fp8" and result.rows.empty:
        abort(_no_fp8_rows(flags.fp8_recipe))
    return result, inputs.problems, _layout_lines(result, flags, inputs)


def _no_fp8_rows(recipe: str) -> str:
    """Why an fp8 plan has no row: the recipe asked for runs on none of the GPUs offered
    (mxfp8 before Blackwell), else none has fp8 tensor cores."""
    from planner.llm.fp8_recipes import AUTO, NEEDS_BLACKWELL, runnable_recipes

    hopper = runnable_recipes("Hopper")
    if recipe != AUTO and recipe not in hopper:
        return (
            f"--fp8-recipe {recipe}: none of the GPUs offered can run it ({NEEDS_BLACKWELL}); "
            f"use {', '.join(hopper)}, or choose a Blackwell GPU with --gpu"
        )
    return NO_FP8_GPU


def _check_batch_flag(flags: PlanFlags, workload: Workload) -> None:
    """ValueError when --global-batch-tokens holds less than one of the LLM's sequences (it
    would be rounded up to one without a word)."""
    seq, batch = workload.seq_len, flags.global_batch_tokens
    if workload.is_llm and seq and batch is not None and batch < seq:
        raise ValueError(
            f"--global-batch-tokens {batch:,.0f}: less than one sequence of {seq:,} tokens "
            f"(--seq-len); give at least {seq:,}"
        )


def _check_layout_flag(flags: PlanFlags, workload: Workload) -> None:
    """ValueError when --layout is unreadable or given for a workload that is not an LLM."""
    if flags.layout is None:
        return
    from planner.llm.user_layout import parse_layout

    if not workload.is_llm:
        raise ValueError(f"--layout: {workload.name} is not an LLM workload; leave --layout out")
    try:
        parse_layout(flags.layout)
    except ValueError as exc:
        raise ValueError(f"--layout: {exc}") from None


def _check_plan_flags(flags: PlanFlags) -> None:
    """ValueError at the first option out of its choices or range, naming the option."""
    from edge.choices import check_choices
    from planner.llm.fp8_recipes import AUTO, checked_recipe
    from planner.render.plan_tables import VIEWS
    from planner.request import PRECISIONS
    from pricing.catalog import PRICING_KINDS

    check_format(flags.fmt)
    check_choices([flags.view], VIEWS, "view")
    check_choices([flags.precision], PRECISIONS, "precision")
    checked_recipe(flags.fp8_recipe)
    if flags.fp8_recipe != AUTO and flags.precision != "fp8":
        raise ValueError(
            f"--fp8-recipe {flags.fp8_recipe} applies to fp8 training (how its GEMMs scale "
            f"their operands); this plan is at {flags.precision}: add --precision fp8 or drop "
            "--fp8-recipe"
        )
    check_choices([flags.pricing_kind], list(PRICING_KINDS), "pricing")
    if flags.top is not None and flags.top < 1:
        raise ValueError(f"--top {flags.top}: it must be >= 1")
    check_flags(
        {
            "--checkpoint-minutes": flags.checkpoint_minutes,
            "--restart-minutes": flags.restart_minutes,
            "--global-batch-tokens": flags.global_batch_tokens,
            "--seq-len": flags.seq_len,
            "--n-layer": flags.n_layer,
            "--d-model": flags.d_model,
            "--ffn": flags.ffn,
            "--heads": flags.heads,
            "--kv-heads": flags.kv_heads,
            "--vocab": flags.vocab,
        }
    )


def _read_inputs(flags: PlanFlags) -> PlanInputs:
    """The workload, offers, rates, on-prem configs and results `flags` name, each checked
    (ValueError naming what is refused)."""
    from edge.choices import check_choices
    from planner.choose.constraints import parse_rates
    from planner.settings import LLMSettings
    from planner.throughput import own_and_published_results
    from planner.throughput.bundled import load_offers
    from pricing.catalog import unique_values

    llm = LLMSettings(
        recompute=flags.recompute,
        global_batch_tokens=flags.global_batch_tokens,
        framework=flags.framework or DEFAULT_FRAMEWORK,
        framework_stated=bool(flags.framework),
        eager=flags.eager,
        fp8_recipe=flags.fp8_recipe,
        moe_overlap=flags.moe_overlap,
        dp_overlap=flags.dp_overlap,
        tp_overlap=flags.tp_overlap,
        fp32_reduce=flags.fp32_reduce,
        attention=flags.attention,
    )
    workload = _workload(flags)
    offers = load_offers()
    providers = unique_values(offers, "provider")
    check_choices(flags.provider or [], providers, "provider")
    check_choices(flags.region or [], unique_values(offers, "region"), "region")
    try:
        rates = parse_rates(flags.interruption_rate or [], providers)
    except ValueError as exc:
        raise ValueError(f"--interruption-rate {exc}") from None
    onprem = _onprem_configs(flags.onprem or [])
    folders = flags.results if flags.results is not None else [str(default_results_dir())]
    table, problems = own_and_published_results(folders)
    return PlanInputs(workload, llm, offers, rates, onprem, table, problems)


def _onprem_configs(paths: list[str]) -> list[LoadedConfig]:
    """The --onprem configs, loaded (the on-prem model and pydantic load only when given)."""
    if not paths:
        return []
    from planner.io.examples import input_path
    from planner.onprem.tco import load_onprem_config

    return [load_onprem_config(input_path(path)) for path in paths]


def _workload(flags: PlanFlags) -> Workload:
    """The catalog's workload, reshaped where --seq-len or a shape flag (--n-layer,
    --d-model, --ffn, --heads, --kv-heads, --vocab, --mlp, --embeddings) is given: the
    shape given is the model."""
    from planner.workloads.catalog import ShapeSizeError, get_workload, reshape_llm
    from planner.workloads.llm_presets import embeddings_kind_tied, mlp_kind_gated

    chosen = get_workload(flags.workload)
    gated = _kind("--mlp", flags.mlp, mlp_kind_gated)
    tied = _kind("--embeddings", flags.embeddings, embeddings_kind_tied)
    shape = (flags.n_layer, flags.d_model, flags.ffn, flags.heads, flags.kv_heads, flags.vocab)
    kinds = (gated, tied)
    if flags.seq_len is not None or any(value is not None for value in (*shape, *kinds)):
        try:
            chosen = reshape_llm(chosen, flags.seq_len, *shape, *kinds)
        except ShapeSizeError as exc:
            raise ValueError(
                f"{exc}: name the size the shape has (llm-{exc.size}-...) or give the rest "
                "of the shape (--ffn, --heads, --kv-heads, --vocab, --mlp, --embeddings)"
            ) from None
    return chosen


def _kind(flag: str, word: str | None, named: Callable[[str], bool]) -> bool | None:
    """--mlp or --embeddings as `named` reads it (None when not given; ValueError naming
    the flag and the valid words)."""
    if word is None:
        return None
    try:
        return named(word)
    except ValueError as exc:
        raise ValueError(f"{flag}: {exc}") from None


def _request(flags: PlanFlags, inputs: PlanInputs) -> PlanRequest:
    """The one PlanRequest for the engine (RequestError naming the field it refuses)."""
    from planner.request import PlanRequest

    return PlanRequest(
        workload=inputs.workload,
        precision=flags.precision,
        pricing=flags.pricing_kind,
        providers=tuple(flags.provider or ()),
        regions=tuple(flags.region or ()),
        gpus=tuple(flags.gpu or ()),
        deadline_hours=flags.deadline_hours,
        budget_usd=flags.budget_usd,
        max_gpus=flags.max_gpus,
        gpu_count=flags.gpus,
        onprem=tuple(c.config for c in inputs.onprem),
        onprem_sources=tuple(c.path for c in inputs.onprem),
        seed=flags.seed,
        draws=flags.draws,
        interruption_rates=tuple(inputs.rates.items()),
        checkpoint_hours=flags.checkpoint_minutes / 60,
        restart_hours=flags.restart_minutes / 60,
        llm=inputs.llm,
        tiers=tuple(flags.tier or ()),
        include_retired=flags.include_retired,
        reserved_discount=flags.reserved_discount,
        overheads=_overheads(flags),
    )


def _overheads(flags: PlanFlags) -> JobOverheads:
    """The job-overhead overrides, each refused with its flag when negative."""
    from planner.settings import JobOverheads

    for flag, value in (
        ("--startup-minutes", flags.startup_minutes),
        ("--staging-gbps", flags.staging_gbps),
        ("--checkpoint-every-hours", flags.checkpoint_every_hours),
    ):
        if value is not None and not value >= 0:
            raise ValueError(f"{flag} {value:g}: it must be >= 0")
    return JobOverheads(flags.startup_minutes, flags.staging_gbps, flags.checkpoint_every_hours)


def _show_plan(
    result: Plan, problems: list[str], flags: PlanFlags, layout_lines: list[str] | None = None
) -> None:
    """The view asked for: a table on stdout with notes on stderr (planner.render), or
    JSON/CSV on stdout with every note and problem as one warning line on stderr."""
    if flags.fmt != "table":
        from planner.render.notes import notes_text

        warn_lines([*notes_text(result.notes), *problems])
        for line in layout_lines or []:  # the layout's timing, in full (estimate-llm's
            note(line)  # layout columns give it as a row)
        emit(_view_frame(result, flags.view, flags.top), flags.fmt)
        return
    from planner.render.plan_tables import print_plan

    print_plan(
        result,
        flags.view,
        flags.top,
        wide=flags.wide,
        explain=flags.explain,
        problems=problems,
        explanations=_explanations(result) if flags.explain else (),  # shown with --explain
    )
    for line in layout_lines or []:
        typer.echo(f"\n{line[0].upper()}{line[1:]}")


def _view_frame(result: Plan, view: str, top: int | None) -> pd.DataFrame:
    """The rows of `view` as --format json|csv writes them, codes worded."""
    from planner.render.plan_words import worded_picks, worded_status
    from planner.render.rows import worded_rows

    if view == "rows":
        return worded_rows(result.rows if top is None else result.rows.head(top))
    if view == "picks":
        return worded_picks(result)
    if view == "frontier":
        return worded_rows(result.frontier)
    if view == "options":
        return result.options
    return worded_status(result)  # constraints


def _explanations(result: Plan) -> list[str]:
    """Words for the picks' time split and for shown rows whose throughput a limit caps."""
    from planner.render.explain import explain_limit, explain_step, explain_time
    from planner.render.plan_tables import PICK_LABELS

    unit = result.workload.throughput_unit
    lines = []
    for row in result.picks.to_dict(orient="records") if len(result.picks) else []:
        name = PICK_LABELS.get(str(row["pick"]), str(row["pick"]))
        what = f"{row['provider']} {row['instance_type']} x{row['instances']:g}"
        lines.append(f"{name} ({what}): {explain_time(row)}")
        limit = explain_limit(row, unit)
        if limit:
            lines.append(f"  {limit}")
        step = explain_step(row)
        if step:
            lines.append(f"  {step}")
    bound = result.rows.loc[result.rows["limit_code"] == "cpu-bound"]
    for row in bound.head(CPU_BOUND_SHOWN).to_dict(orient="records"):
        lines.append(f"rank {row['rank']} {row['instance_type']}: {explain_limit(row, unit)}")
    if len(bound) > CPU_BOUND_SHOWN:
        more = len(bound) - CPU_BOUND_SHOWN
        lines.append(f"... and {more} more CPU-bound rows (limit_code in --format csv)")
    return lines
