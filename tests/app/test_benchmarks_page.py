"""The Benchmarks page: browse, compare with published figures, add files, run one here."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from benchmarks.results import BenchmarkResult, load_results, read_result, write_result
from planner.throughput import bundled_results_dir
from tests.app.conftest import chart, metrics, plain, table_with
from tests.conftest import GOOD_RESULT as GOOD

Open = Callable[..., AppTest]


def bundled() -> int:
    """Sample results shipped with gpuplan (tiny CPU runs): shown as samples, not counted."""
    return len(load_results(bundled_results_dir())[0])


def upload(at: AppTest, *files: tuple[str, bytes]) -> AppTest:
    at.file_uploader(key="benchmarks.upload").set_value(
        [(name, content, "application/json") for name, content in files]
    )
    return at.run()


def errors(at: AppTest) -> str:
    return plain(" ".join(e.value for e in at.error))


def test_default_view_browses_published_figures(open_page: Open, results_dir: Path) -> None:
    at = open_page("benchmarks")
    shown = metrics(at)
    assert bundled() > 0
    assert shown["Own results"] == "0"  # the samples are not the user's
    assert int(shown["Published figures"].replace(",", "")) > 2000
    said = plain(" ".join(c.value for c in at.caption))
    assert f"Own results are read from {results_dir.resolve()}" in said
    samples = f"The {bundled()} bundled sample(s) from benchmarks/results/ are shown as samples"
    assert samples in said
    assert "No own results yet" in at.info[0].value
    rows = table_with(at, "id", "source", "throughput", "started_at")
    assert set(rows["precision"]) == {"fp16"}
    assert rows["source"].eq("published:lambda").all()
    figure = chart(at, "benchmarks.chart")
    assert figure["data"]


def test_another_model_changes_the_rows(open_page: Open) -> None:
    at = open_page("benchmarks")
    before = table_with(at, "id", "source", "throughput")
    at.selectbox(key="benchmarks.model").set_value("bert large").run()
    after = table_with(at, "id", "source", "throughput")
    assert set(after["throughput_unit"]) == {"sequences/s"}
    assert set(after["id"]).isdisjoint(before["id"])
    assert "bert large" in list(metrics(at))[2]
    at.multiselect(key="benchmarks.gpus").set_value(["A100-SXM-40GB"]).run()
    assert set(table_with(at, "id", "throughput")["gpu_name"]) == {"A100-SXM-40GB"}


def test_a_non_json_file_is_refused_and_nothing_is_saved(
    open_page: Open, results_dir: Path
) -> None:
    at = upload(open_page("benchmarks"), ("notes.json", b"this is not json"))
    assert not at.exception
    assert "notes.json: field '<json>': not valid JSON" in errors(at)
    assert "Nothing was saved" in errors(at)
    assert not at.button or all(b.key != "benchmarks.save" for b in at.button)
    assert list(results_dir.iterdir()) == []


def test_a_wrong_field_is_named_and_a_good_file_beside_it_is_not_saved(
    open_page: Open, results_dir: Path
) -> None:
    wrong = {**GOOD, "id": "wrong", "world_size": 0}
    at = upload(
        open_page("benchmarks"),
        ("good.json", json.dumps(GOOD).encode()),
        ("wrong.json", json.dumps(wrong).encode()),
    )
    assert "wrong.json: field 'world_size'" in errors(at)
    assert "greater than or equal to 1" in errors(at)
    assert list(results_dir.iterdir()) == []


def test_a_good_file_is_saved_and_compared_with_the_published_figure(
    open_page: Open, results_dir: Path
) -> None:
    at = upload(open_page("benchmarks"), ("good.json", json.dumps(GOOD).encode()))
    assert not at.error
    preview = table_with(at, "file", "id", "throughput")
    assert preview["id"].tolist() == ["my-h100-run"]
    at.button(key="benchmarks.save").click().run()
    saved = results_dir / "my-h100-run.json"
    assert "Saved 1 file(s)" in at.success[0].value
    assert str(saved) in [c.value for c in at.code]
    assert read_result(saved) == BenchmarkResult(**GOOD)
    assert [p.name for p in results_dir.iterdir()] == ["my-h100-run.json"]  # no temp file left
    assert metrics(at)["Own results"] == "1"
    side = table_with(at, "measured_throughput", "published_throughput")
    row = side.loc[side["gpu_name"] == "H100-SXM"].iloc[0]
    assert (row["gpu_name"], row["measured_throughput"]) == ("H100-SXM", 2500.0)
    assert row["published_throughput"] > 0
    assert row["measured_over_published"] == pytest.approx(
        2500.0 / row["published_throughput"], abs=1e-3
    )


def test_a_different_result_with_a_taken_id_is_refused(open_page: Open, results_dir: Path) -> None:
    path = write_result(BenchmarkResult(**{**GOOD, "throughput": 1.0}), results_dir)
    before = path.read_bytes()
    at = upload(open_page("benchmarks"), ("good.json", json.dumps(GOOD).encode()))
    assert "a different result with id 'my-h100-run' is already in" in errors(at)
    assert path.read_bytes() == before


def test_bad_files_in_the_results_folder_are_listed(open_page: Open, results_dir: Path) -> None:
    (results_dir / "broken.json").write_text("{")
    (results_dir / "ok.json").write_text(json.dumps(GOOD))
    at = open_page("benchmarks")
    assert "broken.json: field '<json>'" in plain(at.warning[0].value)
    assert metrics(at)["Own results"] == "1"


def bench_run_exists() -> bool:
    done = subprocess.run(
        [sys.executable, "-m", "planner.cli.main", "bench", "run", "--help"],
        capture_output=True,
        timeout=120,
    )
    return done.returncode == 0


@pytest.mark.slow
def test_quick_benchmark_runs_here_and_saves_its_result(open_page: Open, results_dir: Path) -> None:
    pytest.importorskip("torch")
    if not bench_run_exists():
        pytest.skip("`gpuplan bench run` is not in this checkout (benchmark harness not merged)")
    at = open_page("benchmarks")
    at.selectbox(key="benchmarks.quick_workload").set_value("resnet50")
    at.number_input(key="benchmarks.quick_steps").set_value(3)
    at.button(key="benchmarks.quick_run").click().run(timeout=600)
    assert not at.exception and not at.error, errors(at)
    written = list(results_dir.glob("*.json"))
    assert len(written) == 1
    result = read_result(written[0])
    assert (result.workload, result.model_size, result.device) == ("resnet50", "tiny", "cpu")
    # The message is literal Markdown: every punctuation character is backslash-escaped.
    assert str(written[0]) in at.success[0].value.replace("\\", "")


def test_sweeps_are_listed_beside_published_figures(open_page: Open, results_dir: Path) -> None:
    sweep = {"sweep_id": "ab-20261130t120000-ab12", "backend": "aws", "cloud": "aws",
             "region": "us-east-1", "instance_type": "p4d.24xlarge", "spot": False}  # fmt: skip
    run = {**GOOD, "id": "swept-a100", "device_name": "NVIDIA A100-SXM4-40GB", "sweep": sweep}
    write_result(BenchmarkResult.model_validate(run), results_dir)
    at = open_page("benchmarks")
    assert not at.exception
    table = table_with(at, "sweep_id", "instance_type", "published_throughput")
    assert len(table) == 1
    row = table.iloc[0]
    assert row["sweep_id"] == sweep["sweep_id"] and row["instance_type"] == "p4d.24xlarge"
    assert row["gpu_name"] == "A100-SXM-40GB" and row["throughput"] == 2500.0
    # Lambda publishes resnet50 fp16 on one A100 40GB: the ratio is against that figure.
    assert row["published_throughput"] > 0
    assert row["measured_over_published"] == round(2500.0 / row["published_throughput"], 3)


def test_bundled_samples_are_marked_and_can_be_hidden(open_page: Open) -> None:
    at = open_page("benchmarks", {"model": "resnet50 tiny", "precision": "fp32"})
    rows = table_with(at, "id", "source", "throughput", "started_at")
    assert len(rows) and set(rows["source"]) == {"bundled sample"}
    assert metrics(at)["Own results"] == "0"
    traces = chart(at, "benchmarks.chart")["data"]
    origins = {t.get("legendgroup", t.get("name", "")) for t in traces}
    assert any("sample" in str(o) for o in origins), origins
    at.toggle(key="benchmarks.samples").set_value(False).run()
    assert table_with(at, "id", "source", "throughput", "started_at").empty
    assert "are hidden" in plain(" ".join(c.value for c in at.caption))


def test_the_samples_are_never_the_users_own_results(results_dir: Path) -> None:
    from planner.throughput import own_and_published_results
    from planner.throughput.own_results import own_result_notes
    from planner.workloads.catalog import WORKLOADS

    write_result(BenchmarkResult(**(GOOD | {"id": "mine"})), results_dir)
    table, _ = own_and_published_results([str(results_dir)])
    measured = table.loc[table["source"] == "measured"].set_index("id")
    assert measured["sample"].sum() == bundled() and not measured.loc["mine", "sample"]
    notes = own_result_notes(table, WORKLOADS["resnet50-imagenet-90ep"], "fp16")
    assert [n["id"] for n in notes if "id" in n.values] == ["mine"]  # no sample counted
    assert not [n for n in notes if n.code == "own_results_elsewhere"]
