"""What the LLM model would have predicted for an own GPT-benchmark run without it.

The run's shape is what the benchmark recorded: parameters from its size label
(planner.llm.mfu.params_from_size), sequence length = tokens/s over samples/s, tokens per
step = per-GPU batch x GPUs x sequence length, one node of `world_size` GPUs, plain data
parallel (DDP: no ZeRO, no recomputation, the recorded per-GPU batch as the micro-batch).
The operator model (planner.llm.throughput.predict_layout) predicts tokens/s from the
other GPT runs' MFU (calibrating its kernel rates when one exists on that GPU) and the
operator-benchmark runs, with its 80% band. Numbers and codes only.
"""

from __future__ import annotations

import math

import pandas as pd

from planner.llm.mfu import gpt_mfu_figures, params_from_size
from planner.llm.throughput import predict_layout
from planner.settings import LLMSettings
from planner.workloads.catalog import llm_workload

# What planner.throughput.calibration calls the method of a GPT prediction.
LLM_METHOD = "llm"
# One node's network is not crossed; any figure will do.
NODE_NETWORK_GBPS = 400.0


def gpt_run_shape(row: pd.Series) -> tuple[float, int, float] | None:
    """(parameters, sequence length, tokens per step) of a GPT result row, or None when
    its size has no parameter count ("tiny") or its rates do not give a sequence length."""
    params = params_from_size(str(row.get("model_size", "")))
    tokens, samples = row.get("tokens_per_s"), row.get("samples_per_s")
    batch = row.get("batch_size_per_device")
    if params is None or not all(
        isinstance(v, int | float) and math.isfinite(v) and v > 0 for v in (tokens, samples, batch)
    ):
        return None
    seq_len = max(1, round(float(tokens) / float(samples)))
    step_tokens = float(batch) * int(row["world_size"]) * seq_len
    return params, seq_len, step_tokens


def predict_gpt_run(row: pd.Series, others: pd.DataFrame) -> dict[str, object]:
    """predicted, predicted_low, predicted_high (tokens/s), error and method for the GPT
    result `row` from the results table `others` (which lacks it); {"reason":
    "no-prediction"} when its shape is unknown or no layout fits."""
    shape = gpt_run_shape(row)
    precision = str(row["precision"])
    if shape is None or precision not in ("fp32", "tf32", "fp16", "bf16"):
        return {"reason": "no-prediction"}
    params, seq_len, step_tokens = shape
    workload = llm_workload(params, 1e9, seq_len=seq_len)
    figures, _ = gpt_mfu_figures(others, precision)
    gpus = int(row["world_size"])
    settings = LLMSettings(
        global_batch_tokens=step_tokens,
        micro_batch=max(1, int(float(row["batch_size_per_device"]))),
        recompute="none",
        zero="zero1" if gpus > 1 else "auto",
    )
    found = predict_layout(
        workload, precision, str(row["gpu_name"]), gpus, gpus, NODE_NETWORK_GBPS,
        figures=figures, settings=settings, ops=others,
    )  # fmt: skip
    if not (math.isfinite(found.tokens_per_s) and found.tokens_per_s > 0):
        return {"reason": "no-prediction"}
    measured = float(row["throughput"])
    return {
        "predicted": found.tokens_per_s,
        "predicted_low": found.tokens_per_s_low,
        "predicted_high": found.tokens_per_s_high,
        "error": found.tokens_per_s / measured - 1.0,
        "method": LLM_METHOD,
    }
