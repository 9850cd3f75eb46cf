"""Every command's default output fits 80 and 100 columns and cuts no word; --wide and
--format json|csv keep the full data whatever the width.

A cell cut mid-word leaves a fragment ("Availab…", "uild a gpuplan wheel") that the same
command never prints at a width where nothing needs cutting (1,000 columns): every word
printed at 80 or 100 columns must be one of the words printed at 1,000, or one of the
few words of the line that names the columns left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from planner.cli.main import app

runner = CliRunner()
WIDTHS = (80, 100)
ROOMY = 1000
RESULTS = "benchmarks/results"
REFERENCE = "reference/benchmarks/lambda_pytorch_throughput.csv"
LLM_BUDGET = ["--workload", "llm-7b-140b", "--precision", "bf16", "--deadline-hours", "336",
              "--budget-usd", "60000"]  # fmt: skip
RESNET = ["--workload", "resnet50-imagenet-90ep", "--top", "10"]
TCO = ["tco", "--config", "examples/onprem-dgx-h100.toml"]
TCO_COMPARE = ["--compare", "aws:us-east-1:p5.48xlarge", "--compare", "lambda:gpu_8x_h100_sxm5",
               "--compare", "H100", "--monthly-gpu-hours", "10000"]  # fmt: skip
COMMANDS: dict[str, list[str]] = {
    "workloads": ["workloads"],
    "pricing-status": ["pricing", "status"],
    "pricing-show": ["pricing", "show", "--gpu", "H100"],
    "pricing-show-neocloud": ["pricing", "show", "--gpu", "H100", "--tier", "neocloud"],
    "pricing-diff": ["pricing", "diff", "aws@bundled", "aws"],
    "estimate": ["estimate", "--reference", REFERENCE, "--queries", "examples/queries.csv"],
    "estimate-llm": ["estimate-llm", "--queries", "examples/llm_queries.csv"],
    "bench-list": ["bench", "list", "--results", RESULTS],
    "bench-show": [
        "bench",
        "show",
        "gpt-tiny-fp32-cpux1-20261130T055325Z-616968",
        "--results",
        RESULTS,
    ],
    "bench-calibrate": ["bench", "calibrate", "--results", RESULTS],
    "plan": ["plan", *RESNET],
    "plan-picks": ["plan", *RESNET, "--view", "picks"],
    "plan-frontier": ["plan", *RESNET, "--view", "frontier"],
    "plan-options": ["plan", *RESNET, "--view", "options"],
    "plan-constraints": ["plan", *RESNET, "--view", "constraints"],
    "plan-llm-budget": ["plan", *LLM_BUDGET, "--top", "10"],
    "plan-llm-picks": ["plan", *LLM_BUDGET, "--view", "picks"],
    "tco": TCO,
    "tco-compare": [*TCO, *TCO_COMPARE],
    "sweep-plan-aws": ["sweep", "plan", "examples/sweep-aws.toml"],
    "sweep-plan-skypilot": ["sweep", "plan", "examples/sweep-skypilot.toml"],
    "sweep-plan-onprem": ["sweep", "plan", "examples/sweep-onprem.toml"],
    "sweep-status": ["sweep", "status", "sw-20261201-w1"],
    "sweep-list": ["sweep", "list"],
}
# The words of the line under a table that names the columns left out at this width, and
# of the description printed under its row.
NARROW_ONLY = {"not", "shown", "at", "this", "width", "wide", "or", "a", "wider", "terminal",
               "format", "csv", "json"}  # fmt: skip
# Where words split: white space, the separators inside names (gpu_1x_gh200, us-east-1,
# p5.48xlarge), punctuation and the help panels' box lines.
SPLIT = re.compile(r"[\s_\-./,:;()\[\]{}'\"`=|+*<>│╭╮╰╯─•]+")


def _run(args: list[str], width: int) -> tuple[str, str]:
    done = runner.invoke(app, args, env={"COLUMNS": str(width)})
    assert done.exit_code == 0, (args, done.output)
    return done.stdout, done.stderr


def _words(text: str) -> set[str]:
    return {w for w in SPLIT.split(text) if w}


def cut_words(narrow: str, roomy: str) -> list[str]:
    """Words (an ellipsis dropped) printed at a narrow width but never at a roomy one."""
    known = _words(roomy) | NARROW_ONLY
    return sorted({w for w in SPLIT.split(narrow) if w.rstrip("…") and w.rstrip("…") not in known})


def _check_fits(name: str, args: list[str], width: int, roomy: tuple[str, str]) -> None:
    stdout, stderr = _run(args, width)
    for stream, text, wide in (("stdout", stdout, roomy[0]), ("stderr", stderr, roomy[1])):
        lines = text.splitlines()
        too_wide = [line for line in lines if len(line) > width]
        assert not too_wide, f"{name} at {width} ({stream}): {len(too_wide[0])} wide: {too_wide[0]}"
        cut = cut_words(text, wide + roomy[0])
        assert not cut, f"{name} at {width} ({stream}) cuts words: {cut[:8]}"
        headers = [h for h, rule in pairwise(lines) if rule and set(rule) == {"─"}]
        assert not [h for h in headers if "…" in h], f"{name} at {width}: a header is cut"


@pytest.fixture()
def swept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sweep state (in $GPUPLAN_SWEEP_DIR) with one target done, whose results are one
    H100 run gpuplan compares and one CPU run it cannot, and one target that failed
    installing, with its pip output's last lines."""
    from benchmarks.results import BenchmarkResult, write_result
    from benchmarks.sweep import state as st
    from tests.conftest import GOOD_RESULT

    monkeypatch.setenv("GPUPLAN_SWEEP_DIR", str(tmp_path / "sweeps"))
    results = tmp_path / "sweep-results"
    labels = ["aws:us-east-1:p5.48xlarge", "gcp:us-central1-a:a3-highgpu-8g"]
    keys = ["resnet50-full-fp16-auto-x1-bauto-s100", "resnet50-full-fp16-auto-x8-bauto-s100"]
    data = st.new_state("sw-20261201-w1", "spec.toml", {"name": "w"}, str(results), labels,
                        keys, [55.04, 88.25])  # fmt: skip
    ids = ["resnet50-full-fp16-cudax1-20261201T101500Z-5f3a2b",
           "resnet50-full-fp16-cpux1-20261201T102000Z-77c1d0"]  # fmt: skip
    done, failed = data["targets"]
    done.update(state=st.DONE, launched_at="2026-12-01T10:00:00+00:00",
                terminated_at="2026-12-01T10:31:07+00:00")  # fmt: skip
    for key, result_id in zip(keys, ids, strict=True):
        done["runs"][key] = {"status": st.DONE, "result_ids": [result_id], "error": None}
    pip = [f"  Collecting package-{n} (from gpuplan[bench])" for n in range(6)]
    failed.update(
        state=st.FAILED, detail="installing", launched_at="2026-12-01T10:00:00+00:00",
        terminated_at="2026-12-01T10:09:42+00:00",
        reason="installing gpuplan[bench] exited with 1; last output:\n" + "\n".join(pip)
        + "\nERROR: No matching distribution found for nvidia-ml-py>=12.535",
    )  # fmt: skip
    failed["runs"][keys[0]]["error"] = "not run: the target failed installing gpuplan[bench]"
    st.StateFile(data).save()
    sweep = {"sweep_id": "sw-20261201-w1", "backend": "aws", "cloud": "aws",
             "region": "us-east-1", "instance_type": "p5.48xlarge", "spot": False}  # fmt: skip
    (results / "sw-20261201-w1").mkdir(parents=True)
    cpu = {"device": "cpu", "device_name": "Intel Xeon Platinum 8488C", "throughput": 41.0}
    for result_id, change in zip(ids, [{"throughput": 2600.0}, cpu], strict=True):
        fields = GOOD_RESULT | {"id": result_id, "sweep": sweep} | change
        write_result(BenchmarkResult(**fields), results / "sw-20261201-w1")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_default_output_fits_80_and_100_columns_without_cutting_a_word(
    name: str, results_dir: object, request: pytest.FixtureRequest
) -> None:
    args = COMMANDS[name]
    if name in ("sweep-status", "sweep-list"):
        request.getfixturevalue("swept")
    roomy = _run(args, ROOMY)
    for width in WIDTHS:
        _check_fits(name, args, width, roomy)


def test_cut_words_catches_a_fragment_and_lets_a_whole_word_through() -> None:
    roomy = "cannot build a gpuplan wheel from site-packages"
    assert cut_words("uild a gpuplan wheel", roomy) == ["uild"]
    assert cut_words("Availab…", "Available zones") == ["Availab…"]
    assert cut_words("cannot build a…  site-…", roomy) == []


def _commands(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    if hasattr(group, "list_commands"):  # a group (typer vendors its own click)
        for name in sorted(group.list_commands(None)):
            yield from _commands(group.get_command(None, name), (*path, name))


HELP_PATHS = list(_commands(typer.main.get_command(app)))


@pytest.mark.parametrize("path", HELP_PATHS, ids=[" ".join(p) or "gpuplan" for p in HELP_PATHS])
def test_help_panels_fit_80_and_100_columns_without_cutting_a_word(path: tuple[str, ...]) -> None:
    args = [*path, "--help"]
    roomy = _run(args, ROOMY)
    for width in WIDTHS:
        _check_fits(" ".join(args), args, width, roomy)


@pytest.mark.parametrize(
    "args",
    [
        ["plan", *RESNET, "--format", "json"],
        ["plan", *RESNET, "--format", "csv"],
        ["workloads", "--format", "csv"],
        ["pricing", "status", "--format", "json"],
        ["estimate-llm", "--queries", "examples/llm_queries.csv", "--format", "csv"],
        ["bench", "list", "--results", RESULTS, "--format", "json"],
    ],
    ids=lambda a: "-".join(a[:2] + a[-1:]),
)
def test_json_and_csv_are_the_same_at_every_width(args: list[str], results_dir: object) -> None:
    assert _run(args, 80)[0] == _run(args, ROOMY)[0]


def test_wide_shows_the_columns_a_narrow_table_leaves_out(results_dir: object) -> None:
    narrow = _run(["plan", *RESNET], 80)[0]
    assert "not shown at this width: " in narrow and "published" not in narrow
    wide = _run(["plan", *RESNET, "--wide"], 80)[0]
    assert "throughput_source" in wide and "published" in wide
    assert max(len(line) for line in wide.splitlines()) > 80


def test_bench_run_table_fits_80_and_100_columns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table `bench run` prints for its results (timing a run takes seconds: the
    bundled results stand in for fresh ones)."""
    from pathlib import Path

    from benchmarks.cli import _print_results
    from benchmarks.results import read_result

    paths = sorted(Path(RESULTS).glob("gpt-tiny-*.json"))
    written = [(read_result(p), p) for p in paths]
    printed = {}
    for width in (*WIDTHS, ROOMY):
        monkeypatch.setenv("COLUMNS", str(width))
        _print_results(written, "table")
        printed[width] = capsys.readouterr().out
    assert "tokens/s" in printed[80] and "MFU" in printed[80]
    for width in WIDTHS:
        assert max(len(line) for line in printed[width].splitlines()) <= width
        assert cut_words(printed[width], printed[ROOMY]) == []
    assert "power W" in printed[ROOMY] and "not shown" not in printed[ROOMY]


def test_sweep_plan_dates_its_prices_where_the_date_column_is_left_out() -> None:
    """At 80 columns the price date's column is left out and each price line says it (at
    200, the golden recording sweep-plan-aws: in the table, not in the lines)."""
    narrow = _run(["sweep", "plan", "examples/sweep-aws.toml"], 80)[0]
    assert "priced at" in " ".join(narrow.split()).split("not shown at this width:")[1]
    price_lines = [line for line in narrow.splitlines() if " price (≥ 2025-06-01): " in line]
    assert [line.split()[0] for line in price_lines] == [
        "aws:us-east-1:p4d.24xlarge",
        "aws:us-east-2:p5.48xlarge:spot",
    ]
    # A run's line wrapped at words goes on indented under its first.
    rates = [line for line in narrow.splitlines() if line.endswith("samples/s)")]
    assert rates and all(line.startswith("    (") for line in rates)
