"""Sweep results as `measured` throughput for exactly the instance type they ran on.

A result a sweep brought back from a cloud instance (benchmarks.results `sweep`:
provider, region, instance type) measures that instance type itself: for options of
that provider and instance type at the measured GPU count on one instance, it replaces
whatever the GPU-keyed join found (another machine's result for the same GPU, a
published figure, a fit). Newest sweep first; several runs of it give their median and
min-max band; of runs at several batches, the fastest batch's (benchmarks.batch_choice).
Other options are untouched.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchmarks.batch_choice import without_slower_batches
from planner.throughput.run_spread import figure_of_runs

FIGURE_COLUMNS = (
    "provider", "instance_type", "world_size", "throughput", "throughput_low",
    "throughput_high", "runs", "sweep_id", "date",
)  # fmt: skip


def sweep_figures(
    results: pd.DataFrame, model: str, model_size: str, precision: str
) -> pd.DataFrame:
    """One figure per (provider, instance type, world size) from the newest sweep's runs."""
    needed = {"sweep_instance_type", "sweep_provider", "sweep_id"}
    if results.empty or not needed <= set(results.columns):
        return pd.DataFrame(columns=list(FIGURE_COLUMNS))
    swept = results["sweep_instance_type"].notna() & results["sweep_provider"].notna()
    if not swept.any():  # the usual table: published figures and runs of no sweep
        return pd.DataFrame(columns=list(FIGURE_COLUMNS))
    results = without_slower_batches(results)  # a swept batch: its fastest run stands
    swept = swept.loc[results.index]
    rows = results.loc[
        swept
        & (results["source"] == "measured")
        & (results["workload"] == model)
        & results["model_size"].isin([model_size, ""])
        & (results["precision"] == precision)
    ]
    if rows.empty:
        return pd.DataFrame(columns=list(FIGURE_COLUMNS))
    key = ["sweep_provider", "sweep_instance_type", "world_size"]
    newest = rows.groupby(key)["started_at"].transform("max")
    newest_sweep = rows.loc[rows["started_at"] == newest].groupby(key)["sweep_id"].first()
    rows = rows.join(newest_sweep.rename("_newest"), on=key)
    rows = rows.loc[rows["sweep_id"] == rows["_newest"]]
    table = (
        rows.groupby(key)
        .agg(
            **figure_of_runs(),
            sweep_id=("sweep_id", "first"),
            date=("started_at", "max"),
        )
        .reset_index()
        .rename(columns={"sweep_provider": "provider", "sweep_instance_type": "instance_type"})
    )
    table["date"] = table["date"].astype(str).str[:10]
    return table.loc[:, list(FIGURE_COLUMNS)]


def apply_sweep_figures(options: pd.DataFrame, figures: pd.DataFrame) -> pd.DataFrame:
    """`options` (with throughput columns) where sweep figures replace the throughput of
    one instance of the measured type at the measured GPU count; `sweep_detail` says which
    sweep and date ("" elsewhere)."""
    out = options.assign(sweep_detail="")
    if figures.empty or options.empty:
        return out
    keyed = figures.assign(world_size=figures["world_size"].astype(float)).set_index(
        ["provider", "instance_type", "world_size"]
    )
    index = pd.MultiIndex.from_arrays(
        [
            out["provider"].astype(str),
            out["instance_type"].astype(str),
            out["total_gpus"].astype(float),
        ]
    )
    position = keyed.index.get_indexer(index)
    hit = (position >= 0) & (out["instances"].to_numpy(float) == 1)
    if not hit.any():
        return out
    chosen = keyed.iloc[position[hit]]
    for column in ("throughput", "throughput_low", "throughput_high"):
        out[column] = out[column].astype(float)
        out.loc[hit, column] = chosen[column].to_numpy(float)
    out["throughput_source"] = out["throughput_source"].astype(object)
    out.loc[hit, "throughput_source"] = "measured"
    runs = chosen["runs"].to_numpy(int)
    detail = np.where(runs > 1, "median of " + runs.astype(str) + " runs of ", "")
    out.loc[hit, "sweep_detail"] = (
        detail
        + "sweep "
        + chosen["sweep_id"].astype(str).to_numpy()
        + " on this instance type ("
        + chosen["date"].to_numpy().astype(str)
        + ")"
    )
    return out


SWEEP_TABLE_COLUMNS = (
    "sweep_id", "provider", "region", "instance_type", "gpu_name", "workload", "model_size",
    "precision", "world_size", "throughput", "throughput_unit", "runs", "date",
    "published_throughput", "published_detail", "measured_over_published",
)  # fmt: skip


def sweep_table(results: pd.DataFrame) -> pd.DataFrame:
    """Every sweep's results, one row per (sweep, instance, benchmark, GPU count), beside the
    published figure for the same GPU, model, precision and count (NaN where none).

    `results` is planner.throughput.own_and_published_results()'s table. Machines without a
    cloud instance type (on-prem over SSH) show their host's GPU under `gpu_name`.
    """
    from planner.throughput.benchmark_compare import KEY, is_published, measured_vs_published

    if results.empty or "sweep_id" not in results.columns:
        return pd.DataFrame(columns=list(SWEEP_TABLE_COLUMNS))
    keyed = results.assign(gpu_name=results["gpu_name"].fillna(results["device_name"]))
    swept = keyed.loc[keyed["sweep_id"].notna() & ~is_published(keyed)]
    if swept.empty:
        return pd.DataFrame(columns=list(SWEEP_TABLE_COLUMNS))
    group = ["sweep_id", "sweep_provider", "sweep_region", "sweep_instance_type", *KEY]
    table = (
        swept.groupby(group, dropna=False)
        .agg(
            throughput=("throughput", "median"),
            throughput_unit=("throughput_unit", "first"),
            runs=("throughput", "size"),
            date=("started_at", "max"),
        )
        .reset_index()
        .rename(
            columns={
                "sweep_provider": "provider",
                "sweep_region": "region",
                "sweep_instance_type": "instance_type",
            }
        )
    )
    table["date"] = table["date"].astype(str).str[:10]
    published = measured_vs_published(pd.concat([swept, keyed.loc[is_published(keyed)]]))
    table = table.merge(
        published.loc[:, [*KEY, "published_throughput", "published_detail"]], on=KEY, how="left"
    )
    table["measured_over_published"] = table["throughput"] / table["published_throughput"]
    return table.loc[:, list(SWEEP_TABLE_COLUMNS)].sort_values(
        ["date", "sweep_id"], ascending=False
    )
