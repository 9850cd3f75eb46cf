"""tools/evaluate_cnn.py: every FlagPerf run is scored or deliberately left out, its batch is
the one its source row states, and each point is predicted without its own model."""

from __future__ import annotations

import importlib.util
import re
import sys

import numpy as np
import pandas as pd
import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
_spec = importlib.util.spec_from_file_location("evaluate_cnn", ROOT / "tools" / "evaluate_cnn.py")
assert _spec and _spec.loader
evaluate_cnn = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(evaluate_cnn)


def test_every_flagperf_model_is_sized_or_left_out_with_a_reason() -> None:
    models = set(evaluate_cnn.flagperf()["model"])
    assert models == set(evaluate_cnn.MODELS) | set(evaluate_cnn.LEFT_OUT)
    assert not set(evaluate_cnn.MODELS) & set(evaluate_cnn.LEFT_OUT)


def test_each_flagperf_batch_is_the_one_its_row_or_config_states() -> None:
    rows = evaluate_cnn.flagperf()
    for row in rows.itertuples(index=False):
        fix_hp = re.search(r'fix_hp "(.*)"$', row.source_location)
        assert fix_hp, row.source_location
        stated = re.search(r"bs=(\d+)", fix_hp.group(1))
        if stated:
            assert row.batch_size == float(stated.group(1)), row.source_location
        elif not np.isnan(row.batch_size):
            # A "/" row: the batch is the case's default, and the notes name its file.
            assert re.search(r"config(_A100x\dx\d|/_base)\.py", row.notes), row.notes


def _rows(resnet_small_rate: float) -> pd.DataFrame:
    """Two 8-GPU batch sweeps, a ResNet-50 1-GPU row and a model whose 1-GPU config
    accumulates gradients (1, 8 and 16 GPUs at one batch)."""
    accumulating = sorted(evaluate_cnn.ONE_GPU_ACCUMULATES)[0]
    table = [
        ("ResNet-50", 8, 32.0, resnet_small_rate),
        ("ResNet-50", 8, 256.0, 5866.0),
        ("ResNet-50", 1, 256.0, 795.0),
        ("MobileNetV2", 8, 32.0, 5784.0),
        ("MobileNetV2", 8, 512.0, 8693.0),
        (accumulating, 1, 96.0, 286.0),
        (accumulating, 8, 96.0, 2136.0),
        (accumulating, 16, 96.0, 3892.0),
    ]
    frame = pd.DataFrame(
        table, columns=["model", "num_gpus", "batch_size", "train_samples_per_sec"]
    )
    return frame.assign(source="FlagOpen/FlagPerf", gpu_model="A100-40GB", precision="fp32")


def test_a_sweep_is_predicted_with_the_floor_fitted_without_it() -> None:
    slow, fast = (
        evaluate_cnn.small_batch(_rows(rate)).set_index("model") for rate in (3000.0, 4586.0)
    )
    # ResNet-50's own small-batch rate moves its measured ratio, not its prediction...
    assert slow.loc["ResNet-50", "measured"] < fast.loc["ResNet-50", "measured"]
    assert slow.loc["ResNet-50", "step_model"] == pytest.approx(fast.loc["ResNet-50", "step_model"])
    # ...but it moves MobileNetV2's, whose floor is fitted on ResNet-50's sweep.
    assert slow.loc["MobileNetV2", "step_model"] < fast.loc["MobileNetV2", "step_model"]


def test_a_one_gpu_run_that_accumulates_gradients_is_no_eight_from_one_point() -> None:
    scale = evaluate_cnn.scaling(_rows(4586.0))
    accumulating = evaluate_cnn.short_name(sorted(evaluate_cnn.ONE_GPU_ACCUMULATES)[0])
    assert scale.loc[scale["model"] == accumulating, "from_to"].tolist() == ["8->16"]
    resnet = scale.loc[scale["model"] == "ResNet-50"]
    assert resnet["from_to"].tolist() == ["1->8"]
    assert resnet["truth"].iloc[0] == pytest.approx(5866.0 / 8 / 795.0)


def test_band_coverage_scores_each_point_against_the_others() -> None:
    # The outlier falls outside the band of the three zeros (spread 0); each zero lies
    # inside the band of the other two zeros and the outlier (1/3 ± t(0.9, 2) × 0.577 × √(4/3)).
    coverage, width, points = evaluate_cnn.loo_band_coverage(np.array([0.0, 0.0, 0.0, 1.0]))
    assert points == 4
    assert coverage == pytest.approx(0.75)
    # A prediction interval from m points is wider than a z band: t(0.9, 2) = 1.886.
    half = 1.8856 * np.std([0.0, 0.0, 1.0], ddof=1) * np.sqrt(4 / 3)
    assert width == pytest.approx(3 * half / 4, rel=1e-3)


def test_own_sweep_rows_are_their_result_files_and_are_scored_on_their_gpu() -> None:
    """reference/own_runs' batch-sweep table is what tools/own_batch_sweeps.py reads from the
    result files, and (h) scores each own sweep on the GPU it ran on."""
    import json

    spec = importlib.util.spec_from_file_location("own", ROOT / "tools" / "own_batch_sweeps.py")
    assert spec and spec.loader
    own_tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(own_tool)
    assert own_tool.table().to_csv(index=False) == own_tool.OWN_CNN_FILE.read_text()
    own = pd.read_csv(own_tool.OWN_CNN_FILE)
    for row in own.itertuples():
        result = json.loads((ROOT / row.source_location).read_text())
        assert row.batch_size == result["batch_size_per_device"]
        assert row.train_samples_per_sec == round(result["samples_per_s"], 1)
    scored = evaluate_cnn.small_batch(own)
    assert set(scored["gpus"]) == {"1 x H200-SXM"}
    assert len(scored) == own.groupby(["model", "precision"]).ngroups
    assert (scored["step_model"] < 0.5).all() and (scored["measured"] < 0.5).all()
