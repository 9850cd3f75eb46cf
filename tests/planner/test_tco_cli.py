"""`gpuplan tco` end to end on the example config and the bundled snapshot."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from planner.onprem import tco
from pricing.catalog import load_offers

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "examples" / "onprem-dgx-h100.toml")
runner = CliRunner()


def run_json(*args: str) -> list[dict[str, object]]:
    done = runner.invoke(app, ["tco", "--config", EXAMPLE, *args, "--format", "json"])
    assert done.exit_code == 0, done.output
    rows = json.loads(done.stdout)
    assert isinstance(rows, list) and all(isinstance(r, dict) for r in rows)
    return rows


def test_table_shows_the_amortized_cost_and_break_even() -> None:
    done = runner.invoke(app, ["tco", "--config", EXAMPLE])
    assert done.exit_code == 0, done.output
    config = tco.load_onprem_config(EXAMPLE).config
    amortized = float(tco.amortized_usd_per_gpu_hour(config))
    assert f"${amortized:.2f} per GPU-hour" in done.stdout
    assert "dgx-h100-x4" in done.stdout
    for word in ("capex", "maintenance", "energy", "colocation", "break-even use"):
        assert word in done.stdout
    assert "aws p5" in done.stdout and "lambda gpu_" in done.stdout
    assert "fields defaulted" in done.output and "--explain" in done.output
    explained = runner.invoke(app, ["tco", "--config", EXAMPLE, "--explain"])
    assert "defaulted: power_kw_per_server = 7.50 kW" in explained.output


def test_json_rows_agree_with_the_library() -> None:
    rows = run_json()
    assert set(rows[0]) == set(tco.TCO_COLUMNS)
    onprem, cloud = rows[0], rows[1:]
    config = tco.load_onprem_config(EXAMPLE).config
    assert onprem["option"] == "on-prem"
    assert onprem["usd_per_gpu_hour"] == pytest.approx(
        float(tco.amortized_usd_per_gpu_hour(config))
    )
    parts = sum(onprem[f"{c}_usd_per_gpu_hour"] for c in tco.COMPONENTS)  # type: ignore[misc]
    assert parts == pytest.approx(onprem["usd_per_gpu_hour"])
    # Default comparison: the cheapest on-demand H100-SXM offer of every provider, cheapest first.
    offers = load_offers()
    h100 = offers.loc[(offers["gpu_name"] == "H100-SXM") & offers["usd_per_hour"].notna()]
    best = (h100["usd_per_hour"] / h100["gpu_count"]).groupby(h100["provider"]).min()
    assert {r["provider"] for r in cloud} == set(best.index)
    for row in cloud:
        assert row["gpu_name"] == "H100-SXM"
        assert row["pricing"] == "on-demand"
        assert row["usd_per_gpu_hour"] == pytest.approx(best[row["provider"]])
        assert row["price_date"]
    prices = [r["usd_per_gpu_hour"] for r in cloud]
    assert prices == sorted(prices)
    for row in cloud:
        u = float(tco.break_even_utilization(config, [row["usd_per_gpu_hour"]])[0])
        if u <= 1:
            assert row["break_even_utilization"] == pytest.approx(u)
        else:
            assert row["break_even_utilization"] is None
            assert "never cheaper" in str(row["break_even_note"])


def test_compare_references_and_demand() -> None:
    rows = run_json(
        "--compare",
        "aws:us-east-1:p5.48xlarge",
        "--compare",
        "gcp:a3-highgpu-8g",
        "--compare",
        "H100",
        "--monthly-gpu-hours",
        "10000",
    )
    aws, gcp, h100 = rows[1:]
    assert aws["usd_per_gpu_hour"] == pytest.approx(55.04 / 8)
    assert gcp["provider"] == "gcp" and gcp["instance_type"] == "a3-highgpu-8g"
    offers = load_offers()
    a3 = offers.loc[(offers["provider"] == "gcp") & (offers["instance_type"] == "a3-highgpu-8g")]
    assert gcp["usd_per_gpu_hour"] == pytest.approx((a3["usd_per_hour"] / 8).min())
    h = offers.loc[offers["gpu_name"] == "H100-SXM"]
    assert h100["usd_per_gpu_hour"] == pytest.approx((h["usd_per_hour"] / h["gpu_count"]).min())
    config = tco.load_onprem_config(EXAMPLE).config
    months = float(tco.break_even_months(config, [55.04 / 8], 10_000)[0])
    assert aws["break_even_months"] == pytest.approx(months)
    assert aws["monthly_gpu_hours"] == 10_000


def test_utilization_flag_overrides_the_config() -> None:
    base = run_json()[0]["usd_per_gpu_hour"]
    half = run_json("--utilization", "0.35")[0]
    assert half["utilization"] == 0.35
    # The example's costs are all fixed (idle_power_fraction = 1): half the use, twice the cost.
    assert half["usd_per_gpu_hour"] == pytest.approx(2 * base)  # type: ignore[operator]


def test_csv_has_every_column() -> None:
    done = runner.invoke(app, ["tco", "--config", EXAMPLE, "--pricing", "spot", "--format", "csv"])
    assert done.exit_code == 0, done.output
    frame = pd.read_csv(io.StringIO(done.stdout))
    assert list(frame.columns) == list(tco.TCO_COLUMNS)
    assert (frame["pricing"].iloc[1:] == "spot").all()


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "onprem.toml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--utilization", "0"], "--utilization 0: 0.0 is out of range; it must be > 0 and <= 1"),
        (["--utilization=-0.1"], "--utilization -0.1"),
        (["--compare", "aws:p5.48xlarg"], "did you mean 'aws:p5.48xlarge'"),
        (["--compare", "H10"], "did you mean 'H100'"),
        (["--pricing", "reserved-1y"], "no reserved-1y price for the offers chosen"),
        (["--pricing", "spott"], "did you mean 'spot'"),
        (["--monthly-gpu-hours", "99999"], "--monthly-gpu-hours 99999: 99,999 GPU-hours"),
        (["--format", "yaml"], "unknown format 'yaml'"),
    ],
)
def test_bad_flags_exit_2_with_a_message(args: list[str], message: str) -> None:
    done = runner.invoke(app, ["tco", "--config", EXAMPLE, *args])
    assert done.exit_code == 2
    assert "Traceback" not in done.output
    assert message in " ".join(done.output.split())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("utilisation = 0.5\n", "unknown key 'utilisation'; did you mean 'utilization'?"),
        ("utilization = 0\n", "field 'utilization': 0 is out of range"),
        ("utilization = -0.1\n", "field 'utilization': -0.1 is out of range"),
        ("capex_usd_per_server = -1\n", "field 'capex_usd_per_server': -1 is out of range"),
        ("servers = [\n", "not valid TOML"),
    ],
)
def test_bad_config_files_exit_2_naming_the_field(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    done = runner.invoke(app, ["tco", "--config", path])
    assert done.exit_code == 2
    assert "Traceback" not in done.output
    flat = " ".join(done.output.split())
    assert message in flat
    assert "onprem.toml" in flat


def test_missing_config_file(tmp_path: Path) -> None:
    done = runner.invoke(app, ["tco", "--config", str(tmp_path / "nope.toml")])
    assert done.exit_code == 2
    assert "no such file" in done.output
