"""MFU anchors: literature priors per GPU generation, replaced by own GPT results."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest

from benchmarks.results import BenchmarkResult, results_frame, write_result
from planner.llm.mfu import (
    DEFAULT_PRIOR,
    GENERATION_PRIORS,
    SIZE_LOG_ERROR_PER_DECADE,
    generation_prior,
    gpt_mfu_figures,
    params_from_size,
)
from planner.llm.throughput import llm_options, predict_layout
from planner.machines.specs import load_specs
from planner.render.llm import PRIOR_WORDS, llm_detail, mfu_source_text
from planner.render.notes import notes_text
from planner.settings import LLMSettings
from planner.throughput import own_and_published_results
from planner.workloads.catalog import get_workload

P1 = get_workload("llm-1.3b-26b")  # GPT-3 XL shape


def gpt(
    gpu: str | None,
    size: str,
    mfu: float,
    world: int = 1,
    device: str = "cuda",
    run: int = 0,
    precision: str = "bf16",
    device_name: str = "",
) -> BenchmarkResult:
    return BenchmarkResult(
        id=f"gpt-{gpu}-{size}-{world}-{run}-{device}",
        workload="gpt",
        model_size=size,
        precision=precision,  # type: ignore[arg-type]
        device=device,  # type: ignore[arg-type]
        device_name=device_name,
        gpu_name=gpu,
        world_size=world,
        throughput=1000.0,
        throughput_unit="tokens/s",
        tokens_per_s=1000.0,
        mfu=mfu,
        started_at="2026-11-20",
    )


@pytest.mark.parametrize(
    ("gpu", "mfu"),
    [
        ("A100-SXM-80GB", 0.60),
        ("H100-SXM", 0.50),
        ("B200", 0.50),
        ("V100-SXM2-32GB", 0.30),
        ("MI250X", 0.35),
        ("TPU-v4", 0.46),
        ("RTX-4090", DEFAULT_PRIOR.mfu),
    ],
)
def test_priors_by_generation_are_cited(gpu: str, mfu: float) -> None:
    prior = generation_prior(gpu, 8192)
    assert prior.mfu == mfu and prior.low < prior.mfu < prior.high
    assert re.search(r"(19|20)\d\d", PRIOR_WORDS[prior.code])  # a paper and its year
    assert gpu in load_specs().index


def test_every_prior_names_its_paper_and_small_models_get_a_wider_band() -> None:
    for _, prior in GENERATION_PRIORS:
        assert re.search(r"et al\. (19|20)\d\d|\(\w+ (19|20)\d\d", PRIOR_WORDS[prior.code])
    wide = generation_prior("H100-SXM", 768)
    assert wide.mfu == 0.50 and wide.low < generation_prior("H100-SXM", 4096).low


def test_mfu_figures_leave_out_cpu_and_tiny_runs() -> None:
    results = results_frame(
        [
            gpt("A100-SXM-80GB", "1.3b", 0.48, run=1),
            gpt("A100-SXM-80GB", "1.3b", 0.52, run=2),
            gpt(None, "tiny", 0.9, device="cpu"),
            gpt("H100-SXM", "tiny", 0.05),
            gpt("A100-SXM-80GB", "1.3b", 0.30, precision="fp32"),
        ]
    )
    figures, notes = gpt_mfu_figures(results, "bf16")
    assert len(figures) == 1
    row = figures.iloc[0]
    assert (row["gpu_name"], row["mfu"], row["mfu_low"], row["mfu_high"]) == (
        "A100-SXM-80GB", 0.50, 0.48, 0.52,
    )  # fmt: skip
    assert row["params"] == pytest.approx(1.311e9, rel=1e-3)  # the 1.3b preset's true size
    assert row["source"] == "measured" and row["runs"] == 2
    assert {n.code for n in notes} == {"gpt_results_unused"}
    assert any("from CPUs" in n for n in notes_text(notes))
    assert any("size tiny not used" in n for n in notes_text(notes))
    assert params_from_size("124m") == pytest.approx(123.55e6, rel=1e-3)
    assert params_from_size("7b") == 7e9 and params_from_size("tiny") is None


def test_a_run_without_peak_gets_mfu_from_achieved_tflops_over_the_spec_peak() -> None:
    run = gpt("H100-SXM", "1.3b", 0.5).model_copy(update={"mfu": None, "achieved_tflops": 445.2})
    figures, _ = gpt_mfu_figures(results_frame([run]), "bf16")
    assert figures.loc[0, "mfu"] == pytest.approx(445.2 / 989.4)  # H100 SXM dense bf16 peak


def test_own_gpt_mfu_replaces_the_prior_and_is_measured_at_its_own_size_and_count() -> None:
    results = results_frame(
        [gpt("A100-SXM-80GB", "1.3b", 0.40, run=1), gpt("A100-SXM-80GB", "1.3b", 0.44, run=2)]
    )
    figures, _ = gpt_mfu_figures(results, "bf16")
    options = pd.DataFrame(
        {
            "gpu_name": ["A100-SXM-80GB", "A100-SXM-80GB", "H100-SXM"],
            "total_gpus": [1.0, 8.0, 1.0],
            "gpus_per_node": [1.0, 8.0, 1.0],
            "network_gbps": [100.0, 400.0, 100.0],
        }
    )
    out = llm_options(options, P1, "bf16", figures)
    assert out["throughput_source"].tolist() == ["measured", "scaled", "estimated"]
    one = out.iloc[0]
    # The measured model on the measured count: own runs calibrate the kernel rates so that
    # the operator model gives back the measured MFU (launch gaps aside).
    assert one["mfu"] == pytest.approx(0.42, rel=0.01)
    assert one["throughput"] == pytest.approx(one["mfu"] * 312e12 / P1.flops_per_sample)
    assert one["throughput_low"] == pytest.approx(one["throughput"] * 0.40 / 0.42)
    assert one["mfu_source"] == "own_measured" and one["mfu_runs"] == 2
    assert one["calibration"] != 1.0
    assert "measured by the GPT benchmark on this GPU" in llm_detail(one.to_dict(), "bf16")
    # No own H100 run: the operator model at Hopper's kernel defaults, uncalibrated.
    hopper = out.iloc[2]
    assert hopper["mfu_source"] == "kernels_hopper" and hopper["calibration"] == 1.0
    assert 0.3 < hopper["mfu"] < 0.70  # below the GEMMs' own 70% of peak
    assert "Hopper kernels" in llm_detail(hopper.to_dict(), "bf16")


def test_size_transfer_widens_the_band_by_decades() -> None:
    figures, _ = gpt_mfu_figures(results_frame([gpt("H100-SXM", "124m", 0.40)]), "bf16")
    near = predict_layout(P1, "bf16", "H100-SXM", 8, 8, 400, figures)
    far = predict_layout(get_workload("llm-6.7b-134b"), "bf16", "H100-SXM", 8, 8, 400, figures)
    assert near.anchor.kind == far.anchor.kind == "own"
    width = lambda p: math.log(p.anchor.high / p.anchor.mfu)  # noqa: E731
    assert width(near) == pytest.approx(
        SIZE_LOG_ERROR_PER_DECADE * math.log10(1.311e9 / 123.55e6), rel=1e-3
    )
    assert width(far) > width(near)
    assert far.anchor.model_size == "124m" and far.anchor.size_decades > 1
    record = {
        "mfu_source": far.anchor.code, "mfu_anchor": far.anchor.mfu, "mfu_runs": 1,
        "mfu_run_id": far.anchor.run_id, "mfu_model_size": far.anchor.model_size,
        "mfu_world_size": far.anchor.world_size, "mfu_size_decades": far.anchor.size_decades,
    }  # fmt: skip
    assert "size 124m -> target" in mfu_source_text(record)
    assert "operator benchmark" not in mfu_source_text(record)
    # Own GPT runs calibrating an operator benchmark's rates: both runs are named.
    both = {**record, "calibration": 1.04, "kernels_run_id": "ops-run-1"}
    assert mfu_source_text(both).endswith(
        "; kernel rates measured by the operator benchmark (run ops-run-1) x 1.04"
    )
    assert far.kernels_run == ""  # no operator-benchmark table given


def test_own_gpt_results_on_disk_map_device_names_and_skip_cpus(results_dir: Path) -> None:
    write_result(gpt(None, "355m", 0.42, device_name="NVIDIA A100-SXM4-80GB"), results_dir)
    write_result(gpt(None, "tiny", 0.95, device="cpu", device_name="Intel Xeon"), results_dir)
    table, problems = own_and_published_results([str(results_dir)])
    assert problems == []
    figures, notes = gpt_mfu_figures(table, "fp16")  # bf16 results serve fp16 too
    assert figures["gpu_name"].tolist() == ["A100-SXM-80GB"]
    assert figures["mfu"].tolist() == [0.42]
    assert any("1 GPT results from CPUs" in n for n in notes_text(notes))


def test_own_runs_keep_their_compile_state_and_a_plan_in_the_other_mode_keeps_its_eager_cost():
    eager_run = gpt("H100-SXM", "1.3b", 0.40, run=1).model_copy(
        update={"config": {"compile": False}}
    )
    compiled_run = gpt("H100-SXM", "1.3b", 0.46, run=2).model_copy(
        update={"config": {"compile": True}}
    )
    both, _ = gpt_mfu_figures(results_frame([eager_run, compiled_run]), "bf16")
    assert sorted(both["compiled"]) == ["no", "yes"]  # two configurations, not one median
    options = pd.DataFrame(
        {"gpu_name": ["H100-SXM"], "total_gpus": [1.0], "gpus_per_node": [1.0],
         "network_gbps": [100.0]}
    )  # fmt: skip
    compiled, eager = LLMSettings(framework="fsdp"), LLMSettings(framework="fsdp", eager=True)

    def mfu(figures: pd.DataFrame, settings: LLMSettings) -> float:
        return float(llm_options(options, P1, "bf16", figures, settings=settings).iloc[0]["mfu"])

    # Each mode anchors on its own run and gives it back at the measured size and count.
    assert mfu(both, compiled) == pytest.approx(0.46, rel=0.02)
    assert mfu(both, eager) == pytest.approx(0.40, rel=0.02)
    # Only the eager run: it is timed eager to calibrate, so the eager plan gives it back and
    # the compiled plan runs faster than it did (its eager cost is not carried over).
    only_eager, _ = gpt_mfu_figures(results_frame([eager_run]), "bf16")
    assert mfu(only_eager, eager) == pytest.approx(0.40, rel=0.02)
    assert mfu(only_eager, compiled) > 0.40 * 1.04
