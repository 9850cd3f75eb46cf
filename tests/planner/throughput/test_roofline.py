"""planner.throughput.roofline: an unmeasured GPU from the nearest measured ones through a
compute/memory share fitted on the measured GPUs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from planner.throughput.roofline import fit_compute_share, roofline_predict, step_units
from planner.throughput.spec_model import spec_features

GPUS = ["A100-SXM-80GB", "H100-SXM", "V100-SXM2-32GB", "L40S", "A10G", "T4"]


def synthetic(f: float, precision: str = "fp16_amp") -> pd.DataFrame:
    """1-GPU figures that follow the roofline mix exactly, a share f of the step compute-
    bound on the GPUs' mean peak and bandwidth."""
    names = pd.Series(GPUS)
    features = spec_features(names, pd.Series([precision] * len(GPUS)))
    lp, lb = features["log_peak"].to_numpy(), features["log_bw"].to_numpy()
    donors = names != "L40S"  # the reference is the measured GPUs' (the fit's own)
    ref = (float(np.mean(lp[donors])), float(np.mean(lb[donors])))
    throughput = 1e4 / step_units(lp, lb, f, ref)
    return pd.DataFrame({"gpu_name": names, "precision": precision, "throughput": throughput})


@pytest.mark.parametrize("f", [0.2, 0.7, 1.0])
def test_the_share_fitted_on_measured_gpus_predicts_an_unseen_one(f: float) -> None:
    figures = synthetic(f)
    donors = figures.loc[figures["gpu_name"] != "L40S"]
    features = spec_features(donors["gpu_name"], donors["precision"])
    assert fit_compute_share(donors.assign(**features))[0] == pytest.approx(f, abs=0.02)
    truth = float(figures.loc[figures["gpu_name"] == "L40S", "throughput"].iloc[0])
    assert roofline_predict(figures, "L40S", "fp16_amp") == pytest.approx(truth, rel=0.02)


def test_pure_compute_scales_with_the_peak_and_pure_memory_with_bandwidth() -> None:
    lp, lb = np.log([200.0, 100.0]), np.log([3.0, 2.0])
    compute = step_units(lp, lb, 1.0, (0.0, 0.0))
    memory = step_units(lp, lb, 0.0, (0.0, 0.0))
    assert compute[1] / compute[0] == pytest.approx(2.0)  # twice the peak, half the time
    assert memory[1] / memory[0] == pytest.approx(1.5)


def test_nothing_to_carry_from_or_no_spec_row_is_nan() -> None:
    figures = synthetic(0.5)
    assert np.isnan(roofline_predict(figures.iloc[:1], "A100-SXM-80GB", "fp16_amp"))
    assert np.isnan(roofline_predict(figures, "Z100", "fp16_amp"))


def test_three_operator_classes_are_recovered_and_carry_an_unseen_gpu() -> None:
    from planner.throughput.roofline import _rates, class_units, fit_class_shares

    names = pd.Series(GPUS)
    rates = _rates(names, pd.Series(["fp16_amp"] * len(GPUS)))
    rates = rates[["log_peak", "log_vector", "log_bw"]].to_numpy(float)
    donors = (names != "L40S").to_numpy()
    shares = np.array([0.5, 0.3, 0.2])
    throughput = 1e4 / class_units(rates, shares, rates[donors].mean(axis=0))
    fitted, _ = fit_class_shares(throughput[donors], rates[donors])
    assert fitted == pytest.approx(shares, abs=0.03)
    figures = pd.DataFrame({"gpu_name": names, "precision": "fp16_amp", "throughput": throughput})
    truth = float(throughput[~donors][0])
    assert roofline_predict(figures, "L40S", "fp16_amp") == pytest.approx(truth, rel=0.02)
