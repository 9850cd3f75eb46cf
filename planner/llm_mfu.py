"""The compute efficiency an LLM layout starts from: own GPT results, else a cited prior.

Efficiency here is model FLOPs per second over the dense peak (MFU as Chowdhery et al.
2022, "PaLM", app. B define it) of the GPU's own compute; planner.llm_layout then charges
each layout's pipeline bubble and exposed tensor-, pipeline- and data-parallel communication
on top of it. Order:

  own       the GPT benchmark's MFU on this GPU (own results, then published; field `mfu`,
            or achieved TFLOP/s over the spec peak), nearest measured size; its band is the
            runs' spread widened by SIZE_LOG_ERROR_PER_DECADE per decade of size between
            the run and the target
  prior     a figure per GPU generation from the literature (GENERATION_PRIORS, each cited)

The literature figures are end-to-end MFUs of tuned runs and so already include some of
the overheads the layout model adds again: at thousands of GPUs the prediction errs low by
about those runs' own overhead share. fp8 (planner.llm_layout) scales the bf16 figure by
FP8_SPEEDUP instead of assuming the fp8 peak is reached at the same fraction.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from planner.hardware import load_specs, peak_tflops
from planner.llm_presets import LLM_PRESETS, label_params


@dataclass(frozen=True)
class MFUPrior:
    """MFU with its 10-90% band, and where it comes from."""

    mfu: float
    low: float
    high: float
    source: str


# (architecture regex on gpu_specs.csv's `architecture`, prior). First match wins.
GENERATION_PRIORS: tuple[tuple[str, MFUPrior], ...] = (
    (
        r"^Ampere \(GA100\)",
        MFUPrior(
            0.60,
            0.48,
            0.72,
            "A100 prior: 72% end to end for GPT-1.3B/2.7B on 8 A100 with FlashAttention-2 "
            "(Dao 2023, sec. 4.2); 54-56% at 22B-1T with selective recomputation on up to "
            "2,240 A100 (Korthikanti et al. 2022, table 4); 55.2% for 175B on 12,288 A100 "
            "(Jiang et al. 2024, MegaScale)",
        ),
    ),
    (
        r"^(Hopper|Blackwell$|Blackwell Ultra|GB200)",
        MFUPrior(
            0.50,
            0.38,
            0.62,
            "Hopper-class prior: 38-43% bf16 MFU for Llama 3 405B on 8,192-16,384 H100 with "
            "tp8 pp16, all overheads included (Dubey et al. 2024, table 4); FlashAttention-3 "
            "reaches 75% of the H100 peak in attention (Shah et al. 2024); Blackwell: no "
            "end-to-end figure published, Hopper's used",
        ),
    ),
    (
        r"^Volta",
        MFUPrior(
            0.30,
            0.22,
            0.40,
            "V100 prior: 39 TFLOP/s of 125 (30%) for a 1.2B GPT on one V100 (Shoeybi et al. "
            "2019, Megatron-LM, sec. 5.1)",
        ),
    ),
    (
        r"^CDNA",
        MFUPrior(
            0.35,
            0.25,
            0.45,
            "AMD prior: 32-38% of the MI250X peak for 175B-1T GPTs on Frontier (Dash et al. "
            "2023); MI300X: no end-to-end figure published, MI250X's used",
        ),
    ),
    (
        r"^TPU",
        MFUPrior(
            0.46,
            0.35,
            0.58,
            "TPU prior: 46.2% MFU for PaLM 540B on 6,144 TPU v4 (Chowdhery et al. 2022, table 3)",
        ),
    ),
)
DEFAULT_PRIOR = MFUPrior(
    0.40, 0.25, 0.55,
    "assumed 40% (25-55%): no published LLM training MFU for this GPU class; between PaLM's "
    "46% (Chowdhery et al. 2022) and V100's 30% (Shoeybi et al. 2019)",
)  # fmt: skip
# Below a width of 2048 the matmuls are small: Narayanan et al. 2021 (table 1) report a flat
# 44-52% from 1.7B (h 2304) up; no cited figure below, so the band's low end widens x0.7.
SMALL_WIDTH = 2048
SMALL_WIDTH_LOW_FACTOR = 0.7
# fp8 over bf16, end to end: Transformer Engine reports 1.3-1.5x on H100 for GPT models
# (NVIDIA Transformer Engine documentation; Peng et al. 2023, "FP8-LM", sec. 4: 1.4x for
# GPT-175B with TE against bf16 Megatron-LM). Applied to the bf16 compute rate.
FP8_SPEEDUP = (1.4, 1.3, 1.5)
# MFU measured at one size, used for another: 0.15 in log per decade (x1.16; Narayanan et al.
# 2021, table 1, spread 44-52% across 1.7B-1T).
SIZE_LOG_ERROR_PER_DECADE = 0.15
PRECISION_FAMILY = {"fp16": "half", "bf16": "half", "fp8": "half", "tf32": "tf32", "fp32": "fp32"}
SIZE_LABEL = re.compile(r"^(\d+(?:\.\d+)?)([kmbt])$")
SOURCE_RANK = {"measured": 0, "published": 1}


@lru_cache(maxsize=512)
def generation_prior(gpu_name: str, d_model: int) -> MFUPrior:
    """The literature prior for a GPU's generation (GENERATION_PRIORS), band widened below
    SMALL_WIDTH."""
    specs = load_specs()
    architecture = str(specs["architecture"].get(gpu_name, ""))
    prior = next(
        (p for pattern, p in GENERATION_PRIORS if re.search(pattern, architecture)), DEFAULT_PRIOR
    )
    if d_model < SMALL_WIDTH:
        return MFUPrior(
            prior.mfu, prior.low * SMALL_WIDTH_LOW_FACTOR, prior.high,
            prior.source + f"; band widened below width {SMALL_WIDTH}",
        )  # fmt: skip
    return prior


@dataclass(frozen=True)
class MFUAnchor:
    """The efficiency a layout starts from: kind "own" or "prior", with its band.

    source: measured | published (own) or "" (prior); world_size and params: the run's.
    """

    mfu: float
    low: float
    high: float
    kind: str
    detail: str
    source: str = ""
    world_size: float = 0.0
    params: float = 0.0


def mfu_anchor(gpu_name: str, params: float, d_model: int, figures: pd.DataFrame) -> MFUAnchor:
    """Own GPT figure on this GPU (nearest size, measured before published), else the prior."""
    own = figures.loc[figures["gpu_name"] == gpu_name] if len(figures) else None
    if own is None or own.empty:
        prior = generation_prior(gpu_name, d_model)
        return MFUAnchor(prior.mfu, prior.low, prior.high, "prior", prior.source)
    decades = np.abs(np.log10(own["params"].astype(float) / params))
    best = own.assign(_d=decades, _r=own["source"].map(SOURCE_RANK)).sort_values(
        ["_d", "_r", "world_size"]
    )
    row = best.iloc[0]
    widen = SIZE_LOG_ERROR_PER_DECADE * float(row["_d"])
    low = float(row["mfu_low"]) * math.exp(-widen)
    high = float(row["mfu_high"]) * math.exp(widen)
    detail = (
        f"MFU {row['mfu']:.0%} {row['source']} by the GPT benchmark on this GPU ({row['detail']}; "
        f"{row['model_size']}, {row['world_size']:g} GPU)"
        + (f"; size {row['model_size']} -> target (+/-15% per decade)" if widen > 0.01 else "")
    )
    return MFUAnchor(
        float(row["mfu"]), low, high, "own", detail, str(row["source"]),
        float(row["world_size"]), float(row["params"]),
    )  # fmt: skip


# ---------------------------------------------------------------- own GPT results


def params_from_size(label: str) -> float | None:
    """Parameters of a GPT benchmark size label ("124m", "1.3b", "6.7b"); None for "tiny"."""
    text = str(label).strip().lower()
    if text in LLM_PRESETS:
        return LLM_PRESETS[text].params
    match = SIZE_LABEL.match(text)
    if not match:
        return None
    return label_params(text)


MFU_COLUMNS = (
    "gpu_name", "model_size", "params", "world_size", "mfu", "mfu_low", "mfu_high", "runs",
    "source", "detail",
)  # fmt: skip


def peak_or_nan(gpu_name: str, precision: str) -> float:
    """Dense peak TFLOP/s of a GPU at a precision, NaN when unknown (planner.hardware)."""
    try:
        return peak_tflops(str(gpu_name), str(precision))
    except (ValueError, KeyError):
        return float("nan")


def gpt_mfu_figures(results: pd.DataFrame, precision: str) -> tuple[pd.DataFrame, list[str]]:
    """GPT-benchmark MFU per (GPU, size, GPU count), measured before published.

    `results` is planner.throughput's own_and_published_results() table. Keeps GPU rows of
    workload "gpt" with an `mfu`, at `precision` or its half-precision sibling (fp8 uses
    the 16-bit figures, scaled by FP8_SPEEDUP downstream), whose size parses as a parameter
    count. Returns the figures (MFU_COLUMNS: median of runs, band min..max, or P10/P90 of a
    single run's throughput) and notes on rows left out.
    """
    notes: list[str] = []
    empty = pd.DataFrame(columns=list(MFU_COLUMNS))
    if results.empty or "mfu" not in results.columns:
        return empty, notes
    gpt = results.loc[results["workload"] == "gpt"]
    if gpt.empty:
        return empty, notes
    family = PRECISION_FAMILY.get(precision)
    gpt = gpt.loc[gpt["precision"].map(PRECISION_FAMILY) == family]
    gpt = gpt.loc[gpt["precision"] != "fp8"] if precision == "fp8" else gpt
    on_cpu = (gpt["device"].astype(str) == "cpu") | gpt["gpu_name"].isna()
    if on_cpu.any():
        notes.append(
            f"{int(on_cpu.sum())} GPT results from CPUs or unknown devices not used to "
            "predict GPU MFU"
        )
    gpt = gpt.loc[~on_cpu].copy()
    # A run made without --peak-tflops has no MFU: achieved TFLOP/s per device over the
    # spec table's dense peak at its precision is the same definition (PaLM app. B).
    if "achieved_tflops" in gpt.columns:
        missing = gpt["mfu"].isna()
        peak = pd.Series(
            [peak_or_nan(g, p) for g, p in zip(gpt["gpu_name"], gpt["precision"], strict=True)],
            index=gpt.index,
            dtype=float,
        )
        gpt.loc[missing, "mfu"] = gpt.loc[missing, "achieved_tflops"] / peak[missing]
    gpt = gpt.loc[gpt["mfu"].notna() & (gpt["mfu"] > 0)]
    params = gpt["model_size"].map(params_from_size)
    unsized = params.isna()
    if unsized.any():
        sizes = ", ".join(sorted(gpt.loc[unsized, "model_size"].astype(str).unique()))
        notes.append(f"GPT results of size {sizes} not used: not a parameter count")
    gpt = gpt.loc[~unsized].assign(params=params[~unsized].astype(float))
    if gpt.empty:
        return empty, notes
    kind = np.where(gpt["source"].astype(str).str.startswith("published"), "published", "measured")
    p10 = (gpt["throughput_p10"] / gpt["throughput"]).fillna(1.0).clip(upper=1.0)
    p90 = (gpt["throughput_p90"] / gpt["throughput"]).fillna(1.0).clip(lower=1.0)
    gpt = gpt.assign(
        kind=kind, single_low=gpt["mfu"] * p10, single_high=gpt["mfu"] * p90, _id=gpt["id"]
    )
    keys = ["gpu_name", "model_size", "params", "world_size", "kind"]
    table = (
        gpt.groupby(keys)
        .agg(
            mfu=("mfu", "median"),
            mfu_low=("mfu", "min"),
            mfu_high=("mfu", "max"),
            single_low=("single_low", "first"),
            single_high=("single_high", "first"),
            runs=("mfu", "size"),
            first_id=("_id", "first"),
        )
        .reset_index()
    )
    one = table["runs"] == 1
    table.loc[one, "mfu_low"] = table.loc[one, "single_low"]
    table.loc[one, "mfu_high"] = table.loc[one, "single_high"]
    table["detail"] = np.where(
        one,
        np.where(table["kind"] == "measured", "own run ", "") + table["first_id"].astype(str),
        "median of " + table["runs"].astype(str) + " runs",
    )
    table = table.rename(columns={"kind": "source"})
    table["_rank"] = table["source"].map(SOURCE_RANK)
    table = table.sort_values([*keys[:4], "_rank"]).drop_duplicates(keys[:4])
    return table.loc[:, list(MFU_COLUMNS)].reset_index(drop=True), notes
