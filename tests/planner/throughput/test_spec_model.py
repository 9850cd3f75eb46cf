"""The spec regression: recovers a known roofline-like law, and its bands hold."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from planner.machines.specs import load_specs
from planner.throughput.spec_model import chip, fit_spec_estimator, spec_features

MODELS = {
    "alpha": 3.0, "beta": 0.5, "gamma": 12.0, "delta": 1.0,
    "epsilon": 7.0, "zeta": 0.2, "eta": 2.0, "theta": 30.0,
}  # fmt: skip
PRECISIONS = ("fp16_amp", "tf32")


def synthetic(gpus: list[str], noise: float, seed: int) -> pd.DataFrame:
    """1-GPU throughput = c_model * peak^0.6 * bandwidth^0.3, lognormal noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for model, scale in MODELS.items():
        for precision in PRECISIONS:
            names = pd.Series(gpus)
            feats = spec_features(names, pd.Series([precision] * len(gpus)))
            truth = scale * np.exp(0.6 * feats["log_peak"] + 0.3 * feats["log_bw"])
            noisy = truth * rng.lognormal(0.0, noise, len(gpus))
            rows.extend(
                {
                    "gpu_name": g,
                    "model": model,
                    "precision": precision,
                    "generation": "",
                    "throughput": float(x),
                    "truth": float(t),
                }
                for g, x, t in zip(gpus, noisy, truth, strict=True)
            )
    return pd.DataFrame(rows)


def ampere_or_newer() -> list[str]:
    specs = load_specs()
    nvidia = specs.loc[(specs["vendor"] == "NVIDIA") & specs["tf32_tflops"].notna()]
    return sorted(nvidia.index)


def test_regression_recovers_the_law_and_bands_cover_held_out_gpus() -> None:
    gpus = ampere_or_newer()
    rng = np.random.default_rng(3)
    # Hold out whole chips: a memory variant of a training GPU is the same silicon.
    chips = sorted(set(chip(pd.Series(gpus))))
    held_chips = set(rng.choice(chips, size=len(chips) // 3, replace=False))
    held = {g for g in gpus if chip(pd.Series([g])).iloc[0] in held_chips}
    train_gpus = [g for g in gpus if g not in held]
    data = synthetic(gpus, noise=0.1, seed=4)
    train = data.loc[data["gpu_name"].isin(train_gpus)]
    test = data.loc[data["gpu_name"].isin(held)].reset_index(drop=True)
    fitted = fit_spec_estimator(train)
    out = fitted.predict(test)
    assert (out["cv_kind"] == "logo").all()
    # Close to the noise-free law (noise is 10%), far better than a constant.
    error = np.abs(out["estimate"] / test["truth"] - 1)
    assert error.mean() < 0.08
    # The 80% band from cross-validated residuals holds for new GPUs at about its rate.
    inside = (out["low"] <= test["throughput"]) & (test["throughput"] <= out["high"])
    assert 0.65 <= inside.mean() <= 0.95
    assert (out["low"] < out["estimate"]).all() and (out["estimate"] < out["high"]).all()


def test_memory_variants_of_one_chip_get_the_same_estimate() -> None:
    results = synthetic(ampere_or_newer(), noise=0.05, seed=7)
    fitted = fit_spec_estimator(results)
    queries = pd.DataFrame(
        {
            "gpu_name": ["V100-SXM2-16GB", "V100-SXM2-32GB"],
            "model": results["model"].iloc[0],
            "precision": results["precision"].iloc[0],
            "generation": results["generation"].iloc[0],
        }
    )
    small, large = fitted.predict(queries)["estimate"].tolist()
    assert small == pytest.approx(large)


def test_known_gpu_uses_its_own_offset_from_other_models() -> None:
    gpus = ampere_or_newer()
    data = synthetic(gpus, noise=0.02, seed=5)
    # This GPU runs every model 30% faster than its specs say; its "gamma" row is hidden.
    odd = "L40S"
    data.loc[data["gpu_name"] == odd, "throughput"] *= 1.3
    hidden = (data["gpu_name"] == odd) & (data["model"] == "gamma")
    fitted = fit_spec_estimator(data.loc[~hidden])
    query = data.loc[hidden].reset_index(drop=True)
    out = fitted.predict(query)
    assert (out["cv_kind"] == "cell").all()
    assert (out["estimate"] / query["throughput"]).to_numpy() == pytest.approx(1.0, abs=0.1)


def test_reasons_for_missing_estimates() -> None:
    fitted = fit_spec_estimator(synthetic(ampere_or_newer(), noise=0.05, seed=6))
    out = fitted.predict(
        pd.DataFrame(
            {
                "gpu_name": ["V100-SXM2-16GB", "H100-SXM", "H100-SXM", "No-Such-GPU"],
                "model": ["alpha", "unknown", "alpha", "alpha"],
                "precision": ["bf16", "tf32", "fp16", "tf32"],
                "generation": "",
            }
        )
    )
    assert np.isnan(out["estimate"].iloc[0])  # a V100 has no bf16
    assert "no spec row or no peak" in out["reason"].iloc[0]
    assert "no 1-GPU figure of this model" in out["reason"].iloc[1]
    assert out["estimate"].iloc[2] > 0  # fp16 borrows the fp16_amp calibration
    assert "no spec row" in out["reason"].iloc[3]


def test_effective_peak_never_drops_below_fp32() -> None:
    feats = spec_features(pd.Series(["GTX-1080-Ti", "H100-SXM"]), pd.Series(["fp16_amp", "tf32"]))
    assert np.exp(feats["log_peak"]).to_numpy() == pytest.approx([11.3, 494.7])
