"""One table of LLM presets, named by the size they have, shared by the CLI and the app."""

from __future__ import annotations

import pytest

from planner.workloads.catalog import WORKLOADS, get_workload
from planner.workloads.llm_presets import LLM_PRESETS, label_params, preset_for, preset_named


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
