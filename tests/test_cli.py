"""The gpuplan CLI as a user runs it: JSON/CSV output, errors with choices and exit 2."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from benchmarks.published import read_published_table
from planner.cli.main import app

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
    assert "assumptions:" in done.stderr and "--explain" in done.stderr


def test_workloads_lists_the_catalog() -> None:
    names = {r["name"] for r in run_json("workloads")}
    assert {"resnet50-imagenet-90ep", "bert-large-squad-2ep", "llm-6.7b-134b"} <= names


def test_error_text_with_brackets_is_printed_as_written() -> None:
    done = runner.invoke(app, ["bench", "show", "no-such-[run]"])
    assert done.exit_code == 2
    assert "no-such-[run]" in done.stderr


MARKUP = ":b: [red]x :FINLAND:"  # also a file name: no "/"


def shown_as_written(text: str) -> bool:
    """Whether rich printed MARKUP as its characters: no emoji, no markup eaten."""
    return MARKUP in " ".join(text.split()) and "🅱" not in text and "🇫🇮" not in text


@pytest.mark.parametrize(
    "args",
    [
        ["estimate-llm", "--queries", f"{MARKUP}.csv"],
        ["estimate", "--reference", f"{MARKUP}.csv", "--queries", "q.csv"],
        ["tco", "--config", f"{MARKUP}.toml"],
        ["plan", "-w", "resnet50-imagenet-90ep", "--onprem", f"{MARKUP}.toml"],
        ["bench", "show", MARKUP],
        ["bench", "show", "--dir", MARKUP, "no-such-run"],
    ],
)
def test_an_error_quoting_emoji_codes_and_markup_prints_them_as_written(args: list[str]) -> None:
    done = runner.invoke(app, args)
    assert done.exit_code == 2
    assert "error:" in done.stderr and shown_as_written(done.stderr), done.stderr


def test_bench_add_names_each_bad_file_as_written(tmp_path: object) -> None:
    from pathlib import Path

    bad = Path(str(tmp_path)) / f"{MARKUP}.json"
    bad.write_text("{")
    done = runner.invoke(app, ["bench", "add", str(bad), "--dir", str(Path(str(tmp_path)) / "r")])
    assert done.exit_code == 2 and shown_as_written(done.stderr), done.stderr


def test_what_estimate_llm_says_it_wrote_is_the_path_as_written(tmp_path: object) -> None:
    from pathlib import Path

    folder = Path(str(tmp_path))
    queries = folder / "q.csv"
    queries.write_text("params,seq_len,num_gpus,gpu_model,precision\n7b,2048,8,H100-SXM,bf16\n")
    out = folder / f"{MARKUP}.csv"
    done = runner.invoke(app, ["estimate-llm", "--queries", str(queries), "--output", str(out)])
    assert done.exit_code == 0, done.output
    assert "wrote" in done.stderr and shown_as_written(done.stderr), done.stderr


def test_the_console_helpers_turn_no_code_into_an_emoji() -> None:
    from rich.console import Console

    from edge.console import labelled, text_console
    from edge.tables import make_console

    for console in (text_console(), make_console(100)):
        with console.capture() as captured:
            console.print(labelled("error", "bold red", MARKUP))
            console.print(f"plain {MARKUP}", markup=False)
        assert shown_as_written(captured.get()), captured.get()
    assert isinstance(text_console(stderr=True), Console)


def test_gpuplan_app_has_streamlit_refuse_uploads_over_the_intake_limit() -> None:
    from benchmarks.intake import MAX_RESULT_BYTES
    from planner.cli.app import streamlit_argv

    argv = streamlit_argv("app_main.py", "127.0.0.1", 8501, ["--server.headless", "true"])
    assert argv[1:5] == ["-m", "streamlit", "run", "app_main.py"]
    megabytes = int(argv[argv.index("--server.maxUploadSize") + 1])
    # Streamlit's megabyte is 1024 x 1024 bytes (server.maxUploadSize * 1024 * 1024): the
    # smallest whole number of them that holds a file the intake accepts.
    assert (megabytes - 1) * 1024 * 1024 < MAX_RESULT_BYTES <= megabytes * 1024 * 1024
    assert argv[-2:] == ["--server.headless", "true"]  # the user's options last, as given
