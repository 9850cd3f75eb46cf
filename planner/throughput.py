"""Throughput for (GPU, workload, precision, GPU count), labelled with its source.

Sources, most trusted first:
  measured   - the user's own `gpuplan bench` results
  published  - published figures (Lambda's PyTorch benchmarks)
  scaled     - a measured or published figure at another GPU count, scaled to this one
  estimated  - no figure for this GPU: a model from specs (LLMs: assumed MFU)

Every row says which figure it came from (`throughput_detail`) and carries a low/high
band (`throughput_low`, `throughput_high`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from planner.hardware import load_specs, peak_tflops_column
from planner.workloads import Workload

SOURCE_RANK = {"measured": 0, "published": 1, "scaled": 2, "estimated": 3}
TABLE_COLUMNS = (
    "gpu_name",
    "gpu_count",
    "throughput",
    "throughput_low",
    "throughput_high",
    "throughput_source",
    "throughput_detail",
)

# LLM throughput without a GPT measurement: an assumed model-FLOPs utilization.
# PaLM reports 46% MFU (Chowdhery et al. 2022, table 3); Megatron-LM 54% on A100 at
# scale with selective recomputation (Korthikanti et al. 2022); typical public training
# runs report 30-50%. Default 40%, band 25-55%.
ASSUMED_LLM_MFU = 0.40
ASSUMED_LLM_MFU_BAND = (0.25, 0.55)


def _matching_results(results: pd.DataFrame, workload: Workload, precision: str) -> pd.DataFrame:
    """Result rows for this workload and precision (published rows joined by Lambda name)."""
    same_model = results["workload"] == workload.model
    if workload.model_size:
        same_model &= results["model_size"].isin([workload.model_size, ""])
    return results.loc[
        same_model & (results["precision"] == precision) & results["gpu_name"].notna()
    ]


def _aggregate(rows: pd.DataFrame, kind: str) -> pd.DataFrame:
    """One figure per (GPU, count): the median of the newest generation's runs."""
    if rows.empty:
        return pd.DataFrame(columns=list(TABLE_COLUMNS))
    newest = rows.groupby(["gpu_name", "world_size"])["started_at"].transform("max")
    rows = rows.loc[rows["started_at"] == newest]
    grouped = rows.groupby(["gpu_name", "world_size"])
    table = grouped.agg(
        throughput=("throughput", "median"),
        throughput_low=("throughput", "min"),
        throughput_high=("throughput", "max"),
        runs=("throughput", "size"),
        first_detail=("detail", "first"),
        first_id=("id", "first"),
    ).reset_index()
    table = table.rename(columns={"world_size": "gpu_count"})
    table["gpu_count"] = table["gpu_count"].astype(float)
    table["throughput_source"] = kind
    runs = table["runs"].astype(str)
    if kind == "measured":
        table["throughput_detail"] = np.where(
            table["runs"] > 1,
            "median of " + runs + " own runs",
            "own run " + table["first_id"].astype(str),
        )
    else:
        table["throughput_detail"] = np.where(
            table["runs"] > 1,
            "median of " + runs + " runs, " + table["first_detail"],
            table["first_detail"],
        )
    return table.loc[:, list(TABLE_COLUMNS)]


def throughput_table(results: pd.DataFrame, workload: Workload, precision: str) -> pd.DataFrame:
    """Known figures for a workload and precision: one row per (GPU, count), best source.

    `results` is a benchmarks.results.results_frame() table (own and published rows).
    For bf16 without a bf16 figure, an fp16-AMP figure stands in on GPUs with bf16
    tensor cores (same dense peak: gpu_specs bf16_tflops == fp16_tflops), and says so.
    """
    rows = _matching_results(results, workload, precision)
    measured = _aggregate(rows.loc[rows["source"] == "measured"], "measured")
    published = _aggregate(rows.loc[rows["source"].str.startswith("published")], "published")
    if precision == "bf16":
        has_bf16 = load_specs()["bf16_tflops"].notna()
        proxy_rows = _matching_results(results, workload, "fp16")
        proxy_rows = proxy_rows.loc[proxy_rows["gpu_name"].map(has_bf16).fillna(False).astype(bool)]
        proxy = _aggregate(
            proxy_rows.loc[proxy_rows["source"].str.startswith("published")], "published"
        )
        proxy["throughput_detail"] = "fp16 AMP figure as bf16 proxy: " + proxy["throughput_detail"]
        published = pd.concat([published, proxy], ignore_index=True)
    table = pd.concat(
        [t for t in (measured, published) if not t.empty] or [measured], ignore_index=True
    )
    if table.empty:
        return table
    table["gpu_count"] = table["gpu_count"].astype(float)
    table["_rank"] = table["throughput_source"].map(SOURCE_RANK)
    table = table.sort_values(["gpu_name", "gpu_count", "_rank"])
    return (
        table.drop_duplicates(["gpu_name", "gpu_count"])
        .drop(columns="_rank")
        .reset_index(drop=True)
    )


def throughput_for_offers(offers: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """Throughput for every offer's (gpu_name, gpu_count), aligned to `offers.index`.

    Exact counts use the figure as is. Other counts scale linearly from the nearest
    smaller count of the same GPU (from 1 GPU for a fractional GPU slice), labelled
    `scaled` with the assumption stated; no figure for the GPU gives NaN.
    """
    out = pd.DataFrame(index=offers.index, columns=list(TABLE_COLUMNS[2:]), dtype=object)
    for column in ("throughput", "throughput_low", "throughput_high"):
        out[column] = np.nan
    if table.empty or offers.empty:
        return out
    keys = offers.loc[:, ["gpu_name", "gpu_count"]].reset_index(names="_row")
    exact = keys.merge(table, on=["gpu_name", "gpu_count"], how="inner")
    rest = keys.loc[~keys["_row"].isin(exact["_row"])].sort_values("gpu_count")
    base = table.sort_values("gpu_count").rename(columns={"gpu_count": "base_count"})
    base["gpu_count"] = base["base_count"]
    back = pd.merge_asof(rest, base, on="gpu_count", by="gpu_name", direction="backward")
    fwd = pd.merge_asof(rest, base, on="gpu_count", by="gpu_name", direction="forward")
    scaled = back.where(back["throughput"].notna(), fwd)
    scaled = scaled.loc[
        scaled["throughput"].notna()
        & ((scaled["gpu_count"] > scaled["base_count"]) | (scaled["gpu_count"] < 1))
    ].copy()
    if not scaled.empty:
        factor = scaled["gpu_count"] / scaled["base_count"]
        for column in ("throughput", "throughput_low", "throughput_high"):
            scaled[column] = scaled[column] * factor
        scaled["throughput_detail"] = (
            "linear from "
            + scaled["base_count"].map("{:g}".format)
            + "-GPU "
            + scaled["throughput_source"]
            + " ("
            + scaled["throughput_detail"]
            + "); no scaling loss assumed"
        )
        scaled["throughput_source"] = "scaled"
    found = pd.concat([exact, scaled], ignore_index=True).set_index("_row")
    out.loc[found.index, list(TABLE_COLUMNS[2:])] = found.loc[:, list(TABLE_COLUMNS[2:])]
    for column in ("throughput", "throughput_low", "throughput_high"):
        out[column] = out[column].astype(float)
    return out


def llm_throughput_for_offers(
    offers: pd.DataFrame, workload: Workload, precision: str
) -> pd.DataFrame:
    """Estimated LLM tokens/s per offer: MFU x peak FLOP/s x GPUs / FLOPs per token.

    MFU definition: Chowdhery et al. 2022 (PaLM), appendix B. Uses ASSUMED_LLM_MFU
    with its band; NaN where the GPU has no peak at this precision.
    """
    peak = peak_tflops_column(offers["gpu_name"], precision) * 1e12
    tokens_per_s = peak * offers["gpu_count"] / workload.flops_per_sample
    low_mfu, high_mfu = ASSUMED_LLM_MFU_BAND
    return pd.DataFrame(
        {
            "throughput": ASSUMED_LLM_MFU * tokens_per_s,
            "throughput_low": low_mfu * tokens_per_s,
            "throughput_high": high_mfu * tokens_per_s,
            "throughput_source": "estimated",
            "throughput_detail": (
                f"assumed MFU {ASSUMED_LLM_MFU:.0%} (band {low_mfu:.0%}-"
                f"{high_mfu:.0%}) x {precision} dense peak from gpu_specs"
            ),
        },
        index=offers.index,
    )


def own_and_published_results(
    results_dirs: list[str] | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """Own results (bundled samples + `results_dirs`) and published ones, as one table.

    Own results get `gpu_name` from their CUDA device name. Returns the table and one
    message per result file that was rejected (the others still load).
    """
    from benchmarks.published import published_frame
    from benchmarks.results import load_results, results_frame
    from pricing.gpus import gpu_from_device_name

    own = []
    problems: list[str] = []
    for directory in [bundled_results_dir(), *(results_dirs or [])]:
        loaded, bad = load_results(directory)
        own.extend(loaded)
        problems.extend(bad)
    mine = results_frame(own)
    if not mine.empty:
        named = mine["gpu_name"].notna()
        mine.loc[~named, "gpu_name"] = mine.loc[~named, "device_name"].map(gpu_from_device_name)
        mine = mine.drop_duplicates("id")
    return pd.concat([mine, published_frame()], ignore_index=True), problems


def bundled_results_dir() -> str:
    """Sample measured results shipped with gpuplan (benchmarks/results/)."""
    from importlib import resources

    return str(resources.files("benchmarks") / "results")
