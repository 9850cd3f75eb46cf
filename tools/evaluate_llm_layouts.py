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

The same timings also give, for the unpipelined runs of one sequence a micro-batch at tp 2
and up, the milliseconds a micro-batch takes, measured and modelled (micro_batch_floor):
how far the model is from the per-layer floor the sweep shows within a node.
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
GPUS_PER_NODE = 8  # the sweep's nodes of 8 H100


def stack_without_sweep() -> StackParams:
    """The nanotron stack fitted on every source but the Playbook's (its 26 heatmap runs)."""
    runs, _ = load_calibration()
    fit = fit_stacks([r for r in runs if r.source != SWEEP_SOURCE])
    return fit.families.get("nanotron", fit.pooled)


def timed_sweep(sweep: pd.DataFrame, stack: StackParams) -> pd.DataFrame:
    """The sweep's runs with a measured rate, each with the model's tokens/s per GPU and
    the sequence length and layer count of the workload it was timed as."""
    ran = sweep[sweep["tokens_per_s_per_gpu"].fillna(0) > 0].reset_index(drop=True)
    rows = evaluate_llm_memory.sweep_rows_of(ran)
    predicted, seq_len, layers = [], [], []
    for index, row in rows.iterrows():
        run = corpus_run(int(index), row)
        rate, seq, depth = float("nan"), float("nan"), float("nan")
        if not isinstance(run, str):
            found = predict_run(run, stack)
            rate = found.tokens_per_s / run.num_gpus if found.layout.fits else rate
            seq, depth = float(run.workload.seq_len or "nan"), float(run.workload.n_layer)
        predicted.append(rate)
        seq_len.append(seq)
        layers.append(depth)
    return ran.assign(predicted=predicted, seq_len=seq_len, layers=layers)


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


def micro_batch_floor(timed: pd.DataFrame) -> pd.DataFrame:
    """Per size and tensor-parallel degree (2 and up), the sweep's unpipelined one-sequence
    micro-batches (timed_sweep's table): the median measured and modelled milliseconds a
    micro-batch takes (the step, gbs x seq_len / GPUs tokens per GPU over the rate, over
    its grad_acc micro-batches), and both per layer. A time that stays put as tp grows is a
    per-layer floor the GPU's work does not set."""
    one = timed[(timed["pp"] == 1) & (timed["mbs"] == 1) & (timed["tp"] >= 2)]
    tokens = one["gbs"] * one["seq_len"] / one["num_gpus"]
    per_micro_batch = pd.DataFrame({"model": one["params"], "tp": one["tp"]})
    for name, rate in (("measured", one["tokens_per_s_per_gpu"]), ("model", one["predicted"])):
        per_micro_batch[f"{name}_ms"] = 1e3 * tokens / rate / one["grad_acc"]
    for name in ("measured", "model"):
        per_micro_batch[f"{name}_ms_per_layer"] = per_micro_batch[f"{name}_ms"] / one["layers"]
    return per_micro_batch.groupby(["model", "tp"], sort=False).median().reset_index()


def floor_per_layer(floor: pd.DataFrame) -> pd.DataFrame:
    """Per size, the least measured milliseconds per layer over tp 2 to GPUS_PER_NODE (one
    node), and the model's at that tp (micro_batch_floor's table)."""
    inside = floor[floor["tp"] <= GPUS_PER_NODE]
    lowest = inside.loc[inside.groupby("model", sort=False)["measured_ms_per_layer"].idxmin()]
    return lowest.set_index("model")[["measured_ms_per_layer", "model_ms_per_layer"]].rename(
        columns={"measured_ms_per_layer": "measured", "model_ms_per_layer": "model"}
    )


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
    timed = timed_sweep(sweep, stack_without_sweep())
    table = picks(timed)
    floor = micro_batch_floor(timed)
    print(
        "\n(m) LLM layout pick on the Ultra-Scale Playbook sweep: the layout the model times "
        "fastest (nanotron fitted without the Playbook) beside 'most data parallelism', as "
        "measured tokens/s over the best the sweep measured in the cell"
    )
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print("summary:", {k: round(v, 3) for k, v in summary(table).items()})
    lowest = floor_per_layer(floor)
    print(
        "per-micro-batch time of the sweep's unpipelined runs at micro-batch 1 and tp >= 2, "
        "measured and modelled (medians over its node counts). Within a node (tp 2-8) the "
        "measured time per layer falls no lower than "
        + ", ".join(f"{m} {v['measured']:.1f} ms" for m, v in lowest.iterrows())
        + " however far tp splits the work; the model times those micro-batches at "
        + ", ".join(f"{v['model']:.1f}" for _, v in lowest.iterrows())
        + " ms a layer: a per-layer floor it lacks (docs/model.md, known gaps)"
    )
    print(floor.to_string(index=False, float_format=lambda v: f"{v:.1f}"))
    return table


if __name__ == "__main__":
    pd.set_option("display.width", 200)
    print_llm_layouts()
