"""`gpuplan workloads`: the workload catalog, samples to train and FLOPs per sample."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from edge.output import emit
from planner.cli.options import Format, check_format

if TYPE_CHECKING:
    import pandas as pd

    from planner.workloads.catalog import Workload

WORKLOADS_TITLE = (
    "Workloads (LLMs: any llm-<params>[-finetune|-lora|-qlora]-<tokens>, e.g. "
    "llm-7b-140b, llm-69b-lora-1b; presets are named by their true size)"
)
WORKLOADS_COLUMNS = ("name", "kind", "mode", "samples_text", "flops_text", "description")


def workloads(fmt: Format = "table") -> None:
    """The workload catalog: samples to train and FLOPs per sample."""
    import pandas as pd

    from planner.workloads.catalog import WORKLOADS

    check_format(fmt)
    frame = pd.DataFrame([workload_record(w) for w in WORKLOADS.values()])
    if fmt == "table":
        frame = table_cells(frame)
    emit(
        frame,
        fmt,
        title=WORKLOADS_TITLE,
        table_columns=WORKLOADS_COLUMNS,
        beneath=("description",),
    )


def table_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """The catalog for the terminal: samples with their unit (115M images) and FLOPs per
    sample with an SI prefix (24.5 GFLOP), through edge.format; JSON and CSV keep the
    numbers."""
    from edge.format import count, flops

    return frame.assign(
        samples_text=[
            f"{count(n, short=True)} {u}"
            for n, u in zip(frame["samples"], frame["sample_unit"], strict=True)
        ],
        flops_text=[flops(v) for v in frame["flops_per_sample"]],
    )


def workload_record(w: Workload) -> dict[str, Any]:
    """One catalog row: what the workload trains and how much (LLMs: mode and params)."""
    return {
        "name": w.name,
        "kind": w.kind,
        "target": w.target,
        "global_batch_cap": w.global_batch_cap,
        "model": w.model,
        "model_size": w.model_size,
        "samples": w.samples,
        "sample_unit": w.sample_unit,
        "flops_per_sample": w.flops_per_sample,
        "mode": w.llm_mode if w.is_llm else "",
        "params": w.params if w.is_llm else None,
        "description": w.description,
        "source": w.source,
    }
