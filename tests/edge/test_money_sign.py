"""The one money format with negative amounts."""

from __future__ import annotations

from edge.format import money


def test_a_negative_amount_leads_with_its_sign() -> None:
    """A credit (resale value) reads -$27k, never $-27k."""
    assert money(-27_000, short=True) == "-$27k"
    assert money(-0.23) == "-$0.23"
    assert money(-1234.5, cents=True) == "-$1,234.50"
    assert money(-0.001) == "-<$0.01"
