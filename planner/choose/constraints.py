"""Constraint defaults and limits, and parsing the user's spot interruption rates.

The constraints themselves are fields of planner.request.PlanRequest (validated there);
a plan's `constraint_status` table says which of them bind.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

# The defaults live in planner.defaults (light, for the CLI's help); callers import them here too.
from planner.defaults import DEFAULT_DRAWS, DEFAULT_MAX_GPUS, MAX_DRAWS  # noqa: F401
from pricing.gpus import did_you_mean


def parse_rates(items: Iterable[str], providers: Iterable[str]) -> dict[str, float]:
    """`PROVIDER=RATE` strings into {provider: interruptions per hour}.

    Providers must be among `providers` (the closest is named otherwise); a rate is a
    number >= 0. ValueError says which item is wrong and how to write it (the caller names
    its control: the CLI's --interruption-rate).
    """
    valid = sorted({p.lower() for p in providers})
    rates: dict[str, float] = {}
    for item in items:
        provider, sep, value = item.partition("=")
        provider = provider.strip().lower()
        if not sep or not provider or not value.strip():
            raise ValueError(
                f"{item!r}: write PROVIDER=RATE, e.g. aws=0.01 (interruptions per instance-hour)"
            )
        if provider not in valid:
            fix = did_you_mean(provider, valid)
            raise ValueError(
                f"{item!r}: unknown provider {provider!r}{fix} Valid: {', '.join(valid)}"
            )
        try:
            rate = float(value)
        except ValueError:
            raise ValueError(
                f"{item!r}: {value.strip()!r} is not a number "
                "(interruptions per instance-hour, e.g. 0.01)"
            ) from None
        if not (math.isfinite(rate) and rate >= 0):
            raise ValueError(f"{item!r}: the rate must be >= 0 per hour")
        rates[provider] = rate
    return rates
