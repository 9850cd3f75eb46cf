"""Tick values and labels for log axes that read as people say them ($10, $1k; 1 min, 1 day).

Plotly's own log ticks label 2 and 5 between decades ("2, 5, $100"); these give every tick
its full text, for `tickvals`/`ticktext`.
"""

from __future__ import annotations

import math

from edge.format import money

# Hours at which a duration axis may tick, with their labels.
DURATION_TICKS: tuple[tuple[float, str], ...] = (
    (1 / 60, "1 min"), (5 / 60, "5 min"), (15 / 60, "15 min"), (0.5, "30 min"),
    (1, "1 h"), (2, "2 h"), (6, "6 h"), (12, "12 h"), (24, "1 day"), (48, "2 days"),
    (168, "1 week"), (336, "2 weeks"), (720, "1 month"), (2160, "3 months"),
    (4380, "6 months"), (8760, "1 year"), (26280, "3 years"), (87600, "10 years"),
)  # fmt: skip


# The ticks kept when a duration axis spans too much for all of them: the units people
# read a duration in, every one of them that falls on the axis.
PRIMARY_DURATIONS = frozenset(
    {"1 min", "1 h", "1 day", "1 week", "1 month", "3 months", "1 year", "10 years"}
)


def _span(low: float, high: float) -> tuple[float, float]:
    """The data range widened by a quarter decade each side (what a log axis shows)."""
    low, high = float(low), float(high)
    if not (math.isfinite(low) and math.isfinite(high)) or low <= 0 or high <= 0:
        return 1.0, 10.0
    return low / 10**0.25, high * 10**0.25


def log_range(low: float, high: float) -> list[float]:
    """A log axis's range (log10 units, as plotly takes it) holding [low, high] with the
    quarter decade each side the ticks below are chosen over, so every point and every
    tick lies on the axis."""
    lo, hi = _span(low, high)
    return [math.log10(lo), math.log10(hi)]


def duration_ticks(low_hours: float, high_hours: float) -> tuple[list[float], list[str]]:
    """Ticks (hours) and labels covering [low, high]: '1 min' ... '1 year'."""
    lo, hi = _span(low_hours, high_hours)
    chosen = [(v, t) for v, t in DURATION_TICKS if lo <= v <= hi]
    if len(chosen) > 8:  # wide ranges: the round units only
        chosen = [(v, t) for v, t in chosen if t in PRIMARY_DURATIONS]
    return [v for v, _ in chosen], [t for _, t in chosen]


def money_ticks(low_usd: float, high_usd: float) -> tuple[list[float], list[str]]:
    """Ticks (USD) at 1, 2, 5 x 10^k covering [low, high], labelled $10, $200, $5k, $1M."""
    lo, hi = _span(low_usd, high_usd)
    values = []
    for exponent in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for step in (1, 2, 5):
            value = step * 10.0**exponent
            if lo <= value <= hi:
                values.append(value)
    if len(values) > 9:  # wide ranges: decades only
        values = [v for v in values if str(v).startswith("1")] or values
    return values, [_money_label(v) for v in values]


def _money_label(usd: float) -> str:
    if usd < 1:
        return money(usd)
    if usd < 1000:
        return f"${usd:,.0f}"
    return money(usd, short=True).replace(".0k", "k").replace(".0M", "M")
