"""PlanRequest: one frozen, validated record of what a plan is asked for.

The CLI, the app and tests build a PlanRequest once and pass it to planner.plan.make_plan
together with the data it is asked of (offers, results). Validation happens where it is
built: a bad value raises ValueError naming the field (`field` attribute of RequestError),
so each interface can name its own control for it.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from planner.defaults import (
    DEFAULT_CHECKPOINT_HOURS,
    DEFAULT_DRAWS,
    DEFAULT_MAX_GPUS,
    DEFAULT_RESTART_HOURS,
    MAX_DRAWS,
)
from planner.settings import CommModel, JobOverheads, LLMSettings
from planner.workloads.catalog import Workload
from pricing.catalog import PRICING_KINDS
from pricing.gpus import did_you_mean
from pricing.reserved import check_discount
from pricing.tiers import check_tiers

if TYPE_CHECKING:  # pydantic and the on-prem model load only when a plan weighs on-prem
    from planner.onprem.tco import OnPremConfig

PRECISIONS: tuple[str, ...] = ("fp32", "tf32", "fp16", "bf16", "fp8")  # fp8: LLMs only
# Spot rows simulated by Monte Carlo beyond the frontier and the picks (best-ranked first).
DEFAULT_SAMPLE_LIMIT = 10


class RequestError(ValueError):
    """A request field with a bad value: `field` names it, the message says why and the fix."""

    def __init__(self, field: str, message: str, raise_field: str = "") -> None:
        super().__init__(message)
        self.field = field
        self.message = message
        self.raise_field = raise_field  # another field whose raise fixes it ("" if none)


@dataclass(frozen=True)
class PlanRequest:
    """What to plan, with what constraints and assumptions (units in the names).

    workload, precision: the job. pricing: on-demand | spot | reserved-1y | reserved-3y.
    providers, regions, gpus: filters (empty = all). gpu_count: plan only options with
    exactly this many GPUs in all (None = every count up to max_gpus).
    deadline_hours, budget_usd: None = unconstrained. max_gpus: most GPUs one option uses.
    onprem, onprem_sources: on-prem configs weighed as options and where each came from.
    seed, draws: Monte Carlo for spot rows. interruption_rates: {provider: interruptions per
    instance-hour} overriding planner.costs.spot's defaults. checkpoint_hours, restart_hours:
    spot checkpoint and restart times. llm: LLM training settings. comm: the communication
    model (None: each instance's network). sample_limit: spot rows simulated beyond the
    frontier and picks. today: the date prices are aged against (None: today).
    tiers: provider tiers weighed (pricing.tiers; empty = DEFAULT_TIERS, or every tier of
    the providers named). include_retired: weigh sizes the provider no longer sells.
    reserved_discount: for reserved pricing, a missing reserved price is assumed to be
    on-demand x (1 - this) and labelled so (None: no assumption).
    overheads: start-up, staging and checkpoint overrides (planner.costs.overheads).
    """

    workload: Workload
    precision: str = "fp16"
    pricing: str = "on-demand"
    providers: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    gpus: tuple[str, ...] = ()
    gpu_count: int | None = None
    deadline_hours: float | None = None
    budget_usd: float | None = None
    max_gpus: int = DEFAULT_MAX_GPUS
    onprem: tuple[OnPremConfig, ...] = ()
    onprem_sources: tuple[str, ...] = ()
    seed: int = 0
    draws: int = DEFAULT_DRAWS
    interruption_rates: tuple[tuple[str, float], ...] = ()
    checkpoint_hours: float = DEFAULT_CHECKPOINT_HOURS
    restart_hours: float = DEFAULT_RESTART_HOURS
    llm: LLMSettings = field(default_factory=LLMSettings)
    comm: CommModel | None = None
    sample_limit: int = DEFAULT_SAMPLE_LIMIT
    today: dt.date | None = None
    tiers: tuple[str, ...] = ()
    include_retired: bool = False
    reserved_discount: float | None = None
    overheads: JobOverheads = field(default_factory=JobOverheads)

    def __post_init__(self) -> None:
        for name in ("providers", "regions", "gpus", "onprem", "onprem_sources", "tiers"):
            object.__setattr__(self, name, _tuple(getattr(self, name)))
        rates = self.interruption_rates
        pairs = rates.items() if isinstance(rates, Mapping) else rates
        object.__setattr__(self, "interruption_rates", tuple(sorted((str(p), r) for p, r in pairs)))
        self._check()

    def _check(self) -> None:
        if not isinstance(self.workload, Workload):
            raise RequestError("workload", f"workload {self.workload!r}: not a Workload")
        if self.precision not in PRECISIONS:
            fix = did_you_mean(self.precision, PRECISIONS)
            raise RequestError(
                "precision",
                f"unknown precision {self.precision!r}{fix} Valid: {', '.join(PRECISIONS)}",
            )
        if self.precision == "fp8" and not self.workload.is_llm:
            raise RequestError(
                "precision",
                "fp8 applies to LLM workloads only (planner.llm.throughput); "
                f"{self.workload.name} is planned at fp32, tf32, fp16 or bf16",
            )
        if self.pricing not in PRICING_KINDS:
            fix = did_you_mean(self.pricing, PRICING_KINDS)
            raise RequestError(
                "pricing",
                f"unknown pricing {self.pricing!r}{fix} Valid: {', '.join(PRICING_KINDS)}",
            )
        if self.deadline_hours is not None and not _positive(self.deadline_hours):
            raise RequestError(
                "deadline_hours",
                f"deadline {self.deadline_hours!r} hours: it must be a number > 0 "
                "(wall-clock hours to finish the training run)",
            )
        if self.budget_usd is not None and not _positive(self.budget_usd):
            raise RequestError(
                "budget_usd", f"budget {self.budget_usd!r} USD: it must be a number > 0"
            )
        for name in ("max_gpus", "sample_limit"):
            value = getattr(self, name)
            if not _whole(value) or value < 1:
                raise RequestError(name, f"{name} {value!r}: it must be a whole number >= 1")
        if self.gpu_count is not None and (not _whole(self.gpu_count) or self.gpu_count < 1):
            raise RequestError(
                "gpu_count", f"GPU count {self.gpu_count!r}: it must be a whole number >= 1"
            )
        if self.gpu_count is not None and self.gpu_count > self.max_gpus:
            raise RequestError(
                "gpu_count",
                f"GPU count {self.gpu_count} is more than the {self.max_gpus} GPUs allowed "
                "per option",
                raise_field="max_gpus",
            )
        if not _whole(self.seed):
            raise RequestError("seed", f"seed {self.seed!r}: it must be a whole number")
        if not _whole(self.draws) or not 1 <= self.draws <= MAX_DRAWS:
            raise RequestError(
                "draws", f"draws {self.draws!r}: it must be between 1 and {MAX_DRAWS:,}"
            )
        for name in ("checkpoint_hours", "restart_hours"):
            value = getattr(self, name)
            if not (_number(value) and value >= 0):
                raise RequestError(name, f"{name} {value!r}: it must be a number >= 0 hours")
        for provider, rate in self.interruption_rates:
            if not (_number(rate) and rate >= 0):
                raise RequestError(
                    "interruption_rates",
                    f"interruption rate for {provider!r} is {rate!r}: it must be a number "
                    ">= 0 (interruptions per instance-hour, e.g. aws=0.01)",
                )
        if len(self.onprem_sources) not in (0, len(self.onprem)):
            raise RequestError("onprem_sources", "give one source per on-prem config, or none")
        # Each check is tried on its own, so the field is the one whose check refused it.
        try:
            check_tiers(self.tiers)
        except ValueError as exc:
            raise RequestError("tiers", str(exc)) from None
        if self.reserved_discount is not None:
            try:
                check_discount(self.reserved_discount)
            except ValueError as exc:
                raise RequestError("reserved_discount", str(exc)) from None

    @property
    def gpu_limit(self) -> int:
        """The most GPUs an option may use: gpu_count when one is asked for, else max_gpus."""
        return self.gpu_count or self.max_gpus

    @property
    def gpu_limit_field(self) -> str:
        """The field that sets gpu_limit: gpu_count when one is asked for, else max_gpus."""
        return "gpu_count" if self.gpu_count else "max_gpus"

    @property
    def rates(self) -> dict[str, float]:
        """interruption_rates as {provider: interruptions per instance-hour}."""
        return dict(self.interruption_rates)

    def with_changes(self, **changes: Any) -> PlanRequest:
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)


def _tuple(values: Sequence[Any] | None) -> tuple[Any, ...]:
    if values is None:
        return ()
    if isinstance(values, str):
        return (values,)
    return tuple(values)


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _positive(value: object) -> bool:
    return _number(value) and float(value) > 0  # type: ignore[arg-type]


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
