"""The operator benchmark (benchmarks.ops, `bench run --workload ops`) on CPU, tiny sizes:
a valid result whose figures match their formulas, a time bound that skips but keeps every
precision, hand-edited files refused naming the file, the field and the fix."""

from __future__ import annotations

import dataclasses
import io
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from benchmarks import ops
from benchmarks.harness import BenchmarkError, RunOptions
from benchmarks.op_figures import attention_flops, gemm_flops, summary_rows
from benchmarks.results import (
    OP_FIGURES_COLUMN,
    RESULT_COLUMNS,
    BenchmarkResult,
    load_results,
    read_result,
    results_frame,
)
from planner.cli.main import app

ROOT = Path(__file__).resolve().parents[2]
TINY = RunOptions(workload="ops", size="tiny", precision="all", device="cpu", steps=3, warmup=1)


@pytest.fixture(scope="module")
def tiny_result(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, BenchmarkResult]:
    folder = tmp_path_factory.mktemp("ops")
    path = ops.run_to_file(TINY.checked(), folder)
    return path, read_result(path)


def test_a_tiny_cpu_run_writes_a_valid_op_result(tiny_result: tuple[Path, BenchmarkResult]) -> None:
    path, result = tiny_result
    assert json.loads(path.read_text())["schema_version"] == 4
    assert result.workload == "ops" and result.model_size == "tiny" and result.precision is None
    assert result.device == "cpu" and result.world_size == 1 and result.throughput_unit == "TFLOP/s"
    assert result.env["torch"] and "cuda" in result.env and result.device_name
    figures = result.op_figures or []
    measured = {(f.op, f.precision) for f in figures}
    assert measured == {("copy", "fp32"), ("add", "fp32"), ("attention", "fp32"),
                        ("attention", "bf16"), ("gemm", "fp32"), ("gemm", "bf16")}  # fmt: skip
    assert all(f.ms > 0 and f.ms_p10 <= f.ms <= f.ms_p90 and f.repeats >= 1 for f in figures)
    for f in figures:
        rate = f.gb_per_s if f.op in ("copy", "add") else f.tflops
        assert rate is not None and rate > 0
    gemms = [f for f in figures if f.op == "gemm" and f.precision == "fp32"]
    skipped = sum(s["points"] for s in result.config["skipped"] if s["op"] == "gemm"
                  and s["precision"] == "fp32")  # fmt: skip
    assert len(gemms) + skipped == 8  # 2 m x 2 n x 2 k (all measured unless the host is slow)
    [known] = [f for f in gemms if (f.m, f.n, f.k) == (64, 96, 96)]  # the first: always measured
    assert known.flops == 2 * 64 * 96 * 96 == 1_179_648
    assert known.tflops == pytest.approx(known.flops / (known.ms / 1e3) / 1e12)
    [attention] = [f for f in figures if f.op == "attention" and f.precision == "fp32"
                   and f.seq_len == 64]  # fmt: skip
    assert (attention.batch, attention.heads, attention.head_dim) == (4, 2, 64)  # 256 tokens
    forward = 4 * 4 * 2 * 64**2 * 64 / 2  # FlashAttention-2: 4 b h s^2 d, halved when causal
    assert attention.flops == forward * 3.5  # backward 2.5 x forward
    assert attention.backend  # the SDPA kernel that ran ("flash (cpu)" on recent torch)
    [copy] = [f for f in figures if f.op == "copy"]
    assert copy.bytes_moved == 2 * ops.GRIDS[("cpu", "tiny")].memory_buffer_bytes
    assert result.throughput == max(f.tflops or 0 for f in gemms)  # fastest fp32 GEMM
    assert result.config["elapsed_s"] < ops.GRIDS[("cpu", "tiny")].budget_s + 5


def test_formulas() -> None:
    assert gemm_flops(2048, 4096, 1376) == 2 * 2048 * 4096 * 1376
    # FlashAttention-2's benchmark: 16k tokens, hidden 2048, head dim 128, causal, fwd+bwd
    b, h, s, d = 16384 // 4096, 2048 // 128, 4096, 128
    assert attention_flops(b, h, s, d, causal=True) == 3.5 * 4 * b * h * s**2 * d / 2
    assert attention_flops(b, h, s, d, causal=False) == 2 * attention_flops(b, h, s, d, True)


def test_shapes_go_coarse_to_fine() -> None:
    assert ops.coarse_to_fine(8) == [0, 4, 2, 6, 1, 5, 3, 7]
    assert sorted(ops.coarse_to_fine(196)) == list(range(196))
    shapes = ops.gemm_shapes(ops.GRIDS[("cuda", "full")])
    assert len(shapes) == len(set(shapes)) == 4 * 7 * 7
    assert shapes[0] == (2048, 768, 768)  # the smallest first, then the middle of the range
    assert gemm_flops(*shapes[1]) > gemm_flops(*shapes[2])


def test_the_time_bound_skips_points_but_every_precision_keeps_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    grid = dataclasses.replace(ops.GRIDS[("cpu", "tiny")], budget_s=0.0)
    monkeypatch.setitem(ops.GRIDS, ("cpu", "tiny"), grid)
    result = read_result(ops.run_to_file(TINY.checked(), tmp_path))
    figures = result.op_figures or []
    for op, precision in (("gemm", "fp32"), ("gemm", "bf16"), ("attention", "fp32")):
        assert [(f.m, f.n, f.k) for f in figures if (f.op, f.precision) == (op, precision)]
    assert len([f for f in figures if f.op == "gemm"]) < 16
    skipped = result.config["skipped"]
    assert any(s["reason"].startswith("out of time") and s["points"] >= 1 for s in skipped)
    assert "skipped" in result.notes


def test_a_precision_the_device_lacks_is_refused_before_anything_runs(tmp_path: Path) -> None:
    for precision, why in (("fp8", "CUDA GPUs only"), ("tf32", "CUDA tensor-core mode")):
        options = dataclasses.replace(TINY, precision=precision).checked()
        with pytest.raises(BenchmarkError, match=why):
            ops.run_to_file(options, tmp_path)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(BenchmarkError, match="--compile, --batch: not options of ops"):
        dataclasses.replace(TINY, compile=True, batch_size=8).checked()
    with pytest.raises(BenchmarkError, match="valid: all, fp32"):
        dataclasses.replace(TINY, precision="int8").checked()


def _edited(source: Path, folder: Path, edit: object) -> Path:
    data = json.loads(source.read_text())
    edit(data)  # type: ignore[operator]
    folder.mkdir(exist_ok=True)
    target = folder / source.name
    target.write_text(json.dumps(data, indent=2))
    return target


def _gemm_index(data: dict[str, list[dict[str, object]]]) -> int:
    return next(i for i, f in enumerate(data["op_figures"]) if f["op"] == "gemm")


@pytest.mark.parametrize(
    ("edit", "field", "fix"),
    [
        (lambda d: d["op_figures"][_gemm_index(d)].update(tflops=1e3), "op_figures.",
         "a rate is measured, not set: restore it or re-run `gpuplan bench run --workload ops`"),
        (lambda d: d["op_figures"][_gemm_index(d)].update(k=4096), "op_figures.",
         "what this gemm shape does (2 m n k); restore it or re-run"),
        (lambda d: d["op_figures"][_gemm_index(d)].pop("k"), "op_figures.",
         "a gemm figure needs k"),
        (lambda d: d.update(schema_version=3), "'op_figures'", "set schema_version to 4"),
        (lambda d: d.update(op_figures=[]), "'op_figures'", "restore them or re-run"),
        (lambda d: d.update(workload="gpt", precision="bf16"), "'op_figures'",
         "belong to workload 'ops' results only"),
    ],
)  # fmt: skip
def test_a_hand_edited_result_is_refused_naming_file_field_and_fix(
    tiny_result: tuple[Path, BenchmarkResult], tmp_path: Path, edit: object, field: str, fix: str
) -> None:
    path, result = tiny_result
    bad = _edited(path, tmp_path / "results", edit)
    before = bad.read_bytes()
    (tmp_path / "results" / "good.json").write_text(
        result.model_copy(update={"id": "good"}).to_json()
    )
    loaded, problems = load_results(tmp_path / "results")
    assert [r.id for r in loaded] == ["good"]  # the other results still load
    [problem] = problems
    assert str(bad) in problem and field in problem and fix in problem
    assert bad.read_bytes() == before  # nothing removed or rewritten


def test_the_results_table_keeps_op_rows_out_of_throughput_figures(
    tiny_result: tuple[Path, BenchmarkResult],
) -> None:
    _, result = tiny_result
    assert list(results_frame([]).columns) == list(RESULT_COLUMNS)  # training tables as before
    frame = results_frame([result])
    assert list(frame.columns) == [*RESULT_COLUMNS, OP_FIGURES_COLUMN]
    row = frame.iloc[0]
    assert pd.isna(row["throughput"]) and row["achieved_tflops"] == result.throughput
    assert list(row[OP_FIGURES_COLUMN]) == result.op_figures
    csv = pd.read_csv(io.StringIO(frame.to_csv(index=False)))
    assert csv.loc[0, OP_FIGURES_COLUMN] == f"{len(result.op_figures or [])} op figures"
    other = result.model_copy(update={"workload": "input-pipeline", "op_figures": None})
    assert "op_figures" not in json.loads(other.to_json())  # a version-3 reader reads it


def test_summary_rows_one_per_op_and_precision(tiny_result: tuple[Path, BenchmarkResult]) -> None:
    _, result = tiny_result
    rows = summary_rows(result.op_figures or [])
    counts = {p: sum(f.op == "gemm" and f.precision == p for f in result.op_figures or [])
              for p in ("fp32", "bf16")}  # fmt: skip
    assert [r[:3] for r in rows if r[0] == "gemm"] == [
        ("gemm", "fp32", str(counts["fp32"])), ("gemm", "bf16", str(counts["bf16"]))]  # fmt: skip
    assert {r[6] for r in rows} == {"GB/s", "TFLOP/s"}


def test_bench_run_workload_ops_writes_one_result_and_prints_its_figures(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "planner.cli.main", "bench", "run", "--workload", "ops",
         "--size", "tiny", "--device", "cpu", "--steps", "3", "--warmup", "1",
         "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=180, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [path] = tmp_path.iterdir()
    result = read_result(path)
    assert result.workload == "ops" and result.id in done.stdout
    assert "median rate per call" in done.stdout and "gemm" in done.stdout
    assert "running ops tiny all cpu" in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--world-size", "2"], "ops times one device"),
        (["--compile"], "--compile: not options of ops"),
        (["--precision", "fp8"], "fp8 GEMMs are measured on CUDA GPUs only"),
        (["--size", "ful"], "did you mean 'full'"),
    ],
)
def test_bench_run_ops_refuses_what_it_cannot_do(
    args: list[str], message: str, tmp_path: Path
) -> None:
    base = ["bench", "run", "--workload", "ops", "--size", "tiny", "--device", "cpu"]
    done = CliRunner().invoke(app, [*base, *args, "--out", str(tmp_path)])
    assert done.exit_code == 2, done.output
    assert message in done.output and "Traceback" not in done.output
    assert list(tmp_path.iterdir()) == []


@pytest.mark.gpu
def test_a_full_gpu_run_fits_its_bound_and_measures_every_precision(tmp_path: Path) -> None:
    import torch

    options = RunOptions(workload="ops", size="full", device="cuda", precision="all",
                         steps=20, warmup=5).checked()  # fmt: skip
    result = read_result(ops.run_to_file(options, tmp_path))
    assert result.config["elapsed_s"] < ops.GRIDS[("cuda", "full")].budget_s + 10
    precisions = {f.precision for f in result.op_figures or [] if f.op == "gemm"}
    assert {"bf16", "fp16", "tf32", "fp32"} <= precisions
    if torch.cuda.get_device_capability() >= (8, 9):
        assert "fp8" in precisions
    attention = [f for f in result.op_figures or [] if f.op == "attention"]
    assert attention and all(f.backend != "math" for f in attention)


def test_bench_list_shows_an_op_run_by_its_best_gemm(
    tiny_result: tuple[Path, BenchmarkResult],
) -> None:
    """An op result has no model throughput (NaN in the results table): bench list shows
    its fastest GEMM, not 'nan'."""
    path, result = tiny_result
    done = CliRunner().invoke(app, ["bench", "list", "--results", str(path.parent)])
    assert done.exit_code == 0, done.output
    assert "nan" not in done.output
    assert f"{result.throughput:,.1f} TFLOP/s best GEMM" in done.output
