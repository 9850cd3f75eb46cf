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
    assert set(table["case"]) == {"Megatron-LM 1T", "Llama 3 405B", "PaLM 540B"}
    # Every published run trained, so some layout must fit at its count.
    assert table["layout"].str.startswith("tp").all()
    assert ((table["predicted"] > 0) & (table["predicted"] < 1)).all()
    assert np.allclose(table["naive_error"], (table["reported_mfu"] - 0.40).abs())
    megatron = table.loc[table["case"] == "Megatron-LM 1T"].iloc[0]
    assert megatron["reported_mfu"] == 0.52 * 0.75  # hardware FLOPs with recomputation
