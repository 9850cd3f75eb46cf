"""Scaling laws, their fits and the ring all-reduce communication model."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from planner.settings import CommModel
from planner.throughput.scaling import (
    LAW_CODE,
    amdahl_throughput,
    bus_bandwidth_gbs,
    comm_efficiency,
    effective_gpus,
    efficiency,
    fit_law,
    fit_scaling,
    ring_allreduce_bytes,
    ring_allreduce_seconds,
    ring_throughput,
    usl_throughput,
)

COUNTS = np.array([1, 2, 4, 8, 16, 32], dtype=float)


def test_usl_fit_recovers_known_parameters() -> None:
    x = usl_throughput(COUNTS, 1000.0, 0.05, 0.002)
    a, b, lam = fit_law(COUNTS, x, "usl")
    assert a == pytest.approx(0.05, rel=1e-3)
    assert b == pytest.approx(0.002, rel=1e-3)
    assert lam[0] == pytest.approx(1000.0, rel=1e-4)


def test_usl_fit_recovers_parameters_through_noise() -> None:
    rng = np.random.default_rng(7)
    counts = np.repeat(COUNTS, 5)
    x = usl_throughput(counts, 500.0, 0.03, 0.001) * rng.lognormal(0, 0.01, len(counts))
    a, b, lam = fit_law(counts, x, "usl")
    assert a == pytest.approx(0.03, abs=0.01)
    assert b == pytest.approx(0.001, abs=0.0005)
    assert lam[0] == pytest.approx(500.0, rel=0.02)


def test_amdahl_fit_recovers_the_parallel_fraction() -> None:
    x = amdahl_throughput(COUNTS, 200.0, p=0.95)
    a, b, lam = fit_law(COUNTS, x, "amdahl")
    assert 1 - a == pytest.approx(0.95, rel=1e-4)
    assert b == 0.0
    assert lam[0] == pytest.approx(200.0, rel=1e-4)
    # Amdahl's speedup 1 / ((1 - p) + p / N)
    assert x[3] / x[0] == pytest.approx(1 / (0.05 + 0.95 / 8))


def test_ring_fit_recovers_theta_and_one_level_per_generation() -> None:
    counts = np.concatenate([COUNTS[:4], COUNTS[:3]])
    levels = np.array([0, 0, 0, 0, 1, 1, 1])
    x = ring_throughput(counts, np.where(levels == 0, 100.0, 130.0), 0.08)
    a, _, lam = fit_law(counts, x, "ring", levels)
    assert a == pytest.approx(0.08, rel=1e-3)
    assert lam == pytest.approx([100.0, 130.0], rel=1e-4)


def test_effective_gpus_is_vectorized_and_linear_below_one_gpu() -> None:
    n = np.array([0.5, 1.0, 2.0, 8.0])
    out = effective_gpus(n, np.array([LAW_CODE["ring"]] * 4), 0.1, 0.0)
    assert out[0] == pytest.approx(0.5)
    assert out[1] == pytest.approx(1.0)
    assert out[3] == pytest.approx(8 / (1 + 0.1 * 2 * 7 / 8))
    assert efficiency(np.array([1, 64]), "linear") == pytest.approx([1.0, 1.0])
    assert efficiency(np.array([4]), "usl", 0.1, 0.01)[0] == pytest.approx(1 / (1 + 0.3 + 0.12))


@pytest.mark.parametrize(
    ("n", "factor"), [(1, 0.0), (2, 1.0), (4, 1.5), (8, 1.75), (1024, 2 * 1023 / 1024)]
)
def test_ring_allreduce_moves_2_n_minus_1_over_n_of_the_message(n: int, factor: float) -> None:
    assert ring_allreduce_bytes(n, 1e9) == pytest.approx(factor * 1e9)


def test_ring_allreduce_time_adds_latency_per_step() -> None:
    seconds = ring_allreduce_seconds(4, 1e9, 100.0, latency_s=1e-5)
    assert seconds == pytest.approx(2 * 3 * 1e-5 + 1.5 * 1e9 / 100e9)


def test_comm_efficiency_with_and_without_overlap() -> None:
    comm = CommModel(overlap=0.0, latency_s=0.0)
    # 1 GB of gradients over 10 GB/s between 2 GPUs: 0.1 s against 0.3 s of compute.
    assert comm_efficiency(2, 0.3, 1e9, 10.0, comm) == pytest.approx(0.3 / 0.4)
    hidden = CommModel(overlap=0.5, latency_s=0.0)
    assert comm_efficiency(2, 0.3, 1e9, 10.0, hidden) == pytest.approx(1.0)
    # A global batch shrinks each GPU's compute with N (strong scaling).
    strong = comm_efficiency(4, 0.4, 1e9, 10.0, comm, global_batch=True)
    assert strong == pytest.approx(0.1 / (0.1 + 0.15))


def test_bus_bandwidth_follows_nvlink_bridges_pcie_and_the_network() -> None:
    comm = CommModel(network_gbps_per_node=400, gpus_per_node=8, achievable_fraction=1.0)
    gpus = pd.Series(["H100-SXM", "H100-SXM", "RTX-A6000", "RTX-A6000", "T4"])
    bus = bus_bandwidth_gbs(gpus, np.array([8, 16, 2, 4, 2]), comm)
    assert bus == pytest.approx([450.0, 50.0, 56.25, 31.5, 15.75])


def test_comm_model_rejects_bad_settings() -> None:
    with pytest.raises(ValueError, match="overlap"):
        CommModel(overlap=1.5)
    with pytest.raises(ValueError, match="network_gbps_per_node"):
        CommModel(network_gbps_per_node=0)


def _points(law: str, a: float, b: float, gpus: int, noise: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for g in range(gpus):
        level = 100.0 * (1 + g)
        for n in (1, 2, 4, 8):
            x = level * effective_gpus(n, LAW_CODE[law], a, b) * rng.lognormal(0, noise)
            rows.append(
                {
                    "gpu_name": f"G{g}",
                    "model": "m",
                    "precision": "fp16_amp",
                    "interconnect": "nvlink",
                    "generation": "",
                    "total_gpus": float(n),
                    "throughput": float(x),
                }
            )
    return pd.DataFrame(rows)


def test_law_is_chosen_by_held_out_error() -> None:
    fits = fit_scaling(_points("amdahl", 0.1, 0.0, gpus=10, noise=0.0, seed=1))
    pooled = fits.pooled.set_index("law")
    chosen = fits.chosen_pooled()["law"].iloc[0]
    assert chosen in ("amdahl", "usl")
    assert pooled.loc[chosen, "heldout_mape"] < 1e-3
    assert pooled.loc["linear", "heldout_mape"] > 0.1
    # Each group carries the chosen law with its parameters (a = 1 - p = 0.1).
    assert (fits.groups["law"] == chosen).all()
    assert fits.groups["a"].to_numpy() == pytest.approx(0.1, abs=1e-3)


def test_ring_shaped_data_chooses_the_ring_law() -> None:
    fits = fit_scaling(_points("ring", 0.08, 0.0, gpus=10, noise=0.002, seed=2))
    assert fits.chosen_pooled()["law"].iloc[0] == "ring"
    heldout = fits.heldout.loc[fits.heldout["law"] == "ring"]
    assert (heldout["count"] == 8).all() and (heldout["anchor_count"] == 4).all()
    assert heldout["rel_error"].abs().max() < 0.02


def test_the_interconnect_class_follows_the_bridge_flag_not_the_note(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import planner.throughput.scaling as scaling_module
    from planner.machines.specs import load_specs

    specs = load_specs().copy()
    specs.loc["H100-SXM", "interconnect_note"] = "NVLink bridge (2 GPUs)"  # flag says no
    specs.loc["A100-PCIe-80GB", "interconnect_note"] = "NVLink 3.0"  # flag says bridged
    monkeypatch.setattr(scaling_module, "load_specs", lambda: specs)
    kinds = scaling_module.interconnect_class(pd.Series(["H100-SXM", "A100-PCIe-80GB", "L40S"]))
    assert list(kinds) == ["nvlink", "nvlink-bridge", "pcie"]
