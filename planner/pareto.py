"""Time/cost trade-offs over plan options: the Pareto frontier, counts, picks, binding.

All functions take the central figures (hours = samples / median throughput, spot rows at
their expected wall time; cost = hours x the option's price per hour), vectorized.

- Frontier: an option is on it unless another is no slower and no dearer and strictly
  better in one of the two. Options with identical hours and cost are all on it.
- Count per offer: the count that meets the deadline at the least cost (ties: fewer
  hours); where no count meets it, or no deadline is given and costs tie, the fastest
  count among the cheapest.
- Feasible: meets the deadline (hours <= deadline) and the budget (cost <= budget),
  each where given.
- Picks:
  cheapest_within_deadline  least cost among options meeting the deadline (ties: faster);
                            without a deadline, the cheapest option.
  fastest_within_budget     least hours among options within the budget (ties: cheaper);
                            without a budget, the fastest option.
  best_cost_per_hour_saved  among feasible options on the frontier of the feasible ones and
                            faster than the baseline B (the cheapest feasible option, ties:
                            faster), the least (cost - cost_B) / (hours_B - hours): the
                            first step along the frontier's lower convex hull from B, i.e.
                            the cheapest hours one can buy. None when no feasible option is
                            faster than B.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

PICKS: tuple[str, ...] = (
    "cheapest_within_deadline",
    "fastest_within_budget",
    "best_cost_per_hour_saved",
)
PICK_COLUMNS = ("pick", "position", "why")


def pareto_mask(hours: ArrayLike, cost: ArrayLike) -> NDArray[np.bool_]:
    """True for options no other option dominates (see module docstring); NaN rows False."""
    h = np.asarray(hours, dtype=float)
    c = np.asarray(cost, dtype=float)
    ok = np.isfinite(h) & np.isfinite(c)
    out = np.zeros(len(h), dtype=bool)
    idx = np.flatnonzero(ok)
    if not len(idx):
        return out
    order = idx[np.lexsort((c[idx], h[idx]))]
    hs, cs = h[order], c[order]
    running = np.minimum.accumulate(cs)
    start = np.searchsorted(hs, hs, side="left")  # first of each equal-hours group
    before = np.where(start > 0, running[np.maximum(start - 1, 0)], np.inf)
    group_min = cs[start]  # sorted by cost within a group: the first is the least
    out[order] = (cs < before) & (cs == group_min)
    return out


def feasible_mask(
    hours: ArrayLike, cost: ArrayLike, deadline_hours: float | None, budget_usd: float | None
) -> NDArray[np.bool_]:
    """Meets the deadline and the budget, where given (NaN never does)."""
    h = np.asarray(hours, dtype=float)
    c = np.asarray(cost, dtype=float)
    ok = np.isfinite(h) & np.isfinite(c)
    if deadline_hours is not None:
        ok &= h <= deadline_hours
    if budget_usd is not None:
        ok &= c <= budget_usd
    return ok


def choose_counts(
    group: ArrayLike, hours: ArrayLike, cost: ArrayLike, deadline_hours: float | None
) -> NDArray[np.bool_]:
    """One True per group: its count meeting the deadline at least cost, else its fastest."""
    g = pd.factorize(np.asarray(group))[0]
    h = np.asarray(hours, dtype=float)
    c = np.asarray(cost, dtype=float)
    meets = h <= (np.inf if deadline_hours is None else deadline_hours)
    any_meets = np.zeros(g.max() + 1 if len(g) else 0, dtype=bool)
    np.logical_or.at(any_meets, g, meets)
    has = any_meets[g]
    first = np.where(has, ~meets, False).astype(int)
    second = np.where(has, c, h)
    third = np.where(has, h, c)
    order = np.lexsort((third, second, first, g))
    chosen = np.zeros(len(g), dtype=bool)
    leaders = order[np.r_[True, g[order][1:] != g[order][:-1]]] if len(order) else order
    chosen[leaders] = True
    return chosen


def _hours(value: float) -> str:
    return f"{value:,.1f} h" if abs(value) >= 10 else f"{value:.3g} h"


def _usd(value: float) -> str:
    """Dollars as people read them: whole dollars from $100, cents below, '<$0.01' for less."""
    if abs(value) >= 100:
        return f"${value:,.0f}"
    if 0 < abs(value) < 0.005:
        return "<$0.01"
    return f"${value:,.2f}"


def _best(mask: NDArray[np.bool_], primary: FloatArray, secondary: FloatArray) -> int | None:
    idx = np.flatnonzero(mask)
    if not len(idx):
        return None
    return int(idx[np.lexsort((secondary[idx], primary[idx]))[0]])


FloatArray = NDArray[np.float64]


def picks(
    hours: ArrayLike,
    cost: ArrayLike,
    deadline_hours: float | None,
    budget_usd: float | None,
) -> pd.DataFrame:
    """The named picks (PICKS) as positions into the options, with why each was picked.

    Columns: pick, position (int), why. A pick with no qualifying option is left out.
    """
    h = np.asarray(hours, dtype=float)
    c = np.asarray(cost, dtype=float)
    ok = np.isfinite(h) & np.isfinite(c)
    rows = []
    within_deadline = ok & (h <= (np.inf if deadline_hours is None else deadline_hours))
    i = _best(within_deadline, c, h)
    if i is not None:
        why = (
            "least cost among options finishing within the deadline"
            if deadline_hours is not None
            else "least cost (no deadline given)"
        )
        rows.append(("cheapest_within_deadline", i, why))
    within_budget = ok & (c <= (np.inf if budget_usd is None else budget_usd))
    i = _best(within_budget, h, c)
    if i is not None:
        why = (
            "fewest hours among options within the budget"
            if budget_usd is not None
            else "fewest hours (no budget given)"
        )
        rows.append(("fastest_within_budget", i, why))
    found = best_cost_per_hour_saved(h, c, feasible_mask(h, c, deadline_hours, budget_usd))
    if found is not None:
        i, rate, base = found
        rows.append(
            (
                "best_cost_per_hour_saved",
                i,
                f"{_usd(rate)} more per hour saved than the cheapest feasible option "
                f"({_hours(h[base] - h[i])} sooner for {_usd(c[i] - c[base])} more)",
            )
        )
    return pd.DataFrame(rows, columns=list(PICK_COLUMNS))


def best_cost_per_hour_saved(
    hours: FloatArray, cost: FloatArray, feasible: NDArray[np.bool_]
) -> tuple[int, float, int] | None:
    """(position, USD per hour saved, baseline position) or None (see module docstring)."""
    base = _best(feasible, cost, hours)
    if base is None:
        return None
    idx = np.flatnonzero(feasible)
    front = idx[pareto_mask(hours[idx], cost[idx])]
    faster = front[hours[front] < hours[base]]
    if not len(faster):
        return None
    rate = (cost[faster] - cost[base]) / (hours[base] - hours[faster])
    best = faster[np.lexsort((hours[faster], rate))[0]]
    return int(best), float((cost[best] - cost[base]) / (hours[base] - hours[best])), base


STATUS_COLUMNS: tuple[str, ...] = (
    "constraint", "value", "binds", "unmet", "closest", "closest_hours", "closest_usd", "note",
)  # fmt: skip


def constraint_status(
    options: pd.DataFrame,
    deadline_hours: float | None,
    budget_usd: float | None,
    max_gpus: int,
) -> pd.DataFrame:
    """Which constraints bind. Columns: STATUS_COLUMNS.

    constraint, value, binds (bool), unmet (bool: nothing meets this deadline or budget),
    closest (label of the option closest to meeting an unmet one, else ""),
    closest_hours, closest_usd (its figures, NaN when not unmet), note (in words).

    `options`: provider, instance_type, instances, total_gpus, kind, gpus_available
    (on-prem cluster size, NaN for cloud), hours, cost. A deadline binds when the cheapest
    option misses it; a budget when the fastest option exceeds it; max GPUs when the fastest
    option (within the budget, where given) uses more than half the GPUs allowed, so the
    next doubling is cut off; an on-prem cluster when its fastest option uses all of it.
    """
    columns = list(STATUS_COLUMNS)
    h = options["hours"].to_numpy(float)
    c = options["cost"].to_numpy(float)
    ok = np.isfinite(h) & np.isfinite(c)
    cheapest = _best(ok, c, h)
    fastest = _best(ok, h, c)
    if cheapest is None or fastest is None:
        return pd.DataFrame(columns=columns)
    gpus = options["total_gpus"].to_numpy(float)

    def label(i: int) -> str:
        row = options.iloc[i]
        return f"{row['provider']} {row['instance_type']} x{row['instances']:g} ({gpus[i]:g} GPUs)"

    rows: list[tuple[str, float, bool, bool, str, float, float, str]] = []
    nan = float("nan")
    if deadline_hours is not None:
        binds = bool(h[cheapest] > deadline_hours)
        meets = _best(ok & (h <= deadline_hours), c, h)
        if not binds:
            note = f"the cheapest option, {label(cheapest)}, finishes in {_hours(h[cheapest])}"
        elif meets is None:
            note = (
                f"nothing finishes within {deadline_hours:g} h; the fastest option is "
                f"{label(fastest)} at {_hours(h[fastest])}"
            )
        else:
            note = (
                f"the cheapest option takes {_hours(h[cheapest])}; meeting the deadline costs "
                f"{_usd(c[meets] - c[cheapest])} more ({label(meets)})"
            )
        unmet = binds and meets is None
        rows.append(
            (
                "deadline_hours", float(deadline_hours), binds, unmet,
                label(fastest) if unmet else "", float(h[fastest]) if unmet else nan,
                float(c[fastest]) if unmet else nan, note,
            )
        )  # fmt: skip
    if budget_usd is not None:
        binds = bool(c[fastest] > budget_usd)
        within = _best(ok & (c <= budget_usd), h, c)
        if not binds:
            note = f"the fastest option, {label(fastest)}, costs {_usd(c[fastest])}"
        elif within is None:
            note = (
                f"nothing costs {_usd(budget_usd)} or less; the cheapest option is "
                f"{label(cheapest)} at {_usd(c[cheapest])}"
            )
        else:
            note = (
                f"the fastest option costs {_usd(c[fastest])}; within the budget the fastest "
                f"takes {_hours(h[within] - h[fastest])} longer ({label(within)})"
            )
        unmet = binds and within is None
        rows.append(
            (
                "budget_usd", float(budget_usd), binds, unmet,
                label(cheapest) if unmet else "", float(h[cheapest]) if unmet else nan,
                float(c[cheapest]) if unmet else nan, note,
            )
        )  # fmt: skip
    within_budget = _best(ok & (c <= (np.inf if budget_usd is None else budget_usd)), h, c)
    top = fastest if within_budget is None else within_budget
    binds = bool(gpus[top] * 2 > max_gpus and options["kind"].iloc[top] == "cloud")
    scope = " within the budget" if budget_usd is not None else ""
    note = f"the fastest option{scope}, {label(top)}, uses {gpus[top]:g} of {max_gpus} allowed"
    note += "; more might be faster" * binds
    rows.append(("max_gpus", float(max_gpus), binds, False, "", nan, nan, note))
    onprem = _best(ok & (options["kind"].to_numpy() == "on-prem"), h, c)
    if onprem is not None:
        size = float(options["gpus_available"].iloc[onprem])
        note = f"the fastest on-prem option uses {gpus[onprem]:g} of the cluster's {size:g} GPUs"
        rows.append(("onprem_gpus", size, bool(gpus[onprem] >= size), False, "", nan, nan, note))
    return pd.DataFrame(rows, columns=columns)
