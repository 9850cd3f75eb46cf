"""What a plan must respect, validated where built, and the user's interruption rates.

A Constraints record is what `make_plan` was asked for; the plan echoes it, and its
`constraint_status` table says which of these bind.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from planner.defaults import DEFAULT_DRAWS, DEFAULT_MAX_GPUS
from pricing.catalog import PRICING_KINDS
from pricing.gpus import did_you_mean

MAX_DRAWS = 1_000_000


@dataclass(frozen=True)
class Constraints:
    """Deadline (hours), budget (USD), most GPUs per option, filters, pricing kind, sampling.

    None means unconstrained. `interruption_rates` overrides planner.spot's documented
    per-provider defaults (interruptions per instance-hour).
    """

    deadline_hours: float | None = None
    budget_usd: float | None = None
    max_gpus: int = DEFAULT_MAX_GPUS
    providers: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    gpus: tuple[str, ...] = ()
    pricing: str = "on-demand"
    onprem: tuple[str, ...] = ()
    seed: int = 0
    draws: int = DEFAULT_DRAWS
    interruption_rates: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.deadline_hours is not None and not _positive(self.deadline_hours):
            raise ValueError(
                f"deadline {self.deadline_hours!r} hours: it must be a number > 0 "
                "(wall-clock hours to finish the training run)"
            )
        if self.budget_usd is not None and not _positive(self.budget_usd):
            raise ValueError(f"budget {self.budget_usd!r} USD: it must be a number > 0")
        if isinstance(self.max_gpus, bool) or not isinstance(self.max_gpus, int):
            raise ValueError(f"max GPUs {self.max_gpus!r}: it must be a whole number >= 1")
        if self.max_gpus < 1:
            raise ValueError(f"max GPUs {self.max_gpus}: it must be >= 1")
        if self.pricing not in PRICING_KINDS:
            fix = did_you_mean(self.pricing, PRICING_KINDS)
            raise ValueError(
                f"unknown pricing {self.pricing!r}{fix} Valid: {', '.join(PRICING_KINDS)}"
            )
        if not 1 <= self.draws <= MAX_DRAWS:
            raise ValueError(f"draws {self.draws}: it must be between 1 and {MAX_DRAWS:,}")
        for provider, rate in self.interruption_rates.items():
            if not (isinstance(rate, int | float) and math.isfinite(rate) and rate >= 0):
                raise ValueError(
                    f"interruption rate for {provider!r} is {rate!r}: it must be a number "
                    ">= 0 (interruptions per instance-hour, e.g. aws=0.01)"
                )

    def describe(self) -> list[str]:
        """One line per constraint that was set (for assumptions and the CLI)."""
        parts = []
        if self.deadline_hours is not None:
            parts.append(f"deadline {self.deadline_hours:g} h")
        if self.budget_usd is not None:
            parts.append(f"budget ${self.budget_usd:,.0f}")
        parts.append(f"at most {self.max_gpus} GPUs per option")
        for name, values in (
            ("providers", self.providers),
            ("regions", self.regions),
            ("GPUs", self.gpus),
            ("on-prem", self.onprem),
        ):
            if values:
                parts.append(f"{name} {', '.join(values)}")
        parts.append(f"pricing {self.pricing}")
        return parts


def _positive(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )


def parse_rates(items: Iterable[str], providers: Iterable[str]) -> dict[str, float]:
    """`PROVIDER=RATE` strings into {provider: interruptions per hour}.

    Providers must be among `providers` (the closest is named otherwise); a rate is a
    number >= 0. ValueError says which item is wrong and how to write it.
    """
    valid = sorted({p.lower() for p in providers})
    rates: dict[str, float] = {}
    for item in items:
        provider, sep, value = item.partition("=")
        provider = provider.strip().lower()
        if not sep or not provider or not value.strip():
            raise ValueError(
                f"--interruption-rate {item!r}: write PROVIDER=RATE, e.g. aws=0.01 "
                "(interruptions per instance-hour)"
            )
        if provider not in valid:
            fix = did_you_mean(provider, valid)
            raise ValueError(
                f"--interruption-rate {item!r}: unknown provider {provider!r}{fix} "
                f"Valid: {', '.join(valid)}"
            )
        try:
            rate = float(value)
        except ValueError:
            raise ValueError(
                f"--interruption-rate {item!r}: {value.strip()!r} is not a number "
                "(interruptions per instance-hour, e.g. 0.01)"
            ) from None
        if not (math.isfinite(rate) and rate >= 0):
            raise ValueError(f"--interruption-rate {item!r}: the rate must be >= 0 per hour")
        rates[provider] = rate
    return rates
