"""The Plan page: a training job, its deadline, budget and where it may run -> the named
picks, the time-vs-cost chart with the frontier and P10-P90 whiskers, the ranked options.

Every figure comes from planner.plan.make_plan (through planner.ui.data.plan, cached); this
module asks for the inputs, checks them and lays the page out; planner.ui.plan_view formats
the plan, draws the chart and builds the downloads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd
import streamlit as st

from edge.format import duration, money
from planner.choose.constraints import DEFAULT_MAX_GPUS
from planner.choose.pareto import PICKS
from planner.costs.spot import default_rate
from planner.llm.presets import LLM_PRESETS
from planner.llm.throughput import LLMMemoryError
from planner.onprem.tco import LoadedConfig, OnPremConfigError
from planner.plan import Plan
from planner.render.llm import no_fit_text
from planner.render.notes import APP_CONTROLS, OWN_CODES, notes_text
from planner.render.plan_words import assumption_lines, pick_reason, worded_status
from planner.render.rows import worded_rows
from planner.request import PlanRequest, RequestError
from planner.ui import data
from planner.ui.compare import compare_section
from planner.ui.export import download_csv, download_report
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
    ranked_table,
    sentence,
    throughput_text,
    warning_lines,
)
from planner.ui.state import PageState, remembered_inputs
from planner.ui.tables import show_table
from planner.ui.text import md_text
from planner.workloads.catalog import (
    LLM_DEFAULT_SEQ_LEN,
    LLM_MODES,
    WORKLOADS,
    Workload,
    llm_workload,
)
from pricing.catalog import PRICING_KINDS, unique_values
from pricing.reserved import RESERVED_KINDS
from pricing.tiers import DEFAULT_TIERS, TIERS

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
# The sidebar input behind each PlanRequest field, and how to fix a bad value.
INPUT_LABELS = {
    "deadline_hours": "Deadline (hours)",
    "budget_usd": "Budget (USD)",
    "max_gpus": "Max GPUs per option",
    "gpu_count": "Exact GPU count",
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


@dataclass(frozen=True)
class PlanInputs:
    """What the sidebar asks for (None: not set)."""

    job: str
    workload_name: str | None
    params_b: float | None
    tokens_b: float | None
    precision: str
    deadline_hours: float | None
    budget_usd: float | None
    max_gpus: int
    providers: list[str]
    regions: list[str]
    gpus: list[str]
    gpu_count: int | None
    pricing: str
    onprem: bool
    onprem_source: str
    rates: dict[str, float] = field(default_factory=dict)
    tiers: list[str] = field(default_factory=lambda: list(DEFAULT_TIERS))
    include_retired: bool = False
    reserved_discount: float | None = None
    llm_mode: str = "pretrain"
    seq_len: int = LLM_DEFAULT_SEQ_LEN


# ---------------------------------------------------------------- inputs


def _inputs(ps: PageState, offers: pd.DataFrame) -> PlanInputs:
    workload_name = params_b = tokens_b = None
    llm_mode, seq_len = "pretrain", LLM_DEFAULT_SEQ_LEN
    with st.sidebar:
        st.header("Job")
        job = ps.radio(
            "Workload",
            list(JOBS),
            name="job",
            default="catalog",
            format_func=JOBS.get,
            horizontal=True,
        )
        if job == "catalog":
            workload_name = ps.selectbox(
                "Training run",
                list(WORKLOADS),
                name="workload",
                default=DEFAULT_WORKLOAD,
                help="What one training run is: samples (or tokens) and FLOPs per sample "
                "(`gpuplan workloads`).",
            )
        else:
            params_b = ps.number_input(
                "Parameters (billions)",
                name="params_b",
                default=7.0,
                min_value=0.0,
                step=1.0,
                format="%g",
                help="Decoder LLM size. Within 1% of a preset it takes that model's published "
                f"shape: {PRESET_SIZES}; else GPT-3's aspect ratio "
                "(planner.workloads.catalog.llm_shape).",
            )
            llm_mode = ps.radio(
                "Training",
                list(LLM_MODES),
                name="llm_mode",
                default="pretrain",
                format_func=LLM_MODE_WORDS.get,
                horizontal=True,
                help="Full fine-tuning costs what pre-training does per token; LoRA trains "
                "adapters on frozen weights, ~4N instead of 6N FLOPs per token (Hu et al. "
                "2021); QLoRA keeps those weights in 4 bits (Dettmers et al. 2023).",
            )
            seq_len = int(
                ps.number_input(
                    "Sequence length (tokens)",
                    name="seq_len",
                    default=LLM_DEFAULT_SEQ_LEN,
                    min_value=1,
                    step=1024,
                    help="Tokens per sequence: sets activation memory and attention FLOPs.",
                )
            )
            tokens_b = ps.number_input(
                "Training tokens (billions)",
                name="tokens_b",
                default=140.0,
                min_value=0.0,
                step=10.0,
                format="%g",
                help="Tokens to train on; ~20 per parameter is compute-optimal "
                "(Hoffmann et al. 2022).",
            )
        precision = ps.radio(
            "Precision",
            PRECISIONS + (["fp8"] if job == "llm" else []),
            name="precision",
            default="fp16",
            horizontal=True,
            help="fp16 is mixed precision (AMP), as published; fp8 (LLMs) only on GPUs with fp8 "
            "tensor cores (Hopper, Ada, Blackwell).",
        )
        st.header("Deadline and budget")
        deadline = ps.number_input(
            "Deadline (hours)",
            name="deadline_hours",
            default=None,
            min_value=0.0,
            step=1.0,
            format="%g",
            placeholder="none",
            help="Wall-clock hours the run must finish in. Empty: no deadline.",
        )
        budget = ps.number_input(
            "Budget (USD)",
            name="budget_usd",
            default=None,
            min_value=0.0,
            step=100.0,
            format="%g",
            placeholder="none",
            help="Most the run may cost. Empty: no budget.",
        )
        max_gpus = ps.number_input(
            "Max GPUs per option",
            name="max_gpus",
            default=DEFAULT_MAX_GPUS,
            min_value=1,
            max_value=MAX_GPUS_LIMIT,
            step=1,
            help="Each offer is weighed at 1, 2, 4, ... instances up to this many GPUs.",
        )
        gpu_count = ps.number_input(
            "Exact GPU count",
            name="gpu_count",
            default=None,
            min_value=1,
            max_value=MAX_GPUS_LIMIT,
            step=1,
            placeholder="any",
            help="Only options with exactly this many GPUs in all (e.g. 8 for one 8-GPU "
            "server). Empty: every count up to the most GPUs per option.",
        )
        st.header("Where")
        tiers = ps.multiselect(
            "Provider tiers",
            list(TIERS),
            name="tiers",
            default=list(DEFAULT_TIERS),
            help="Marketplace = single hosts listed by third parties (Vast.ai): most companies "
            "cannot buy them under a contract, so they are left out unless picked here.",
        )
        everyone = unique_values(offers, "provider")
        providers = ps.multiselect(
            "Providers",
            everyone,
            name="providers",
            default=unique_values(offers.loc[offers["tier"].isin(tiers)], "provider"),
            depends_on=tuple(tiers),
        )
        include_retired = ps.toggle(
            "Include retired sizes",
            name="retired",
            default=False,
            help="Sizes the provider no longer sells (pricing/retired.py), such as Azure's "
            "K80 Promo sizes.",
        )
        regions = ps.multiselect(
            "Regions (none = all)",
            unique_values(offers.loc[offers["provider"].isin(providers)], "region"),
            name="regions",
            default=[],
        )
        gpus = ps.multiselect(
            "GPUs (none = all)",
            unique_values(offers.loc[offers["provider"].isin(providers)], "gpu_name"),
            name="gpus",
            default=[],
            help="Plan only on these GPU models.",
        )
        pricing = ps.radio(
            "Pricing",
            list(PRICING_KINDS),
            name="pricing",
            default="on-demand",
            help="Spot hours include the expected time lost to interruptions; reserved "
            "prices come from refreshed catalogs (`gpuplan pricing refresh`).",
        )
        rates = _rate_inputs(ps, providers) if pricing == "spot" else {}
        discount = None
        if pricing in RESERVED_KINDS:
            percent = ps.number_input(
                "Reserved discount (% off on-demand)",
                name="reserved_discount",
                default=None,
                min_value=1.0,
                max_value=99.0,
                step=5.0,
                format="%g",
                placeholder="none: listed reserved prices only",
                help="Where no reserved price is listed, assume on-demand less this "
                "(your negotiated discount); every row it touches says so.",
            )
            discount = None if percent is None else float(percent) / 100
        st.header("Own servers")
        onprem = ps.toggle(
            "Compare with on-prem",
            name="onprem",
            default=False,
            help="Add an on-prem cluster as options, priced at its amortized cost per "
            "GPU-hour (planner.onprem.tco).",
        )
        source = "example"
        if onprem:
            source = ps.radio(
                "On-prem configuration",
                list(ONPREM_SOURCES),
                name="onprem_config",
                default="example",
                format_func=ONPREM_SOURCES.get,
                help="A link carries this choice, not the Cloud vs on-prem page's inputs: "
                "opened elsewhere it falls back to the example.",
            )
    return PlanInputs(
        job=job,
        workload_name=workload_name,
        params_b=params_b,
        tokens_b=tokens_b,
        precision=precision,
        deadline_hours=deadline,
        budget_usd=budget,
        max_gpus=int(max_gpus),
        providers=providers,
        regions=regions,
        gpus=gpus,
        gpu_count=None if gpu_count is None else int(gpu_count),
        pricing=pricing,
        onprem=onprem,
        onprem_source=source,
        rates=rates,
        tiers=tiers,
        include_retired=include_retired,
        reserved_discount=discount,
        llm_mode=llm_mode,
        seq_len=seq_len,
    )


def _rate_inputs(ps: PageState, providers: Sequence[str]) -> dict[str, float]:
    rates = {}
    with st.expander("Spot interruption rates"):
        st.caption("Interruptions per instance-hour. Empty: the documented default.")
        for provider in providers:
            known = default_rate(provider)
            rate = ps.number_input(
                md_text(provider),
                name=f"rate_{provider}",
                default=None,
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


# ---------------------------------------------------------------- checks


def _workload(inputs: PlanInputs) -> Workload | None:
    """The catalog workload or the described LLM; None after an inline error."""
    if inputs.job == "catalog":
        return WORKLOADS[str(inputs.workload_name)]
    params = float(inputs.params_b or 0.0)
    tokens = float(inputs.tokens_b or 0.0)
    try:
        return llm_workload(
            params * 1e9, tokens * 1e9, seq_len=inputs.seq_len, mode=inputs.llm_mode
        )
    except ValueError as exc:
        st.error(
            f"**Parameters (billions)** {params:g} and **Training tokens (billions)** "
            f"{tokens:g}: {md_text(exc)}. Enter both above 0.",
            icon=":material/error:",
        )
        return None


def _request(
    inputs: PlanInputs, workload: Workload, onprem: Sequence[LoadedConfig]
) -> PlanRequest | None:
    """The plan request of the inputs; None after an inline error naming the input."""
    try:
        return PlanRequest(
            workload=workload,
            precision=inputs.precision,
            pricing=inputs.pricing,
            providers=tuple(inputs.providers),
            regions=tuple(inputs.regions),
            gpus=tuple(inputs.gpus),
            gpu_count=inputs.gpu_count,
            deadline_hours=inputs.deadline_hours,
            budget_usd=inputs.budget_usd,
            max_gpus=inputs.max_gpus,
            onprem=tuple(c.config for c in onprem),
            onprem_sources=tuple(c.path for c in onprem),
            interruption_rates=tuple(sorted(inputs.rates.items())),
            tiers=tuple(inputs.tiers),
            include_retired=inputs.include_retired,
            reserved_discount=inputs.reserved_discount,
        )
    except RequestError as exc:
        label = INPUT_LABELS.get(exc.field, exc.field)
        fix = INPUT_FIXES.get(exc.field, "Change it")
        st.error(f"**{label}**: {md_text(exc.message)}. {fix}.", icon=":material/error:")
        return None


def _onprem(inputs: PlanInputs) -> list[LoadedConfig] | None:
    """The on-prem configuration asked for ([] when off); None after an inline error."""
    if not inputs.onprem:
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


def _status(plan: Plan) -> None:
    for row in worded_status(plan).itertuples():
        if row.unmet:
            continue  # said in the warning above the picks
        word = "binds" if row.binds else "does not bind"
        name = CONSTRAINT_NAMES.get(str(row.constraint), str(row.constraint))
        st.caption(f":material/tune: **{name} {word}**: {md_text(sentence(str(row.note)))}")


def _notes(plan: Plan, problems: Sequence[str]) -> None:
    with st.expander("Own results: used and skipped"):
        own = notes_text(plan.notes_of(*OWN_CODES), APP_CONTROLS)
        lines = own or ["no own results: add them on the Benchmarks page"]
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
    offers = data.offers()
    inputs = _inputs(ps, offers)
    ps.sync()
    manifest = data.manifest()
    st.caption(md_text(price_dates(manifest, inputs.providers)))
    if not inputs.providers:
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
    try:
        plan = data.plan(directory, request)
    except LLMMemoryError as exc:
        st.error(md_text(sentence(no_fit_text(exc, APP_CONTROLS))), icon=":material/error:")
        return
    except ValueError as exc:
        st.error(md_text(sentence(str(exc))), icon=":material/error:")
        return
    _, problems = data.results(directory)
    st.markdown(
        f"**{md_text(workload.description)}**: "
        + md_text(
            f"{workload.samples:,.0f} {workload.sample_unit}"
            + "".join(f"; on-prem {c.config.name} from {c.path}" for c in onprem)
            + "."
        )
    )
    if plan.rows.empty:
        st.warning(
            "No option to plan with these inputs: "
            + "; ".join(md_text(line, WARNING_CHARS) for line in warning_lines(plan)),
            icon=":material/warning:",
        )
        _notes(plan, problems)
        ps.share_box()
        return
    for line in notes_text(plan.notes_of("deadline_unmet", "budget_unmet"), APP_CONTROLS):
        st.warning(md_text(sentence(line)), icon=":material/warning:")
    _picks(plan)
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
    show_table(ranked_table(plan), column_config(), key=f"{PAGE}.table")
    with st.container(horizontal=True):
        download_csv(
            worded_rows(plan.rows), f"plan-{workload.name}-{plan.pricing}.csv", key=f"{PAGE}.csv"
        )
        link = ps.link()  # read now: the report is built on click, outside the script run
        download_report(
            lambda: plan_report(plan, manifest, link),
            f"plan-{workload.name}-{plan.pricing}.html",
            key=f"{PAGE}.report",
        )
    compare_section(plan, PAGE)
    _notes(plan, problems)
    ps.share_box()
