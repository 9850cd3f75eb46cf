"""The verdict on buying against one cloud offer, as a code (planner.render.tco_words
words it): buying is cheaper over the server's life in at least BUY_SHARE of the Monte Carlo
draws (planner.onprem.montecarlo), renting in at least 1 - RENT_SHARE, else too close to call."""

from __future__ import annotations

from enum import StrEnum

BUY_SHARE = 0.8
RENT_SHARE = 0.2


class Verdict(StrEnum):
    """Buy, rent or too close to call, from the share of draws where buying is cheaper."""

    BUY = "buy"
    RENT = "rent"
    CLOSE = "close"


def verdict_of(p_buy_cheaper: float) -> Verdict:
    """BUY at >= 80% of draws, RENT at <= 20%, CLOSE between."""
    if p_buy_cheaper >= BUY_SHARE:
        return Verdict.BUY
    if p_buy_cheaper <= RENT_SHARE:
        return Verdict.RENT
    return Verdict.CLOSE
