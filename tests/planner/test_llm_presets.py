"""One table of LLM presets, named by the size they have, shared by the CLI and the app."""

from __future__ import annotations

import pytest

from planner.llm_presets import LLM_PRESETS, label_params, preset_for
from planner.workloads import WORKLOADS, get_workload


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
