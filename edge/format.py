"""Numbers as people read them: money, durations, ratios (for the CLI and the app)."""

from __future__ import annotations

import math

HOURS_PER_DAY = 24.0


def _finite(value: object) -> bool:
    try:
        return math.isfinite(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def money(usd: float, short: bool = False, cents: bool = False) -> str:
    """$0.52, $4.38, $1,234, <$0.01 for less than half a cent; short: 3 significant digits
    and k/M/B/T from $1,000 up ($1.2k, $18.4k, $1.31M, $1.31B, $999k, and $1M for 999,999),
    never scientific notation; cents: always to the cent ($1,234.56), for amounts a budget
    is checked against. Negative amounts lead with the sign: -$27k."""
    if not _finite(usd):
        return "-"
    usd = float(usd)
    if usd < 0 and not 0 < -usd < 0.005:  # a credit: -$27k, as accountants write it
        return "-" + money(-usd, short, cents)
    if cents:
        return f"${usd:,.2f}"
    if 0 < abs(usd) < 0.005:
        return "<$0.01" if usd > 0 else "-<$0.01"
    if short and abs(usd) >= 1e3:
        return "$" + _scaled(usd)
    return f"${usd:,.0f}" if abs(usd) >= 100 else f"${usd:,.2f}"


def duration(hours: float, short: bool = False) -> str:
    """Hours as a reader says them: 49 s, 39 min, 5.2 h, 31.6 days (short: 31.6 d)."""
    if not _finite(hours):
        return "-"
    hours = float(hours)
    if hours < 1 / 60:
        return f"{hours * 3600:.0f} s"
    if hours < 1:
        return f"{hours * 60:.0f} min"
    if hours < 48:
        return f"{hours:.1f} h" if hours < 10 else f"{hours:.0f} h"
    days = hours / HOURS_PER_DAY
    text = f"{days:,.1f}" if days < 100 else f"{days:,.0f}"
    return f"{text} d" if short else f"{text} days"


def duration_range(low: float, high: float) -> str:
    """P10-P90 hours in one unit where both fit it: 4.1-5.3 h, 39-52 min, 12-15 d."""
    if not (_finite(low) and _finite(high)):
        return "-"
    a, b = duration(low, short=True), duration(high, short=True)
    unit_a, unit_b = a.split(" ")[-1], b.split(" ")[-1]
    return f"{a.rsplit(' ', 1)[0]}-{b}" if unit_a == unit_b else f"{a}-{b}"


def money_range(low: float, high: float) -> str:
    """P10-P90 dollars, short: $4.4k-$5.1k."""
    if not (_finite(low) and _finite(high)):
        return "-"
    return f"{money(low, short=True)}-{money(high, short=True)}"


def percent(fraction: float, digits: int = 1) -> str:
    """0.9069 -> 90.7%."""
    return "-" if not _finite(fraction) else f"{float(fraction) * 100:.{digits}f}%"


_SHORT_SCALE = ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k"))
_SI_PREFIXES = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def count(value: float, short: bool = False) -> str:
    """A count with thousands separators (1,281,167); short: 3 significant digits and
    k/M/B/T from 1,000 up (1.28M, 115M, 8.1T), never scientific notation."""
    if not _finite(value):
        return "-"
    value = float(value)
    if short and abs(value) >= 1e3:
        return _scaled(value)
    return f"{value:,.0f}" if abs(value) >= 1 or value == 0 else f"{value:.3g}"


def _scaled(value: float) -> str:
    """3 significant digits with the k/M/B/T suffix of the value once rounded (999,999 is
    1M, not 1,000k); from 1,000 up."""
    rounded = float(f"{value:.3g}")
    scale, suffix = next(((s, x) for s, x in _SHORT_SCALE if abs(rounded) >= s), (1.0, ""))
    return f"{_three_digits(rounded / scale)}{suffix}"


def flops(value: float) -> str:
    """FLOPs with an SI prefix, 3 significant digits: 24.5 GFLOP, 2.49 PFLOP."""
    if not _finite(value):
        return "-"
    value = float(value)
    for scale, prefix in _SI_PREFIXES:
        if abs(value) >= scale:
            return f"{_three_digits(value / scale)} {prefix}FLOP"
    return f"{value:,.0f} FLOP"


def _three_digits(value: float) -> str:
    """3 significant digits in plain notation: 1.28, 24.5, 115, 999."""
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}" if abs(value) >= 1 else f"{value:.2f}"
