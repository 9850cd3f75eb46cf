"""Compose options, throughput, spot, Monte Carlo and the frontier into a Plan.

`make_plan` adds no algorithm of its own: options come from planner.choose.options,
throughput from planner.throughput (planner.llm.throughput for LLMs, with its memory check),
spot time from planner.costs.spot, P10/P50/P90 from planner.costs.montecarlo, the frontier,
counts and picks from planner.choose.pareto.

Plan rows (a DataFrame; PLAN_COLUMNS), one per offer (and on-prem config) at the count
chosen for it. Plan.frontier and Plan.picks have the same columns and may hold options at
other counts (chosen_count False, rank 0); Plan.options has every option evaluated.

  rank                        1 = best: feasible first, then cost, then hours (0 off rows)
  option_id, kind             the option's id in Plan.options; "cloud" | "on-prem"
  provider, region, instance_type, gpu_name
  gpu_count, instances, total_gpus   GPUs per instance, instances, their product
  throughput, throughput_low, throughput_high, throughput_unit   median and 10-90% band
  throughput_source           measured | published | scaled | estimated
  throughput_detail           which figure, law or regression, and its error ("" on LLM
                              rows: planner.render.llm words their LLM_DETAIL_COLUMNS)
  compute_hours               hours at the median throughput, no interruptions
  hours_to_train              compute_hours, on spot the expected wall time (Daly 2006)
  hours_p10, hours_p50, hours_p90, cost_p10_usd, cost_p50_usd, cost_p90_usd, quantile_method
  cost_usd                    hours_to_train x option_usd_per_hour
  usd_per_hour                one instance's price per hour at `pricing` (on-prem: amortized
                              USD per GPU-hour x gpu_count)
  option_usd_per_hour, usd_per_gpu_hour   the whole option's, and per GPU
  pricing, price_date, price_source   price_source: the catalog's source; on-prem, the
                              config's file or label ("" when none)
  price_basis, onprem_config, utilization, amortized_usd_per_gpu_hour   what an on-prem
                              price is worded from (planner.codes.PriceBasis; NaN on cloud)
  price_date_basis            "exact", or "not-before" when price_date is a lower bound
  interruptions_per_hour, interruption_rate_source, spot_overhead_factor   spot rows
  mfu, memory_per_gpu_gb, sharding, recompute                                LLM rows
  step_s, *_share, usable_gb, mfu_anchor, mfu_source, mfu_*   LLM rows (planner.llm.throughput
                              LLM_DETAIL_COLUMNS: step seconds, shares, the MFU's source code)
  feasible, misses            meets the deadline and budget; which it misses (a tuple of
                              planner.codes.Miss, deadline first; () when none)
  on_pareto                   on the time/cost frontier of all options (every count)
  pick                        the picks this row is (comma-separated), "" if none
  chosen_count                True: the count chosen for its offer (every row); False: a
                              frontier or pick option at another count

CPU baseline (planner.cpu_baseline, image and BERT workloads): every CPU-only instance
priced (pricing.cpu_offers) is an option of gpu_name "CPU", gpu_count 0, timed by
planner.throughput.cpu and costed like the rest; it is no offer's chosen count, so the rows
show it only as a pick or on the frontier, and Plan.options has every one (vcpus,
baseline_detail: what its throughput rests on; "" on GPU options).

Central figures (hours_to_train, cost_usd) decide counts, frontier, feasibility and picks;
the P10/P90 columns show how sure they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from planner.asked_options import asked_options
from planner.choose.asked import (
    NoReservedPriceError,
    nothing_left_note,
    stale_price_notes,
    unpriced_notes,
)
from planner.choose.pareto import PICK_COLUMNS, STATUS_COLUMNS
from planner.choose.ranking import (
    constraint_table,
    pick_table,
    shown_options,
    unmet_notes,
)
from planner.costs.bands import with_bands
from planner.costs.hours import with_hours_and_cost
from planner.costs.work import with_limits_and_work
from planner.cpu_baseline import with_cpu_baseline
from planner.llm.records import LLM_DETAIL_COLUMNS
from planner.notes import Note
from planner.request import PlanRequest
from planner.throughput.for_plan import with_throughput, with_throughput_detail
from planner.throughput.own_results import own_result_notes, with_cpu_runs_used
from planner.workloads.catalog import Workload

__all__ = ["NoReservedPriceError", "Plan", "make_plan"]

# What an on-prem price_source is worded from (planner.choose.options; planner.render.rows words
# it, and leaves these out of what the CLI writes).
PRICE_FIGURE_COLUMNS: tuple[str, ...] = (
    "price_basis", "onprem_config", "utilization", "amortized_usd_per_gpu_hour",
)  # fmt: skip
PLAN_COLUMNS: tuple[str, ...] = (
    "rank", "option_id", "kind", "provider", "region", "instance_type", "gpu_name",
    "gpu_count", "instances", "total_gpus",
    "throughput", "throughput_low", "throughput_high", "throughput_unit", "throughput_source",
    "throughput_detail", "compute_hours", "hours_to_train", "hours_p10", "hours_p50",
    "hours_p90", "cost_usd", "cost_p10_usd", "cost_p50_usd", "cost_p90_usd",
    "quantile_method", "usd_per_hour", "option_usd_per_hour", "usd_per_gpu_hour", "pricing",
    "price_date", "price_date_basis", "price_source", *PRICE_FIGURE_COLUMNS,
    "interruptions_per_hour", "interruption_rate_source",
    "spot_overhead_factor", "setup_hours", "staging_hours", "checkpoint_write_hours",
    "checkpoint_interval_hours", "checkpoint_stall_s", "checkpoint_gb",
    "billed_hours", "billing_basis", "samples_to_train", "per_gpu_batch", "global_batch",
    "batch_limit", "batch_rate", "comm_s", "comm_total_s", "limit_code", "gpu_throughput",
    "loader_ceiling", "vcpus",
    "mfu", "memory_per_gpu_gb", "sharding", "recompute", *LLM_DETAIL_COLUMNS,
    "feasible", "misses", "on_pareto", "pick", "chosen_count",
)  # fmt: skip
# Every option evaluated (Plan.options), for charts of the whole trade-off.
OPTION_SUMMARY_COLUMNS: tuple[str, ...] = (
    "option_id", "kind", "offer_key", "provider", "region", "instance_type", "gpu_name",
    "gpu_count", "instances", "total_gpus", "throughput", "throughput_low", "throughput_high",
    "throughput_source", "hours_to_train", "cost_usd", "option_usd_per_hour", "feasible",
    "on_pareto", "chosen_count", "compute_hours", "setup_hours", "staging_hours",
    "billed_hours", "per_gpu_batch", "limit_code", "vcpus", "baseline_detail",
)  # fmt: skip


@dataclass(frozen=True)
class Plan:
    """A plan: rows, the picks and frontier among them, and what they rest on.

    rows: PLAN_COLUMNS, one per offer at its chosen count. picks: pick and its figures
    (planner.choose.pareto.PICK_COLUMNS but position), then the pick's PLAN_COLUMNS (it may be
    another count of an offer). frontier: the Pareto options
    of every count, fastest first, in PLAN_COLUMNS. options: every
    option evaluated (OPTION_SUMMARY_COLUMNS). constraint_status: planner.choose.pareto
    STATUS_COLUMNS. notes: structured notes (planner.notes). The CLI and the app word all
    of it (planner.render.notes, planner.render.plan_words).
    """

    request: PlanRequest
    rows: pd.DataFrame
    notes: tuple[Note, ...] = field(default_factory=tuple)
    picks: pd.DataFrame = field(default_factory=pd.DataFrame)
    frontier: pd.DataFrame = field(default_factory=pd.DataFrame)
    options: pd.DataFrame = field(default_factory=pd.DataFrame)
    constraint_status: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def workload(self) -> Workload:
        """The workload planned."""
        return self.request.workload

    @property
    def precision(self) -> str:
        """The precision planned at."""
        return self.request.precision

    @property
    def pricing(self) -> str:
        """The pricing kind planned at."""
        return self.request.pricing

    @property
    def constraints(self) -> PlanRequest:
        """The request (its deadline_hours, budget_usd, max_gpus, filters, ...)."""
        return self.request

    def notes_of(self, *codes: str) -> list[Note]:
        """The notes with one of these codes, in order."""
        return [n for n in self.notes if n.code in codes]

    def records(self) -> list[dict[str, object]]:
        """Rows as a list of plain dicts (JSON-ready: NaN becomes None)."""
        frame = self.rows.astype(object).where(self.rows.notna(), None)
        return frame.to_dict(orient="records")

    def pick(self, name: str) -> pd.Series | None:
        """The row of a named pick (PICKS), or None when nothing qualified."""
        found = self.picks.loc[self.picks["pick"] == name] if len(self.picks) else self.picks
        return None if found.empty else found.iloc[0]


def make_plan(
    request: PlanRequest,
    offers: pd.DataFrame,
    results: pd.DataFrame,
    cpu_offers: pd.DataFrame | None = None,
) -> Plan:
    """Every option (offer x instances, on-prem config x GPUs) timed and priced for a request.

    `request` says what is asked (planner.request.PlanRequest, validated where built);
    `offers` (pricing.catalog.load_offers) and `results` (planner.throughput
    .own_and_published_results) are the data it is asked of; `cpu_offers`
    (pricing.cpu_offers, the bundled CPU catalog by default) the CPU baseline's. Raises
    planner.llm.records.LLMMemoryError when an LLM fits on no option. See the module
    docstring for the rows; Plan.notes holds structured notes (planner.notes) for the CLI and
    app to word. Each step is a function of its own module, named for what it adds.
    """
    own = own_result_notes(results, request.workload, request.precision)
    chosen, opts, notes = asked_options(request, offers)
    details = None
    if not opts.empty:
        if request.workload.is_llm:  # the LLM model is imported for LLM plans only
            from planner.llm.for_plan import with_llm_throughput

            opts, throughput_notes, _ = with_llm_throughput(opts, request, results)
        else:
            opts, throughput_notes, details = with_throughput(opts, request, results)
        notes += throughput_notes
    if opts.empty:
        nothing = nothing_left_note(request, offers, len(chosen))
        return _empty_plan(request, [*notes, nothing, *own], chosen)
    opts = with_limits_and_work(opts, request.workload, results)
    opts = with_hours_and_cost(opts, request)
    opts, picked, baseline_notes = with_cpu_baseline(opts, request, results, cpu_offers)
    notes += baseline_notes
    own = with_cpu_runs_used(own, baseline_notes)
    shown, simulate = shown_options(opts, request.sample_limit)
    shown = with_throughput_detail(with_bands(shown, request, simulate), details)
    shown = shown.assign(
        throughput_unit=request.workload.throughput_unit,
        usd_per_gpu_hour=shown["option_usd_per_hour"] / shown["total_gpus"],
    )
    # LLM_DETAIL_COLUMNS are NaN on a plan that is not an LLM's: added here, not carried.
    shown = shown.reset_index(drop=True).reindex(columns=list(PLAN_COLUMNS))
    status = constraint_table(opts, request)
    notes += unmet_notes(status) + stale_price_notes(chosen, request.today)
    notes += unpriced_notes(request, offers)
    frontier = shown.loc[shown["on_pareto"]].sort_values(["hours_to_train", "cost_usd"])
    return Plan(
        request,
        shown.loc[shown["chosen_count"]].reset_index(drop=True),
        tuple(notes + own),
        pick_table(picked, opts, shown),
        frontier.reset_index(drop=True),
        _option_summary(opts),
        status,
    )


def _option_summary(opts: pd.DataFrame) -> pd.DataFrame:
    """Every option in OPTION_SUMMARY_COLUMNS (baseline_detail "" where there is no CPU
    baseline row)."""
    if "baseline_detail" not in opts.columns:
        opts = opts.assign(baseline_detail="")
    return opts.loc[:, list(OPTION_SUMMARY_COLUMNS)]


def _empty_plan(request: PlanRequest, notes: list[Note], offers: pd.DataFrame) -> Plan:
    """A plan with no option left; its notes (a no_options one among them) say why."""
    empty = pd.DataFrame({c: pd.Series(dtype=object) for c in PLAN_COLUMNS})
    return Plan(
        request,
        empty,
        tuple([*notes, *stale_price_notes(offers, request.today)]),
        pd.DataFrame(
            columns=[
                *(c for c in PICK_COLUMNS if c != "position"),
                *(c for c in PLAN_COLUMNS if c != "pick"),
            ]
        ),
        empty.copy(),
        pd.DataFrame({c: pd.Series(dtype=object) for c in OPTION_SUMMARY_COLUMNS}),
        pd.DataFrame(columns=list(STATUS_COLUMNS)),
    )
