"""BenchmarkResult files: schema validation names the file and field; writes are atomic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import results as results_module
from benchmarks.results import (
    BenchmarkResult,
    ResultFileError,
    load_results,
    read_result,
    results_frame,
    write_result,
)


def sample(**overrides: object) -> BenchmarkResult:
    data: dict[str, object] = {
        "id": "run-1",
        "workload": "gpt",
        "model_size": "tiny",
        "precision": "fp32",
        "device": "cpu",
        "device_name": "cpu",
        "world_size": 1,
        "throughput": 123.4,
        "throughput_unit": "tokens/s",
        "tokens_per_s": 123.4,
        "started_at": "2026-11-30T05:00:00",
        "env": {"torch": "2.13.0"},
    }
    data.update(overrides)
    return BenchmarkResult.model_validate(data)


def test_round_trip(tmp_path: Path) -> None:
    path = write_result(sample(), tmp_path)
    assert path.name == "run-1.json"
    assert read_result(path) == sample()


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        ({"throughput": -1}, "throughput"),
        ({"precision": "int4"}, "precision"),
        ({"world_size": 0}, "world_size"),
        ({"started_at": "yesterday"}, "started_at"),
        ({"surprise": 1}, "surprise"),
        ({"schema_version": 99}, "schema_version"),
    ],
)
def test_malformed_file_names_file_and_field(
    tmp_path: Path, edit: dict[str, object], field: str
) -> None:
    data = json.loads(sample().to_json())
    data.update(edit)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ResultFileError) as info:
        read_result(path)
    assert info.value.path == str(path) and info.value.field == field
    assert str(path) in str(info.value)


def test_missing_field_and_broken_json(tmp_path: Path) -> None:
    data = json.loads(sample().to_json())
    del data["throughput"]
    (tmp_path / "a.json").write_text(json.dumps(data))
    (tmp_path / "b.json").write_text('{"id": ')
    with pytest.raises(ResultFileError, match="field 'throughput'"):
        read_result(tmp_path / "a.json")
    with pytest.raises(ResultFileError, match="not valid JSON"):
        read_result(tmp_path / "b.json")


def test_load_results_keeps_the_good_and_reports_the_bad(tmp_path: Path) -> None:
    write_result(sample(), tmp_path)
    (tmp_path / "broken.json").write_text("[]")
    loaded, problems = load_results(tmp_path)
    assert [r.id for r in loaded] == ["run-1"]
    assert len(problems) == 1 and "broken.json" in problems[0]
    frame = results_frame(loaded)
    assert frame.loc[0, "throughput"] == 123.4


def test_interrupted_write_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    from edge import files

    monkeypatch.setattr(files.os, "replace", interrupted)  # write_result's atomic writer
    with pytest.raises(KeyboardInterrupt):
        write_result(sample(), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_version_1_files_still_load_and_may_not_carry_version_2_fields(tmp_path: Path) -> None:
    data = json.loads(sample().to_json())
    data["schema_version"] = 1
    for name in results_module.V2_FIELDS:
        data.pop(name, None)
    (tmp_path / "v1.json").write_text(json.dumps(data))
    assert read_result(tmp_path / "v1.json").schema_version == 1
    data["samples_per_s_per_core"] = 10.0
    (tmp_path / "v1-bad.json").write_text(json.dumps(data))
    with pytest.raises(ResultFileError) as info:
        read_result(tmp_path / "v1-bad.json")
    assert info.value.field == "samples_per_s_per_core"


def test_only_the_input_pipeline_may_leave_precision_null(tmp_path: Path) -> None:
    data = json.loads(sample().to_json())
    data["precision"] = None
    (tmp_path / "train.json").write_text(json.dumps(data))
    with pytest.raises(ResultFileError) as info:
        read_result(tmp_path / "train.json")
    assert info.value.field == "precision"
    data["workload"] = "input-pipeline"
    (tmp_path / "pipe.json").write_text(json.dumps(data))
    assert read_result(tmp_path / "pipe.json").precision is None


def test_sweep_provenance_is_a_version_3_field(tmp_path: Path) -> None:
    where = {"sweep_id": "demo-20261130t000000-ab12", "backend": "aws", "cloud": "aws",
             "region": "us-east-1", "instance_type": "g5.xlarge", "spot": True}  # fmt: skip
    tagged = sample().model_copy(update={"sweep": where})
    path = write_result(tagged, tmp_path)
    loaded = read_result(path)
    assert loaded.schema_version == 3 and loaded.sweep == where
    data = json.loads(path.read_text())
    data["schema_version"] = 2
    (tmp_path / "v2.json").write_text(json.dumps(data))
    with pytest.raises(ResultFileError) as info:
        read_result(tmp_path / "v2.json")
    assert info.value.field == "sweep" and "schema version 3" in str(info.value)
    data["schema_version"] = 3
    data["sweep"] = {**where, "zone": "x"}
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(ResultFileError) as info:
        read_result(tmp_path / "bad.json")
    assert info.value.field == "sweep"


@pytest.mark.parametrize(
    ("edit", "field", "words"),
    [
        ({"world_size": 10**12}, "world_size", "1000000"),
        ({"nodes": 10**7}, "nodes", "1000000"),
        ({"mfu": 1.5}, "mfu", "1"),
        ({"achieved_tflops": 1e6}, "achieved_tflops", "20000"),
        ({"throughput": 1e300, "tokens_per_s": 1e300}, "throughput", "per device"),
        ({"tokens_per_s": 2e9}, "tokens_per_s", "1e+09"),
        ({"runs_averaged": 0}, "runs_averaged", "1"),
    ],
)
def test_figures_no_real_run_reaches_are_refused_naming_field_and_bound(
    tmp_path: Path, edit: dict[str, object], field: str, words: str
) -> None:
    data = json.loads(sample().to_json()) | edit
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ResultFileError) as caught:
        read_result(path)
    assert caught.value.field == field
    assert words in str(caught.value)


def test_a_file_with_an_integer_beyond_64_bits_is_named_and_skipped(tmp_path: Path) -> None:
    write_result(sample(), tmp_path)
    text = sample(id="huge").to_json().replace('"world_size": 1', '"world_size": 1' + "0" * 400)
    (tmp_path / "huge.json").write_text(text)
    loaded, problems = load_results(tmp_path)
    assert [r.id for r in loaded] == ["run-1"]
    assert len(problems) == 1 and "huge.json" in problems[0] and "64-bit" in problems[0]
    assert results_frame(loaded)["world_size"].tolist() == [1]


def test_strings_from_a_result_file_are_read_as_plain_text(tmp_path: Path) -> None:
    hostile = "H100\x1b]0;owned\x07\x1b[2J\x1b]52;c;ZWNobyBoaQ==\x07 80GB\r\n\x9b31m"
    data = json.loads(sample().to_json())
    data["device_name"] = hostile
    data["env"] = {"a\x1b[1mkey": ["x\x07y"]}
    path = tmp_path / "run-1.json"
    path.write_text(json.dumps(data))
    result = read_result(path)
    assert result.device_name == "H100 80GB"
    assert result.env == {"akey": ["xy"]}
