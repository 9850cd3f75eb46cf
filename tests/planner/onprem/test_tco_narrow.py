"""`gpuplan tco` at 80 columns: the columns left out are named, the price dates are said
under the table instead, and every cost line's "how" is shown whole, over more lines."""

from __future__ import annotations

from typer.testing import CliRunner

from planner.cli.main import app

runner = CliRunner()
TCO = ["tco", "--config", "examples/onprem-dgx-h100.toml", "--compare",
       "aws:us-east-1:p5.48xlarge", "--compare", "lambda:gpu_8x_h100_sxm5"]  # fmt: skip


def _table(width: int) -> str:
    done = runner.invoke(app, TCO, env={"COLUMNS": str(width)})
    assert done.exit_code == 0, done.output
    return done.stdout


def test_at_80_columns_the_price_dates_go_under_the_table() -> None:
    narrow, roomy = _table(80), _table(200)
    assert "not shown at this width: priced (--wide" in " ".join(narrow.split())
    assert "priced: lambda ≥ 2025-01-01, aws ≥ 2025-06-01" in narrow
    header = next(line for line in roomy.splitlines() if line.startswith("cloud offer"))
    assert header.split()[-1] == "priced" and "break-even" in header
    assert "priced: " not in roomy and "not shown at this width" not in roomy


def test_at_80_columns_every_cost_line_says_how_in_full() -> None:
    lines = _table(200).splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith("line "))
    at = lines[start].index("how")
    rows = lines[start + 2 : start + 2 + 14]  # the 13 cost lines and the total
    how = [row[at:].strip() for row in rows]
    assert rows[-1].startswith("total") and max(map(len, how)) > 30  # wider than at 80
    narrow = " ".join(_table(80).split())
    for basis in how:
        assert basis in narrow, basis
