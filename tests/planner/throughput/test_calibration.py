"""Predicted (leave-one-out) vs measured for own results: the engine, its words, the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

from benchmarks.results import BenchmarkResult, write_result
from planner.cli.main import app
from planner.render.calibration import REASON_WORDS, calibration_view
from planner.throughput import own_and_published_results, throughput_for_offers, throughput_inputs
from planner.throughput.calibration import (
    CALIBRATION_COLUMNS,
    REASON_CODES,
    calibrate,
    error_summary,
)
from planner.workloads.catalog import get_workload
from tests.conftest import GOOD_RESULT

runner = CliRunner()
# Published ResNet-50 fp16 on one H100-SXM is a few thousand images/s; this one is far off.
FAR = 100.0


def own_run(run_id: str, **fields: Any) -> BenchmarkResult:
    """An own ResNet-50 fp16 result on one H100 (tests.conftest.GOOD_RESULT) with `fields`."""
    return BenchmarkResult(**(GOOD_RESULT | {"id": run_id} | fields))


def write_own_results(directory: Path) -> Path:
    """Own results: a 1-GPU H100 run far from the published figures, an 8-GPU H100 run,
    a CPU run, a GPT run and a run on a GPU gpuplan does not know; the folder."""
    for result in (
        own_run("h100-far", throughput=FAR),
        own_run("h100-x8", world_size=8, throughput=20000.0),
        own_run("cpu-run", device="cpu", device_name="AMD EPYC", throughput=50.0),
        own_run("gpt-run", workload="gpt", model_size="tiny", throughput_unit="tokens/s"),
        own_run("mystery", device_name="Mystery Accelerator 9000"),
    ):
        write_result(result, directory)
    return directory


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    """The own results of write_own_results, in a folder of this test's own."""
    return write_own_results(tmp_path / "own")


def calibrated(folder: Path) -> pd.DataFrame:
    table, problems = own_and_published_results([str(folder)])
    assert problems == []
    return calibrate(table).set_index("id")


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    """The own results of write_own_results and their calibration, computed once for the
    tests that only read them (each calibration fits the throughput model once per result),
    as `calibrate` returns it."""
    directory = write_own_results(tmp_path_factory.mktemp("own"))
    table, problems = own_and_published_results([str(directory)])
    assert problems == []
    return directory, calibrate(table)


def test_leaving_the_result_out_changes_the_prediction(
    shared: tuple[Path, pd.DataFrame],
) -> None:
    folder, rows = shared[0], shared[1].set_index("id")
    far = rows.loc["h100-far"]
    assert far["method"] == "published"
    assert far["predicted"] > 10 * FAR  # from the published figures, not from itself
    assert far["error"] == pytest.approx(far["predicted"] / FAR - 1)
    assert far["predicted_low"] <= far["predicted"] <= far["predicted_high"]
    # With the result in, the plan would answer its own figure: leaving it out matters.
    table, _ = own_and_published_results([str(folder)])
    inputs = throughput_inputs(table, get_workload("resnet50-imagenet-90ep"), "fp16")
    offers = pd.DataFrame({"gpu_name": ["H100-SXM"], "gpu_count": [1]})
    with_it = throughput_for_offers(offers, inputs.figures, inputs.model).iloc[0]
    assert with_it["throughput_source"] == "measured"
    assert with_it["throughput"] == pytest.approx(FAR)
    assert rows.loc["h100-x8", "method"] in ("published", "scaled")
    assert list(shared[1].columns) == list(CALIBRATION_COLUMNS)


def test_results_that_cannot_be_predicted_are_listed_with_why(
    shared: tuple[Path, pd.DataFrame],
) -> None:
    rows = shared[1].set_index("id")
    assert rows.loc["cpu-run", "reason"] == "cpu"
    assert rows.loc["gpt-run", "reason"] == "llm"
    assert rows.loc["mystery", "reason"] == "unknown-gpu"
    assert rows.loc[["cpu-run", "gpt-run", "mystery"], "predicted"].isna().all()
    assert rows.loc[["h100-far", "h100-x8"], "reason"].eq("").all()
    # The bundled sample results are not the user's: not listed at all.
    assert (rows["reason"] == "cpu").sum() == 1
    assert not rows.index.str.contains("tiny").any()
    assert set(rows["reason"]) <= {"", *REASON_CODES}
    assert set(REASON_WORDS) == set(REASON_CODES)


def test_summary_counts_by_gpu_and_method(shared: tuple[Path, pd.DataFrame]) -> None:
    rows = shared[1].set_index("id")
    summary = error_summary(rows.reset_index()).set_index(["by", "group"])
    assert summary.loc[("gpu", "H100-SXM"), "count"] == 2
    assert summary.loc[("all", "all"), "count"] == 2
    far_error = abs(rows.loc["h100-far", "error"])
    x8_error = abs(rows.loc["h100-x8", "error"])
    median = summary.loc[("all", "all"), "median_abs_error"]
    assert median == pytest.approx((far_error + x8_error) / 2)
    within = summary.loc[("all", "all"), "within_10pct"]
    assert within == pytest.approx(((far_error <= 0.1) + (x8_error <= 0.1)) / 2)
    methods = summary.xs("method", level="by")
    assert methods["count"].sum() == 2
    assert "published" in methods.index


def test_two_runs_of_one_setup_predict_each_other(tmp_path: Path) -> None:
    write_result(own_run("a", throughput=3000.0), tmp_path)
    write_result(own_run("b", throughput=3200.0), tmp_path)
    rows = calibrated(tmp_path)
    assert rows.loc["a", "method"] == "measured"
    assert rows.loc["a", "predicted"] == pytest.approx(3200.0)
    assert rows.loc["b", "error"] == pytest.approx(3000.0 / 3200.0 - 1)
    summary = error_summary(rows.reset_index()).set_index(["by", "group"])
    assert summary.loc[("method", "measured"), "within_10pct"] == 1.0


def test_the_cli_prints_the_tables_and_json(shared: tuple[Path, pd.DataFrame]) -> None:
    folder = shared[0]
    done = runner.invoke(
        app, ["bench", "calibrate", "--results", str(folder)], env={"COLUMNS": "160"}
    )
    assert done.exit_code == 0, done.output
    out = done.stdout
    assert "Predicted without each own result vs measured" in out
    assert "h100-far" in out and "published" in out
    assert "Not compared" in out and REASON_WORDS["cpu"] in out
    assert "Error summary" in out and "within ±10%" in out
    done = runner.invoke(app, ["bench", "calibrate", "--results", str(folder), "--format", "json"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    by_id = {r["id"]: r for r in data["results"]}
    assert by_id["h100-far"]["method"] == "published" and by_id["h100-far"]["error"] > 1
    assert by_id["gpt-run"]["reason"] == REASON_WORDS["llm"]
    assert by_id["gpt-run"]["predicted"] is None
    assert {k: v for k, v in data["summary"][-1].items() if k in ("by", "group", "count")} == {
        "by": "all",
        "group": "all",
        "count": 2,
    }
    done = runner.invoke(app, ["bench", "calibrate", "--results", str(folder), "--format", "csv"])
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines()[0].split(",") == list(CALIBRATION_COLUMNS)


def test_a_malformed_file_is_named_and_the_others_are_still_compared(folder: Path) -> None:
    (folder / "broken.json").write_text("{ not json")
    done = runner.invoke(app, ["bench", "calibrate", "--results", str(folder), "--format", "json"])
    assert done.exit_code == 0, done.output
    assert "broken.json" in done.stderr and "not valid JSON" in done.stderr
    ids = {r["id"] for r in json.loads(done.stdout)["results"]}
    assert {"h100-far", "h100-x8", "cpu-run"} <= ids


def test_a_bad_format_is_refused() -> None:
    done = runner.invoke(app, ["bench", "calibrate", "--format", "xml"])
    assert done.exit_code == 2
    assert "error:" in done.stderr


def test_only_cpu_runs_say_nothing_was_compared(tmp_path: Path) -> None:
    write_result(own_run("cpu", device="cpu", device_name="AMD EPYC"), tmp_path)
    table, _ = own_and_published_results([str(tmp_path)])
    rows = calibrate(table)
    summary = error_summary(rows)
    assert summary.empty and (rows["reason"] == "cpu").all()
    from rich.console import Console

    console = Console(width=120, record=True)
    console.print(calibration_view(rows, summary, 120))
    text = console.export_text()
    assert "No own GPU result could be compared" in text and "Not compared" in text


def test_a_swept_result_is_compared_and_says_which_sweep_ran_it(tmp_path: Path) -> None:
    """A sweep brings its results back into a folder of its own under the results folder:
    they are found there, predicted without themselves, and carry the sweep's id."""
    sweep = {"sweep_id": "sw-20261201-a1", "backend": "aws", "cloud": "aws",
             "region": "us-east-1", "instance_type": "p5.48xlarge", "spot": False}  # fmt: skip
    swept = tmp_path / "sw-20261201-a1"
    swept.mkdir()
    write_result(own_run("swept-x1", sweep=sweep, throughput=2800.0), swept)
    write_result(own_run("swept-far", sweep=sweep, world_size=2, throughput=FAR), swept)
    rows = calibrated(tmp_path)
    assert rows.loc["swept-x1", "sweep_id"] == "sw-20261201-a1"
    # Without it, the 1-GPU figure is the published one (a few thousand images/s).
    assert rows.loc["swept-x1", "predicted"] == pytest.approx(2800.0, rel=0.25)
    low, high = rows.loc["swept-x1", ["predicted_low", "predicted_high"]]
    assert rows.loc["swept-x1", "in_band"] == float(low <= 2800.0 <= high)
    assert rows.loc["swept-far", "in_band"] == 0.0  # 100 images/s on 2 GPUs: far outside
    summary = error_summary(rows.reset_index()).set_index(["by", "group"])
    assert summary.loc[("all", "all"), "in_band"] == pytest.approx(rows["in_band"].dropna().mean())
    shown = runner.invoke(
        app, ["bench", "calibrate", "--results", str(tmp_path)], env={"COLUMNS": "160"}
    )
    assert shown.exit_code == 0, shown.output
    assert "sw-20261201" in shown.output and "in 80% band" in shown.output


def gpt_run(run_id: str, tokens_per_s: float, world_size: int = 1) -> BenchmarkResult:
    """An own GPT-124M bf16 run on H100s: 1,024-token sequences, 16 per GPU; its MFU as
    the benchmark counts it (6 N + 12 n_layer seq d_model FLOPs per token, PaLM app. B)."""
    per_gpu = tokens_per_s / world_size
    flops_per_token = 6 * 124e6 + 12 * 12 * 1024 * 768
    return own_run(
        run_id, workload="gpt", model_size="124m", precision="bf16", world_size=world_size,
        throughput=tokens_per_s, throughput_unit="tokens/s", tokens_per_s=tokens_per_s,
        samples_per_s=tokens_per_s / 1024, batch_size_per_device=16.0,
        mfu=per_gpu * flops_per_token / 989e12,
    )  # fmt: skip


def test_a_gpt_run_is_predicted_by_the_llm_model_without_it(tmp_path: Path) -> None:
    write_result(gpt_run("gpt-alone", 420_000.0), tmp_path)
    alone = calibrated(tmp_path).loc["gpt-alone"]
    assert alone["reason"] == "" and alone["method"] == "llm"
    # From the kernel defaults alone: an H100 trains GPT-124M at some 10^5-10^6 tokens/s.
    assert 1e5 < alone["predicted"] < 2e6
    assert alone["predicted_low"] < alone["predicted"] < alone["predicted_high"]
    assert alone["error"] == pytest.approx(alone["predicted"] / 420_000.0 - 1)


def test_another_gpt_run_on_the_gpu_calibrates_the_prediction(tmp_path: Path) -> None:
    """A second run of the same setup 10% faster: the model, calibrated by it, predicts
    the first within a few percent of that run's rate (not from the kernel defaults)."""
    write_result(gpt_run("gpt-a", 400_000.0), tmp_path)
    write_result(gpt_run("gpt-b", 440_000.0), tmp_path)
    rows = calibrated(tmp_path)
    assert rows.loc["gpt-a", "predicted"] == pytest.approx(440_000.0, rel=0.03)
    assert rows.loc["gpt-b", "predicted"] == pytest.approx(400_000.0, rel=0.03)
    shown = runner.invoke(
        app, ["bench", "calibrate", "--results", str(tmp_path)], env={"COLUMNS": "160"}
    )
    assert shown.exit_code == 0, shown.output
    assert "LLM model" in shown.output
