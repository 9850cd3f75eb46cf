"""Own results held to their GPU's datasheet: a figure above the peak is refused by
`bench add`, the app's upload and a sweep's intake, and left out of a folder the planner
reads (named, never fitted, never fatal)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchmarks import intake
from benchmarks.results import BenchmarkResult, write_result
from planner.cli.main import app
from planner.io.result_physics import PEAK_MARGIN, physics_problem, split_physical
from planner.throughput import own_and_published_results
from planner.ui.uploads import check_upload
from tests.planner.llm.test_llm_op_efficiency import FIGURES, H200_BF16_PEAK, copy, gemm, op_run

runner = CliRunner()
H200_MEMORY_GBPS = 4800.0  # planner/data/gpu_specs.csv


def gpt_run(achieved_tflops: float, precision: str = "bf16") -> BenchmarkResult:
    return BenchmarkResult(
        id=f"gpt-h100-{achieved_tflops:g}",
        workload="gpt",
        model_size="1.3b",
        precision=precision,  # type: ignore[arg-type]
        device_name="NVIDIA H100 80GB HBM3",
        world_size=8,
        throughput=80_000.0,
        throughput_unit="tokens/s",
        tokens_per_s=80_000.0,
        achieved_tflops=achieved_tflops,
        started_at="2026-12-01",
    )


def test_figures_within_the_peak_pass_and_above_it_are_named() -> None:
    assert physics_problem(op_run("ok", FIGURES)) is None
    assert physics_problem(gpt_run(600.0)) is None
    ten_times = op_run("fast", [gemm(8192, 8192, 8192, 10 * H200_BF16_PEAK)])
    problem = physics_problem(ten_times) or ""
    assert "op_figures.0.tflops" in problem and "H200-SXM" in problem
    assert f"{PEAK_MARGIN * H200_BF16_PEAK:,.4g}" in problem
    just_above = op_run("edge", [gemm(8192, 8192, 8192, PEAK_MARGIN * H200_BF16_PEAK * 1.01)])
    assert physics_problem(just_above) is not None
    bandwidth = physics_problem(op_run("bw", [copy(2 * H200_MEMORY_GBPS)])) or ""
    assert "op_figures.0.gb_per_s" in bandwidth and "memory bandwidth" in bandwidth
    model = physics_problem(gpt_run(5000.0)) or ""
    assert "achieved_tflops" in model and "bf16 dense peak" in model


def test_a_cpu_run_or_an_unknown_device_is_not_held_to_a_gpu() -> None:
    cpu = gpt_run(5000.0).model_copy(update={"device": "cpu", "device_name": "cpu"})
    unknown = gpt_run(5000.0).model_copy(update={"device_name": "Mystery Accelerator"})
    assert split_physical([cpu, unknown]) == ([cpu, unknown], [])


def test_a_folder_with_an_impossible_result_still_plans_without_it(tmp_path: Path) -> None:
    write_result(op_run("ops-real", FIGURES), tmp_path)
    write_result(op_run("ops-fake", [gemm(8192, 8192, 8192, 10 * H200_BF16_PEAK)]), tmp_path)
    table, problems = own_and_published_results([str(tmp_path)])
    assert "ops-real" in set(table["id"]) and "ops-fake" not in set(table["id"])
    assert len(problems) == 1 and "'ops-fake'" in problems[0] and str(tmp_path) in problems[0]
    done = runner.invoke(
        app,
        [
            "plan",
            "--workload",
            "llm-1.3b-26b",
            "--results",
            str(tmp_path),
            "--top",
            "3",
            "--explain",
        ],
    )
    assert done.exit_code == 0, done.output
    assert "ops-fake" in done.stderr and "left out" in done.stderr


def test_bench_add_and_the_upload_refuse_a_result_above_its_peak(tmp_path: Path) -> None:
    fake = op_run("ops-fake", [gemm(8192, 8192, 8192, 10 * H200_BF16_PEAK)])
    path = tmp_path / "ops-fake.json"
    path.write_text(fake.to_json())
    folder = tmp_path / "results"
    done = runner.invoke(app, ["bench", "add", str(path), "--results", str(folder)])
    assert done.exit_code == 2
    assert "op_figures.0.tflops" in done.stderr and "nothing was added" in done.stderr
    assert not folder.exists() or not list(folder.iterdir())
    uploaded = check_upload("ops-fake.json", path.read_bytes())
    assert uploaded.result is None and "op_figures.0.tflops" in uploaded.error
    assert intake.check_file(path).result is None  # a sweep's intake checks as bench add
    real = tmp_path / "ops-real.json"
    real.write_text(op_run("ops-real", FIGURES).to_json())
    assert runner.invoke(app, ["bench", "add", str(real), "--results", str(folder)]).exit_code == 0


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        ({"world_size": 10**19}, "<json>"),
        ({"world_size": 10**400}, "<json>"),
        ({"world_size": 2_000_000}, "world_size"),
        ({"mfu": 1.5}, "mfu"),
        ({"tokens_per_s": 1e300, "throughput": 1e300}, "throughput"),
    ],
)
def test_bench_add_names_the_field_of_an_impossible_count(
    tmp_path: Path, edit: dict[str, object], field: str
) -> None:
    data = json.loads(gpt_run(600.0).to_json()) | edit
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    done = runner.invoke(app, ["bench", "add", str(path), "--results", str(tmp_path / "r")])
    assert done.exit_code == 2 and f"field {field!r}" in done.stderr, done.stderr
