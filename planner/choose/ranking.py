"""Which options a plan shows and in what order: the frontier, the count chosen per offer,
the picks, what each misses, and the rank of the rows shown (planner.choose.pareto)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from planner.choose.pareto import (
    PICK_COLUMNS,
    PICKS,
    choose_counts,
    constraint_status,
    feasible_mask,
    pareto_mask,
    picks,
)
from planner.codes import Miss
from planner.notes import Note
from planner.request import PlanRequest

if TYPE_CHECKING:
    from planner.onprem.tco import OnPremConfig


def ranked(opts: pd.DataFrame, request: PlanRequest) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Options with on_pareto, feasible (meets the deadline and budget), chosen_count (the
    count shown for each offer), pick (pick names, comma-joined) and misses (Miss codes);
    and the picks table (planner.choose.pareto.picks: pick, position and figures)."""
    hours = opts["hours_to_train"].to_numpy(float)
    cost = opts["cost_usd"].to_numpy(float)
    deadline, budget = request.deadline_hours, request.budget_usd
    opts = opts.assign(
        on_pareto=pareto_mask(hours, cost),
        feasible=feasible_mask(hours, cost, deadline, budget),
        chosen_count=choose_counts(opts["offer_key"], hours, cost, deadline),
    )
    picked = picks(hours, cost, deadline, budget)
    opts["pick"] = _pick_names(picked, len(opts))
    opts["misses"] = _misses(hours, cost, deadline, budget)
    return opts, picked


def shown_options(opts: pd.DataFrame, sample_limit: int) -> tuple[pd.DataFrame, np.ndarray]:
    """The options a plan shows (a chosen count, on the frontier or a pick), feasible first,
    then chosen counts, cheapest, fastest, fewest GPUs; rank 1, 2, ... for chosen counts (0
    for others). Also the mask of rows whose spot time is simulated: picks, frontier and
    the first `sample_limit` ranks."""
    shown = opts.loc[
        (opts["chosen_count"] | opts["on_pareto"] | (opts["pick"] != "")).to_numpy()
    ].copy()
    order = np.lexsort(
        (
            shown["total_gpus"].to_numpy(),
            shown["hours_to_train"].to_numpy(),
            shown["cost_usd"].to_numpy(),
            ~shown["chosen_count"].to_numpy(),
            ~shown["feasible"].to_numpy(),
        )
    )
    shown = shown.iloc[order]
    chosen_rows = shown["chosen_count"].to_numpy()
    shown["rank"] = np.where(chosen_rows, np.cumsum(chosen_rows), 0)
    simulate = (
        (shown["pick"] != "").to_numpy()
        | shown["on_pareto"].to_numpy()
        | (chosen_rows & (shown["rank"].to_numpy() <= sample_limit))
    )
    return shown, simulate


def pick_table(picked: pd.DataFrame, opts: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """The picks with their figures (PICK_COLUMNS but position) and then each pick's row,
    in PICKS order."""
    ids = opts["option_id"].to_numpy()[picked["position"].to_numpy(dtype=int)]
    at_rows = pd.Index(rows["option_id"]).get_indexer(ids)
    if (at_rows < 0).any():
        raise KeyError(f"picked options not among the rows: {ids[at_rows < 0].tolist()}")
    columns = ["option_id", *(c for c in rows.columns if c not in ("option_id", "pick"))]
    table = rows.iloc[at_rows].loc[:, columns].reset_index(drop=True)
    for at, column in enumerate(c for c in PICK_COLUMNS if c != "position"):
        table.insert(at, column, picked[column].to_numpy())
    order = {name: i for i, name in enumerate(PICKS)}
    return table.sort_values("pick", key=lambda s: s.map(order)).reset_index(drop=True)


def constraint_table(opts: pd.DataFrame, request: PlanRequest) -> pd.DataFrame:
    """planner.choose.pareto.constraint_status of the options for the request's deadline,
    budget and GPU limit or exact GPU count (on-prem options know their cluster's size)."""
    return constraint_status(
        opts.assign(
            hours=opts["hours_to_train"].to_numpy(float),
            cost=opts["cost_usd"].to_numpy(float),
            gpus_available=opts["offer_key"].map(_cluster_sizes(request.onprem)),
        ),
        request.deadline_hours,
        request.budget_usd,
        request.gpu_limit,
        request.gpu_count,
    )


def unmet_notes(status: pd.DataFrame) -> list[Note]:
    """A note for a deadline or budget nothing meets (the status row says what is closest)."""
    out = []
    for row in status.loc[status["unmet"]].itertuples():
        if row.constraint == "deadline_hours":
            values = {"deadline_hours": row.value, "closest_hours": row.closest_hours}
            out.append(Note("deadline_unmet", _closest_first(values, row.closest)))
        elif row.constraint == "budget_usd":
            values = {"budget_usd": row.value, "closest_usd": row.closest_usd}
            out.append(Note("budget_unmet", _closest_first(values, row.closest)))
    return out


def _closest_first(values: dict[str, object], closest: object) -> dict[str, object]:
    """The note's values in their recorded order: the constraint, closest, its figure."""
    (first, value), (last, figure) = values.items()
    return {first: value, "closest": closest, last: figure}


def _cluster_sizes(onprem: Sequence[OnPremConfig]) -> dict[str, float]:
    return {f"on-prem:{i}": float(c.gpus) for i, c in enumerate(onprem)}


def _pick_names(picked: pd.DataFrame, n: int) -> np.ndarray:
    names = np.full(n, "", dtype=object)
    for name, position in zip(picked["pick"], picked["position"], strict=True):
        names[position] = name if not names[position] else f"{names[position]},{name}"
    return names


def _misses(
    hours: np.ndarray, cost: np.ndarray, deadline: float | None, budget: float | None
) -> np.ndarray:
    """Per option, the tuple of Miss codes it misses (deadline first)."""
    late = hours > deadline if deadline is not None else np.zeros(len(hours), bool)
    dear = cost > budget if budget is not None else np.zeros(len(cost), bool)
    kinds = {
        (True, True): (Miss.DEADLINE, Miss.BUDGET),
        (True, False): (Miss.DEADLINE,),
        (False, True): (Miss.BUDGET,),
        (False, False): (),
    }
    out = np.empty(len(hours), dtype=object)
    out[:] = [kinds[(bool(a), bool(b))] for a, b in zip(late, dear, strict=True)]
    return out
