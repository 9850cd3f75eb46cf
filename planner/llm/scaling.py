"""An LLM from one node to a thousand GPUs: the layout, throughput and per-GPU efficiency
the operator model (planner.llm.throughput) predicts at each GPU count, and where each
count's step goes. The Scaling page's LLM section; numbers and codes only."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from planner.llm.throughput import predict_layout, prediction_record
from planner.settings import LLMSettings
from planner.workloads.catalog import Workload

# The step's parts the table carries (planner.llm.throughput LLM_DETAIL_COLUMNS).
PART_COLUMNS = (
    "gemm_share", "attention_share", "memory_share", "recompute_share", "bubble_share",
    "tp_comm_share", "cp_comm_share", "pp_comm_share", "dp_comm_share", "dp_overlap_share",
    "optimizer_share",
    "grouped_gemm_share", "a2a_share",
)  # fmt: skip
SCALING_COLUMNS = (
    "total_gpus", "layout", "tokens_per_s", "tokens_per_s_low", "tokens_per_s_high",
    "tokens_per_s_per_gpu", "efficiency", "mfu", "step_s", "memory_per_gpu_gb", "reason",
    *PART_COLUMNS,
)  # fmt: skip


def llm_scaling(
    workload: Workload,
    precision: str,
    gpu_name: str,
    counts: Sequence[int],
    gpus_per_node: int,
    network_gbps: float,
    settings: LLMSettings | None = None,
) -> pd.DataFrame:
    """SCALING_COLUMNS per GPU count: the fastest layout that fits, tokens/s over all GPUs
    with its 10-90% band, tokens/s per GPU, efficiency (per-GPU tokens/s over that of the
    smallest count that fits), MFU, step seconds and the step's shares; reason is the
    layout search's code ("fits", "no_layout_fits", ...), NaN figures where none fits."""
    rows = []
    for count in counts:
        found = predict_layout(
            workload, precision, gpu_name, int(count), gpus_per_node, network_gbps,
            settings=settings,
        )  # fmt: skip
        record = prediction_record(found)
        rows.append(
            {
                "total_gpus": float(count),
                "layout": found.layout.label,
                "tokens_per_s": found.tokens_per_s,
                "tokens_per_s_low": found.tokens_per_s_low,
                "tokens_per_s_high": found.tokens_per_s_high,
                "tokens_per_s_per_gpu": found.tokens_per_s / count,
                "mfu": found.layout.mfu,
                "step_s": found.layout.step_s,
                "memory_per_gpu_gb": found.layout.memory_per_gpu_gb,
                "reason": found.layout.reason,
                **{c: record[c] for c in PART_COLUMNS},
            }
        )
    table = pd.DataFrame(rows)
    fitting = table.loc[table["reason"] == "fits", "tokens_per_s_per_gpu"]
    base = float(fitting.iloc[0]) if len(fitting) else math.nan
    table["efficiency"] = table["tokens_per_s_per_gpu"] / base
    return table.loc[:, list(SCALING_COLUMNS)]
