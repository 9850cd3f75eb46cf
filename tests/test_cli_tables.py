"""CLI tables that fit: 100 columns, picks and binding constraints first, --view, --wide."""

from __future__ import annotations

import os
import subprocess
import sys

from typer.testing import CliRunner

from edge.format import duration, money, money_range
from edge.tables import Col, fit_table, make_console
from planner.cli.main import app

runner = CliRunner()
PLAN = ["plan", "--workload", "resnet50-imagenet-90ep", "--top", "10"]


def _lines(text: str) -> list[str]:
    return text.rstrip("\n").splitlines()


def test_default_plan_fits_100_columns_and_40_lines(results_dir: object) -> None:
    env = {**os.environ, "COLUMNS": "100"}
    done = subprocess.run(
        [sys.executable, "-m", "planner.cli.main", *PLAN],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = _lines(done.stdout) + _lines(done.stderr)
    assert max(len(line) for line in lines) <= 100, max(lines, key=len)
    assert len(lines) <= 40, len(lines)
    out = done.stdout
    # picks first, then the ranked table with the asked-for columns, then the price dates
    assert out.index("Picks") < out.index("rank") < out.index("priced:")
    for header in ("provider", "instance", "GPUs", "time", "cost", "P10–P90", "$/h", "source"):
        assert header in out.splitlines()[out.splitlines().index(_row_header(out))]
    assert "--explain" in done.stderr and "assumption:" not in done.stderr


def _row_header(out: str) -> str:
    return next(line for line in out.splitlines() if line.lstrip().startswith("rank"))


def test_views_wide_and_explain(results_dir: object) -> None:
    env = {"COLUMNS": "100"}
    picks = runner.invoke(app, [*PLAN, "--view", "picks"], env=env)
    assert picks.exit_code == 0, picks.output
    assert "why" in picks.stdout and "rank" not in picks.stdout
    constraints = runner.invoke(app, [*PLAN, "--view", "constraints"], env=env)
    assert "max GPUs binds" in constraints.stdout and "Picks" not in constraints.stdout
    frontier = runner.invoke(app, [*PLAN, "--view", "frontier"], env=env)
    assert "time/cost frontier" in frontier.stdout
    wide = runner.invoke(app, [*PLAN, "--wide"], env=env)
    assert "throughput_detail" in wide.stdout and "price_source" in wide.stdout
    assert max(len(line) for line in _lines(wide.stdout)) > 100
    import json
    from pathlib import Path

    from tests.conftest import GOOD_RESULT

    # an own result of the workload (the bundled samples are no longer counted as own)
    (Path(str(results_dir)) / "my-h100-run.json").write_text(json.dumps(GOOD_RESULT))
    explain = runner.invoke(app, [*PLAN, "--explain"], env=env)
    assert "assumption: Workload resnet50-imagenet-90ep" in explain.stderr
    assert "own results: own result my-h100-run used" in explain.stderr


def test_readable_money_and_durations() -> None:
    assert [duration(h, short=True) for h in (0.01, 0.5, 5.17, 30, 760)] == [
        "36 s",
        "30 min",
        "5.2 h",
        "30 h",
        "31.7 d",
    ]
    assert [money(v, short=True) for v in (0.5, 42.0, 1234.0, 98_765.0, 2.5e6)] == [
        "$0.50",
        "$42.00",
        "$1.23k",
        "$98.8k",
        "$2.5M",
    ]
    assert money_range(1100, 1400) == "$1.1k-$1.4k"


def test_a_table_cuts_only_shrinkable_columns_to_fit() -> None:
    import pandas as pd

    frame = pd.DataFrame({"name": ["x" * 80], "cost": [1234.5], "extra": ["ignored"]})
    columns = (Col("name", "name", shrink_to=8), Col("cost", "cost", money, right=True))
    console = make_console(40)
    with console.capture() as captured:
        console.print(fit_table(frame, columns, 40, "title"))
    lines = captured.get().splitlines()
    assert max(len(line) for line in lines) <= 40
    assert "$1,234" in lines[-1] and "…" in lines[-1] and "ignored" not in captured.get()


def test_a_table_too_wide_for_its_columns_is_cut_after_a_whole_word() -> None:
    """Titles wrap at words; a cell that cannot fit is cut after its last whole word (or
    name part) with …, never inside one; a wrap column goes on over more lines."""
    import pandas as pd

    note = "alpha beta gamma delta epsilon zeta eta theta"
    frame = pd.DataFrame({"id": ["a", "b"], "note": [note, "short"], "usd": [1.0, 2.0]})
    columns = (Col("id", "id"), Col("note", "note"), Col("usd", "$", money, right=True))
    console = make_console(30)
    with console.capture() as captured:
        console.print(fit_table(frame, columns, 30, "a title longer than thirty characters"))
    lines = captured.get().splitlines()
    assert lines[:2] == ["a title longer than thirty", "characters"]
    assert all(len(line) <= 30 for line in lines)
    assert lines[4] == "a   alpha beta gamma delta…"  # not "…epsil…"
    assert lines[3] == "─" * len(lines[2]) and lines[5].startswith("b   short")
    wrapped = (Col("id", "id"), Col("note", "note", wrap=True, shrink_to=4), columns[2])
    with console.capture() as captured:
        console.print(fit_table(frame, wrapped, 30))
    lines = captured.get().splitlines()
    assert all(len(line) <= 30 for line in lines) and "…" not in captured.get()
    assert " ".join(line[4:-7].strip() for line in lines[2:-1]) == note


def test_columns_that_do_not_fit_are_named_or_go_under_their_row() -> None:
    import pandas as pd

    frame = pd.DataFrame({"id": ["a"], "usd": [1.0], "src": ["published"], "why": ["x y " * 20]})
    columns = (
        Col("id", "id"),
        Col("usd", "cost", money, right=True),
        Col("src", "source", drop=1),
        Col("why", "why", below=True, wrap=True),
    )
    console = make_console(20)
    with console.capture() as captured:
        console.print(fit_table(frame, columns, 20))
    text = captured.get()
    assert max(len(line) for line in text.splitlines()) <= 20
    assert "published" not in text and "not shown at this width: source" in " ".join(text.split())
    assert "  why: x y" in text
    wide = make_console(200)
    with wide.capture() as captured:
        wide.print(fit_table(frame, columns, 200))
    assert "published" in captured.get() and "why: " not in captured.get()


def test_pricing_show_tco_and_bench_tables_fit_100_columns() -> None:
    env = {"COLUMNS": "100"}
    for args in (
        ["pricing", "show", "--gpu", "H100"],
        ["tco", "--config", "examples/onprem-dgx-h100.toml"],
        ["bench", "list", "benchmarks/results"],
        ["bench", "show", "gpt-tiny-fp32-cpux1-20261130T055325Z-616968", "--dir",
         "benchmarks/results"],
    ):  # fmt: skip
        done = runner.invoke(app, args, env=env)
        assert done.exit_code == 0, done.output
        lines = _lines(done.stdout)  # tables; warnings on stderr are whole lines
        assert max(len(line) for line in lines) <= 100, (args, max(lines, key=len))
    wide = runner.invoke(app, ["pricing", "show", "--gpu", "H100", "--wide"], env=env)
    assert "reserved_1y_usd_per_hour" in wide.stdout


def test_bench_list_shows_each_runs_batch_where_it_fits() -> None:
    """A batch sweep's results differ by batch alone: the list says which is which, and
    leaves the column out before the throughput on a narrow terminal."""
    sweep = "reference/own_runs/h200-20261204b"
    wide = runner.invoke(app, ["bench", "list", "--results", sweep], env={"COLUMNS": "120"})
    assert wide.exit_code == 0, wide.output
    lines = _lines(wide.stdout)
    assert "batch/dev" in lines[1]
    row = next(line for line in lines if "resnet50-full-fp16-cudax1-20261204T180340Z" in line)
    assert row.split()[-5:-3] == ["1", "16"]  # count, batch (then rate, unit, CV)
    narrow = runner.invoke(app, ["bench", "list", "--results", sweep], env={"COLUMNS": "80"})
    header = _lines(narrow.stdout)[1]
    assert "batch/dev" not in header and "throughput" in header
    assert "not shown at this width: batch/dev" in narrow.stdout


def test_tco_says_when_break_even_comes_after_the_servers_life() -> None:
    done = runner.invoke(app, ["tco", "--config", "examples/onprem-dgx-h100.toml"])
    rows = runner.invoke(
        app, ["tco", "--config", "examples/onprem-dgx-h100.toml", "--format", "json"]
    )
    import json

    months = [r["break_even_months"] for r in json.loads(rows.stdout)[1:]]
    late = [m for m in months if m is not None and m > 48]
    assert late, "the example config has an offer that pays back after its 4-year life"
    assert done.stdout.count("(after life)") == len(late)
    assert "after the server's 48-month life" in done.stdout


def test_bench_list_and_show_take_json_and_csv() -> None:
    import io
    import json

    import pandas as pd

    listed = runner.invoke(app, ["bench", "list", "benchmarks/results", "--format", "csv"])
    frame = pd.read_csv(io.StringIO(listed.stdout))
    assert len(frame) == 7 and {"id", "throughput", "throughput_cv"} <= set(frame.columns)
    as_json = runner.invoke(app, ["bench", "list", "benchmarks/results", "--format", "json"])
    assert {r["workload"] for r in json.loads(as_json.stdout)} >= {"gpt", "bert", "resnet50"}
    one = "bert-tiny-fp32-cpux1-20261130T055055Z-092127"
    shown = runner.invoke(app, ["bench", "show", one, "--dir", "benchmarks/results", "--format",
                                "json"])  # fmt: skip
    assert json.loads(shown.stdout)["id"] == one
    row = runner.invoke(app, ["bench", "show", one, "--dir", "benchmarks/results", "--format",
                              "csv"])  # fmt: skip
    assert pd.read_csv(io.StringIO(row.stdout))["id"].tolist() == [one]
    bad = runner.invoke(app, ["bench", "list", "benchmarks/results", "--format", "xml"])
    assert bad.exit_code == 2 and "table, json, csv" in bad.stderr


def test_bench_run_warns_when_throughput_varies_more_than_5_percent() -> None:
    from benchmarks.cli import HIGH_CV, noisy_warnings
    from benchmarks.results import load_results

    results, _ = load_results("benchmarks/results")
    by_id = {r.id.split("-2026")[0]: r for r in results}
    noisy, steady = by_id["gpt-tiny-fp32-cpux1"], by_id["bert-tiny-fp32-cpux1"]
    assert noisy.throughput_cv > HIGH_CV > steady.throughput_cv
    (warning,) = noisy_warnings([noisy, steady])
    assert warning.startswith(f"{noisy.id}: throughput varied 14.4% between steps")


def test_log_axis_ticks_read_as_durations_and_money() -> None:
    from planner.render.axes import duration_ticks, money_ticks

    values, labels = duration_ticks(0.2, 30)
    assert labels == ["15 min", "30 min", "1 h", "2 h", "6 h", "12 h", "1 day", "2 days"]
    assert values[labels.index("1 day")] == 24
    assert duration_ticks(0.01, 9000)[1] == ["1 min", "1 h", "1 day", "1 week", "1 month",
                                             "3 months", "1 year"]  # fmt: skip
    # from 37 h to a few months: every unit read in between, none skipped
    assert duration_ticks(37, 3000)[1] == ["1 day", "2 days", "1 week", "2 weeks", "1 month",
                                           "3 months", "6 months"]  # fmt: skip
    assert money_ticks(4, 150)[1] == ["$5", "$10", "$20", "$50", "$100", "$200"]
    assert money_ticks(0.5, 2e6)[1] == ["$1", "$10", "$100", "$1k", "$10k", "$100k", "$1M"]


def test_the_readme_sample_answer_is_what_the_cli_prints(results_dir: object) -> None:
    """The README's console block: its command run again prints the same tables (stdout;
    the stderr footer's price ages change with the date)."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    block = readme.split("```console\n", 1)[1].split("```", 1)[0].splitlines()
    command = block[0].removeprefix("$ ").split()
    assert command[:2] == ["COLUMNS=100", "gpuplan"], block[0]
    done = subprocess.run(
        [sys.executable, "-m", "planner.cli.main", *command[2:]],
        env={**os.environ, "COLUMNS": "100"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    printed = [line.rstrip() for line in _lines(done.stdout)]
    shown = [line.rstrip() for line in block[1 : 1 + len(printed)]]
    assert shown == printed


def test_constraint_sentences_do_not_contradict_each_other(results_dir: object) -> None:
    """With nothing within the budget, no other line speaks of "the fastest option within
    the budget"; a deadline is worded in the unit people read (3 min, not 0.05 h)."""
    env = {"COLUMNS": "100"}
    done = runner.invoke(app, [*PLAN, "--budget-usd", "1", "--view", "constraints"], env=env)
    assert done.exit_code == 0, done.output
    text = " ".join(done.stdout.split())
    assert "nothing costs $1.00 or less" in text and "within the budget" not in text
    late = runner.invoke(app, [*PLAN, "--deadline-hours", "0.05", "--view", "constraints"], env=env)
    assert "nothing finishes within 3 min;" in " ".join(late.stdout.split())


def test_wide_tables_print_no_scientific_notation(results_dir: object) -> None:
    import re

    wide = runner.invoke(app, [*PLAN, "--wide"], env={"COLUMNS": "100"})
    assert wide.exit_code == 0, wide.output
    assert not re.findall(r"\d(?:\.\d+)?e[+-]\d", wide.stdout)
    from edge.tables import wide_cell

    assert [wide_cell("x", v) for v in (13344.4, 5133.0, 0.0449, 1.2e-5)] == [
        "13,344",
        "5,133",
        "0.0449",
        "0.000012",
    ]


def test_counts_and_flops_read_without_exponents() -> None:
    from edge.format import count, flops

    assert [count(v, short=True) for v in (177_282, 1_281_167, 115_305_030, 8.1e12)] == [
        "177k",
        "1.28M",
        "115M",
        "8.1T",
    ]
    assert count(1_281_167) == "1,281,167"
    assert [flops(v) for v in (24.54e9, 2.485e15, 739e9)] == [
        "24.5 GFLOP",
        "2.48 PFLOP",
        "739 GFLOP",
    ]


def test_llm_details_never_say_none_or_nan() -> None:
    from planner.render.llm import llm_detail

    missing = {"layout": None, "mfu": float("nan"), "framework": "", "mfu_source": "own_measured"}
    text = llm_detail(missing, "bf16")
    assert "None" not in text and "nan" not in text
    known = {"layout": "tp1 pp1 dp64", "mfu": 0.6, "memory_per_gpu_gb": 40.0, "usable_gb": 76.0,
             "step_s": 1.2, "framework": "megatron"}  # fmt: skip
    assert llm_detail(known, "bf16").startswith(
        "layout tp1 pp1 dp64 (megatron layout search: tensor/context/pipeline/data parallel), "
        "40 of 76 GB per GPU; step 1.2 s; MFU 60% of the bf16 peak"
    )
    done = runner.invoke(app, ["estimate-llm", "--queries", "examples/llm_queries.csv"])
    assert done.exit_code == 0 and "None" not in done.stdout and "nan" not in done.stdout


def test_every_bench_command_names_its_results_folder_with_results() -> None:
    """--results DIR as plan and estimate-llm take it; the old spellings still work."""
    folder = "benchmarks/results"
    one = "gpt-tiny-fp32-cpux1-20261130T055325Z-616968"
    listed = runner.invoke(app, ["bench", "list", "--results", folder, "--format", "csv"])
    old = runner.invoke(app, ["bench", "list", folder, "--format", "csv"])
    assert listed.exit_code == old.exit_code == 0 and one in listed.stdout
    assert listed.stdout == old.stdout
    shown = runner.invoke(app, ["bench", "show", one, "--results", folder, "--format", "json"])
    assert shown.exit_code == 0 and one in shown.stdout
    assert runner.invoke(app, ["bench", "show", one, "--dir", folder]).exit_code == 0
    both = runner.invoke(app, ["bench", "list", folder, "--results", "elsewhere"])
    assert both.exit_code == 2 and "give --results DIR" in " ".join(both.stderr.split())
    helps = runner.invoke(app, ["bench", "list", "--help"], env={"COLUMNS": "100"})
    assert "deprecated" in helps.stdout and "--results" in helps.stdout
    for command in ("show", "add", "run", "pipeline"):
        assert "--results" in runner.invoke(app, ["bench", command, "--help"]).stdout
