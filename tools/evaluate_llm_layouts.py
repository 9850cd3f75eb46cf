"""The layout search's pick on the Ultra-Scale Playbook's sweep, beside a naive rule.

    python tools/evaluate_llm_layouts.py
    (also printed by tools/evaluate_estimator.py as its LLM layout section)

For each model size and node count of the sweep (reference/calibration/ultrascale_playbook_
sweep.csv: nanotron, 1.34B-80B on 1-64 nodes of H100), every layout that ran is timed by
the operator model with the nanotron stack fitted without the Playbook's own runs
(planner.llm.stack_fit.fit_stacks on every other source: the layout search never saw this
sweep), and the one it times fastest is "the pick". Its measured tokens/s over the best
measured in that cell is what following the model would have got; beside it, the naive
rule "most data-parallel ranks, then the largest micro-batch" (what fits without model
parallelism first), and the cell's median layout. The sweep's runs are its own best guess
of what to try, so the cell's best is an upper bound, not the best layout that exists.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
if str(ROOT / "tools") not in sys.path:
    sys.path.insert(0, str(ROOT / "tools"))

import evaluate_llm_memory  # noqa: E402

from planner.llm.corpus import corpus_run, load_calibration  # noqa: E402
from planner.llm.stack_fit import fit_stacks, predict_run  # noqa: E402
from planner.llm.stack_profiles import StackParams  # noqa: E402

SWEEP_SOURCE = evaluate_llm_memory.SWEEP_SOURCE
GOOD = 0.9  # a pick within 10% of the cell's best counts as good


def stack_without_sweep() -> StackParams:
    """The nanotron stack fitted on every source but the Playbook's (its 26 heatmap runs)."""
    runs, _ = load_calibration()
    fit = fit_stacks([r for r in runs if r.source != SWEEP_SOURCE])
    return fit.families.get("nanotron", fit.pooled)


def timed_sweep(sweep: pd.DataFrame, stack: StackParams) -> pd.DataFrame:
    """The sweep's runs with a measured rate, each with the model's tokens/s per GPU."""
    ran = sweep[sweep["tokens_per_s_per_gpu"].fillna(0) > 0].reset_index(drop=True)
    rows = evaluate_llm_memory.sweep_rows_of(ran)
    predicted = []
    for index, row in rows.iterrows():
        run = corpus_run(int(index), row)
        rate = float("nan")
        if not isinstance(run, str):
            found = predict_run(run, stack)
            rate = found.tokens_per_s / run.num_gpus if found.layout.fits else rate
        predicted.append(rate)
    return ran.assign(predicted=predicted)


def picks(timed: pd.DataFrame) -> pd.DataFrame:
    """Per size and node count: the pick's, the naive rule's and the median layout's
    measured tokens/s over the cell's best, and the pick's layout."""
    out = []
    for (params, nodes), cell in timed.groupby(["params", "nodes"], sort=False):
        best = cell["tokens_per_s_per_gpu"].max()
        pick = cell.loc[cell["predicted"].idxmax()]
        naive = cell.sort_values(["dp", "mbs"], ascending=False).iloc[0]
        out.append({
            "model": params, "nodes": nodes, "layouts": len(cell),
            "pick": pick["tokens_per_s_per_gpu"] / best,
            "naive_max_dp": naive["tokens_per_s_per_gpu"] / best,
            "median_layout": cell["tokens_per_s_per_gpu"].median() / best,
            "picked": f"tp{pick['tp']} pp{pick['pp']} dp{pick['dp']} zero{pick['zero_stage']} "
            f"mb{pick['mbs']}",
        })  # fmt: skip
    return pd.DataFrame(out)


def summary(table: pd.DataFrame) -> dict[str, float]:
    """Mean share of the best over the cells, and the share of cells within GOOD of it."""
    return {
        "cells": float(len(table)),
        "pick": float(table["pick"].mean()),
        "naive_max_dp": float(table["naive_max_dp"].mean()),
        "median_layout": float(table["median_layout"].mean()),
        "pick_good": float((table["pick"] >= GOOD).mean()),
        "naive_good": float((table["naive_max_dp"] >= GOOD).mean()),
    }


def print_llm_layouts() -> pd.DataFrame:
    """Print the LLM layout section (tools/evaluate_estimator.py calls it)."""
    sweep = pd.read_csv(evaluate_llm_memory.SWEEP_PATH)
    table = picks(timed_sweep(sweep, stack_without_sweep()))
    print(
        "\n(m) LLM layout pick on the Ultra-Scale Playbook sweep: the layout the model times "
        "fastest (nanotron fitted without the Playbook) beside 'most data parallelism', as "
        "measured tokens/s over the best the sweep measured in the cell"
    )
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print("summary:", {k: round(v, 3) for k, v in summary(table).items()})
    return table


if __name__ == "__main__":
    pd.set_option("display.width", 200)
    print_llm_layouts()
