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

Central figures (hours_to_train, cost_usd) decide counts, frontier, feasibility and picks;
the P10/P90 columns show how sure they are.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from planner.choose.options import (
    cloud_options,
    combine,
    drop_without,
    no_spec_row,
    onprem_options,
)
from planner.choose.pareto import (
    PICK_COLUMNS,
    PICKS,
    STATUS_COLUMNS,
    choose_counts,
    constraint_status,
    feasible_mask,
    pareto_mask,
    picks,
)
from planner.codes import Miss
from planner.costs.cost import cost_to_train, hours_to_train
from planner.costs.montecarlo import time_cost_quantiles
from planner.costs.overheads import (
    billed_hours,
    images_per_s_per_vcpu,
    job_overheads,
    loader_ceiling,
)
from planner.costs.spot import spot_for_offers
from planner.io.own_results import own_result_notes
from planner.io.sweep_results import apply_sweep_figures, sweep_figures
from planner.llm import throughput as llm_model
from planner.notes import Note
from planner.onprem.tco import OnPremConfig
from planner.request import PlanRequest
from planner.throughput import (
    model_key,
    throughput_for_options,
    throughput_inputs,
)
from planner.throughput.scaling import DATA_PARALLEL_MODELS
from planner.workloads.catalog import Workload
from pricing.catalog import STALE_AFTER_DAYS, filter_offers
from pricing.reserved import (
    RESERVED_KINDS,
    has_kind_price,
    no_reserved_message,
    with_reserved_discount,
)

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
    "billed_hours", "billing_basis", "samples_to_train", "per_gpu_batch", "global_batch",
    "limit_code", "gpu_throughput", "loader_ceiling", "vcpus",
    "mfu", "memory_per_gpu_gb", "sharding", "recompute", *llm_model.LLM_DETAIL_COLUMNS,
    "feasible", "misses", "on_pareto", "pick", "chosen_count",
)  # fmt: skip
# Every option evaluated (Plan.options), for charts of the whole trade-off.
OPTION_SUMMARY_COLUMNS: tuple[str, ...] = (
    "option_id", "kind", "offer_key", "provider", "region", "instance_type", "gpu_name",
    "gpu_count", "instances", "total_gpus", "throughput", "throughput_low", "throughput_high",
    "throughput_source", "hours_to_train", "cost_usd", "option_usd_per_hour", "feasible",
    "on_pareto", "chosen_count", "compute_hours", "setup_hours", "staging_hours",
    "billed_hours", "per_gpu_batch", "limit_code",
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


def make_plan(request: PlanRequest, offers: pd.DataFrame, results: pd.DataFrame) -> Plan:
    """Every option (offer x instances, on-prem config x GPUs) timed and priced for a request.

    `request` says what is asked (planner.request.PlanRequest, validated where built);
    `offers` (pricing.catalog.load_offers) and `results` (planner.throughput
    .own_and_published_results) are the data it is asked of. Raises
    planner.llm.throughput.LLMMemoryError when an LLM fits on no option. See the module
    docstring for the rows; Plan.notes holds structured notes (planner.notes) for the CLI and
    app to word.
    """
    workload, precision, pricing = request.workload, request.precision, request.pricing
    deadline_hours, budget_usd = request.deadline_hours, request.budget_usd
    max_gpus = request.gpu_count or request.max_gpus
    onprem, today = request.onprem, request.today
    checkpoint_hours, restart_hours = request.checkpoint_hours, request.restart_hours
    seed, draws, sample_limit = request.seed, request.draws, request.sample_limit
    own = own_result_notes(results, workload, precision)
    settings = request.llm
    chosen = filter_offers(
        offers,
        list(request.providers),
        list(request.regions),
        list(request.gpus),
        tiers=list(request.tiers) or None,
        include_retired=request.include_retired,
        today=request.today,
    )
    if request.reserved_discount is not None:
        chosen = with_reserved_discount(chosen, request.pricing, request.reserved_discount)
    elif (
        request.pricing in RESERVED_KINDS
        and not request.onprem
        and not has_kind_price(chosen, request.pricing)
    ):
        raise NoReservedPriceError(no_reserved_message(request.pricing))
    cloud, warnings = cloud_options(chosen, pricing, max_gpus)
    local, onprem_warnings = onprem_options(onprem, max_gpus, request.onprem_sources)
    warnings += onprem_warnings
    opts = combine(cloud, local)
    if request.gpu_count is not None:
        opts = opts.loc[opts["total_gpus"].to_numpy(float) == request.gpu_count]
    opts, dropped = drop_without(
        opts, opts["option_usd_per_hour"].isna(), "no_price", pricing=pricing
    )
    warnings += dropped
    opts, dropped = drop_without(opts, no_spec_row(opts), "no_spec_row")
    warnings += dropped
    if opts.empty:
        return _empty_plan(request, warnings + own, chosen)
    notes: list[Note] = []
    if workload.is_llm:
        figures, notes = llm_model.gpt_mfu_figures(results, precision)
        found = llm_model.llm_options(opts, workload, precision, figures, settings)
        no_room = (found["reason"] == "no_layout_fits").to_numpy()
        if len(opts) and no_room.any() and not found["fits"].any():
            raise llm_model.no_fit_error(workload, precision, opts, found, settings, max_gpus)
        opts = opts.join(found.drop(columns=["fits", "layout"]).assign(sharding=found["layout"]))
        small = (opts["reason"] == "batch_too_small").to_numpy()
        opts, dropped = drop_without(
            opts, no_room, "no_layout_fits", workload=workload.name, option_count=int(no_room.sum())
        )
        warnings += dropped
        small = small[~no_room]
        opts, dropped = drop_without(opts, small, "batch_too_small", option_count=int(small.sum()))
        warnings += dropped
        opts = opts.drop(columns="reason")
        describe = None
    else:
        inputs = throughput_inputs(results, workload, precision)
        fast = throughput_for_options(
            opts,
            inputs.figures,
            inputs.model,
            model_key(workload),
            precision,
            workload.global_batch_cap,
        )
        opts = opts.join(fast.values).assign(
            mfu=np.nan,
            memory_per_gpu_gb=np.nan,
            sharding="",
            recompute=False,
            speed_position=np.arange(len(opts)),
            **{column: np.nan for column in llm_model.LLM_DETAIL_COLUMNS},
        )
        figures = sweep_figures(results, workload.model, workload.model_size, precision)
        opts = apply_sweep_figures(opts, figures)
        describe = fast
    warnings += notes
    opts, dropped = drop_without(
        opts,
        opts["throughput"].isna().to_numpy(),
        "no_llm_peak" if workload.is_llm else "no_throughput",
        precision=precision,
        model=workload.model,
    )
    warnings += dropped
    if opts.empty:
        return _empty_plan(request, warnings + own, chosen)
    opts = opts.reset_index(drop=True)
    opts = _limits_and_work(opts, workload, results)
    # Speeds in units of the nominal `workload.samples`, so hours = samples / speed also
    # for time-to-accuracy workloads whose samples depend on each option's global batch.
    scale = workload.samples / opts["samples_to_train"].to_numpy(float)
    speed = opts.assign(
        throughput=opts["throughput"] * scale,
        throughput_low=opts["throughput_low"] * scale,
        throughput_high=opts["throughput_high"] * scale,
    )

    compute = hours_to_train(workload.samples, speed["throughput"])
    spot = (opts["pricing"] == "spot").to_numpy()
    spot_rows = spot_for_offers(
        opts.loc[spot],
        compute.loc[spot].to_numpy(),
        checkpoint_hours,
        restart_hours,
        request.rates,
        opts.loc[spot, "instances"].to_numpy(),
    )
    opts = opts.assign(
        compute_hours=compute,
        hours_to_train=compute,
        interruptions_per_hour=np.nan,
        interruption_rate_source="",
        spot_overhead_factor=np.nan,
    )
    opts.loc[spot, "hours_to_train"] = spot_rows["expected_wall_hours"].to_numpy()
    opts.loc[spot, "spot_overhead_factor"] = spot_rows["overhead_factor"].to_numpy()
    opts.loc[spot, "interruptions_per_hour"] = (
        spot_rows["interruptions_per_hour"].to_numpy() / opts.loc[spot, "instances"].to_numpy()
    )
    opts.loc[spot, "interruption_rate_source"] = spot_rows["rate_source"].to_numpy()
    extra = job_overheads(
        opts,
        workload.dataset_gb,
        _params(workload),
        compute.to_numpy(float),
        request.overheads,
    )
    opts = opts.join(extra)
    fixed_hours = _fixed_hours(opts)
    opts["hours_to_train"] = opts["hours_to_train"] + fixed_hours
    opts["billed_hours"] = _billed(opts, opts["hours_to_train"].to_numpy(float))
    opts["cost_usd"] = cost_to_train(opts["billed_hours"], opts["option_usd_per_hour"])

    hours = opts["hours_to_train"].to_numpy(float)
    cost = opts["cost_usd"].to_numpy(float)
    opts["on_pareto"] = pareto_mask(hours, cost)
    opts["feasible"] = feasible_mask(hours, cost, deadline_hours, budget_usd)
    opts["chosen_count"] = choose_counts(opts["offer_key"], hours, cost, deadline_hours)
    picked = picks(hours, cost, deadline_hours, budget_usd)
    names = _pick_names(picked, len(opts))
    opts["pick"] = names
    opts["misses"] = _misses(hours, cost, deadline_hours, budget_usd)

    shown = opts.loc[
        (opts["chosen_count"] | opts["on_pareto"] | (opts["pick"] != "")).to_numpy()
    ].copy()
    order = np.lexsort(
        (
            shown["total_gpus"].to_numpy(),
            shown["hours_to_train"].to_numpy(),
            shown["cost_usd"].to_numpy(),
            ~shown["chosen_count"].to_numpy(),
            ~shown["feasible"].to_numpy(),
        )
    )
    shown = shown.iloc[order]
    chosen_rows = shown["chosen_count"].to_numpy()
    shown["rank"] = np.where(chosen_rows, np.cumsum(chosen_rows), 0)
    simulate = (
        (shown["pick"] != "").to_numpy()
        | shown["on_pareto"].to_numpy()
        | (chosen_rows & (shown["rank"].to_numpy() <= sample_limit))
    )
    scale = workload.samples / shown["samples_to_train"].to_numpy(float)
    quantiles = time_cost_quantiles(
        workload.samples,
        shown.assign(
            overhead_factor=shown["spot_overhead_factor"],
            throughput=shown["throughput"] * scale,
            throughput_low=shown["throughput_low"] * scale,
            throughput_high=shown["throughput_high"] * scale,
        ),
        (shown["pricing"] == "spot").to_numpy(),
        simulate,
        checkpoint_hours,
        restart_hours,
        seed,
        draws,
    )
    shown = shown.join(_with_fixed_hours(quantiles, shown))
    if describe is not None:
        shown["throughput_detail"] = describe.details(shown["speed_position"].to_numpy())
        swept = (shown["sweep_detail"] != "").to_numpy()
        shown.loc[swept, "throughput_detail"] = shown.loc[swept, "sweep_detail"]
    else:  # LLM rows: worded from LLM_DETAIL_COLUMNS by planner.render.llm
        shown["throughput_detail"] = ""
    shown = shown.assign(
        throughput_unit=workload.throughput_unit,
        usd_per_gpu_hour=shown["option_usd_per_hour"] / shown["total_gpus"],
    )
    shown = shown.reset_index(drop=True).loc[:, list(PLAN_COLUMNS)]
    rows = shown.loc[shown["chosen_count"]].reset_index(drop=True)
    pick_table = _pick_table(picked, opts, shown)
    status = constraint_status(
        opts.assign(
            hours=hours,
            cost=cost,
            gpus_available=opts["offer_key"].map(_cluster_sizes(onprem)),
        ),
        deadline_hours,
        budget_usd,
        max_gpus,
    )
    warnings += _unmet(status)
    warnings += _stale_price_notes(chosen, today)
    frontier = shown.loc[shown["on_pareto"]].sort_values(["hours_to_train", "cost_usd"])
    return Plan(
        request,
        rows,
        tuple(warnings + own),
        pick_table,
        frontier.reset_index(drop=True),
        opts.loc[:, list(OPTION_SUMMARY_COLUMNS)],
        status,
    )


def _empty_plan(request: PlanRequest, notes: list[Note], offers: pd.DataFrame) -> Plan:
    """A plan with no option left, saying so (the notes say why each was left out)."""
    empty = pd.DataFrame({c: pd.Series(dtype=object) for c in PLAN_COLUMNS})
    return Plan(
        request,
        empty,
        tuple([*notes, Note("no_options"), *_stale_price_notes(offers, request.today)]),
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


def _pick_names(picked: pd.DataFrame, n: int) -> np.ndarray:
    names = np.full(n, "", dtype=object)
    for name, position in zip(picked["pick"], picked["position"], strict=True):
        names[position] = name if not names[position] else f"{names[position]},{name}"
    return names


def _misses(
    hours: np.ndarray, cost: np.ndarray, deadline: float | None, budget: float | None
) -> np.ndarray:
    """Per option, the tuple of Miss codes it misses (deadline first)."""
    late = hours > deadline if deadline is not None else np.zeros(len(hours), bool)
    dear = cost > budget if budget is not None else np.zeros(len(cost), bool)
    kinds = {
        (True, True): (Miss.DEADLINE, Miss.BUDGET),
        (True, False): (Miss.DEADLINE,),
        (False, True): (Miss.BUDGET,),
        (False, False): (),
    }
    out = np.empty(len(hours), dtype=object)
    out[:] = [kinds[(bool(a), bool(b))] for a, b in zip(late, dear, strict=True)]
    return out


def _pick_table(picked: pd.DataFrame, opts: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    ids = opts["option_id"].to_numpy()[picked["position"].to_numpy(dtype=int)]
    by_id = rows.set_index("option_id")
    table = by_id.loc[ids].reset_index().drop(columns="pick")
    for at, column in enumerate(c for c in PICK_COLUMNS if c != "position"):
        table.insert(at, column, picked[column].to_numpy())
    order = {name: i for i, name in enumerate(PICKS)}
    return table.sort_values("pick", key=lambda s: s.map(order)).reset_index(drop=True)


def _cluster_sizes(onprem: Sequence[OnPremConfig]) -> dict[str, float]:
    return {f"on-prem:{i}": float(c.gpus) for i, c in enumerate(onprem)}


def _unmet(status: pd.DataFrame) -> list[Note]:
    """A note for a deadline or budget nothing meets (the status row says what is closest)."""
    out = []
    for row in status.loc[status["unmet"]].itertuples():
        if row.constraint == "deadline_hours":
            out.append(
                Note(
                    "deadline_unmet",
                    {
                        "deadline_hours": row.value,
                        "closest": row.closest,
                        "closest_hours": row.closest_hours,
                    },
                )
            )
        elif row.constraint == "budget_usd":
            out.append(
                Note(
                    "budget_unmet",
                    {
                        "budget_usd": row.value,
                        "closest": row.closest,
                        "closest_usd": row.closest_usd,
                    },
                )
            )
    return out


class NoReservedPriceError(ValueError):
    """Reserved pricing asked for, and no offer chosen has such a price."""


def _stale_price_notes(offers: pd.DataFrame, today: dt.date | None) -> list[Note]:
    """One stale_prices note naming the providers whose prices are older than
    STALE_AFTER_DAYS (provider, oldest price date, age in days)."""
    today = today or dt.date.today()
    stale = []
    for provider, priced_at in offers.groupby("provider")["priced_at"].min().items():
        age = (today - dt.date.fromisoformat(str(priced_at))).days
        if age > STALE_AFTER_DAYS:
            stale.append((str(provider), str(priced_at), age))
    if not stale:
        return []
    # A bundled catalog extract's date is only a lower bound ("not before 2025-06").
    bounds = (
        {str(p): str(b) for p, b in offers.groupby("provider")["date_bound"].first().items() if b}
        if "date_bound" in offers
        else {}
    )
    values = {"stale_after_days": STALE_AFTER_DAYS, "providers": tuple(stale)}
    return [Note("stale_prices", {**values, "bounds": bounds} if bounds else values)]


def _params(workload: Workload) -> float:
    """Trainable parameters (checkpoint size): the workload's, else its benchmark model's."""
    if workload.params:
        return float(workload.params)
    known = DATA_PARALLEL_MODELS.get(model_key(workload))
    return known.params if known else 0.0


def _limits_and_work(opts: pd.DataFrame, workload: Workload, results: pd.DataFrame) -> pd.DataFrame:
    """Apply the CPU data-loader ceiling (planner.costs.overheads) and size each option's job.

    Adds gpu_throughput (what the GPUs could do), loader_ceiling, limit_code
    ("cpu-bound" where the ceiling binds, "batch-bound" where the global batch cap shrinks
    the per-GPU batch below its limit, else ""), global_batch and samples_to_train
    (workload.samples_at(global batch) × benchmark samples per sample).
    """
    opts = opts.copy()
    for column in ("per_gpu_batch", "compute_s", "comm_s", "overhead_s"):
        if column not in opts.columns:
            opts[column] = np.nan
    x = opts["throughput"].to_numpy(float)
    opts["gpu_throughput"] = x
    ceiling = np.full(len(opts), np.nan)
    if workload.loader == "jpeg" and len(opts):
        per_vcpu, _ = images_per_s_per_vcpu(results)
        ceiling = loader_ceiling(opts, per_vcpu)
    bound = np.isfinite(ceiling) & (x > ceiling)
    factor = np.where(bound, ceiling / np.where(x > 0, x, 1.0), 1.0)
    for column in ("throughput", "throughput_low", "throughput_high"):
        opts[column] = opts[column].to_numpy(float) * factor
    opts["loader_ceiling"] = ceiling
    batch = opts["per_gpu_batch"].to_numpy(float)
    total = opts["total_gpus"].to_numpy(float)
    opts["global_batch"] = batch * total
    cap = workload.global_batch_cap
    batch_bound = (
        np.isfinite(batch) & (cap is not None) & (batch * total >= (cap or np.inf) * 0.999)
    )
    opts["limit_code"] = np.where(bound, "cpu-bound", np.where(batch_bound, "batch-bound", ""))
    samples = workload.samples_at(opts["global_batch"].to_numpy(float))
    opts["samples_to_train"] = samples * workload.benchmark_samples_per_sample
    return opts


def _fixed_hours(opts: pd.DataFrame) -> np.ndarray:
    return (
        opts["setup_hours"].to_numpy(float)
        + opts["staging_hours"].to_numpy(float)
        + opts["checkpoint_write_hours"].to_numpy(float)
    )


def _billed(opts: pd.DataFrame, hours: np.ndarray) -> np.ndarray:
    return billed_hours(
        hours, opts["billing_increment_s"].to_numpy(float), opts["billing_minimum_s"].to_numpy()
    )


def _with_fixed_hours(quantiles: pd.DataFrame, shown: pd.DataFrame) -> pd.DataFrame:
    """Quantiles with start-up, staging and checkpoint hours added, costs at billed hours."""
    out = quantiles.copy()
    fixed = _fixed_hours(shown)
    price = shown["option_usd_per_hour"].to_numpy(float)
    for q in ("p10", "p50", "p90"):
        hours = out[f"hours_{q}"].to_numpy(float) + fixed
        out[f"hours_{q}"] = hours
        out[f"cost_{q}_usd"] = _billed(shown, hours) * price
    return out
