"""Which of the user's own benchmark results a plan used, which it skipped, and why.

Own results are the rows of planner.throughput.own_and_published_results() whose source is
"measured" and that are not bundled samples (column `sample`: benchmarks/results/, tiny CPU
runs shipped to show what a result looks like): only what the user's results folders hold
is counted, used or skipped. A result is used when it measures the
plan's benchmark model (workload and size; "gpt" for LLMs) at the plan's precision on a
GPU the spec table knows; otherwise it is skipped with a reason code (planner.notes
SKIP_REASONS): a CPU run does not predict a GPU, a device name not matched to a GPU has no
specs to scale by, another precision or model size measures another job, and a batch
sweep's runs at other than its fastest batch do not stand for the rate a job trains at
(benchmarks.batch_choice). An LLM plan also
uses operator-benchmark runs (workload "ops") on a known GPU: they set its step's GEMM,
attention and memory rates (planner.llm.op_efficiency). Results of other workloads are
counted in one own_results_elsewhere note.
"""

from __future__ import annotations

import pandas as pd

from benchmarks.batch_choice import fastest_batches
from benchmarks.workload_names import OP_WORKLOAD
from planner.notes import Note
from planner.throughput.offers import SAMPLE_COLUMN
from planner.workloads.catalog import Workload

# Precisions that share a dense peak (an LLM MFU at fp16 stands for bf16 and back).
_HALF = {"fp16": "half", "bf16": "half", "fp32": "fp32", "tf32": "tf32"}


def own_result_notes(results: pd.DataFrame, workload: Workload, precision: str) -> list[Note]:
    """One own_result_used or own_result_skipped note per own result of this workload's
    benchmark model, then one own_results_elsewhere note for the rest (if any)."""
    if results.empty or "source" not in results.columns:
        return []
    own = results.loc[results["source"].astype(str) == "measured"]
    if SAMPLE_COLUMN in own.columns:
        own = own.loc[~own[SAMPLE_COLUMN].eq(True)]  # a row without the flag is the user's
    if own.empty:
        return []
    models = ("gpt", OP_WORKLOAD) if workload.is_llm else (workload.model,)
    same = own["workload"].astype(str).isin(models)
    fastest = fastest_batches(results)
    notes = [
        _note(row, workload, precision, fastest[index]) for index, row in own.loc[same].iterrows()
    ]
    elsewhere = own.loc[~same]
    if len(elsewhere):
        names = tuple(sorted(elsewhere["workload"].astype(str).unique()))
        notes.append(Note("own_results_elsewhere", {"count": len(elsewhere), "workloads": names}))
    return notes


def _note(row: pd.Series, workload: Workload, precision: str, fastest: float) -> Note:
    """Used or skipped; `fastest`: its batch sweep's fastest batch where that is not the
    row's own (benchmarks.batch_choice), else NaN."""
    base = {
        "id": str(row["id"]),
        "workload": str(row["workload"]),
        "gpu_name": "" if pd.isna(row["gpu_name"]) else str(row["gpu_name"]),
        "device": str(row.get("device", "")),
        "model_size": str(row["model_size"]),
        "precision": str(row["precision"]),
        "world_size": int(row["world_size"]) if pd.notna(row["world_size"]) else 0,
    }
    reason = _skip_reason(row, workload, precision)
    if reason is None and pd.notna(fastest):
        batch = float(row["batch_size_per_device"])
        return Note(
            "own_result_skipped",
            {**base, "reason": "smaller_batch", "batch": batch, "wanted": f"{fastest:g}"},
        )
    if reason is None:
        unit = row.get("throughput_unit", "")
        swept = row.get("sweep_instance_type")
        where = {"instance_type": swept} if isinstance(swept, str) and swept else {}
        return Note(
            "own_result_used",
            {**base, **where, "throughput": float(row["throughput"]), "unit": str(unit or "")},
        )
    return Note(
        "own_result_skipped",
        {**base, "reason": reason, "wanted": _wanted(workload, precision, reason)},
    )


def _skip_reason(row: pd.Series, workload: Workload, precision: str) -> str | None:
    swept = row.get("sweep_instance_type")
    if isinstance(swept, str) and swept and not workload.is_llm:
        # A sweep result measures its cloud instance type itself (planner.throughput.sweep_results).
        if str(row["precision"]) != precision:
            return "other_precision"
        if workload.model_size and str(row["model_size"]) not in (workload.model_size, ""):
            return "other_size"
        return None
    if str(row.get("device", "")) == "cpu":
        return "cpu_run"
    if pd.isna(row["gpu_name"]):
        return "unknown_gpu"
    if str(row["workload"]) == OP_WORKLOAD:  # measured at every precision the GPU has
        return None
    if workload.is_llm:
        if _HALF.get(str(row["precision"])) != _HALF.get(precision):
            return "other_precision"
        return None
    if str(row["precision"]) != precision:
        return "other_precision"
    if workload.model_size and str(row["model_size"]) not in (workload.model_size, ""):
        return "other_size"
    return None


def _wanted(workload: Workload, precision: str, reason: str) -> str:
    """What would have been used instead (the plan's precision or model size)."""
    if reason == "other_precision":
        return precision
    if reason == "other_size":
        return workload.model_size
    return ""


def with_cpu_runs_used(notes: list[Note], applied: list[Note]) -> list[Note]:
    """`notes` with each own CPU run that set CPU rows' rates (cpu_run_applied notes)
    counted as used, not skipped as a CPU run."""
    used = {str(n["id"]) for n in applied if n.code == "cpu_run_applied"}
    out = []
    for note in notes:
        if note.code == "own_result_skipped" and note["reason"] == "cpu_run" and note["id"] in used:
            values = {k: v for k, v in note.values.items() if k not in ("reason", "wanted")}
            out.append(Note("own_result_used", {**values, "throughput": float("nan"), "unit": ""}))
        else:
            out.append(note)
    return out
