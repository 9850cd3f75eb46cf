"""Every `--format csv` writes a text cell a spreadsheet would run as a formula quoted
(edge.spreadsheet): a custom price list's instance type `=1+2` and a result's device name
`=HYPERLINK(...)` arrive as text in tco, pricing show, plan, bench list and bench show."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchmarks.results import BenchmarkResult, write_result
from edge.spreadsheet import csv_text, safe_cell
from planner.cli.main import app
from tests.conftest import ROOT

runner = CliRunner()
HOSTILE = "=1+2"
HOSTILE_DEVICE = '=HYPERLINK("http://example.invalid","x")'
PRICES = (
    "provider,region,instance_type,gpu_name,gpu_count,usd_per_hour,priced_at\n"
    f"evil-gpu,lab,{HOSTILE},H100-SXM,8,1.5,2026-11-15\n"
)


def cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def formula_cells(text: str) -> list[str]:
    """Cells a spreadsheet would run: text starting with =, +, -, @, tab or CR that is not
    a number."""
    return [c for c in cells(text) if safe_cell(c) != c]


@pytest.fixture
def hostile_prices(tmp_path: Path) -> None:
    path = tmp_path / "evil.csv"
    path.write_text(PRICES)
    done = runner.invoke(app, ["pricing", "add-custom", str(path)])
    assert done.exit_code == 0, done.output


@pytest.mark.usefixtures("hostile_prices", "results_dir")
@pytest.mark.parametrize(
    "args",
    [
        ["pricing", "show", "--provider", "evil-gpu", "--format", "csv"],
        ["plan", "--workload", "bert-base-squad-2ep", "--provider", "evil-gpu",
         "--format", "csv"],
        ["tco", "-c", str(ROOT / "examples" / "onprem-dgx-h100.toml"), "--compare",
         f"evil-gpu:{HOSTILE}", "--format", "csv"],
    ],
)  # fmt: skip
def test_a_hostile_instance_type_is_text_in_every_csv(args: list[str]) -> None:
    done = runner.invoke(app, args)
    assert done.exit_code == 0, done.output
    shown = cells(done.stdout)
    assert "'" + HOSTILE in shown, done.stdout[:2000]
    assert formula_cells(done.stdout) == []


def test_a_hostile_device_name_is_text_in_bench_list_and_show(results_dir: Path) -> None:
    result = BenchmarkResult(
        id="evil-run", workload="gpt", model_size="tiny", precision="fp32", device="cpu",
        device_name=HOSTILE_DEVICE, world_size=1, throughput=10.0, throughput_unit="tokens/s",
        started_at="2026-12-01", notes="@SUM(1+1)",
    )  # fmt: skip
    write_result(result, results_dir)
    for args in (["bench", "list", "--format", "csv"], ["bench", "show", "evil-run", "--format",
                                                        "csv"]):  # fmt: skip
        done = runner.invoke(app, args)
        assert done.exit_code == 0, done.output
        assert "'" + HOSTILE_DEVICE in cells(done.stdout)
        assert formula_cells(done.stdout) == []


def test_numbers_written_as_text_stay_numbers() -> None:
    import pandas as pd

    text = csv_text(pd.DataFrame({"a": ["-5", "+1.5e3", "=A1", "\tx"], "b": [-1.0, 2, 3, 4]}))
    assert cells(text) == ["a", "b", "-5", "-1.0", "+1.5e3", "2.0", "'=A1", "3.0", "'\tx", "4.0"]
