"""Which own runs of a batch sweep stand for their configuration's throughput (read by the
planner's figures: planner.throughput.offers, planner.llm.mfu).

`gpuplan bench run --batch 16,32,64,256` writes one result per batch. A plan's figure for a
GPU, model, precision and GPU count is the rate it trains at, so a sweep's runs at smaller
batches (launch- and host-bound: a ResNet-50 step at batch 16 runs at 11-18% of its
batch-256 rate on an H200, reference/own_runs) must not be pooled into that figure. Of the
own (measured) runs of one configuration, those at the batch with the highest median
throughput are kept; the others are skipped with the reason "smaller_batch" (planner.notes).
The small-batch penalty itself is the step model's (planner.throughput.step_model).
"""

from __future__ import annotations

import pandas as pd

# One configuration: what a run measures and where (a sweep's instance type apart); columns
# of benchmarks.results.results_frame, gpu_name as the planner adds it.
CONFIG_KEY = ("workload", "model_size", "precision", "gpu_name", "device", "world_size")


def fastest_batches(results: pd.DataFrame) -> pd.Series:
    """Per row of `results` (own_and_published_results' table), the batch per device of its
    configuration's fastest batch where the row is an own run of a swept configuration
    at another batch, else NaN: the rows to leave out of figures and why."""
    out = pd.Series(float("nan"), index=results.index)
    needed = {"source", "batch_size_per_device", "throughput", *CONFIG_KEY}
    if results.empty or not needed <= set(results.columns):
        return out
    own = results.loc[
        (results["source"].astype(str) == "measured")
        & results["batch_size_per_device"].notna()
        & (results["throughput"] > 0)
    ]
    if own.empty:
        return out
    keys = own.loc[:, list(CONFIG_KEY)].astype(str)
    if "sweep_instance_type" in own.columns:
        keys = keys.assign(instance=own["sweep_instance_type"].fillna("").astype(str))
    if "compiled" in own.columns:  # compiled and eager runs are two configurations
        keys = keys.assign(compiled=own["compiled"].astype(str))
    group = keys.apply(tuple, axis=1)
    batch = own["batch_size_per_device"].astype(float)
    rates = own["throughput"].astype(float).groupby([group, batch]).median()
    best = rates.groupby(level=0).idxmax().map(lambda index: index[1])
    fastest = group.map(best)
    swept = fastest.notna() & (batch != fastest)
    out.loc[swept[swept].index] = fastest[swept].astype(float)
    return out


def without_slower_batches(results: pd.DataFrame) -> pd.DataFrame:
    """`results` less the own runs of a batch sweep at other than its fastest batch."""
    return results.loc[fastest_batches(results).isna()]
