"""FSDP2 as torchtitan runs it: the fsdp fit's rates with pipeline and context parallelism."""

from __future__ import annotations

import dataclasses

import pytest

from planner.llm.stack_profiles import stack_params
from planner.llm.throughput import predict_layout, prediction_record
from planner.render.llm import estimate_detail
from planner.settings import LLMSettings
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
    assert dataclasses.replace(fsdp2, framework="fsdp") == fsdp
    text = estimate_detail(prediction_record(_predict("fsdp2")))
    assert "PyTorch FSDP2 (torchtitan)'s layouts" in text
    assert "rates fitted on PyTorch FSDP's published runs" in text


def test_an_unknown_framework_names_fsdp2_among_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="fsdp2"):
        LLMSettings(framework="fsdp3")
