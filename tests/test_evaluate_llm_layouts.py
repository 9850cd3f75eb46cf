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


def _one(params: str, tp: int, grad_acc: int, measured: float, predicted: float) -> dict:
    return {"params": params, "tp": tp, "pp": 1, "mbs": 1, "gbs": 256, "num_gpus": 64,
            "grad_acc": grad_acc, "tokens_per_s_per_gpu": measured,
            "predicted": predicted, "seq_len": 4096, "layers": 10}  # fmt: skip


def test_the_micro_batch_floor_is_the_step_over_its_micro_batches_per_layer() -> None:
    tool = load("evaluate_llm_layouts")
    timed = pd.DataFrame([
        # 256 x 4096 / 64 = 16,384 tokens a GPU a step, over 2,048 and 4,096 tokens/s: 8 s
        # and 4 s, over 8 micro-batches: 1,000 and 500 ms, over 10 layers: 100 and 50 ms
        _one("1B", 4, 8, 2048.0, 4096.0),
        _one("1B", 8, 8, 2048.0, 8192.0),  # the same time at twice the tp: a floor
        _one("1B", 16, 8, 1024.0, 8192.0),  # across nodes: not a floor candidate
        {**_one("1B", 2, 8, 9.0, 9.0), "pp": 2},  # pipelined and larger micro-batches
        {**_one("1B", 2, 8, 9.0, 9.0), "mbs": 2},  # are not one-micro-batch runs
    ])  # fmt: skip
    floor = tool.micro_batch_floor(timed)
    assert list(floor["tp"]) == [4, 8, 16]
    assert floor["measured_ms"].iloc[0] == pytest.approx(1000.0)
    assert floor["model_ms"].iloc[1] == pytest.approx(250.0)
    lowest = tool.floor_per_layer(floor)
    assert lowest.loc["1B", "measured"] == pytest.approx(100.0)  # tp 4 and 8 tie; tp 16 left out
    assert lowest.loc["1B", "model"] == pytest.approx(50.0)
