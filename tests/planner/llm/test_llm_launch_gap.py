"""The compiled stacks' launch gap per layer is the intercept of gpuplan's own compiled
GPT-124M batch sweep, less its optimizer step, over its layers (planner.llm.ops)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from planner.llm.corpus import OWN_RUNS_PATH
from planner.llm.ops import HBM_FRACTION, LAUNCH_S_PER_LAYER, OPTIMIZER_BYTES_PER_PARAM
from planner.machines.specs import spec_for


def test_the_launch_gap_is_the_own_sweeps_intercept_less_the_optimizer_per_layer() -> None:
    runs = pd.read_csv(OWN_RUNS_PATH)
    sweep = runs.loc[
        runs["framework"].str.contains("torch.compile") & runs["model"].str.startswith("GPT 124M")
    ]
    assert sorted(sweep["mbs"]) == [4, 8, 16, 32]  # one GPU, one micro-batch per step
    tokens = sweep["mbs"] * sweep["seq_len"]
    step_s = tokens / sweep["tokens_per_s_per_gpu"]
    _, intercept = np.polyfit(sweep["mbs"].astype(float), step_s.astype(float), 1)
    params = float(sweep["params"].iloc[0])
    bandwidth = spec_for("H200-SXM")["memory_bw_gbs"] * 1e9 * HBM_FRACTION
    optimizer = params * OPTIMIZER_BYTES_PER_PARAM / bandwidth
    layers = int(sweep["n_layer"].iloc[0])
    assert intercept == pytest.approx(3.08e-3, rel=0.01)
    assert (intercept - optimizer) / layers == pytest.approx(LAUNCH_S_PER_LAYER, rel=0.01)
