"""The gpuplan CLI as a user runs it: JSON/CSV output, errors with choices and exit 2."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from benchmarks.published import read_published_table
from planner.cli import app

runner = CliRunner()


def run_json(*args: str) -> list[dict[str, object]]:
    done = runner.invoke(app, [*args, "--format", "json"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert isinstance(data, list)
    return data


def test_plan_json_lists_clouds_and_a_neocloud_with_all_fields(results_dir: object) -> None:
    rows = run_json("plan", "--workload", "resnet50-imagenet-90ep", "--precision", "fp16")
    providers = {r["provider"] for r in rows}
    assert {"aws", "gcp", "azure"} <= providers
    assert providers & {"lambda", "nebius", "vast", "fluidstack", "paperspace"}
    fields = (
        "provider",
        "region",
        "instance_type",
        "gpu_name",
        "gpu_count",
        "throughput",
        "throughput_unit",
        "throughput_source",
        "hours_to_train",
        "cost_usd",
        "usd_per_hour",
        "price_date",
    )
    for row in rows:
        assert all(row[f] is not None for f in fields), row
    costs = [r["cost_usd"] for r in rows]
    assert costs == sorted(costs)


def test_one_a100_hours_agree_with_the_published_figure(results_dir: object) -> None:
    rows = run_json(
        "plan",
        "--workload",
        "resnet50-imagenet-90ep",
        "--precision",
        "fp16",
        "--provider",
        "gcp",
        "--gpu",
        "A100-SXM-40GB",
    )
    one = [r for r in rows if r["gpu_count"] == 1]
    assert one
    published = read_published_table()
    a100 = published.loc[
        (published["gpu_name"] == "A100-SXM-40GB")
        & (published["model"] == "resnet50")
        & (published["precision"] == "fp16_amp")
        & (published["num_gpus"] == 1)
    ]
    newest = a100.loc[a100["benchmark_version"] == a100["benchmark_version"].max(), "throughput"]
    for row in one:
        assert row["throughput"] == pytest.approx(newest.median())
        compute = 1_281_167 * 90 / newest.median() / 3600
        assert row["compute_hours"] == pytest.approx(compute)
        overheads = row["setup_hours"] + row["staging_hours"] + row["checkpoint_write_hours"]
        assert overheads > 0
        assert row["hours_to_train"] == pytest.approx(compute + overheads)
        assert row["cost_usd"] == pytest.approx(row["billed_hours"] * row["option_usd_per_hour"])


def test_plan_top_and_csv(results_dir: object) -> None:
    done = runner.invoke(
        app,
        [
            "plan",
            "-w",
            "bert-large-squad-2ep",
            "--precision",
            "tf32",
            "--top",
            "3",
            "--format",
            "csv",
        ],
    )
    assert done.exit_code == 0, done.output
    frame = pd.read_csv(io.StringIO(done.stdout))
    assert len(frame) == 3 and frame["rank"].tolist() == [1, 2, 3]
    assert (frame["throughput_unit"] == "sequences/s").all()


def test_spot_flag_prices_at_spot(results_dir: object) -> None:
    rows = run_json("plan", "-w", "resnet50-imagenet-90ep", "--spot", "--provider", "aws")
    assert rows and all(r["pricing"] == "spot" for r in rows)


def test_pricing_show_h100_lists_prices_spot_and_dates() -> None:
    rows = run_json("pricing", "show", "--gpu", "H100")
    assert {r["gpu_name"] for r in rows} == {"H100-SXM", "H100-PCIe", "H100-NVL"}
    assert {"aws", "gcp", "azure", "lambda"} <= {r["provider"] for r in rows}
    assert all(r["price_date"] for r in rows)
    assert any(r["spot_usd_per_hour"] is not None for r in rows)
    assert all(set(r) >= {"region", "instance_type", "gpu_count", "usd_per_hour"} for r in rows)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["plan", "-w", "resnet50-imagenet-9ep"], "did you mean 'resnet50-imagenet-90ep'"),
        (["plan", "-w", "resnet50-imagenet-90ep", "--gpu", "H10O"], "did you mean"),
        (["plan", "-w", "resnet50-imagenet-90ep", "--precision", "fp4"], "Valid: fp32, tf32"),
        (
            ["plan", "-w", "resnet50-imagenet-90ep", "--precision", "fp8"],
            "--precision: fp8 applies to LLM workloads only",
        ),
        (["plan", "-w", "resnet50-imagenet-90ep", "--provider", "awz"], "did you mean 'aws'"),
        (["plan", "-w", "resnet50-imagenet-90ep", "--pricing", "reserved"], "Valid: on-demand"),
        (["pricing", "show", "--gpu", "A1OO"], "unknown GPU"),
        (["pricing", "show", "--format", "xml"], "Valid: table, json, csv"),
    ],
)
def test_bad_input_gets_choices_and_exit_2(
    args: list[str], expected: str, results_dir: object
) -> None:
    done = runner.invoke(app, args)
    assert done.exit_code == 2
    assert "error:" in done.stderr and expected in done.stderr
    assert "Traceback" not in done.output


def test_table_output_names_sources_and_dates(results_dir: object) -> None:
    done = runner.invoke(app, ["plan", "-w", "resnet50-imagenet-90ep", "--top", "5"])
    assert done.exit_code == 0
    assert "published" in done.stdout and "priced" in done.stdout
    assert "assumption:" in done.stderr


def test_workloads_lists_the_catalog() -> None:
    names = {r["name"] for r in run_json("workloads")}
    assert {"resnet50-imagenet-90ep", "bert-large-squad-2ep", "llm-6.7b-134b"} <= names


def test_error_text_with_brackets_is_printed_as_written() -> None:
    done = runner.invoke(app, ["bench", "show", "no-such-[run]"])
    assert done.exit_code == 2
    assert "no-such-[run]" in done.stderr
