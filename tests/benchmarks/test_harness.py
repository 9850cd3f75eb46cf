"""The harness: timing, statistics, precisions, batch search, failures, power fallbacks."""

from __future__ import annotations

import math

import pytest
import torch

from benchmarks import harness
from benchmarks.harness import BenchmarkError, RunOptions, StepFailed
from benchmarks.models import gpt
from benchmarks.power import PowerMonitor, integrate_w
from benchmarks.summary import make_result, step_stats


def tiny(**overrides: object) -> RunOptions:
    values: dict[str, object] = {"workload": "gpt", "size": "tiny", "steps": 6, "warmup": 1}
    values.update(overrides)
    return RunOptions(**values)  # type: ignore[arg-type]


def test_step_stats_median_percentiles_and_spread() -> None:
    times = [0.1, 0.2, 0.2, 0.2, 0.4]
    stats = step_stats(times, samples_per_step=10, wall_s=1.1)
    assert stats.step_time_s_p50 == 0.2
    assert stats.samples_per_s == pytest.approx(50.0)
    assert stats.samples_per_s_p10 < stats.samples_per_s < stats.samples_per_s_p90
    per_step = [10 / t for t in times]
    mean = sum(per_step) / 5
    std = math.sqrt(sum((x - mean) ** 2 for x in per_step) / 5)
    assert stats.throughput_cv == pytest.approx(std / mean)
    assert stats.wall_samples_per_s == pytest.approx(50 / 1.1)
    with pytest.raises(ValueError):
        step_stats([], 10, 1.0)


def test_a_cpu_run_times_every_step_and_counts_model_flops() -> None:
    m = harness.run(tiny())
    assert len(m.step_times_s) == 6 and all(t > 0 for t in m.step_times_s)
    assert sum(m.step_times_s) == pytest.approx(m.wall_s, rel=1e-6)  # back-to-back windows
    assert m.flops_per_sample == gpt.training_flops_per_sample(gpt.CONFIGS["tiny"])
    assert m.batch_size_per_device == 16 and m.world_size == 1
    assert m.config["optimizer"].startswith("AdamW")
    assert "not measured" in m.power.power_source and m.power.energy_j is None
    result = make_result(m, "r1", "2026-11-30T05:00:00+00:00", peak_tflops=1.0)
    assert result.tokens_per_s == pytest.approx(result.samples_per_s * 64)
    assert result.throughput == result.tokens_per_s
    assert result.mfu == pytest.approx(result.achieved_tflops)  # peak of 1 TFLOP/s
    assert result.achieved_tflops == pytest.approx(m.flops_per_sample * result.samples_per_s / 1e12)


@pytest.mark.parametrize(("precision", "scaled"), [("bf16", False), ("fp16", True)])
def test_amp_precisions_run_on_cpu(precision: str, scaled: bool) -> None:
    m = harness.run(tiny(precision=precision, steps=2))
    assert m.precision == precision and m.config["grad_scaler"] is scaled
    assert "AMP" in m.precision_label


def test_cnn_runs_channels_last() -> None:
    prepared = harness.prepare(RunOptions(workload="resnet50", size="tiny").checked())
    conv = prepared.model.conv1.weight  # type: ignore[union-attr]
    assert conv.is_contiguous(memory_format=torch.channels_last)
    assert prepared.config["channels_last"] is True


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (tiny(precision="tf32"), "tf32"),
        (tiny(device="cuda"), "no CUDA GPU"),
        (tiny(size="huge"), "unknown size"),
        (tiny(steps=0), "--steps"),
        (tiny(compile=True, warmup=0), "--warmup"),
        (tiny(precision="fp8"), "fp32, tf32, fp16, bf16"),
    ],
)
def test_options_that_cannot_run_say_why(options: RunOptions, message: str) -> None:
    with pytest.raises(BenchmarkError, match=message):
        options.checked()


def test_an_exception_in_a_step_names_the_step(monkeypatch: pytest.MonkeyPatch) -> None:
    real = gpt.loss
    calls = {"n": 0}

    def failing(model: torch.nn.Module, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("boom")
        return real(model, batch)

    monkeypatch.setattr(gpt, "loss", failing)
    with pytest.raises(StepFailed, match="timed step 2 of 6 failed: RuntimeError: boom"):
        harness.run(tiny())


def saturating(knee: int, fits_up_to: int):  # type: ignore[no-untyped-def]
    """samples/s that rise linearly up to `knee` and stay flat after it (a GPU filling up),
    None past `fits_up_to` (out of memory)."""
    tried: list[int] = []

    def rate(batch: int) -> float | None:
        tried.append(batch)
        return None if batch > fits_up_to else 100.0 * min(batch, knee)

    return rate, tried


def test_saturating_batch_stops_at_the_throughput_knee_not_at_full_memory() -> None:
    rate, tried = saturating(knee=256, fits_up_to=3311)
    batch, seen = harness.saturating_batch(rate, cap=4096)
    assert batch == 256  # 512 trains no faster: the memory-filling 3,311 is never tried
    assert tried == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    assert seen[256] == seen[512] == 25_600.0


def test_saturating_batch_stops_where_memory_runs_out_or_at_the_cap() -> None:
    rate, _ = saturating(knee=10_000, fits_up_to=100)
    batch, seen = harness.saturating_batch(rate, cap=4096)
    assert batch == 64 and seen[128] is None  # still rising when 128 did not fit
    rate, tried = saturating(knee=10_000, fits_up_to=10_000)
    assert harness.saturating_batch(rate, cap=12)[0] == 12 and tried[-2:] == [8, 12]
    rate, _ = saturating(knee=1, fits_up_to=0)
    assert harness.saturating_batch(rate, cap=64) == (0, {1: None})


def test_saturating_batch_takes_the_smallest_batch_near_the_best_rate() -> None:
    rates = {1: 10.0, 2: 20.0, 4: 39.0, 8: 40.0, 16: 30.0}  # 8 gains 2.6%: the knee is 4
    batch, seen = harness.saturating_batch(rates.get, cap=4096)
    assert batch == 4 and set(seen) == {1, 2, 4, 8}


def test_the_memory_headroom_binds_every_batch_but_one() -> None:
    gib = 2**30
    assert harness.within_headroom(64, int(125 * gib), 140 * gib)  # 89%
    assert not harness.within_headroom(64, int(127 * gib), 140 * gib)  # 91%: too close
    assert harness.within_headroom(1, int(133 * gib), 140 * gib)  # a batch of 1 that trained


def test_gpu_batch_auto_records_every_trial_and_refuses_when_nothing_fits() -> None:
    """The GPU branch of --batch auto (no GPU needed: the trials are given): the knee is
    chosen, each trial's rate is kept in the result's config, and a batch of 1 that does
    not fit is an error naming the fix."""
    from benchmarks import models

    bench = models.load("resnet50", "tiny")
    options = tiny(workload="resnet50", batch_auto=True, max_batch=64).checked()
    rate, _ = saturating(knee=16, fits_up_to=48)
    cuda = torch.device("cuda")
    batch, info = harness._auto_batch(bench, None, cuda, options, lambda b, _s: rate(b), 1)  # type: ignore[arg-type]
    assert batch == 16 and info["cap"] == 64
    assert info["samples_per_s_by_batch"] == {"1": 100.0, "2": 200.0, "4": 400.0, "8": 800.0,
                                              "16": 1600.0, "32": 1600.0}  # fmt: skip
    assert "smallest within 3%" in info["method"]
    with pytest.raises(BenchmarkError, match="even a batch of 1 runs out of GPU memory"):
        harness._auto_batch(bench, None, cuda, options, lambda b, _s: None, 1)  # type: ignore[arg-type]


def test_cpu_batch_for_budget_keeps_the_estimate_inside_the_budget() -> None:
    gib = 2**30
    budget = 4.03 * gib
    batch = harness.cpu_batch_for_budget(1 * gib, 0.1 * gib, 0.05 * gib, budget, cap=1000)
    estimate = 1 * gib + harness.CPU_ACTIVATION_FACTOR * (0.1 * gib + 0.05 * gib * batch)
    over = 1 * gib + harness.CPU_ACTIVATION_FACTOR * (0.1 * gib + 0.05 * gib * (batch + 1))
    assert batch == 28 and estimate <= budget < over
    assert harness.cpu_batch_for_budget(1 * gib, 0, 1, 4 * gib, cap=64) == 64
    assert harness.cpu_batch_for_budget(5 * gib, 0, 1, 4 * gib, cap=64) == 0


def test_batch_auto_on_cpu_respects_the_cap_and_the_memory_budget() -> None:
    capped = harness.prepare(tiny(batch_auto=True, max_batch=24).checked())
    assert capped.batch_size == 24  # the tiny model fits many times over: the cap decides
    info = capped.config["batch_auto"]
    assert info["estimated_gib"] <= info["budget_gib"]
    per_sample_gib = info["per_sample_activation_mib"] / 1024
    budget = info["estimated_gib"] + 3.5 * harness.CPU_ACTIVATION_FACTOR * per_sample_gib
    tight = harness.prepare(tiny(batch_auto=True, memory_budget_gib=budget).checked())
    assert tight.config["batch_auto"]["estimated_gib"] <= budget
    assert 24 <= tight.batch_size <= 28  # ~3.5 more samples fit in the room left
    with pytest.raises(BenchmarkError, match="--memory-budget-gib"):
        harness.prepare(tiny(batch_auto=True, memory_budget_gib=1e-4).checked())


def test_power_is_not_measured_without_nvml_and_says_why() -> None:
    assert "CPU run" in PowerMonitor("cpu").stop().power_source
    monitor = PowerMonitor("cuda")  # no NVIDIA driver here: NVMLError_LibraryNotFound
    reading = monitor.stop()
    assert reading.energy_j is None and reading.mean_power_w is None
    assert reading.energy_source.startswith("not measured: ")
    assert "NVML" in reading.energy_source or "nvidia-ml-py" in reading.energy_source


def test_integrated_power_is_the_trapezoid_area() -> None:
    assert integrate_w([0.0, 1.0, 3.0], [100.0, 200.0, 200.0]) == pytest.approx(150 + 400)
