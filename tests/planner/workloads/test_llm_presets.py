"""One table of LLM presets, named by the size they have, shared by the CLI and the app."""

from __future__ import annotations

import pytest

from planner.workloads.catalog import (
    WORKLOADS,
    get_workload,
    llm_workload,
    lora_adapter_params,
    reshape_llm,
)
from planner.workloads.llm_presets import (
    LLM_PRESETS,
    DecoderShape,
    label_params,
    mlp_kind_gated,
    preset_for,
    preset_named,
)


@pytest.mark.parametrize("label", list(LLM_PRESETS))
def test_every_preset_is_named_by_its_true_parameter_count(label: str) -> None:
    preset = LLM_PRESETS[label]
    assert abs(label_params(label) / preset.params - 1) < 0.01
    assert preset.d_model % preset.n_heads == 0 and preset.n_heads % preset.n_kv_heads == 0
    assert preset_for(label_params(label)) is preset


def test_published_totals_are_recovered_from_the_shapes() -> None:
    # LLaMA-7B: 6.74B (Touvron et al. 2023a); Llama-2-70B: 68.98B; Llama 3.1 405B: 405.8B.
    assert LLM_PRESETS["6.7b"].params == pytest.approx(6.738e9, rel=1e-3)
    assert LLM_PRESETS["69b"].params == pytest.approx(68.98e9, rel=1e-3)
    assert LLM_PRESETS["405b"].params == pytest.approx(405.85e9, rel=1e-3)
    # Llama 3.2 1B and 3B (model cards: 1.23B and 3.21B), tied and SwiGLU as they say.
    assert LLM_PRESETS["1.24b"].params == pytest.approx(1.2358e9, rel=1e-3)
    assert LLM_PRESETS["3.21b"].params == pytest.approx(3.2127e9, rel=1e-3)
    assert get_workload("llm-1.24b-1t").mlp_gated and get_workload("llm-3.21b-1t").tied_embeddings


def test_catalog_names_carry_the_preset_label_and_the_mode() -> None:
    for label in LLM_PRESETS:
        assert any(name.startswith(f"llm-{label}-") for name in WORKLOADS)
    assert {"llm-6.7b-lora-1b", "llm-69b-lora-1b", "llm-69b-finetune-1b"} <= set(WORKLOADS)
    # A size the app asks for in billions means that many parameters, as the CLI's name does.
    assert get_workload("llm-7b-140b").params == 7e9
    assert get_workload("llm-70b-qlora-2b").llm_mode == "qlora"


@pytest.mark.parametrize("size", ["124m", "350m", "1.3b"])
def test_gpt_benchmark_sizes_map_to_the_preset_of_their_shape(size: str) -> None:
    import torch

    from benchmarks import models
    from benchmarks.models.gpt import CONFIGS
    from planner.llm.mfu import params_from_size

    config, preset = CONFIGS[size], preset_named(size)
    assert preset is not None and (preset.n_layer, preset.d_model) == (
        config.n_layer,
        config.d_model,
    )
    assert params_from_size(size) == preset.params  # "350m" is the 355m preset
    with torch.device("meta"):
        built = models.load("gpt", size).build()
    # The benchmark also learns positions and pads the vocabulary: within 1% of the preset.
    assert sum(p.numel() for p in built.parameters()) == pytest.approx(preset.params, rel=0.01)


def test_a_shape_that_says_its_mlp_and_embeddings_is_counted_as_it_says() -> None:
    # Llama 3.2 1B (model card, config.json): 16 x 2048, 32 heads, 8 kv, SwiGLU MLP 8192 =
    # 4 d, vocabulary 128,256, embeddings tied: 1.24B. The width rule alone takes a 4 d MLP
    # as GPT's GELU and ties its embeddings: 0.967B.
    llama = DecoderShape(16, 2048, 32, 8, 8192, 128256, gated=True, tied=True)
    assert llama.params == pytest.approx(1.2358e9, rel=1e-4)
    guessed = DecoderShape(16, 2048, 32, 8, 8192, 128256)
    assert not guessed.mlp_gated and guessed.embeddings_tied
    assert guessed.params == pytest.approx(0.9674e9, rel=1e-4)
    # Only the tie given: a gated model's untied output layer is V d more.
    untied = DecoderShape(16, 2048, 32, 8, 8192, 128256, gated=True, tied=False)
    assert untied.params - llama.params == 128256 * 2048
    # Without a word, the rules: LLaMA's widths gated and untied, GPT's 4 d tied.
    assert LLM_PRESETS["6.7b"].mlp_gated and not LLM_PRESETS["6.7b"].embeddings_tied
    assert not LLM_PRESETS["124m"].mlp_gated and LLM_PRESETS["124m"].embeddings_tied


def test_mlp_kinds_are_named_and_an_unknown_one_is_refused() -> None:
    assert mlp_kind_gated("SwiGLU") and not mlp_kind_gated(" gelu ")
    with pytest.raises(ValueError, match=r"unknown MLP 'swish': valid gelu .* or swiglu"):
        mlp_kind_gated("swish")


def test_lora_adapters_follow_the_mlp_the_shape_says() -> None:
    # 4 d wide: two matrices by the width rule, three when the shape says SwiGLU.
    two = lora_adapter_params(16, 2048, 8192, 32, 8, 16)
    three = lora_adapter_params(16, 2048, 8192, 32, 8, 16, gated=True)
    assert three - two == 16 * 16 * (2048 + 8192)
    shaped = reshape_llm(
        llm_workload(1.24e9, 1e9, mode="lora"), n_layer=16, d_model=2048, n_heads=32,
        n_kv_heads=8, ffn_dim=8192, vocab_size=128256, gated=True, tied=True,
    )  # fmt: skip
    assert shaped.mlp_gated and shaped.params == pytest.approx(1.2358e9, rel=1e-4)
    assert "SwiGLU MLP 8192" in shaped.description and "embeddings tied" in shaped.description
