"""`gpuplan estimate-llm`: read LLM queries, predict the best layout's tokens/s, write rows.

Queries (Q, CSV): params, seq_len, num_gpus, gpu_model, precision; optional n_layer,
d_model, global_batch_tokens, gpus_per_node, network_gbps, mode (pretrain | finetune |
lora | qlora; blank: pretrain). params is a number (7e9) or a size (7b, 6.7b, 124m).
Every number must be within its planner.io.validate.FIELD_RANGES entry, the range the flag
of the same name accepts (gpus_per_node as --gpus-per-node); the file is bounded as
planner.io.validate.read_csv_table says.
Output: Q plus tokens_per_s (all GPUs), tokens_per_s_low, tokens_per_s_high (10-90% band),
mfu, layout, fits, method, method_detail. Errors name the file, the line (the header is
line 1), the field and the valid range or closest valid value; nothing is predicted from
a bad file.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from planner.io.validate import FIELD_RANGES, read_csv_table, shorten
from planner.llm.frameworks import FRAMEWORKS
from planner.llm.throughput import (
    LLM_DETAIL_COLUMNS,
    LLM_PRECISIONS,
    LLMSettings,
    has_fp8,
    predict_layout,
    prediction_record,
    prediction_source,
)
from planner.machines.specs import load_specs
from planner.workloads.catalog import LLM_MODES, llm_workload
from pricing.gpus import (
    CANONICAL_GPUS,
    USER_ALIASES,
    UnknownGPUError,
    canonical_gpu,
    closest_match,
    did_you_mean,
)

REQUIRED = ("params", "seq_len", "num_gpus", "gpu_model", "precision")
OPTIONAL = (
    "n_layer", "d_model", "global_batch_tokens", "gpus_per_node", "network_gbps", "mode",
    "framework",
)  # fmt: skip
OUTPUT_COLUMNS = (
    "tokens_per_s", "tokens_per_s_low", "tokens_per_s_high", "mfu", "layout", "fits", "method",
    "method_detail",
)  # fmt: skip
SIZE = re.compile(r"^(\d+(?:\.\d+)?)([kmbt])$", re.IGNORECASE)
_SCALE = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}
# The figures and codes method_detail is worded from (planner.render.llm.estimate_detail).
DETAIL_COLUMNS = ("reason", "precision", "memory_per_gpu_gb", *LLM_DETAIL_COLUMNS)


class LLMQueryError(ValueError):
    """A Q file that cannot be used; the message names file, line and field."""


@dataclass(frozen=True)
class LLMQuery:
    """One checked query row."""

    params: float
    seq_len: int
    total_gpus: int  # the file's num_gpus
    gpu_name: str
    precision: str
    n_layer: int | None
    d_model: int | None
    global_batch_tokens: float | None
    gpus_per_node: int
    network_gbps: float
    mode: str
    framework: str = ""  # "" = the run's --framework


def _where(path: Path, index: int, field: str) -> str:
    return f"{path}, line {index + 2}, field {field!r}"


def _number(path: Path, index: int, field: str, raw: str) -> float:
    """The cell as a number within FIELD_RANGES[field] (params also as a size: 7b)."""
    valid = FIELD_RANGES[field]
    text = raw.strip()
    match = SIZE.match(text) if field == "params" else None
    try:
        value = float(match.group(1)) * _SCALE[match.group(2).lower()] if match else float(text)
    except ValueError:
        value = float("nan")
    shown = repr(shorten(raw, 60))
    if np.isnan(value):
        example = " (e.g. 7e9 or 7b)" if field == "params" else ""
        raise LLMQueryError(
            f"{_where(path, index, field)}: {shown} is not a number{example}; it must be "
            f"{valid.text()}"
        )
    if not valid.holds(value):
        raise LLMQueryError(f"{_where(path, index, field)}: {shown} must be {valid.text()}")
    return value


def read_llm_queries(path: str | Path) -> tuple[pd.DataFrame, list[LLMQuery]]:
    """The Q file as read (for the output) and its checked rows."""
    path = Path(path)
    frame = read_csv_table(path, "queries", LLMQueryError)
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        hints = [
            f"did you mean {h!r} for {c!r}?"
            for c in missing
            if (h := closest_match(c, [x for x in frame.columns if x not in REQUIRED]))
        ]
        raise LLMQueryError(
            f"{path}: missing column(s) {', '.join(repr(c) for c in missing)}; required: "
            f"{', '.join(REQUIRED)}; optional: {', '.join(OPTIONAL)}"
            + (f"; {'; '.join(hints)}" if hints else "")
        )
    if frame.empty:
        raise LLMQueryError(f"{path}: no query rows")
    rows = [_row(path, i, record) for i, record in enumerate(frame.to_dict(orient="records"))]
    return frame, rows


def _row(path: Path, i: int, record: dict[str, str]) -> LLMQuery:
    value = {k: str(v).strip() for k, v in record.items()}

    def optional(field: str) -> float | None:
        raw = value.get(field, "")
        return _number(path, i, field, raw) if raw else None

    label = value["gpu_model"]
    try:
        gpu = canonical_gpu(label)
    except UnknownGPUError:
        gpu = None
    if gpu is None or gpu not in load_specs().index:
        fix = did_you_mean(label, [*CANONICAL_GPUS, *USER_ALIASES])
        raise LLMQueryError(
            f"{_where(path, i, 'gpu_model')}: unknown GPU {label!r}{fix} Use a name from "
            "planner/data/gpu_specs.csv (gpu_name or spec_model) or an alias."
        )
    precision = value["precision"].lower()
    if precision not in LLM_PRECISIONS:
        raise LLMQueryError(
            f"{_where(path, i, 'precision')}: unknown precision {value['precision']!r}"
            f"{did_you_mean(precision, LLM_PRECISIONS)} Valid: {', '.join(LLM_PRECISIONS)}"
        )
    if precision == "fp8" and not has_fp8(gpu):
        raise LLMQueryError(
            f"{_where(path, i, 'precision')}: {gpu} has no fp8 tensor cores (no fp8 peak in "
            "planner/data/gpu_specs.csv; fp8 needs Hopper, Ada, Blackwell, MI300 or Gaudi); "
            "use bf16 or fp16"
        )
    mode = value.get("mode", "").lower() or "pretrain"
    if mode not in LLM_MODES:
        raise LLMQueryError(
            f"{_where(path, i, 'mode')}: unknown mode {value['mode']!r}"
            f"{did_you_mean(mode, LLM_MODES)} Valid: {', '.join(LLM_MODES)}"
        )
    framework = value.get("framework", "").lower()
    if framework and framework not in FRAMEWORKS:
        raise LLMQueryError(
            f"{_where(path, i, 'framework')}: unknown framework {value['framework']!r}"
            f"{did_you_mean(framework, list(FRAMEWORKS))} Valid: {', '.join(FRAMEWORKS)}"
        )
    num_gpus = int(_number(path, i, "num_gpus", value["num_gpus"]))
    per_node = optional("gpus_per_node")
    n_layer, d_model = optional("n_layer"), optional("d_model")
    return LLMQuery(
        params=_number(path, i, "params", value["params"]),
        seq_len=int(_number(path, i, "seq_len", value["seq_len"])),
        total_gpus=num_gpus,
        gpu_name=gpu,
        precision=precision,
        n_layer=int(n_layer) if n_layer else None,
        d_model=int(d_model) if d_model else None,
        global_batch_tokens=optional("global_batch_tokens"),
        gpus_per_node=int(per_node) if per_node else 0,
        network_gbps=optional("network_gbps") or 0.0,
        mode=mode,
        framework=framework,
    )


def estimate_llm(
    rows: list[LLMQuery],
    gpus_per_node: int,
    network_gbps: float,
    settings: LLMSettings,
    figures: dict[str, pd.DataFrame] | None = None,
    ops: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """OUTPUT_COLUMNS but method_detail, then DETAIL_COLUMNS (codes and figures the CLI
    words into method_detail), for each query (row defaults fill from the arguments).

    `figures`: own GPT-benchmark MFU per precision (planner.llm.mfu.gpt_mfu_figures), which
    calibrates the kernel rates on its GPU; `ops`: the results table whose operator
    benchmark runs give measured kernels on their GPU (planner.llm.op_efficiency).
    """
    figures = figures or {}
    out = []
    for q in rows:
        workload = llm_workload(
            q.params, 1e9, seq_len=q.seq_len, n_layer=q.n_layer, d_model=q.d_model, mode=q.mode
        )
        row_settings = dataclasses.replace(
            settings,
            global_batch_tokens=q.global_batch_tokens or settings.global_batch_tokens,
            framework=q.framework or settings.framework,
            framework_stated=bool(q.framework) or settings.framework_stated,
        )
        found = predict_layout(
            workload,
            q.precision,
            q.gpu_name,
            q.total_gpus,
            q.gpus_per_node or gpus_per_node,
            q.network_gbps or network_gbps,
            figures.get(q.precision),
            settings=row_settings,
            ops=ops,
        )
        layout = found.layout
        record = prediction_record(found)
        out.append(
            {
                "tokens_per_s": found.tokens_per_s,
                "tokens_per_s_low": found.tokens_per_s_low,
                "tokens_per_s_high": found.tokens_per_s_high,
                "mfu": layout.mfu,
                "layout": layout.label,
                "fits": layout.fits,
                "method": prediction_source(found) or "none",
                **{column: record[column] for column in DETAIL_COLUMNS},
            }
        )
    return pd.DataFrame(out, columns=[*OUTPUT_COLUMNS[:-1], *DETAIL_COLUMNS])
