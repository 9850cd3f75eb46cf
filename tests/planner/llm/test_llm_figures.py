"""The LLM model's GPU figures come from the spec table's columns, never from its notes."""

from __future__ import annotations

import pytest

from planner.llm import throughput as llm
from planner.machines.specs import load_specs


def test_bridged_nvlink_follows_the_flag_not_the_note(monkeypatch: pytest.MonkeyPatch) -> None:
    specs = load_specs().copy()
    specs.loc["A40", "nvlink_bridge"] = False  # its note still says "bridge"
    specs.loc["H100-SXM", "nvlink_bridge"] = True
    assert "bridge" in str(specs.loc["A40", "interconnect_note"]).lower()
    monkeypatch.setattr(llm, "load_specs", lambda: specs)
    llm.gpu_figures.cache_clear()  # other tests filled it from the real table
    try:
        a40, h100 = llm.gpu_figures("A40"), llm.gpu_figures("H100-SXM")
    finally:
        llm.gpu_figures.cache_clear()
    assert a40 is not None and h100 is not None
    assert a40.bridged_nvlink is False and h100.bridged_nvlink is True
