"""`gpuplan sweep status` shows each swept result beside what gpuplan predicts without it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchmarks.results import BenchmarkResult, write_result
from benchmarks.sweep import state as st
from planner.cli.main import app
from tests.conftest import GOOD_RESULT

runner = CliRunner()
SWEEP = "sw-20261201-b2"


@pytest.fixture()
def swept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A finished sweep whose one run brought back a ResNet-50 result from one H100."""
    monkeypatch.setenv("GPUPLAN_SWEEP_DIR", str(tmp_path / "sweeps"))
    results = tmp_path / "results"
    data = st.new_state(SWEEP, "spec.toml", {"name": "s"}, str(results), ["aws p5.4xlarge"],
                        ["resnet50-fp16-x1"], [6.88])  # fmt: skip
    target = data["targets"][0]
    target["state"] = st.DONE
    target["runs"]["resnet50-fp16-x1"] = {
        "status": st.DONE,
        "result_ids": ["p5-run"],
        "error": None,
    }
    st.StateFile(data).save()
    sweep = {"sweep_id": SWEEP, "backend": "aws", "cloud": "aws", "region": "us-east-1",
             "instance_type": "p5.4xlarge", "spot": False}  # fmt: skip
    (results / SWEEP).mkdir(parents=True)
    result = BenchmarkResult(
        **(GOOD_RESULT | {"id": "p5-run", "throughput": 2600.0, "sweep": sweep})
    )
    write_result(result, results / SWEEP)
    return results


def test_status_prints_the_runs_predicted_vs_measured(swept: Path) -> None:
    done = runner.invoke(app, ["sweep", "status", SWEEP], env={"COLUMNS": "160"})
    assert done.exit_code == 0, done.output
    assert "predicted without each result vs measured" in done.output
    line = next(x for x in done.output.splitlines() if "p5-run" in x)
    assert "2,600" in line and "published" in line  # measured, and what predicted it


def test_status_json_carries_the_same_rows(swept: Path) -> None:
    done = runner.invoke(app, ["sweep", "status", SWEEP, "--format", "json"])
    assert done.exit_code == 0, done.output
    (row,) = json.loads(done.output)["predicted_vs_measured"]
    assert row["result"] == "p5-run" and row["measured"] == "2,600"
    predicted = float(row["predicted"].replace(",", ""))
    assert row["error"] == f"{'+' if predicted > 2600 else ''}{(predicted / 2600 - 1) * 100:.1f}%"


def test_a_sweep_without_results_prints_no_comparison(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUPLAN_SWEEP_DIR", str(tmp_path / "sweeps"))
    data = st.new_state("sw-20261201-c3", "spec.toml", {}, str(tmp_path), ["t"], ["k"], [1.0])
    st.StateFile(data).save()
    done = runner.invoke(app, ["sweep", "status", "sw-20261201-c3", "--format", "json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["predicted_vs_measured"] == []
