"""The Benchmarks page's predicted-vs-measured section: the same rows as `bench calibrate`
for the user's own results (the bundled samples left out)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from streamlit.testing.v1 import AppTest

from benchmarks.results import BenchmarkResult, write_result
from planner.render.calibration import REASON_WORDS
from planner.throughput import SAMPLE_COLUMN, own_and_published_results
from planner.throughput.calibration import calibrate
from tests.app.conftest import table_with
from tests.conftest import GOOD_RESULT

Open = Callable[..., AppTest]


def test_the_page_shows_each_own_result_predicted_without_it(
    open_page: Open, results_dir: Path
) -> None:
    write_result(
        BenchmarkResult(**(GOOD_RESULT | {"id": "h100-far", "throughput": 100.0})), results_dir
    )
    cpu = GOOD_RESULT | {"id": "cpu-run", "device": "cpu", "device_name": "AMD EPYC"}
    write_result(BenchmarkResult(**cpu), results_dir)
    at = open_page("benchmarks")
    assert any("Predicted vs measured" in h.value for h in at.subheader)
    rows = table_with(at, "predicted", "measured", "error", "method", "reason").set_index("id")
    assert rows.loc["h100-far", "method"] == "published"
    assert rows.loc["h100-far", "error"] > 1
    assert rows.loc["cpu-run", "reason"] == REASON_WORDS["cpu"]
    table, _ = own_and_published_results([str(results_dir)])
    # the user's results only: the bundled samples are not theirs
    expected = calibrate(table.loc[~table[SAMPLE_COLUMN]]).set_index("id")
    assert set(rows.index) == {"h100-far", "cpu-run"}
    assert set(rows.index) == set(expected.index)
    assert rows.loc["h100-far", "predicted"] == expected.loc["h100-far", "predicted"]
    summary = table_with(at, "by", "group", "count", "median_abs_error", "within_10pct")
    assert summary.set_index(["by", "group"]).loc[("all", "all"), "count"] == 1
