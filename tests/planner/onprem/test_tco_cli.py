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
from pricing.tiers import tier_of

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = str(ROOT / "examples" / "onprem-dgx-h100.toml")
ISSUE = [
    "--compare", "aws:us-east-1:p5.48xlarge", "--compare", "lambda:gpu_8x_h100_sxm5",
    "--compare", "H100", "--monthly-gpu-hours", "10000",
]  # fmt: skip
runner = CliRunner()


def run_json(*args: str) -> list[dict[str, object]]:
    done = runner.invoke(app, ["tco", "--config", EXAMPLE, *args, "--format", "json"])
    assert done.exit_code == 0, done.output
    rows = json.loads(done.stdout)
    assert isinstance(rows, list) and all(isinstance(r, dict) for r in rows)
    return rows


def test_json_reports_the_utilization_of_the_work_and_every_figure_at_it() -> None:
    rows = run_json("--monthly-gpu-hours", "10000")
    onprem, cloud = rows[0], rows[1:]
    expected = 10_000 * 12 / (32 * 8760)
    assert onprem["utilization"] == pytest.approx(expected) == pytest.approx(0.428, abs=5e-4)
    assert all(r["utilization"] == pytest.approx(expected) for r in cloud)
    assert all(r["monthly_gpu_hours"] == 10_000 for r in rows)
    config = tco.load_onprem_config(EXAMPLE).config.with_utilization(expected)
    assert onprem["usd_per_gpu_hour"] == pytest.approx(
        float(tco.amortized_usd_per_gpu_hour(config))
    )
    parts = sum(onprem[f"{c}_usd_per_gpu_hour"] for c in tco.COMPONENTS)  # type: ignore[misc]
    assert parts == pytest.approx(onprem["usd_per_gpu_hour"])
    for row in cloud:
        months = float(tco.break_even_months(config, [row["usd_per_gpu_hour"]], 10_000)[0])
        assert row["break_even_months"] == pytest.approx(months)
    # The defaulted keys are listed on the on-prem row.
    defaulted = str(onprem["defaulted"]).split(", ")
    assert {"capex_usd_per_server", "network_usd_per_server", "cost_of_capital_rate"} <= set(
        defaulted
    )
    assert "servers" not in defaulted


def test_the_verdict_carries_its_band_and_share_of_cases() -> None:
    rows = run_json(*ISSUE)
    onprem, aws, lam, _ = rows
    assert (
        onprem["usd_per_gpu_hour_p10"] < onprem["usd_per_gpu_hour"] < onprem["usd_per_gpu_hour_p90"]
    )  # type: ignore[operator]
    # AWS p5 costs far more per GPU-hour than owning at 43%; Lambda less.
    assert aws["p_buy_cheaper"] > 0.8 and aws["verdict"] == "buy"  # type: ignore[operator]
    assert lam["p_buy_cheaper"] < 0.2 and lam["verdict"] == "rent"  # type: ignore[operator]
    assert aws["payback_months_p10"] <= aws["break_even_months"] <= aws["payback_months_p90"]  # type: ignore[operator]
    assert "pays back in" in str(aws["break_even_note"])
    # The same seed gives the same figures; another seed nearly the same.
    again = run_json(*ISSUE)
    assert again == rows
    other = run_json(*ISSUE, "--seed", "1")
    assert other[1]["p_buy_cheaper"] == pytest.approx(aws["p_buy_cheaper"], abs=0.03)


def test_table_states_the_answer_in_one_sentence_with_its_band() -> None:
    done = runner.invoke(app, ["tco", "--config", EXAMPLE, *ISSUE], env={"COLUMNS": "100"})
    assert done.exit_code == 0, done.output
    text = " ".join(done.stdout.split())
    rows = run_json(*ISSUE)
    onprem = rows[0]
    assert text.startswith("At 43% utilization (10,000 GPU-hours a month on 32 H100-SXM), owning")
    assert f"(P10-P90 ${onprem['usd_per_gpu_hour_p10']:.2f}-" in text
    share = round(float(rows[1]["p_buy_cheaper"]) * 100)  # type: ignore[arg-type]
    assert f"buying is cheaper than aws p5.48xlarge on-demand ($6.88) in {share}% of cases" in text
    for word in ("network fabric", "financing", "resale (credit)", "typical default", "staff"):
        assert word in done.stdout
    assert "Decided most by" in done.stdout
    assert "lines from typical defaults" in done.output
    assert max(len(line) for line in done.stdout.splitlines()) <= 100


def test_the_compare_leaves_marketplace_offers_out_unless_asked() -> None:
    rows = run_json()[1:]
    assert rows and all(tier_of(str(r["provider"])) != "marketplace" for r in rows)
    h100 = run_json("--compare", "H100")[1]
    assert h100["provider"] != "vast" and h100["tier"] in ("hyperscaler", "neocloud")
    asked = run_json("--compare", "H100", "--tier", "marketplace")[1]
    assert asked["provider"] == "vast" and asked["tier"] == "marketplace"
    assert asked["usd_per_gpu_hour"] < h100["usd_per_gpu_hour"]  # type: ignore[operator]
    named = run_json("--compare", "vast:" + str(asked["instance_type"]))[1]
    assert named["provider"] == "vast"  # naming the provider weighs it whatever its tier


def test_work_beyond_the_servers_says_how_many_it_needs() -> None:
    done = runner.invoke(app, ["tco", "--config", EXAMPLE, "--monthly-gpu-hours", "30000"])
    assert done.exit_code == 0, done.output
    text = " ".join(done.stdout.split())
    assert "30,000 GPU-hours a month need 6 servers (48 GPUs" in text
    assert "not the 4 configured" in text
    rows = run_json("--monthly-gpu-hours", "30000")
    assert rows[0]["servers"] == 6 and rows[0]["gpu_count"] == 48
    assert rows[0]["utilization"] == pytest.approx(30_000 * 12 / (48 * 8760))


def test_prices_side_by_side_with_their_dates() -> None:
    rows = run_json("--compare", "aws:us-east-1:p5.48xlarge", "--pricing", "spot")
    aws = rows[1]
    assert aws["pricing"] == "spot"
    assert aws["on_demand_usd_per_gpu_hour"] == pytest.approx(55.04 / 8)
    assert aws["usd_per_gpu_hour"] == aws["spot_usd_per_gpu_hour"]
    assert (aws["price_date"], aws["price_date_basis"]) == ("2025-06-01", "not-before")


def test_utilization_flag_overrides_the_config() -> None:
    half = run_json("--utilization", "0.35")[0]
    assert half["utilization"] == 0.35
    config = tco.load_onprem_config(EXAMPLE).config.with_utilization(0.35)
    assert half["usd_per_gpu_hour"] == pytest.approx(float(tco.amortized_usd_per_gpu_hour(config)))


def test_csv_has_every_column() -> None:
    done = runner.invoke(app, ["tco", "--config", EXAMPLE, "--pricing", "spot", "--format", "csv"])
    assert done.exit_code == 0, done.output
    frame = pd.read_csv(io.StringIO(done.stdout))
    assert set(tco.TCO_COLUMNS) <= set(frame.columns)
    assert (frame["pricing"].iloc[1:] == "spot").all()


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "onprem.toml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--utilization", "0"],
            "--utilization 0: 0.0 is out of range; it must be >= 1e-06 and <= 1",
        ),
        (["--utilization=-0.1"], "--utilization -0.1"),
        (["--compare", "aws:p5.48xlarg"], "did you mean 'aws:p5.48xlarge'"),
        (["--compare", "H10"], "did you mean 'H100'"),
        (["--pricing", "reserved-1y"], "no reserved-1y price for the offers chosen"),
        (["--pricing", "spott"], "did you mean 'spot'"),
        (["--tier", "marketplac"], "did you mean 'marketplace'"),
        (["--compare", "RTX-4090"], "'RTX-4090': no on-demand offer from the tiers weighed"),
        (["--monthly-gpu-hours", "-5"], "--monthly-gpu-hours"),
        (["--utilization", "0.5", "--monthly-gpu-hours", "100"], "give one"),
        (["--cloud-price-trend", "-2"], "--cloud-price-trend -2: must be between -0.9 and 1"),
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
        ("capex_usd_per_server = -1\n", "field 'capex_usd_per_server': -1 is out of range"),
        ('fabric = "ib"\n', "field 'fabric': unknown fabric 'ib'"),
        ('gpu_name = "L4"\n', "set capex_usd_per_server (USD, your quote)"),
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
