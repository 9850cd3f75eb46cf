"""tools/evaluate_estimator.py's LLM section: paper cases, the model beside the naive 40%."""

from __future__ import annotations

import importlib.util

import numpy as np

from tests.conftest import ROOT


def load_tool():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "evaluate_estimator", ROOT / "tools" / "evaluate_estimator.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_paper_case_gets_a_layout_and_both_errors() -> None:
    tool = load_tool()
    table = tool.evaluate_llm_mfu()
    cases = set(table["case"])
    assert {"Megatron-LM 1T", "Megatron SP 1T", "Llama 3 405B", "PaLM 540B"} <= cases
    assert len(table) == len(tool.LLM_CASES) >= 15
    # Every published run trained, so some layout must fit at its count.
    assert table["layout"].str.startswith("tp").all()
    for model in ("predicted", "prior_model"):  # the operator model and the older one
        assert ((table[model] > 0) & (table[model] < 1)).all()
        errors = (table[model] - table["reported_mfu"]).abs()
        assert np.allclose(table[f"{model}_error"], errors)
        assert table[f"{model}_covered"].dtype == bool
    summary = tool.llm_summary(table)
    assert summary["cases"] == len(table) and 0 <= summary["ops_coverage"] <= 1
    assert np.allclose(table["naive_error"], (table["reported_mfu"] - 0.40).abs())
    megatron = table.loc[table["case"] == "Megatron-LM 1T"].iloc[0]
    assert megatron["reported_mfu"] == 0.52 * 0.75  # hardware FLOPs with recomputation


def test_the_paper_cases_band_holds_most_cases_left_out() -> None:
    tool = load_tool()
    table = tool.evaluate_llm_mfu()
    band = tool.published_runs_band(table["predicted_log_residual"].to_numpy())
    assert band[0] <= 0.0 <= band[1]
    summary = tool.llm_summary(table)
    assert 0.6 <= summary["ops_coverage_loo"] <= 0.95
