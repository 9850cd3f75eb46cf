"""The compute efficiency an LLM layout starts from: own GPT results, else a cited prior.

Efficiency here is model FLOPs per second over the dense peak (MFU as Chowdhery et al.
2022, "PaLM", app. B define it) of the GPU's own compute; planner.llm.layout then charges
each layout's pipeline bubble and exposed tensor-, pipeline- and data-parallel communication
on top of it. Order:

  own       the GPT benchmark's MFU on this GPU (own results, then published; field `mfu`,
            or achieved TFLOP/s over the spec peak), nearest measured size; its band is the
            runs' spread widened by SIZE_LOG_ERROR_PER_DECADE per decade of size between
            the run and the target
  prior     a figure per GPU generation from the literature (GENERATION_PRIORS, each cited)

The literature figures are end-to-end MFUs of tuned runs and so already include some of
the overheads the layout model adds again: at thousands of GPUs the prediction errs low by
about those runs' own overhead share. fp8 (planner.llm.layout) scales the bf16 figure by
FP8_SPEEDUP instead of assuming the fp8 peak is reached at the same fraction.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from benchmarks.batch_choice import without_slower_batches
from planner.codes import SOURCE_RANK, is_published
from planner.machines.specs import load_specs, peak_tflops
from planner.notes import Note
from planner.workloads.llm_presets import label_params, preset_named


@dataclass(frozen=True)
class MFUPrior:
    """MFU with its 10-90% band and its source code (PRIOR_CODES; cited in the comment
    above each prior, worded by planner.render.llm). widened: the band's low end was widened
    below SMALL_WIDTH."""

    mfu: float
    low: float
    high: float
    code: str
    widened: bool = False


# (architecture regex on gpu_specs.csv's `architecture`, prior). First match wins.
GENERATION_PRIORS: tuple[tuple[str, MFUPrior], ...] = (
    (
        r"^Ampere \(GA100\)",
        # 72% end to end for GPT-1.3B/2.7B on 8 A100 with FlashAttention-2 (Dao 2023, sec. 4.2);
        # 54-56% at 22B-1T with selective recomputation on up to 2,240 A100 (Korthikanti et
        # al. 2022, table 4); 55.2% for 175B on 12,288 A100 (Jiang et al. 2024, MegaScale).
        MFUPrior(0.60, 0.48, 0.72, "prior_a100"),
    ),
    (
        r"^(Hopper|Blackwell$|Blackwell Ultra|GB200)",
        # 38-43% bf16 MFU for Llama 3 405B on 8,192-16,384 H100 with tp8 pp16, all overheads
        # included (Dubey et al. 2024, table 4); FlashAttention-3 reaches 75% of the H100
        # peak in attention (Shah et al. 2024); Blackwell: none published, Hopper's used.
        MFUPrior(0.50, 0.38, 0.62, "prior_hopper"),
    ),
    (
        r"^Volta",
        # 39 TFLOP/s of 125 (30%) for a 1.2B GPT on one V100 (Shoeybi et al. 2019, sec. 5.1).
        MFUPrior(0.30, 0.22, 0.40, "prior_v100"),
    ),
    (
        r"^CDNA",
        # 32-38% of the MI250X peak for 175B-1T GPTs on Frontier (Dash et al. 2023); MI300X:
        # none published, MI250X's used.
        MFUPrior(0.35, 0.25, 0.45, "prior_amd"),
    ),
    (
        r"^TPU",
        # 46.2% MFU for PaLM 540B on 6,144 TPU v4 (Chowdhery et al. 2022, table 3).
        MFUPrior(0.46, 0.35, 0.58, "prior_tpu"),
    ),
)
# No published LLM training MFU for the GPU class: 40% (25-55%), between PaLM's 46%
# (Chowdhery et al. 2022) and V100's 30% (Shoeybi et al. 2019).
DEFAULT_PRIOR = MFUPrior(0.40, 0.25, 0.55, "prior_assumed")
# Source codes of an MFU anchor: own GPT results, or a prior per GPU generation.
PRIOR_CODES = (
    "prior_a100", "prior_hopper", "prior_v100", "prior_amd", "prior_tpu", "prior_assumed",
)  # fmt: skip
OWN_CODES = ("own_measured", "own_published")
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
        return MFUPrior(prior.mfu, prior.low * SMALL_WIDTH_LOW_FACTOR, prior.high, prior.code, True)
    return prior


@dataclass(frozen=True)
class MFUAnchor:
    """The efficiency a layout starts from, with its band.

    code: a PRIOR_CODES code, or own_measured | own_published (the GPT benchmark on this
    GPU). For own figures: run_id (the single run's id, "" for a median), runs, model_size,
    world_size and params of the runs, size_decades between them and the target, and
    compiled ("yes" | "no" under torch.compile or eager, "" not said).
    """

    mfu: float
    low: float
    high: float
    code: str
    widened: bool = False
    run_id: str = ""
    runs: int = 0
    model_size: str = ""
    world_size: float = 0.0
    params: float = 0.0
    size_decades: float = 0.0
    compiled: str = ""

    @property
    def kind(self) -> str:
        """ "own" or "prior"."""
        return "own" if self.code in OWN_CODES else "prior"

    @property
    def source(self) -> str:
        """measured | published for own figures, "" for a prior."""
        return self.code.removeprefix("own_") if self.kind == "own" else ""


def mfu_anchor(
    gpu_name: str, params: float, d_model: int, figures: pd.DataFrame, eager: bool = False
) -> MFUAnchor:
    """Own GPT figure on this GPU (nearest size; of one size, a run in the plan's mode -
    eager or torch.compile - before one that does not say, before one in the other mode;
    measured before published), else the prior."""
    own = figures.loc[figures["gpu_name"] == gpu_name] if len(figures) else None
    if own is None or own.empty:
        prior = generation_prior(gpu_name, d_model)
        return MFUAnchor(prior.mfu, prior.low, prior.high, prior.code, prior.widened)
    decades = np.abs(np.log10(own["params"].astype(float) / params))
    wanted = "no" if eager else "yes"
    said = own["compiled"].astype(str) if "compiled" in own.columns else pd.Series("", own.index)
    mode = np.where(said == wanted, 0, np.where(said == "", 1, 2))
    best = own.assign(_d=decades, _m=mode, _r=own["source"].map(SOURCE_RANK)).sort_values(
        ["_d", "_m", "_r", "world_size"]
    )
    row = best.iloc[0]
    widen = SIZE_LOG_ERROR_PER_DECADE * float(row["_d"])
    low = float(row["mfu_low"]) * math.exp(-widen)
    high = float(row["mfu_high"]) * math.exp(widen)
    return MFUAnchor(
        float(row["mfu"]), low, high, f"own_{row['source']}",
        run_id=str(row["run_id"]), runs=int(row["runs"]), model_size=str(row["model_size"]),
        world_size=float(row["world_size"]), params=float(row["params"]),
        size_decades=float(row["_d"]), compiled=str(row.get("compiled", "")),
    )  # fmt: skip


# ---------------------------------------------------------------- own GPT results


def params_from_size(label: str) -> float | None:
    """Parameters of a GPT benchmark size label ("124m", "350m", "1.3b", "6.7b"): the
    preset's true count where a preset has that shape, else the label's; None for "tiny"."""
    text = str(label).strip().lower()
    preset = preset_named(text)
    if preset is not None:
        return preset.params
    match = SIZE_LABEL.match(text)
    if not match:
        return None
    return label_params(text)


MFU_COLUMNS = (
    "gpu_name", "model_size", "params", "world_size", "mfu", "mfu_low", "mfu_high", "runs",
    "source", "run_id", "compiled",
)  # fmt: skip


def peak_or_nan(gpu_name: str, precision: str) -> float:
    """Dense peak TFLOP/s of a GPU at a precision, NaN when unknown (planner.machines.specs)."""
    try:
        return peak_tflops(str(gpu_name), str(precision))
    except (ValueError, KeyError):
        return float("nan")


def gpt_mfu_figures(results: pd.DataFrame, precision: str) -> tuple[pd.DataFrame, list[Note]]:
    """GPT-benchmark MFU per (GPU, size, GPU count, torch.compile or not), measured before
    published.

    `results` is planner.throughput's own_and_published_results() table. Keeps GPU rows of
    workload "gpt" with an `mfu`, at `precision` or its half-precision sibling (fp8 uses
    the 16-bit figures, scaled by FP8_SPEEDUP downstream), whose size parses as a parameter
    count; of a batch sweep's runs, the fastest batch's (benchmarks.batch_choice). Returns
    the figures (MFU_COLUMNS: median of runs, band min..max, or P10/P90 of a single run's
    throughput; run_id: a single run's id, else ""; compiled: "yes", "no" or "" where the
    results do not say) and notes (gpt_results_unused) on rows left out.
    """
    notes: list[Note] = []
    empty = pd.DataFrame(columns=list(MFU_COLUMNS))
    if results.empty or "mfu" not in results.columns:
        return empty, notes
    gpt = without_slower_batches(results.loc[results["workload"] == "gpt"])
    if gpt.empty:
        return empty, notes
    family = PRECISION_FAMILY.get(precision)
    gpt = gpt.loc[gpt["precision"].map(PRECISION_FAMILY) == family]
    gpt = gpt.loc[gpt["precision"] != "fp8"] if precision == "fp8" else gpt
    on_cpu = (gpt["device"].astype(str) == "cpu") | gpt["gpu_name"].isna()
    if on_cpu.any():
        notes.append(Note("gpt_results_unused", {"reason": "cpu_run", "count": int(on_cpu.sum())}))
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
        sizes = tuple(sorted(gpt.loc[unsized, "model_size"].astype(str).unique()))
        notes.append(
            Note(
                "gpt_results_unused",
                {"reason": "unsized", "count": int(unsized.sum()), "sizes": sizes},
            )
        )
    gpt = gpt.loc[~unsized].assign(params=params[~unsized].astype(float))
    if gpt.empty:
        return empty, notes
    kind = np.where(is_published(gpt["source"]), "published", "measured")
    p10 = (gpt["throughput_p10"] / gpt["throughput"]).fillna(1.0).clip(upper=1.0)
    p90 = (gpt["throughput_p90"] / gpt["throughput"]).fillna(1.0).clip(lower=1.0)
    said = gpt["compiled"] if "compiled" in gpt.columns else pd.Series(None, index=gpt.index)
    compiled = said.map({True: "yes", False: "no"}).fillna("")
    gpt = gpt.assign(
        kind=kind, single_low=gpt["mfu"] * p10, single_high=gpt["mfu"] * p90, _id=gpt["id"],
        compiled=compiled,
    )  # fmt: skip
    keys = ["gpu_name", "model_size", "params", "world_size", "compiled", "kind"]
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
    table["run_id"] = np.where(one, table["first_id"].astype(str), "")
    table = table.rename(columns={"kind": "source"})
    table["_rank"] = table["source"].map(SOURCE_RANK)
    table = table.sort_values([*keys[:5], "_rank"]).drop_duplicates(keys[:5])
    return table.loc[:, list(MFU_COLUMNS)].reset_index(drop=True), notes
