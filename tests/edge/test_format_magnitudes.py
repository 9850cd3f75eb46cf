"""The one formatter across magnitudes: $0.001 to $10^12 and 1 s to 10 years read back
within their rounding, in plain notation, with the suffix of the rounded value."""

import math
import re

import numpy as np
import pytest

from edge.format import count, duration, money

SUFFIX = {"": 1.0, "k": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}
MONEY = re.compile(r"^\$(?P<digits>[0-9][0-9,]*(\.[0-9]+)?)(?P<suffix>[kMBT]?)$")
DURATION = re.compile(r"^(?P<digits>[0-9][0-9,]*(\.[0-9]+)?) (?P<unit>s|min|h|d|days)$")
HOURS_PER_UNIT = {"s": 1 / 3600, "min": 1 / 60, "h": 1.0, "d": 24.0, "days": 24.0}


def read_money(text: str) -> float:
    found = MONEY.match(text)
    assert found, f"{text!r} is not plain money"
    return float(found["digits"].replace(",", "")) * SUFFIX[found["suffix"]]


@pytest.mark.parametrize("usd", np.logspace(-2, 12, 400))
@pytest.mark.parametrize("short", [False, True])
def test_money_reads_back_within_its_rounding(usd: float, short: bool) -> None:
    text = money(usd, short=short)
    assert "e" not in text and "E" not in text
    back = read_money(text)
    # 3 significant digits when short (0.5% at worst), whole dollars or cents otherwise
    tolerance = max(0.0051 * usd if short and usd >= 1e3 else 0.5, 0.005)
    assert math.isclose(back, usd, abs_tol=tolerance), (usd, text)


@pytest.mark.parametrize("short_value", [999_999.0, 999_500.0, 999.6e6, 999.7e9, 99_999.0])
def test_a_value_that_rounds_up_takes_the_next_suffix(short_value: float) -> None:
    text = money(short_value, short=True)
    assert re.search(r"^\$1(\.00?)?[kMBT]$|^\$100k$", text), text
    assert not text.startswith("$1,000")
    assert count(short_value, short=True) == text[1:]


def test_the_named_cases() -> None:
    assert money(1.31e9, short=True) == "$1.31B"
    assert money(999_999, short=True) == "$1M"
    assert money(18_400, short=True) == "$18.4k"
    assert money(123_456, short=True) == "$123k"
    assert money(2.5e12, short=True) == "$2.5T"
    assert money(0.001) == "<$0.01"
    assert count(8.1e12, short=True) == "8.1T"


@pytest.mark.parametrize("seconds", np.logspace(0, math.log10(10 * 365.25 * 86400), 300))
def test_duration_reads_back_within_its_rounding(seconds: float) -> None:
    hours = seconds / 3600
    for short in (False, True):
        text = duration(hours, short=short)
        found = DURATION.match(text)
        assert found, f"{text!r} is not a plain duration"
        back = float(found["digits"].replace(",", "")) * HOURS_PER_UNIT[found["unit"]]
        # whole seconds/minutes/hours or one decimal: within half a unit step or 5%
        step = HOURS_PER_UNIT[found["unit"]] * (0.5 if "." not in found["digits"] else 0.05)
        assert abs(back - hours) <= max(step, 0.05 * hours), (hours, text)
