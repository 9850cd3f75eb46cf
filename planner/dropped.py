"""Options left out of a plan, with the note that says so: shared by the steps that drop rows
(throughput, LLM, CPU baseline) so that none of them imports another's folder."""

from __future__ import annotations

import numpy as np
import pandas as pd

from planner.notes import Note
from planner.request import PlanRequest


def drop_without(
    options: pd.DataFrame, missing: pd.Series | np.ndarray, reason: str, **values: object
) -> tuple[pd.DataFrame, list[Note]]:
    """Options where `missing` is False; an offers_dropped note (planner.notes) naming how
    many offers and which GPUs went, `reason` (a DROP_REASONS code) and `values`."""
    missing = np.asarray(missing, dtype=bool)
    if not missing.any():
        return options, []
    gone = options.loc[missing]
    offers = gone["offer_key"].nunique()
    gpus = tuple(sorted(gone["gpu_name"].astype(str).unique()))
    note = Note("offers_dropped", {"offers": int(offers), "gpus": gpus, "reason": reason, **values})
    return options.loc[~missing], [note]


def drop_without_throughput(
    options: pd.DataFrame, code: str, request: PlanRequest
) -> tuple[pd.DataFrame, list[Note]]:
    """The options with a throughput, and a `code` note (no_throughput, no_llm_peak) naming
    the request's precision and model for those left out."""
    workload = request.workload
    missing = options["throughput"].isna().to_numpy()
    return drop_without(options, missing, code, precision=request.precision, model=workload.model)
