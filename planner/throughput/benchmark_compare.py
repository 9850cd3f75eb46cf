"""Own measurements next to published figures for the same GPU, model, precision and count.

Side-by-side table (one row per own (gpu_name, workload, model_size, precision, world_size)):

  gpu_name, workload, model_size, precision, world_size, throughput_unit,
  measured_throughput (median of own runs), measured_runs, measured_detail (the run id, or
  how many runs), published_throughput (median of the newest published generation's runs),
  published_detail, measured_over_published (ratio; NaN without a published figure)

Own results on a device with no canonical GPU name (a CPU) are listed under the device
name in `gpu_name`; they have no published counterpart (NaN published columns).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from planner.codes import is_published as codes_is_published
from planner.throughput.run_spread import figure_of_runs

KEY = ["gpu_name", "workload", "model_size", "precision", "world_size"]
COMPARE_COLUMNS: tuple[str, ...] = (
    *KEY, "throughput_unit", "measured_throughput", "measured_runs", "measured_detail",
    "published_throughput", "published_detail", "measured_over_published",
)  # fmt: skip


def is_published(results: pd.DataFrame) -> pd.Series:
    """True for published figures (source 'published:...'), False for own runs."""
    return codes_is_published(results["source"])


def measured_vs_published(results: pd.DataFrame) -> pd.DataFrame:
    """Own runs beside the published figure for the same key (COMPARE_COLUMNS)."""
    keyed = results.assign(gpu_name=results["gpu_name"].fillna(results["device_name"]))
    own = keyed.loc[~is_published(keyed)]
    if own.empty:
        return pd.DataFrame(columns=list(COMPARE_COLUMNS))
    mine = (
        own.groupby(KEY, dropna=False)
        .agg(
            throughput_unit=("throughput_unit", "first"),
            measured_throughput=("throughput", "median"),
            measured_runs=("throughput", "size"),
            first_id=("id", "first"),
        )
        .reset_index()
    )
    mine["measured_detail"] = np.where(
        mine["measured_runs"] > 1,
        "median of " + mine["measured_runs"].astype(str) + " own runs",
        "own run " + mine["first_id"].astype(str),
    )
    published = keyed.loc[is_published(keyed)]
    newest = published.groupby(KEY)["started_at"].transform("max")
    published = published.loc[published["started_at"] == newest]
    theirs = (
        published.groupby(KEY)
        .agg(
            published_throughput=("throughput", "median"),
            published_runs=("throughput", "size"),
            published_first=("detail", "first"),
        )
        .reset_index()
    )
    theirs["published_detail"] = np.where(
        theirs["published_runs"] > 1,
        "median of " + theirs["published_runs"].astype(str) + " runs, " + theirs["published_first"],
        theirs["published_first"],
    )
    table = mine.merge(theirs, on=KEY, how="left")
    table["measured_over_published"] = table["measured_throughput"] / table["published_throughput"]
    return table.loc[:, list(COMPARE_COLUMNS)].sort_values(KEY).reset_index(drop=True)


def model_label(workload: pd.Series, model_size: pd.Series) -> pd.Series:
    """'resnet50 full', 'bert large', 'ssd': how the app names a benchmark model."""
    return (workload.astype(str) + " " + model_size.fillna("").astype(str)).str.strip()


BY_GPU_COLUMNS: tuple[str, ...] = (
    "gpu_name", "world_size", "origin", "throughput", "throughput_low", "throughput_high",
    "runs", "throughput_unit", "detail",
)  # fmt: skip


def throughput_by_gpu(results: pd.DataFrame, model: str, precision: str) -> pd.DataFrame:
    """Median throughput per GPU, GPU count and origin (own | published) for one model
    (model_label) and precision; low/high = min/max of the runs (BY_GPU_COLUMNS).

    Published figures are the newest generation's, own runs all count; own runs on a
    device without a canonical GPU name are listed under the device name.
    """
    keyed = results.assign(
        gpu_name=results["gpu_name"].fillna(results["device_name"]),
        origin=np.where(is_published(results), "published", "own"),
        model=model_label(results["workload"], results["model_size"]),
    )
    rows = keyed.loc[(keyed["model"] == model) & (keyed["precision"] == precision)]
    if rows.empty:
        return pd.DataFrame(columns=list(BY_GPU_COLUMNS))
    keys = ["gpu_name", "world_size", "origin"]
    newest = rows.groupby(keys)["started_at"].transform("max")
    rows = rows.loc[(rows["origin"] == "own") | (rows["started_at"] == newest)]
    table = (
        rows.groupby(keys)
        .agg(
            **figure_of_runs(),
            throughput_unit=("throughput_unit", "first"),
            detail=("detail", "first"),
        )
        .reset_index()
    )
    return table.loc[:, list(BY_GPU_COLUMNS)]
