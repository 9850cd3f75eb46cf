"""Workload catalog: sizes, FLOPs formulas and name errors."""

from __future__ import annotations

import pytest

from planner.workloads.catalog import (
    get_workload,
    llm_shape,
    reshape_llm,
    transformer_training_flops_per_token,
)
from planner.workloads.llm_presets import LLM_PRESETS, dense_decoder_params


def test_catalog_sizes() -> None:
    assert get_workload("resnet50-imagenet-90ep").samples == 1_281_167 * 90
    assert get_workload("bert-large-squad-2ep").samples == 2 * 88_641
    assert get_workload("resnet50-imagenet-90ep").flops_per_sample == pytest.approx(3 * 8.18e9)


def test_llm_names_parse_and_presets_keep_published_shapes() -> None:
    preset = get_workload("llm-6.7b-134b")  # LLaMA-7B, named by its true size
    assert (preset.n_layer, preset.d_model, preset.n_heads) == (32, 4096, 32)
    assert preset.params == pytest.approx(6.738e9, rel=1e-3)
    # "7b" means 7.0e9 parameters, as the app's 7 (billions) does: not the 6.7B preset.
    assert get_workload("llm-7b-140b").params == 7e9
    lora = get_workload("llm-69b-lora-1b")
    assert lora.llm_mode == "lora" and lora.samples == 1e9 and lora.n_kv_heads == 8
    custom = get_workload("llm-3b-60b")
    assert custom.samples == 60e9 and custom.params == 3e9 and custom.is_llm
    assert custom.throughput_unit == "tokens/s"


def test_transformer_flops_follow_palm_and_match_the_gpt_benchmark() -> None:
    assert transformer_training_flops_per_token(1e9, 24, 2048, 2048) == pytest.approx(
        6e9 + 12 * 24 * 2048 * 2048
    )
    # A measured MFU transfers only if the benchmark counts FLOPs the same way.
    gpt = pytest.importorskip("benchmarks.models.gpt")
    for cfg in gpt.CONFIGS.values():
        planner_count = transformer_training_flops_per_token(
            gpt.matmul_params(cfg), cfg.n_layer, cfg.seq_len, cfg.d_model
        )
        assert planner_count == pytest.approx(gpt.training_flops_per_token(cfg))


def test_llm_shape_recovers_parameter_count() -> None:
    for params in (1.3e9, 7e9, 70e9):
        layers, width = llm_shape(params)
        assert 12 * layers * width**2 == pytest.approx(params, rel=0.1)


@pytest.mark.parametrize("name", ["resnet50-imagenet-9ep", "bert-large", "llm-7x-1b"])
def test_unknown_workload_lists_choices_and_closest(name: str) -> None:
    with pytest.raises(ValueError, match="Valid: resnet50-imagenet-90ep") as info:
        get_workload(name)
    if name != "llm-7x-1b":
        assert "did you mean" in str(info.value)


def test_llm_needs_positive_size() -> None:
    with pytest.raises(ValueError, match="params > 0"):
        get_workload("llm-0m-1b")


def test_dense_parameter_count_is_gqa_and_swiglu_aware() -> None:
    # Llama 3.1 8B (Dubey et al. 2024, table 3): 8.03B; every preset's count agrees.
    assert dense_decoder_params(32, 4096, 32, 8, 14336, 128256) == pytest.approx(8.03e9, rel=1e-3)
    for p in LLM_PRESETS.values():
        count = dense_decoder_params(
            p.n_layer, p.d_model, p.n_heads, p.n_kv_heads, p.ffn_dim, p.vocab_size, p.gated, p.tied
        )
        assert count == pytest.approx(p.params)


def test_the_shape_given_is_the_model() -> None:
    named = get_workload("llm-8b-1t")
    llama = reshape_llm(named, 8192, 32, 4096, ffn_dim=14336, n_kv_heads=8, vocab_size=128256)
    assert llama.params == pytest.approx(8.03e9, rel=1e-3) and llama.name == "llm-8.03b-1t"
    assert (llama.n_layer, llama.d_model, llama.n_kv_heads, llama.ffn_dim) == (32, 4096, 8, 14336)
    assert llama.flops_per_sample == pytest.approx(
        transformer_training_flops_per_token(llama.params, 32, 8192, 4096)
    )
    assert "8.03b" in llama.description and llama.samples == named.samples


def test_a_shape_that_contradicts_the_named_size_is_refused_with_both_counts() -> None:
    # 32 x 4096 with an MLP of 4 d and the GPT-2 vocabulary is 6.65B, not 8B.
    with pytest.raises(ValueError, match=r"6\.65B parameters .* names 8B"):
        reshape_llm(get_workload("llm-8b-1t"), 8192, 32, 4096)
    with pytest.raises(ValueError, match="kv_heads 5 must divide heads 32"):
        reshape_llm(get_workload("llm-8b-1t"), n_layer=32, d_model=4096, n_kv_heads=5)


def test_a_sequence_length_alone_keeps_the_model() -> None:
    preset = get_workload("llm-6.7b-134b")
    longer = reshape_llm(preset, seq_len=8192)
    assert longer.params == preset.params and longer.name == preset.name
    assert (longer.n_layer, longer.ffn_dim, longer.seq_len) == (32, 11008, 8192)
