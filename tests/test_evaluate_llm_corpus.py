"""tools/evaluate_llm_corpus.py and tools/fit_llm_stacks.py: the held-out table beside the
naive rules, and the bundled stack fit being the one a fresh fit gives."""

from __future__ import annotations

import functools
import importlib.util
import sys

import numpy as np
import pandas as pd
import pytest

from planner.llm.stack_profiles import FIT_PATH
from tests.conftest import ROOT


def load(name: str):  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(ROOT / "tools"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.lru_cache(maxsize=1)
def held_out() -> dict[str, object]:
    """The evaluation's result (a leave-one-source-out fit per source), computed once."""
    result: dict[str, object] = load("evaluate_llm_corpus").evaluate_llm_corpus()
    return result


def test_the_bundled_fit_is_a_fresh_fit_and_its_table_beside_the_naive_rules() -> None:
    """A change to the model or the corpus that moves the fitted parameters or the held-out
    errors must come with a regenerated planner/data/llm_stack_fit.csv."""
    fit = load("fit_llm_stacks")
    table = fit.fit_table(held_out())
    bundled = pd.read_csv(FIT_PATH)
    assert list(bundled["framework"]) == list(table["framework"])
    numeric = bundled.select_dtypes("number").columns
    assert np.allclose(
        bundled[numeric].to_numpy(float), table[numeric].to_numpy(float), equal_nan=True,
        atol=1e-4,
    )  # fmt: skip
    result = held_out()
    runs, summary = result["runs"], result["summary"]
    assert isinstance(runs, pd.DataFrame) and isinstance(summary, pd.DataFrame)
    # Every usable run is predicted from a fit without its own source.
    timed = runs[np.isfinite(runs["predicted"])]
    assert len(timed) >= 90 and timed["source"].nunique() >= 10
    overall = summary[summary["by"] == "all"].iloc[0]
    assert overall["runs"] == len(timed)
    assert np.isclose(overall["model_mape"], timed["model_error"].mean())
    assert np.isclose(overall["flat40_mape"], (timed["flat"] / timed["measured"] - 1).abs().mean())
    # The bands are the held-out quantiles: they cover about 80% of the held-out runs.
    assert 0.5 <= overall["band_coverage"] <= 0.95
    frameworks = set(summary.loc[summary["by"] == "framework", "cell"])
    assert {"megatron", "fsdp", "deepspeed", "nanotron"} <= frameworks


def test_runs_their_source_says_ran_degraded_are_reported_apart_not_scored() -> None:
    result = held_out()
    runs, skipped = result["runs"], result["skipped"]
    assert isinstance(runs, pd.DataFrame) and isinstance(skipped, dict)
    # the Ultra-Scale Playbook's 80B on 4 nodes ("runs inefficiently due to operating near
    # the GPU memory limits") and KempnerForge's memory-bound 70B on 8 GPUs
    degraded = {key for key, why in skipped.items() if why == "degraded"}
    assert degraded == {"calibration:36", "calibration:148"}
    assert not set(runs.loc[runs["source"] != "gpuplan own runs", "row"]) & {36, 148}
    lines = load("evaluate_llm_corpus").degraded_lines(result)
    assert [line.split(" (")[0] for line in lines] == ["row 36", "row 148"]
    # each is timed against what it measured: both ran well below a healthy run
    for line in lines:
        assert "left out as its source says it ran degraded" in line
        assert float(line.rsplit("(", 1)[1].rstrip("x)")) > 1.3


def test_the_stack_median_rule_never_uses_the_runs_own_source() -> None:
    evaluate = load("evaluate_llm_corpus")
    from planner.llm.corpus import load_corpus

    runs, _ = load_corpus()
    run = next(r for r in runs if r.source == "NVIDIA/Megatron-LM")
    others = [r.mfu for r in runs if r.family == "megatron" and r.source != run.source]
    assert evaluate.stack_median_mfu(run, runs) == np.median(others)
    assert evaluate.size_band(7e9) == "3-15B" and evaluate.size_band(405e9) == ">100B"


def test_within_source_error_removes_each_sources_own_level() -> None:
    """Two sources off by a constant factor each have no within-source error left; a
    source whose runs scatter keeps it."""
    tool = load("evaluate_llm_corpus")
    table = pd.DataFrame(
        {
            "source": ["a", "a", "b", "b"],
            "measured": [100.0, 200.0, 100.0, 100.0],
            "predicted": [150.0, 300.0, 50.0, 200.0],
            "flat": [100.0, 200.0, 100.0, 100.0],
        }
    )
    within = tool.within_source_error(table)
    assert within["flat40"] == 0.0
    # source a: both 1.5x (no scatter); source b: 0.5x and 2x (log +-0.69 about 0)
    assert within["model"] == np.float64(0.5)


def test_own_runs_are_fitted_on_as_one_source_and_held_out_like_the_others() -> None:
    """reference/own_runs' GPT rows are the result files' figures; the fit takes them as
    one more source; the check predicts each from the fit without them, again with the ops
    result measured beside them."""
    import json

    from planner.llm.corpus import CORPUS_PATH, OWN_RUNS_PATH, load_calibration, load_corpus

    own = pd.read_csv(OWN_RUNS_PATH)
    for row in own.itertuples():
        result = json.loads((ROOT / row.source_location).read_text())
        assert row.tokens_per_s_per_gpu == round(result["tokens_per_s"], 1)
        assert (row.n_layer, row.d_model) == (
            result["config"]["model"]["n_layer"], result["config"]["model"]["d_model"],
        )  # fmt: skip
    published, _ = load_corpus(CORPUS_PATH)
    fitted, _ = load_calibration()
    tool = load("evaluate_llm_corpus")
    assert not any(r.source == tool.OWN_SOURCE for r in published)
    assert sum(r.source == tool.OWN_SOURCE for r in fitted) == len(own)
    assert len(fitted) == len(published) + len(own)
    result = held_out()
    table = result["runs"]
    assert isinstance(table, pd.DataFrame)
    check = tool.own_runs_check(result)
    assert len(check) == len(own) and check["framework"].eq("fsdp").all()
    assert np.isfinite(check[["predicted", "with_own_ops"]].to_numpy()).all()
    # held out: the same predictions as the table's, from the fold without gpuplan's runs
    in_table = table.loc[table["source"] == tool.OWN_SOURCE, "predicted"].to_numpy()
    assert np.allclose(sorted(in_table), sorted(check["predicted"]))
    # The H200's measured GEMM, attention and copy rates move every prediction.
    assert (abs(check["with_own_ops"] / check["predicted"] - 1) > 0.05).all()
    # the published-only average leaves gpuplan's runs out of the mean, not of the fits
    only = tool.published_only(table)
    mine = table["source"] == tool.OWN_SOURCE
    assert only["runs"] == int((~mine & np.isfinite(table["predicted"])).sum())
    assert np.isclose(
        only["model"], table.loc[~mine & np.isfinite(table["predicted"]), "model_error"].mean()
    )


def test_the_in_sample_error_is_below_the_held_out_error_for_every_stack() -> None:
    """One fit on every run predicting those runs leaves less error than a fit without each
    run's source; it is reported overall and for each stack the corpus has."""
    result = held_out()
    in_sample, runs = result["in_sample"], result["runs"]
    assert isinstance(in_sample, dict) and isinstance(runs, pd.DataFrame)
    timed = runs[np.isfinite(runs["predicted"])]
    assert set(in_sample) == {"all", *timed["framework"]}
    assert 0.0 < in_sample["all"] < timed["model_error"].mean()
    for stack, errors in timed.groupby("framework")["model_error"]:
        assert in_sample[stack] <= errors.mean() + 0.02, stack


def test_an_fp8_runs_band_comes_from_the_other_sources_fp8_errors_of_either_sign() -> None:
    """fp8_band_of: the 80% quantile of |log error| over the fp8 runs of other sources (a
    source's own errors never widen its band, nor bf16 runs'), NaN with fewer than
    MIN_BAND_RUNS of them; in the table an fp8 run is covered by it either way."""
    evaluate = load("evaluate_llm_corpus")
    table = pd.DataFrame(
        {
            "source": ["a"] * 4 + ["b"] * 4 + ["c"] * 4 + ["e"] * 4 + ["d"],
            "precision": ["fp8"] * 16 + ["bf16"],
            "log_residual": [0.5] * 4 + [-0.1] * 4 + [0.1] * 4 + [-0.3] * 4 + [2.0],
        }
    )
    assert evaluate.fp8_band_of(table, "a") == pytest.approx(0.3)
    assert evaluate.fp8_band_of(table) == pytest.approx(0.5)
    assert np.isnan(evaluate.fp8_band_of(table[table["source"].isin(["a", "d"])], "x"))
    runs = held_out()["runs"]
    assert isinstance(runs, pd.DataFrame)
    for row in runs[runs["precision"] == "fp8"].itertuples():
        width = evaluate.fp8_band_of(runs, row.source)
        if abs(row.log_residual) <= width:
            assert row.covered, row.row


def test_micro_batch_tokens_come_from_the_layout_label_and_the_sequence() -> None:
    tool = load("evaluate_llm_corpus")
    assert tool.micro_batch_tokens("tp1 cp2 pp1 dp4 zero1 mb2", 8192) == 8192.0
    assert tool.micro_batch_tokens("tp2 pp4 vpp2 dp8 zero1 mb4 full-recompute", 4096) == 16384.0
    assert np.isnan(tool.micro_batch_tokens("no layout fits", 4096))


def test_the_micro_batch_trend_is_the_slope_within_each_source() -> None:
    """Two sources at different levels with the same slope of -0.1 per doubling, and a
    source whose runs share one micro-batch size (left out): the pooled within-source slope
    is the shared one, whatever the levels."""
    tool = load("evaluate_llm_corpus")
    rows = []
    for source, level in (("a", 0.3), ("b", -0.2)):
        for tokens in (4096, 8192, 16384, 32768):
            rows.append({"source": source, "micro_batch_tokens": float(tokens),
                         "log_residual": level - 0.1 * np.log2(tokens)})  # fmt: skip
    rows += [{"source": "c", "micro_batch_tokens": 4096.0, "log_residual": r} for r in (0.5, -0.5)]
    trend = tool.micro_batch_trend(pd.DataFrame(rows))
    assert trend["slope_per_doubling"] == pytest.approx(-0.1)
    assert trend["correlation"] == pytest.approx(-1.0)
    assert trend["runs"] == 8 and trend["sources"] == 2
