"""FSDP2 as torchtitan runs it: the fsdp fit's rates with pipeline and context parallelism."""

from __future__ import annotations

import dataclasses

import pytest

from planner.llm.stack_profiles import stack_params
from planner.llm.throughput import predict_layout, prediction_record
from planner.render.llm import estimate_detail
from planner.settings import LLMSettings, StatedLayout
from planner.workloads.catalog import llm_workload

IB = 3200.0
LLAMA_405B_131K = llm_workload(405e9, 1e9, seq_len=131072)


def _predict(framework: str):  # type: ignore[no-untyped-def]
    settings = LLMSettings(framework=framework)
    return predict_layout(LLAMA_405B_131K, "bf16", "H100-SXM", 512, 8, IB, settings=settings)


def test_fsdp2_fits_a_long_context_run_that_plain_fsdp_cannot_hold() -> None:
    plain, fsdp2 = _predict("fsdp"), _predict("fsdp2")
    assert not plain.layout.fits  # no context parallelism: 131k tokens of activations per GPU
    assert fsdp2.layout.fits and fsdp2.layout.cp > 1
    assert fsdp2.layout.memory_per_gpu_gb <= fsdp2.layout.usable_gb
    assert fsdp2.tokens_per_s > 0


def test_fsdp2_takes_the_fitted_fsdp_stacks_rates_and_says_so() -> None:
    fsdp, fsdp2 = stack_params("fsdp"), stack_params("fsdp2")
    assert fsdp2.framework == "fsdp2"
    # the same fitted rates; its own attention: SDPA with cuDNN's first (torchtitan's order)
    assert (fsdp.attention_kernel, fsdp2.attention_kernel) == ("fa2", "cudnn")
    assert dataclasses.replace(fsdp2, framework="fsdp", attention_kernel="fa2") == fsdp
    text = estimate_detail(prediction_record(_predict("fsdp2")))
    assert "PyTorch FSDP2 (torchtitan)'s layouts" in text
    assert "rates fitted on PyTorch FSDP's published runs" in text


def test_an_unknown_framework_names_fsdp2_among_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="fsdp2"):
        LLMSettings(framework="fsdp3")


@pytest.mark.parametrize(("gpu", "faster"), [("H100-SXM", True), ("A100-SXM-40GB", False)])
def test_fsdp2_runs_cudnn_attention_where_sdpa_picks_it(gpu: str, faster: bool) -> None:
    # cuDNN's attention, first in torchtitan's SDPA order, is FlashAttention-3-class on
    # Hopper; on Ampere SDPA's FlashAttention-2 sets the rate. Same fit, same layout.
    workload = llm_workload(8e9, 1e9, seq_len=8192)
    found = {}
    for name in ("fsdp", "fsdp2"):
        settings = LLMSettings(
            framework=name, pinned=StatedLayout(), micro_batch=1, zero="zero3", recompute="full"
        )
        found[name] = predict_layout(workload, "bf16", gpu, 8, 8, IB, settings=settings)
    fsdp, fsdp2 = found["fsdp"], found["fsdp2"]
    assert fsdp.layout.label == fsdp2.layout.label
    ratio = fsdp2.tokens_per_s / fsdp.tokens_per_s
    assert ratio > 1.03 if faster else ratio == pytest.approx(1.0, abs=0.01)
