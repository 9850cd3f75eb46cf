"""Read and check the CSV files of `gpuplan estimate`: reference figures and queries.

Names and precisions follow reference/benchmarks/lambda_pytorch_throughput.csv:
gpu_model is a GPU label (Lambda's, a canonical name or any alias in pricing.gpus);
spec_gpu_model, when present and not blank, is the GPU's name in the spec table and wins;
precision is one of fp16_amp, tf32, fp32 (also fp16, bf16).

Reference (REF): gpu_model, num_gpus, model, precision, throughput; rows with a non-empty
`flag` are skipped; optional benchmark_version keeps generations apart; other columns
are ignored. Queries (Q): gpu_model, num_gpus, model, precision; optional spec_gpu_model
and benchmark_version. Errors name the file, the line (the header is line 1), the field
and the closest valid value.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from planner.io.validate import (
    FIELD_RANGES,
    GPU_COUNT_RANGE,
    THROUGHPUT_RANGE,
    Range,
    read_csv_table,
    shorten,
)
from planner.machines.specs import gpu_name_hint
from planner.throughput.spec_model import PEAK_COLUMNS
from pricing.gpus import UnknownGPUError, canonical_gpu, closest_match, did_you_mean

REF_REQUIRED: tuple[str, ...] = ("gpu_model", "num_gpus", "model", "precision", "throughput")
QUERY_REQUIRED: tuple[str, ...] = ("gpu_model", "num_gpus", "model", "precision")
PRECISIONS: tuple[str, ...] = tuple(PEAK_COLUMNS)
GENERATION_COLUMN = "benchmark_version"


class InputFileError(ValueError):
    """A REF or Q file that cannot be used; the message names file, line and field."""


@dataclass(frozen=True)
class Reference:
    """Checked reference rows in planner.throughput.estimate's columns, and what was left out."""

    rows: pd.DataFrame  # gpu_name, total_gpus, model, precision, throughput, generation, ...
    skipped_flagged: int
    unresolved_gpus: tuple[str, ...]  # labels with no spec row (used only by name)


def _read(path: Path, required: tuple[str, ...], what: str) -> pd.DataFrame:
    frame = read_csv_table(path, what, InputFileError)
    missing = [c for c in required if c not in frame.columns]
    if missing:
        hints = [closest_match(c, list(frame.columns)) for c in missing]
        hint = "; ".join(
            f"did you mean {h!r} for {c!r}?" for c, h in zip(missing, hints, strict=True) if h
        )
        raise InputFileError(
            f"{path}: missing column(s) {', '.join(repr(c) for c in missing)}; "
            f"required: {', '.join(required)}" + (f"; {hint}" if hint else "")
        )
    for column in frame.columns:
        frame[column] = frame[column].astype(str).str.strip()
    return frame


def _where(path: Path, index: int, field: str) -> str:
    return f"{path}, line {index + 2}, field {field!r}"


def _positive(frame: pd.DataFrame, column: str, path: Path, valid: Range) -> pd.Series:
    """The column as floats, each within `valid` (finite, whole where it must be)."""
    values = pd.to_numeric(frame[column], errors="coerce")
    bad = pd.Series([not valid.holds(v) for v in values.to_numpy(float)], index=frame.index)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raw = shorten(frame[column].iloc[i])
        problem = (
            f"is not a number; it must be {valid.text()}"
            if pd.isna(values.iloc[i])
            else f"must be {valid.text()}"
        )
        raise InputFileError(
            f"{_where(path, frame.index[i], column)}: {raw!r} {problem} "
            f"({int(bad.sum())} such row(s))"
        )
    return values.astype(float)


# Per-row overrides of the command's options; a blank cell keeps the option's value. The
# ranges are the flags' own (planner.io.validate.FIELD_RANGES: --gpus-per-node, --network-gbps).
QUERY_OVERRIDES: dict[str, Range] = {
    c: FIELD_RANGES[c] for c in ("gpus_per_node", "network_gbps", "global_batch")
}


def _optional_positive(frame: pd.DataFrame, column: str, path: Path) -> pd.Series:
    """A column that may be absent or blank (NaN); any value given must be within
    QUERY_OVERRIDES[column]."""
    if column not in frame.columns:
        return pd.Series(np.nan, index=frame.index)
    raw = frame[column]
    blank = raw.isna() | (raw.astype(str).str.strip() == "")
    given = frame.loc[~blank]
    values = pd.Series(np.nan, index=frame.index)
    if len(given):
        values.loc[~blank] = _positive(given, column, path, QUERY_OVERRIDES[column]).to_numpy()
    return values


def _check_precision(frame: pd.DataFrame, path: Path) -> None:
    bad = ~frame["precision"].isin(PRECISIONS)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        value = frame["precision"].iloc[i]
        fix = did_you_mean(value, PRECISIONS)
        raise InputFileError(
            f"{_where(path, frame.index[i], 'precision')}: unknown precision {value!r}{fix} "
            f"Valid: {', '.join(PRECISIONS)}"
        )


def _check_model(frame: pd.DataFrame, path: Path) -> None:
    blank = frame["model"] == ""
    if blank.any():
        i = int(np.flatnonzero(blank.to_numpy())[0])
        raise InputFileError(f"{_where(path, frame.index[i], 'model')}: empty model name")


def _resolve_names(labels: pd.Series, spec: pd.Series | None) -> tuple[pd.Series, pd.Series]:
    """Canonical names (NaN where unresolved) and the field each came from."""
    names: dict[str, str | None] = {}

    def resolve(label: str) -> str | None:
        if label not in names:
            try:
                names[label] = canonical_gpu(label)
            except UnknownGPUError:
                names[label] = None
        return names[label]

    use_spec = spec.ne("") if spec is not None else pd.Series(False, index=labels.index)
    source = pd.Series(np.where(use_spec, "spec_gpu_model", "gpu_model"), index=labels.index)
    chosen = spec.where(use_spec, labels) if spec is not None else labels
    return chosen.map(resolve), source


def read_reference(path: str | Path) -> Reference:
    """Checked REF rows: flagged rows skipped, GPU names resolved, values positive."""
    path = Path(path)
    frame = _read(path, REF_REQUIRED, "reference")
    flagged = frame["flag"].ne("") if "flag" in frame.columns else pd.Series(False, frame.index)
    kept = frame.loc[~flagged]
    if kept.empty:
        raise InputFileError(f"{path}: no reference rows left after skipping flagged rows")
    names, source, shared = _checked_rows(kept, path)
    throughput = _positive(kept, "throughput", path, THROUGHPUT_RANGE)
    bad_spec = names.isna() & (source == "spec_gpu_model")
    if bad_spec.any():
        i = int(np.flatnonzero(bad_spec.to_numpy())[0])
        raise InputFileError(
            f"{_where(path, kept.index[i], 'spec_gpu_model')}: "
            + str(UnknownGPUError(kept["spec_gpu_model"].iloc[i]))
        )
    unresolved = tuple(sorted(kept.loc[names.isna(), "gpu_model"].unique()))
    rows = pd.DataFrame(
        {
            **shared,
            "throughput": throughput,
            "source": "measured",
            "detail": "REF " + kept["gpu_model"],
        }
    ).loc[:, list(REFERENCE_ROW_COLUMNS)]
    rows = rows.reset_index(drop=True)
    return Reference(rows, int(flagged.sum()), unresolved)


def read_queries(path: str | Path, reference: Reference) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The Q file as read (for the output) and its rows in planner.throughput.estimate's columns.

    A GPU resolves through spec_gpu_model, then gpu_model; a label that resolves to no
    spec row is accepted only when REF has rows of that same label. Optional columns
    gpus_per_node, network_gbps (Gb/s per node) and global_batch (samples per step)
    override the command's options for their row; blank cells keep the options.
    """
    path = Path(path)
    frame = _read(path, QUERY_REQUIRED, "queries")
    if frame.empty:
        raise InputFileError(f"{path}: no query rows")
    names, source, shared = _checked_rows(frame, path)
    by_label = frame["gpu_model"].isin(reference.unresolved_gpus) & (source == "gpu_model")
    unknown = names.isna() & ~by_label
    if unknown.any():
        i = int(np.flatnonzero(unknown.to_numpy())[0])
        field = source.iloc[i]
        value = frame[field].iloc[i]
        fix = gpu_name_hint(value, reference.unresolved_gpus)
        raise InputFileError(
            f"{_where(path, i, field)}: unknown GPU {value!r}{fix} Use a name from "
            "planner/data/gpu_specs.csv (gpu_name or spec_model) or a label REF uses."
        )
    models = set(reference.rows["model"])
    unknown_model = ~frame["model"].isin(models)
    if unknown_model.any():
        i = int(np.flatnonzero(unknown_model.to_numpy())[0])
        value = frame["model"].iloc[i]
        fix = did_you_mean(value, sorted(models))
        raise InputFileError(
            f"{_where(path, i, 'model')}: model {value!r} has no row in the reference{fix} "
            f"Models in the reference: {', '.join(sorted(models))}"
        )
    queries = pd.DataFrame(
        {**shared, **{c: _optional_positive(frame, c, path) for c in QUERY_OVERRIDES}}
    )
    return frame, queries


# Reference.rows' columns, in order.
REFERENCE_ROW_COLUMNS = (
    "gpu_name", "total_gpus", "model", "precision", "throughput", "generation", "source", "detail",
)  # fmt: skip


def _checked_rows(
    frame: pd.DataFrame, path: Path
) -> tuple[pd.Series, pd.Series, dict[str, pd.Series]]:
    """What REF and Q rows share, checked (InputFileError naming the row and field): the
    resolved GPU names (NaN where none resolves), where each name came from
    (_resolve_names), and the columns gpu_name (the label where unresolved), total_gpus,
    model, precision and generation ("" without the column)."""
    _check_model(frame, path)
    _check_precision(frame, path)
    num = _positive(frame, "num_gpus", path, GPU_COUNT_RANGE)
    spec = frame["spec_gpu_model"] if "spec_gpu_model" in frame.columns else None
    names, source = _resolve_names(frame["gpu_model"], spec)
    if GENERATION_COLUMN in frame.columns:
        generation = frame[GENERATION_COLUMN]
    else:
        generation = pd.Series("", frame.index)
    shared = {
        "gpu_name": names.fillna(frame["gpu_model"]),
        "total_gpus": num,
        "model": frame["model"],
        "precision": frame["precision"],
        "generation": generation,
    }
    return names, source, shared
