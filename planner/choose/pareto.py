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
  fastest_within_budget     least hours among options within the budget, hours within
                            HOURS_TIE_SHARE of the least counting as a tie (ties: cheaper);
                            without a budget, the fastest option.
  best_cost_per_hour_saved  among feasible options on the frontier of the feasible ones and
                            faster than the baseline B (the cheapest feasible option, ties:
                            faster) by more than HOURS_TIE_SHARE of B's hours, the least
                            (cost - cost_B) / (hours_B - hours): the first step along the
                            frontier's lower convex hull from B, i.e. the cheapest hours one
                            can buy. None when no feasible option is that much faster than B.

Hours closer than HOURS_TIE_SHARE are a tie: the estimates' own 80% bands are tens of
percent wide and the start-up and checkpoint overheads that separate two offers' times by
minutes are assumptions, so a pick never pays more for a difference the plan cannot tell.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

# Hours within 1% of each other are a tie for the picks (module docstring).
HOURS_TIE_SHARE = 0.01
PICKS: tuple[str, ...] = (
    "cheapest_within_deadline",
    "fastest_within_budget",
    "best_cost_per_hour_saved",
)
PICK_COLUMNS = (
    "pick", "position", "usd_per_hour_saved", "hours_saved", "extra_usd",
)  # fmt: skip


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

    Columns: PICK_COLUMNS: pick, position (int), and for best_cost_per_hour_saved the
    USD per hour saved, the hours saved and the extra USD against the cheapest feasible
    option (NaN for the other picks); planner.render.notes.pick_reason words them. A pick
    with no qualifying option is left out.
    """
    h = np.asarray(hours, dtype=float)
    c = np.asarray(cost, dtype=float)
    ok = np.isfinite(h) & np.isfinite(c)
    nan = float("nan")
    rows: list[tuple[str, int, float, float, float]] = []
    within_deadline = ok & (h <= (np.inf if deadline_hours is None else deadline_hours))
    i = _best(within_deadline, c, h)
    if i is not None:
        rows.append(("cheapest_within_deadline", i, nan, nan, nan))
    within_budget = ok & (c <= (np.inf if budget_usd is None else budget_usd))
    if within_budget.any():  # the fastest, and those it cannot be told from: the cheapest
        within_budget &= h <= float(h[within_budget].min()) * (1.0 + HOURS_TIE_SHARE)
    i = _best(within_budget, c, h)
    if i is not None:
        rows.append(("fastest_within_budget", i, nan, nan, nan))
    found = best_cost_per_hour_saved(h, c, feasible_mask(h, c, deadline_hours, budget_usd))
    if found is not None:
        i, rate, base = found
        saved, extra = float(h[base] - h[i]), float(c[i] - c[base])
        rows.append(("best_cost_per_hour_saved", i, rate, saved, extra))
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
    faster = front[hours[front] < hours[base] * (1.0 - HOURS_TIE_SHARE)]
    if not len(faster):
        return None
    rate = (cost[faster] - cost[base]) / (hours[base] - hours[faster])
    best = faster[np.lexsort((hours[faster], rate))[0]]
    return int(best), float((cost[best] - cost[base]) / (hours[base] - hours[best])), base


STATUS_COLUMNS: tuple[str, ...] = (
    "constraint", "value", "binds", "unmet", "closest", "closest_hours", "closest_usd",
    "case", "option", "option_hours", "option_usd", "option_gpus", "baseline_hours",
    "baseline_usd", "delta_hours", "delta_usd",
)  # fmt: skip
# What a constraint_status row says, by constraint (worded by planner.render.notes).
STATUS_CASES: dict[str, tuple[str, ...]] = {
    "deadline_hours": ("met", "none_within", "costs_more"),
    "budget_usd": ("met", "none_within", "takes_longer"),
    "max_gpus": ("fastest", "fastest_within_budget"),
    "gpu_count": ("exact",),
    "onprem_gpus": ("fastest_onprem",),
}


def constraint_status(
    options: pd.DataFrame,
    deadline_hours: float | None,
    budget_usd: float | None,
    max_gpus: int,
    gpu_count: int | None = None,
) -> pd.DataFrame:
    """Which constraints bind, and the figures that show it. Columns: STATUS_COLUMNS.

    constraint, value, binds (bool), unmet (bool: nothing meets this deadline or budget),
    closest (label of the option closest to meeting an unmet one, else ""),
    closest_hours, closest_usd (its figures, NaN when not unmet); case (STATUS_CASES)
    and the option it names (label, hours, USD, GPUs), the baseline it is set against
    (the cheapest option's hours for a deadline that costs more, the fastest option's USD
    for a budget that takes longer) and the difference (delta_usd, delta_hours). NaN
    where a case has no such figure; planner.render.notes.constraint_text words a row.

    `options`: provider, instance_type, instances, total_gpus, kind, gpus_available
    (on-prem cluster size, NaN for cloud), hours, cost. A deadline binds when the cheapest
    option misses it; a budget when the fastest option exceeds it; max GPUs when the fastest
    option (within the budget, where given) uses more than half the GPUs allowed, so the
    next doubling is cut off; an on-prem cluster when its fastest option uses all of it.
    With an exact `gpu_count` that count binds in place of max GPUs: every option uses it.
    """
    columns = list(STATUS_COLUMNS)
    ranked = _Ranked(options)
    if ranked.cheapest is None or ranked.fastest is None:
        return pd.DataFrame(columns=columns)
    rows: list[dict[str, object]] = []
    if deadline_hours is not None:
        rows.append(_limit_row(ranked, DEADLINE, float(deadline_hours)))
    if budget_usd is not None:
        rows.append(_limit_row(ranked, BUDGET, float(budget_usd)))
    rows += _gpu_rows(ranked, budget_usd, max_gpus, gpu_count)
    return pd.DataFrame(rows).reindex(columns=columns)


class _Ranked:
    """Options' hours, costs and GPUs as arrays, the cheapest and fastest among them, and
    each option's label and figures as a status row names them."""

    def __init__(self, options: pd.DataFrame) -> None:
        self.options = options
        self.h = options["hours"].to_numpy(float)
        self.c = options["cost"].to_numpy(float)
        self.gpus = options["total_gpus"].to_numpy(float)
        self.ok = np.isfinite(self.h) & np.isfinite(self.c)
        self.cheapest = _best(self.ok, self.c, self.h)
        self.fastest = _best(self.ok, self.h, self.c)

    def label(self, i: int) -> str:
        row = self.options.iloc[i]
        return (
            f"{row['provider']} {row['instance_type']} x{row['instances']:g} "
            f"({self.gpus[i]:g} GPU{'' if self.gpus[i] == 1 else 's'})"
        )

    def named(self, i: int) -> dict[str, object]:
        return {
            "option": self.label(i),
            "option_hours": float(self.h[i]),
            "option_usd": float(self.c[i]),
            "option_gpus": float(self.gpus[i]),
        }

    def closest(self, i: int, binds: bool, unmet: bool) -> dict[str, object]:
        return _unmet_fields(binds, unmet, self.label(i), self.h[i], self.c[i])


@dataclass(frozen=True)
class _Limit:
    """A limit on one figure: a deadline caps hours and trades dollars, a budget caps dollars
    and trades hours; the case, baseline and delta columns its status row fills."""

    constraint: str
    caps_hours: bool
    case: str
    baseline: str
    delta: str


DEADLINE = _Limit("deadline_hours", True, "costs_more", "baseline_hours", "delta_usd")
BUDGET = _Limit("budget_usd", False, "takes_longer", "baseline_usd", "delta_hours")


def _limit_row(r: _Ranked, spec: _Limit, limit: float) -> dict[str, object]:
    """A limit binds when the option best at the traded figure (the cheapest for a deadline,
    the fastest for a budget) breaks it; met at a price, the row names the option that meets
    it best, the baseline it is set against and the delta in the traded figure
    (STATUS_CASES[constraint]: "met", "none_within" or the spec's case)."""
    capped, traded = (r.h, r.c) if spec.caps_hours else (r.c, r.h)
    best, extreme = (r.cheapest, r.fastest) if spec.caps_hours else (r.fastest, r.cheapest)
    assert best is not None and extreme is not None
    binds = bool(capped[best] > limit)
    meets = _best(r.ok & (capped <= limit), traded, capped)
    row: dict[str, object] = {"constraint": spec.constraint, "value": limit}
    if not binds:
        row |= {"case": "met", **r.named(best)}
    elif meets is None:
        row |= {"case": "none_within", **r.named(extreme)}
    else:
        row |= {"case": spec.case, **r.named(meets), spec.baseline: float(capped[best])}
        row[spec.delta] = float(traded[meets] - traded[best])
    return row | r.closest(extreme, binds, binds and meets is None)


def _gpu_rows(
    r: _Ranked, budget_usd: float | None, max_gpus: int, gpu_count: int | None
) -> list[dict[str, object]]:
    """max GPUs binds when the fastest option (within the budget) uses more than half the
    GPUs allowed; an exact GPU count always binds (every option uses it); an on-prem
    cluster when its fastest option uses all of it."""
    assert r.fastest is not None
    nan = float("nan")
    within_budget = _best(r.ok & (r.c <= (np.inf if budget_usd is None else budget_usd)), r.h, r.c)
    top = r.fastest if within_budget is None else within_budget
    if gpu_count is not None:
        row = {"constraint": "gpu_count", "value": float(gpu_count), "case": "exact"}
        rows = [row | r.named(top) | _unmet_fields(True, False, "", nan, nan)]
    else:
        binds = bool(r.gpus[top] * 2 > max_gpus and r.options["kind"].iloc[top] == "cloud")
        case = "fastest_within_budget" if budget_usd is not None else "fastest"
        rows = [
            {"constraint": "max_gpus", "value": float(max_gpus), "case": case, **r.named(top)}
            | _unmet_fields(binds, False, "", nan, nan)
        ]
    onprem = _best(r.ok & (r.options["kind"].to_numpy() == "on-prem"), r.h, r.c)
    if onprem is not None:
        size = float(r.options["gpus_available"].iloc[onprem])
        rows.append(
            {"constraint": "onprem_gpus", "value": size, "case": "fastest_onprem"}
            | r.named(onprem)
            | _unmet_fields(bool(r.gpus[onprem] >= size), False, "", nan, nan)
        )
    return rows


def _unmet_fields(
    binds: bool, unmet: bool, closest: str, hours: float, usd: float
) -> dict[str, object]:
    """binds, unmet and the closest option's label and figures (blank unless unmet)."""
    nan = float("nan")
    return {
        "binds": binds,
        "unmet": unmet,
        "closest": closest if unmet else "",
        "closest_hours": float(hours) if unmet else nan,
        "closest_usd": float(usd) if unmet else nan,
    }
