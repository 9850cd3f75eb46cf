"""tools/evaluate_llm_memory.py: the memory model against measured peaks, and the
Ultra-Scale Playbook sweep it reads agreeing with the corpus rows taken from it."""

from __future__ import annotations

import pandas as pd
import pytest

from planner.llm.corpus import CORPUS_PATH
from tests.test_evaluate_llm_corpus import load


def test_the_sweep_file_holds_every_configuration_and_the_corpus_rows_taken_from_it() -> None:
    tool = load("evaluate_llm_memory")
    sweep = pd.read_csv(tool.SWEEP_PATH)
    assert len(sweep) == 3287 and sweep["memory_gb"].notna().sum() == 1758
    assert (sweep["tp"] * sweep["pp"] * sweep["dp"] == sweep["num_gpus"]).all()
    corpus = pd.read_csv(CORPUS_PATH)
    playbook = corpus[corpus["source_location"].str.contains("benchmarks_interactive", na=False)]
    assert len(playbook) == 26
    for _, row in playbook.iterrows():  # each heatmap cell's tokens/s is one of the sweep's runs
        same = sweep[(sweep["params"] == row["params"]) & (sweep["num_gpus"] == row["num_gpus"])
                     & (sweep["tp"] == row["tp"]) & (sweep["pp"] == row["pp"])
                     & (sweep["dp"] == row["dp"]) & (sweep["mbs"] == row["mbs"])]  # fmt: skip
        assert row["tokens_per_s_per_gpu"] in set(same["tokens_per_s_per_gpu"])


def test_a_run_is_given_its_layouts_memory_and_the_error_against_its_peak() -> None:
    tool = load("evaluate_llm_memory")
    sweep = pd.DataFrame([{
        "model": "1.34B llama-style (Ultra-Scale Playbook sweep)", "params": "1.34B", "nodes": 1,
        "num_gpus": 8, "tp": 1, "pp": 1, "dp": 8, "zero_stage": 0, "mbs": 1, "grad_acc": 32,
        "gbs": 256, "mfu_pct": 38.3, "tokens_per_s_per_gpu": 39273, "memory_gb": 36.7,
    }])  # fmt: skip
    table = tool.predicted(tool.sweep_rows_of(sweep), "sweep")
    assert list(table["layout"]) == ["tp1 pp1 dp8 zero0 mb1"]
    # 18 bytes a parameter (nanotron's gradients in fp32), 40 s b h over 16 layers, 10 bytes
    # a logit and 4 s b h for the head
    states = 18 * 1.342e9
    acts = 16 * 40 * 4096 * 2048 + 4096 * (4 * 2048 + 10 * 131072)
    assert table["predicted_gb"][0] == pytest.approx((states + acts) / 1e9, rel=0.01)
    published = 16 * 1.342e9 + 16 * 34 * 4096 * 2048 + 4096 * 4 * (2048 + 131072)
    assert table["korthikanti_gb"][0] == pytest.approx(published / 1e9, rel=0.01)
    summary = tool.errors(table).set_index("source")
    error = abs(table["predicted_gb"][0] / 36.7 - 1)
    assert summary.loc["all", "model_mape"] == pytest.approx(error)


def test_the_own_runs_peaks_are_read_in_gigabytes_and_predicted_within_five_percent() -> None:
    tool = load("evaluate_llm_memory")
    own = tool.predicted(tool.own_rows(), "own runs")
    assert len(own) == 9 and own["measured_gb"].between(5.0, 40.0).all()
    assert ((own["predicted_gb"] / own["measured_gb"] - 1).abs() < 0.05).all()
