"""tools/evaluate_llm_layouts.py: the layout the model times fastest, scored by what it
measured against the best of its cell, beside the naive rule."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.test_evaluate_llm_corpus import load


def _run(tp: int, pp: int, dp: int, mbs: int, measured: float, predicted: float) -> dict:
    return {"params": "8.86B", "nodes": 2, "tp": tp, "pp": pp, "dp": dp, "zero_stage": 1,
            "mbs": mbs, "tokens_per_s_per_gpu": measured, "predicted": predicted}  # fmt: skip


def test_the_pick_is_the_fastest_timed_layout_and_is_scored_by_what_it_measured() -> None:
    tool = load("evaluate_llm_layouts")
    timed = pd.DataFrame([
        _run(1, 1, 16, 1, 4000.0, 6000.0),  # most data parallelism: the naive rule's
        _run(2, 1, 8, 2, 8000.0, 7000.0),  # the model's pick, and the cell's best
        _run(4, 2, 2, 1, 2000.0, 5000.0),
    ])  # fmt: skip
    table = tool.picks(timed)
    row = table.iloc[0]
    assert row["picked"] == "tp2 pp1 dp8 zero1 mb2" and row["pick"] == pytest.approx(1.0)
    assert row["naive_max_dp"] == pytest.approx(0.5) and row["median_layout"] == pytest.approx(0.5)
    summary = tool.summary(table)
    assert summary["pick_good"] == 1.0 and summary["naive_good"] == 0.0


def test_the_sweeps_layouts_are_timed_with_a_nanotron_fit_that_never_saw_the_playbook() -> None:
    tool = load("evaluate_llm_layouts")
    sweep = pd.read_csv(tool.evaluate_llm_memory.SWEEP_PATH)
    cell = sweep[(sweep["params"] == "1.34B") & (sweep["nodes"] == 1)]
    timed = tool.timed_sweep(cell, tool.stack_without_sweep())
    assert len(timed) == cell["tokens_per_s_per_gpu"].notna().sum()
    assert timed["predicted"].gt(0).all()
    table = tool.picks(timed)  # on one node the pick is the best the sweep measured
    assert table["pick"].iloc[0] == pytest.approx(1.0)
