"""Predicted vs measured for every own result: what the planner would have said without it.

For each own (measured, not published) result, the results table less that result's row is
turned into reference rows (offers.reference_from_results), the throughput model is fitted
on them (estimate.fit_throughput_model, the fits a plan uses, for the result's benchmark
model) and asked for the result's (GPU, GPU count, model, precision) through
estimate.predict, anchored on the same figures a plan anchors on (offers.best_figures):
leave-one-out. The spec regression learns from 1-GPU figures only, so it is refitted when
the result left out is a 1-GPU run and shared otherwise (the same fit either way).
GPU counts are asked at the communication model's default node size (a result does not
record how many GPUs each node had).

Numbers and codes only (planner.render.calibration words them):

calibrate() rows, one per own result (CALIBRATION_COLUMNS):
  id, gpu_name (canonical; the device name where there is none), model (the reference's
  name: resnet50, bert_large_squad, ...), precision, total_gpus, throughput_unit,
  measured (the result's throughput), predicted, predicted_low, predicted_high (the
  prediction and its 80% band, same unit), error (predicted / measured - 1, a fraction),
  method (measured | published | scaled | estimated | llm: a GPT run through the LLM
  model, planner.llm.calibration; "" when not compared), in_band
  (the measured figure inside the 80% band; NaN when not compared), sweep_id (the sweep
  that ran it, "" when none), reason ("" when compared, else one of REASON_CODES).
error_summary() rows (SUMMARY_COLUMNS): by (gpu | method | all), group, count,
  median_abs_error (median of |error|, a fraction), within_10pct (share of results with
  |error| <= WITHIN, a fraction), in_band (share inside their 80% band: near 0.8 when the
  bands are honest on these machines).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchmarks.workload_names import NON_TRAINING_WORKLOADS
from planner.codes import ThroughputSource
from planner.llm.calibration import predict_gpt_run
from planner.llm.mfu import params_from_size
from planner.throughput.benchmark_compare import is_published
from planner.throughput.estimate import ThroughputModel, fit_throughput_model, predict
from planner.throughput.offers import (
    SAMPLE_COLUMN,
    _generation_order,
    _result_model,
    best_figures,
    reference_from_results,
)
from planner.throughput.spec_model import SpecEstimator

# Why an own result is not compared: a CPU run, a device without a canonical GPU name, a
# GPT run of a size with no parameter count ("tiny"), a result that measures no model's
# training (input pipeline, operators), a benchmark model nothing else measured (no
# figure to predict it from), or nothing the model could predict (no figure and no spec
# estimate for this GPU).
REASON_CODES: tuple[str, ...] = (
    "cpu", "unknown-gpu", "llm", "not-training", "no-model", "no-prediction",
)  # fmt: skip
CALIBRATION_COLUMNS: tuple[str, ...] = (
    "id", "gpu_name", "model", "precision", "total_gpus", "throughput_unit", "measured",
    "predicted", "predicted_low", "predicted_high", "error", "method", "in_band", "sweep_id",
    "reason",
)  # fmt: skip
SUMMARY_COLUMNS: tuple[str, ...] = (
    "by", "group", "count", "median_abs_error", "within_10pct", "in_band",
)  # fmt: skip
WITHIN = 0.10  # the error (a fraction) counted as close in error_summary
METHODS = tuple(
    s.value for s in ThroughputSource if s not in (ThroughputSource.SIBLING, ThroughputSource.NONE)
)


def not_compared(own: pd.DataFrame) -> pd.Series:
    """The reason code (REASON_CODES) each own row cannot be predicted from its row
    alone, "" where it can be tried (a GPU training run of a non-LLM model)."""
    workload = own["workload"].astype(str)
    reason = pd.Series("", index=own.index, dtype=object)
    checks = (
        ("not-training", workload.isin(NON_TRAINING_WORKLOADS) | ~(own["throughput"] > 0)),
        ("llm", (workload == "gpt") & own["model_size"].map(params_from_size).isna()),
        ("unknown-gpu", own["gpu_name"].isna()),
        ("cpu", own["device"].astype(str) == "cpu"),
    )
    for code, mask in checks:  # the last true check wins: cpu before unknown-gpu
        reason = reason.mask(mask.to_numpy(bool), code)
    return reason


def calibrate(results: pd.DataFrame, ids: set[str] | None = None) -> pd.DataFrame:
    """Leave-one-out prediction of every own row of `results` (a results table as
    offers.own_and_published_results returns it; the bundled samples are not own results),
    or of those whose id is in `ids`:
    CALIBRATION_COLUMNS, in the table's order. Throughput in each result's unit (per
    second); error a fraction."""
    own = results.loc[~is_published(results)]
    if SAMPLE_COLUMN in own.columns:  # the bundled samples are not the user's results
        own = own.loc[~own[SAMPLE_COLUMN].fillna(False).astype(bool)]
    if ids is not None:
        own = own.loc[own["id"].isin(ids)]
    reasons = not_compared(own)
    full = reference_from_results(results)
    order = _generation_order(full)
    shared: dict[str, SpecEstimator | None] = {}
    rows = []
    for index, row in own.iterrows():
        out = _base_row(row)
        if reasons[index]:
            rows.append(out | {"reason": reasons[index]})
            continue
        if row["workload"] == "gpt":
            rows.append(out | predict_gpt_run(row, results.drop(index=index)))
            continue
        rest = reference_from_results(results.drop(index=index))
        rows.append(out | _predicted(rest, out, order, shared, row["world_size"] == 1))
    if not rows:
        return pd.DataFrame(columns=list(CALIBRATION_COLUMNS))
    table = pd.DataFrame(rows).loc[:, list(CALIBRATION_COLUMNS)]
    for column in ("measured", "predicted", "predicted_low", "predicted_high", "error"):
        table[column] = pd.to_numeric(table[column], errors="coerce").astype(float)
    inside = (table["predicted_low"] <= table["measured"]) & (
        table["measured"] <= table["predicted_high"]
    )
    table["in_band"] = inside.astype(float).where(table["error"].notna())
    return table.reset_index(drop=True)


def _base_row(row: pd.Series) -> dict[str, object]:
    """The result's own columns of a calibration row; nothing predicted yet."""
    gpu = row["gpu_name"] if isinstance(row["gpu_name"], str) else row["device_name"]
    size = row["model_size"] if isinstance(row["model_size"], str) else ""
    sweep = row.get("sweep_id")
    return {
        "id": row["id"],
        "gpu_name": gpu,
        "model": _result_model(str(row["workload"]), size),
        "precision": row["precision"],
        "total_gpus": int(row["world_size"]),
        "throughput_unit": row["throughput_unit"],
        "measured": float(row["throughput"]),
        "predicted": np.nan,
        "predicted_low": np.nan,
        "predicted_high": np.nan,
        "error": np.nan,
        "method": "",
        "in_band": np.nan,
        "sweep_id": sweep if isinstance(sweep, str) else "",
        "reason": "",
    }


def _predicted(
    rest: pd.DataFrame,
    row: dict[str, object],
    order: tuple[str, ...],
    shared: dict[str, SpecEstimator | None],
    one_gpu: bool,
) -> dict[str, object]:
    """The prediction for `row` from reference rows `rest` (which lack it): predicted,
    its band, error and method, or the reason code when nothing could be predicted.
    `shared` holds the spec regression of the full reference, fitted on first use."""
    name, precision = str(row["model"]), str(row["precision"])
    if not (rest["model"] == name).any():
        return {"reason": "no-model"}
    model = _fit(rest, name, order, None if one_gpu else shared)
    figures = best_figures(model.figures, name, precision, model.generations)
    query = pd.DataFrame(
        {
            "gpu_name": [row["gpu_name"]],
            "total_gpus": [float(row["total_gpus"])],  # type: ignore[arg-type]
            "model": [name],
            "precision": [precision],
        }
    )
    got = predict(model, query, figures=figures).iloc[0]
    if got["throughput_source"] not in METHODS or not np.isfinite(got["throughput"]):
        return {"reason": "no-prediction"}
    measured = float(row["measured"])  # type: ignore[arg-type]
    return {
        "predicted": float(got["throughput"]),
        "predicted_low": float(got["throughput_low"]),
        "predicted_high": float(got["throughput_high"]),
        "error": float(got["throughput"]) / measured - 1.0,
        "method": str(got["throughput_source"]),
    }


def _fit(
    reference: pd.DataFrame,
    model_name: str,
    order: tuple[str, ...],
    shared: dict[str, SpecEstimator | None] | None,
) -> ThroughputModel:
    """The plan's fits (offers.throughput_model_for_model's) on `reference`, not cached:
    scaling laws for `model_name`, the spec regression from `shared` when given (fitted
    once on the first reference it sees, and kept there)."""
    estimator = None
    if shared is not None and "estimator" in shared:
        estimator = shared["estimator"]
    model = fit_throughput_model(
        reference,
        generations=order,
        target_generation=order[-1],
        scaling_models=(model_name,),
        estimator=estimator,
    )
    if shared is not None and "estimator" not in shared:
        shared["estimator"] = model.estimator
    return model


def error_summary(calibration: pd.DataFrame) -> pd.DataFrame:
    """The error of the compared rows by GPU, by method and over all (SUMMARY_COLUMNS):
    count, median absolute error, the share within ±WITHIN and the share inside their
    80% band (fractions)."""
    compared = calibration.loc[calibration["error"].notna()]
    parts = []
    for by, column in (("gpu", "gpu_name"), ("method", "method"), ("all", None)):
        keys = compared[column] if column else pd.Series("all", index=compared.index)
        absolute = compared["error"].abs()
        grouped = absolute.groupby(keys.astype(str), sort=True)
        parts.append(
            pd.DataFrame(
                {
                    "by": by,
                    "count": grouped.size(),
                    "median_abs_error": grouped.median(),
                    "within_10pct": (absolute <= WITHIN).groupby(keys.astype(str)).mean(),
                    "in_band": compared["in_band"].groupby(keys.astype(str)).mean(),
                }
            )
            .rename_axis("group")
            .reset_index()
        )
    table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    if table.empty:
        return pd.DataFrame(columns=list(SUMMARY_COLUMNS))
    return table.loc[:, list(SUMMARY_COLUMNS)]
