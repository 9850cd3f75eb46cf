"""Structured notes: what the engine has to say about a plan, as a code and its values.

The engine (planner/) never words a note; the CLI and the app do (planner.render.notes),
each naming its own controls. A Note is a reason code from NOTE_CODES and a mapping of
plain values (numbers, strings, tuples of strings).

Codes and their values:
  offers_dropped       offers (count), gpus (names), reason (a DROP_REASONS code), pricing;
                       option_count (GPU counts left out) and workload for the LLM
                       layout codes
  offers_too_big       offers (count), max_gpus, cap (the request field that set it:
                       max_gpus, or gpu_count for an exact count)
  gpu_count_uneven     offers (count), gpu_count, sizes (their GPUs per instance): no
                       whole number of their instances makes the exact GPU count
  onprem_no_count      name, max_gpus
  deadline_unmet       deadline_hours, fastest (option label), fastest_hours
  budget_unmet         budget_usd, cheapest (option label), cheapest_usd
  stale_prices         stale_after_days, providers (tuple of (provider, date, age d)), bounds
                       (optional: {provider: "not before 2025-06"} where a date is a lower bound)
  no_options           unpriced_gpus (GPUs asked for that no offer prices at all),
                       offers_chosen (offers the filters chose), onprem (configs given):
                       nothing is left to plan
  gpus_unpriced        gpus (GPUs asked for, as given, that no offer prices at all)
  own_result_used      id, gpu_name, device, model_size, precision, world_size,
                       throughput, unit; instance_type when a sweep measured that instance
  own_result_skipped   id, gpu_name, device, model_size, precision, world_size,
                       reason (a SKIP_REASONS code), wanted (the plan's precision or size)
  own_results_elsewhere  count, workloads (own results of other workloads, not used)
  results_rejected     text (a results file that could not be read, as the reader said)
  gpt_results_unused   reason (cpu_run | unsized), count, sizes (the unsized labels)
  cpu_run_applied      id (an own CPU run), moved (CPU rows whose per-core rate it set),
                       families (their CPU families), factor_low, factor_high (its rate /
                       the default's), kept (CPU rows of other CPUs, left at the default)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

NOTE_CODES: tuple[str, ...] = (
    "offers_dropped",
    "offers_too_big",
    "gpu_count_uneven",
    "onprem_no_count",
    "deadline_unmet",
    "budget_unmet",
    "stale_prices",
    "no_options",
    "gpus_unpriced",
    "own_result_used",
    "own_result_skipped",
    "own_results_elsewhere",
    "results_rejected",
    "gpt_results_unused",
    "cpu_run_applied",
)
# Why options were dropped (offers_dropped.reason).
DROP_REASONS: tuple[str, ...] = (
    "no_price", "no_spec_row", "no_throughput", "no_llm_peak", "no_layout_fits",
    "batch_too_small",
)  # fmt: skip
# Why an own result was not used (own_result_skipped.reason).
SKIP_REASONS: tuple[str, ...] = (
    "cpu_run", "unknown_gpu", "other_precision", "other_size", "smaller_batch",
)  # fmt: skip


@dataclass(frozen=True)
class Note:
    """A reason code (NOTE_CODES) and its values; worded by planner.render.notes."""

    code: str
    values: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if self.code not in NOTE_CODES:
            raise ValueError(f"unknown note code {self.code!r}; known: {', '.join(NOTE_CODES)}")
        object.__setattr__(self, "values", dict(self.values))

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def to_dict(self) -> dict[str, Any]:
        """{"code": ..., **values} (JSON-ready when the values are)."""
        return {"code": self.code, **self.values}
