"""FP8 recipes: each recipe's GEMM time from Transformer Engine's per-layer GEMM profile, the
stack's default where none is named, and the recipe as a column of estimate-llm and a flag
of plan and estimate-llm."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from planner.llm.corpus import load_corpus
from planner.llm.fp8_recipes import (
    DEFAULT_RECIPE,
    RECIPES,
    gemm_time_factor,
    recipe_of_text,
    resolved_recipe,
)
from planner.llm.frameworks import FRAMEWORKS
from planner.llm.throughput import predict_layout
from planner.settings import LLMSettings
from planner.workloads.catalog import llm_workload

runner = CliRunner()
GEMMS = Path(__file__).resolve().parents[3] / "reference" / "calibration" / "gemm_achievable.csv"
HOPPER, BLACKWELL = "Hopper", "Blackwell"


def _per_layer_ms(gpu: str) -> dict[str, float]:
    """Transformer Engine's autocast per-layer GEMM totals (ms) on `gpu`, by recipe."""
    table = pd.read_csv(GEMMS)
    rows = table[
        (table["gpu_model"] == gpu)
        & table["benchmark"].str.contains("autocast; per-layer total", regex=False)
    ]
    names = {"bf16": "bf16", "fp8 current scaling": "tensorwise",
             "fp8 delayed scaling": "delayed", "fp8 block scaling": "blockwise",
             "mxfp8": "mxfp8"}  # fmt: skip
    pairs = zip(rows["dtype"], rows["time_ms"], strict=True)
    return {names[d]: float(t) for d, t in pairs if d in names}


@pytest.mark.parametrize(("gpu", "architecture"), [("H200-NVL", HOPPER), ("B300", BLACKWELL)])
def test_each_measured_recipe_is_its_gemm_time_over_tensorwise(gpu: str, architecture: str) -> None:
    measured = _per_layer_ms(gpu)
    assert "tensorwise" in measured and len(measured) >= 4
    for recipe, ms in measured.items():
        if recipe == "bf16":
            continue
        expected = ms / measured["tensorwise"]
        assert gemm_time_factor(recipe, architecture) == pytest.approx(expected, rel=1e-9)


def test_recipes_order_as_measured_and_mxfp8_needs_blackwell() -> None:
    hopper = {r: gemm_time_factor(r, HOPPER) for r in RECIPES}
    assert hopper["delayed"] < hopper["tensorwise"] == 1.0 < hopper["rowwise"]
    # The 16-bit weight-gradient GEMM costs more than keeping it rowwise in fp8.
    assert hopper["rowwise_with_gw_hp"] > hopper["rowwise"]
    assert math.isnan(hopper["mxfp8"])
    assert 0.9 < gemm_time_factor("mxfp8", "Blackwell (GB100)") < 1.0
    with pytest.raises(ValueError, match="Valid: auto, tensorwise"):
        gemm_time_factor("per-row", HOPPER)


def test_every_stack_has_a_default_recipe_and_auto_takes_it() -> None:
    assert set(DEFAULT_RECIPE) == set(FRAMEWORKS)
    assert resolved_recipe("auto", "megatron") == "delayed"
    assert resolved_recipe("auto", "fsdp") == "tensorwise"
    assert resolved_recipe("rowwise", "megatron") == "rowwise"
    with pytest.raises(ValueError, match="fp8 recipe 'fast'"):
        LLMSettings(fp8_recipe="fast")


def _tokens(precision: str, recipe: str, gpu: str = "H100-SXM") -> tuple[float, str]:
    found = predict_layout(
        llm_workload(8e9, 1e9, seq_len=8192), precision, gpu, 8, 8, 3200.0,
        settings=LLMSettings(framework="fsdp", fp8_recipe=recipe),
    )  # fmt: skip
    return found.tokens_per_s, found.layout.reason


def test_a_slower_recipe_gives_fewer_tokens_and_bf16_ignores_the_recipe() -> None:
    tensorwise, _ = _tokens("fp8", "tensorwise")
    rowwise, _ = _tokens("fp8", "rowwise")
    delayed, _ = _tokens("fp8", "delayed")
    assert rowwise < tensorwise < delayed
    assert _tokens("bf16", "rowwise") == _tokens("bf16", "tensorwise")
    assert _tokens("fp8", "auto") == (tensorwise, "fits")  # fsdp's default is tensorwise


def test_mxfp8_has_no_rate_before_blackwell() -> None:
    assert _tokens("fp8", "mxfp8", "H100-SXM") == (pytest.approx(math.nan, nan_ok=True), "no_peak")
    tokens, reason = _tokens("fp8", "mxfp8", "B200")
    assert reason == "fits" and tokens > 0


def test_the_corpus_reads_the_recipe_its_rows_name() -> None:
    assert recipe_of_text("fp8 rowwise_with_gw_hp, bf16 all-gather") == "rowwise_with_gw_hp"
    assert recipe_of_text("fp8 rowwise, bf16 all-gather") == "rowwise"
    assert recipe_of_text("bf16+fp8 (TE)") is None
    runs, _ = load_corpus()
    ao = {r.fp8_recipe for r in runs if r.source == "pytorch/ao" and r.precision == "fp8"}
    assert ao == {"tensorwise", "rowwise", "rowwise_with_gw_hp"}
    others = {r.fp8_recipe for r in runs if r.source != "pytorch/ao" and r.precision == "fp8"}
    assert others == {"auto"}  # not stated: the stack's default


def _estimate(tmp_path: Path, rows: str, *flags: str) -> object:
    queries = tmp_path / "q.csv"
    queries.write_text("params,seq_len,num_gpus,gpu_model,precision,framework,fp8_recipe\n" + rows)
    return runner.invoke(
        app, ["estimate-llm", "--queries", str(queries), "--format", "json", *flags]
    )


def test_estimate_llm_times_each_rows_recipe_and_names_it(tmp_path: Path) -> None:
    done = _estimate(
        tmp_path,
        "8b,8192,8,H100-SXM,fp8,fsdp,tensorwise\n8b,8192,8,H100-SXM,fp8,fsdp,rowwise\n"
        "8b,8192,8,H100-SXM,fp8,megatron,\n8b,8192,8,H100-SXM,bf16,fsdp,\n",
    )
    assert done.exit_code == 0, done.output
    rows = json.loads(done.stdout)
    assert rows[0]["tokens_per_s"] > rows[1]["tokens_per_s"]
    assert "fp8 recipe tensorwise" in rows[0]["method_detail"]
    assert "fp8 recipe rowwise" in rows[1]["method_detail"]
    assert "fp8 recipe delayed" in rows[2]["method_detail"]  # megatron's default
    assert "fp8 recipe" not in rows[3]["method_detail"]


def test_the_flag_sets_the_recipe_where_a_row_gives_none(tmp_path: Path) -> None:
    rows = "8b,8192,8,H100-SXM,fp8,fsdp,\n8b,8192,8,H100-SXM,fp8,fsdp,tensorwise\n"
    done = _estimate(tmp_path, rows, "--fp8-recipe", "rowwise")
    assert done.exit_code == 0, done.output
    first, second = json.loads(done.stdout)
    assert "fp8 recipe rowwise" in first["method_detail"]
    assert "fp8 recipe tensorwise" in second["method_detail"]
    refused = _estimate(tmp_path, rows, "--fp8-recipe", "rowwize")
    assert refused.exit_code == 2 and "rowwize" in refused.output


@pytest.mark.parametrize(
    ("row", "words"),
    [
        ("8b,8192,8,H100-SXM,fp8,fsdp,rowwize\n", ["line 2", "fp8_recipe", "rowwise"]),
        ("8b,8192,8,H100-SXM,bf16,fsdp,rowwise\n", ["line 2", "fp8 rows only", "bf16"]),
        # an H100 row asking for mxfp8: refused like fp8 on a GPU without it, not timed "none"
        (
            "8b,8192,8,H100-SXM,fp8,fsdp,mxfp8\n",
            ["line 2", "'fp8_recipe'", "H100-SXM cannot run the mxfp8", "Blackwell"],
        ),
    ],
)
def test_a_bad_recipe_cell_is_refused_naming_line_and_fix(
    tmp_path: Path, row: str, words: list[str]
) -> None:
    done = _estimate(tmp_path, row)
    assert done.exit_code == 2
    for word in words:
        assert word in done.output


def test_plan_takes_the_recipe_and_drops_gpus_that_cannot_run_it() -> None:
    args = ["plan", "--workload", "llm-7b-140b", "--precision", "fp8", "--format", "json"]
    mx = runner.invoke(app, [*args, "--fp8-recipe", "mxfp8"])
    assert mx.exit_code == 0, mx.output
    rows = json.loads(mx.stdout)
    assert rows and all(r["gpu_name"].startswith(("B", "GB")) for r in rows)
    assert any("fp8 recipe mxfp8" in r["throughput_detail"] for r in rows)
    assert "mxfp8 needs Blackwell" in mx.stderr
    tensorwise = runner.invoke(app, [*args, "--fp8-recipe", "tensorwise"])
    assert {r["gpu_name"] for r in json.loads(tensorwise.stdout)} > {r["gpu_name"] for r in rows}
    # only Hopper asked for: the recipe is named as the cause, not missing fp8 tensor cores
    hopper = runner.invoke(app, [*args, "--fp8-recipe", "mxfp8", "--gpu", "H100-SXM"])
    assert hopper.exit_code == 2
    said = " ".join(hopper.stderr.split())
    assert "--fp8-recipe mxfp8: none of the GPUs offered can run it" in said
    assert "no fp8 tensor cores" not in said


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (["--fp8-recipe", "rowwise"], ["applies to fp8 training", "at bf16", "--precision fp8"]),
        (["--precision", "fp8", "--fp8-recipe", "rowwize"], ["did you mean 'rowwise'"]),
    ],
)
def test_plan_refuses_a_recipe_without_fp8_or_misspelt(flags: list[str], words: list[str]) -> None:
    done = runner.invoke(app, ["plan", "--workload", "llm-7b-140b", *flags])
    assert done.exit_code == 2
    for word in words:
        assert word in done.output


def test_the_recipe_clause_joins_a_no_peak_refusal_at_fp8_only(tmp_path: Path) -> None:
    t4 = runner.invoke(app, ["plan", "-w", "llm-1.3b-26b", "--gpu", "T4", "--max-gpus", "8"])
    assert "fp16 may have one)" in t4.stdout and "mxfp8" not in t4.stdout
    fp8 = runner.invoke(
        app,
        ["plan", "-w", "llm-7b-140b", "--precision", "fp8", "--fp8-recipe", "mxfp8", "--explain"],
        env={"COLUMNS": "400"},
    )
    assert fp8.exit_code == 0, fp8.output
    assert "or an fp8 recipe it cannot run: mxfp8 needs Blackwell" in " ".join(fp8.output.split())
