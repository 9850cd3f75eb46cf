"""On-prem TCO: every line by hand, the annuity, utilization from the work, break-even,
config loading and the cited ranges."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from planner.onprem import tco
from planner.onprem.breakeven import life_mean_price_factor, payback_months
from planner.onprem.config import OnPremConfig, OnPremConfigError
from planner.onprem.lines import capital_recovery_factor
from planner.onprem.ranges import CAPEX_BY_GPU, LINES, NETWORK_BY_FABRIC, ranges_frame
from planner.onprem.utilization import servers_needed, size_for_work, utilization_of_hours

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "onprem-dgx-h100.toml"

TINY = OnPremConfig(
    name="tiny",
    gpu_name="A100-SXM-80GB",
    servers=2,
    gpus_per_server=4,
    capex_usd_per_server=100_000,
    fabric="ethernet",
    network_usd_per_server=5_000,
    storage_usd_per_server=3_000,
    installation_usd_per_server=2_000,
    spares_fraction=0.05,
    extra_capex_usd=20_000,
    lifetime_years=4,
    cost_of_capital_rate=0.0,
    resale_fraction=0.1,
    power_kw_per_server=3.0,
    idle_power_fraction=1.0,
    pue=1.5,
    usd_per_kwh=0.10,
    colocation_usd_per_kw_month=200,
    facility_usd_per_year=1_000,
    staff_usd_per_year=5_000,
    maintenance_fraction_per_year=0.10,
    failure_downtime_fraction=0.0,
    utilization=0.5,
)
# By hand, per year: servers 200,000 / 4 = 50,000; spares 10,000 / 4 = 2,500; network
# 10,000 / 4 = 2,500; storage 1,500; installation 1,000; site 5,000; resale -20,000 / 4 =
# -5,000; financing 0; support 20,000; energy 6 kW x 8760 x 1.5 x 0.10 = 7,884; colocation
# 6 kW x 200 x 12 = 14,400; facility 1,000; staff 5,000 -> 105,784 over 35,040 GPU-hours.
TINY_LINES = {
    "servers": 50_000, "spares": 2_500, "network": 2_500, "storage": 1_500,
    "installation": 1_000, "site_capex": 5_000, "resale": -5_000, "financing": 0,
    "support": 20_000, "energy": 7_884, "colocation": 14_400, "facility": 1_000, "staff": 5_000,
}  # fmt: skip
TINY_GPU_HOURS = 8 * 8760 * 0.5


def test_every_line_by_hand() -> None:
    costs = tco.annual_costs(TINY).iloc[0]
    for line, usd in TINY_LINES.items():
        assert costs[f"{line}_usd_per_year"] == pytest.approx(usd), line
    assert costs["total_usd_per_year"] == pytest.approx(105_784)
    assert costs["upfront_usd"] == pytest.approx(2 * (105_000 + 5_000 + 3_000 + 2_000) + 20_000)
    assert costs["gpu_hours_per_year"] == TINY_GPU_HOURS
    assert float(tco.amortized_usd_per_gpu_hour(TINY)) == pytest.approx(105_784 / TINY_GPU_HOURS)


def test_the_cost_of_capital_turns_straight_line_into_an_annuity() -> None:
    # Capital recovery factor at 8% over 4 years: 0.08 / (1 - 1.08^-4) = 0.301921.
    assert float(capital_recovery_factor(0.08, 4)) == pytest.approx(0.301921, abs=1e-6)
    assert float(capital_recovery_factor(0.0, 4)) == 0.25
    financed = OnPremConfig(**{**TINY.model_dump(), "cost_of_capital_rate": 0.08})
    costs = tco.annual_costs(financed).iloc[0]
    upfront, resale = 250_000, 20_000
    capital = (upfront - resale / 1.08**4) * 0.301921
    straight = (upfront - resale) / 4
    assert costs["financing_usd_per_year"] == pytest.approx(capital - straight, rel=1e-5)
    assert costs["financing_usd_per_year"] > 0
    # Straight-line lines are unchanged: only the financing line moves.
    assert costs["servers_usd_per_year"] == pytest.approx(50_000)


def test_idle_draw_scales_only_the_energy() -> None:
    idle = OnPremConfig(**{**TINY.model_dump(), "idle_power_fraction": 0.25})
    costs = tco.annual_costs(idle).iloc[0]
    assert costs["energy_usd_per_year"] == pytest.approx(7_884 * (0.25 + 0.75 * 0.5))
    assert costs["variable_usd_per_year"] == pytest.approx(7_884 * 0.75)
    assert costs["fixed_usd_per_year"] + 0.5 * costs["variable_usd_per_year"] == pytest.approx(
        costs["total_usd_per_year"]
    )


def test_breakdown_adds_up_and_names_the_defaulted_inputs() -> None:
    frame = tco.cost_breakdown(TINY, defaulted=("pue", "capex_usd_per_server"))
    parts = frame.loc[frame["component"] != "total"]
    assert list(parts["component"]) == list(tco.COMPONENTS)
    assert parts["usd_per_gpu_hour"].sum() == pytest.approx(105_784 / TINY_GPU_HOURS)
    assert parts["share"].sum() == pytest.approx(1.0)
    by_line = frame.set_index("component")["defaulted"]
    assert by_line["energy"] == "pue" and by_line["servers"] == "capex_usd_per_server"
    assert by_line["support"] == ""


def test_defaults_come_from_the_cited_ranges() -> None:
    config = OnPremConfig(servers=4)
    assert config.server_capex_usd == CAPEX_BY_GPU["H100-SXM"].typical == 270_000
    assert config.network_usd == NETWORK_BY_FABRIC["infiniband"].typical
    assert config.pue == LINES["pue"].typical == 1.58
    assert config.staff_usd == pytest.approx(4 / 50 * 180_000)
    assert OnPremConfig(fabric="none").network_usd == 0
    b200 = OnPremConfig(gpu_name="B200")
    assert b200.server_capex_usd == CAPEX_BY_GPU["B200"].typical
    with pytest.raises(OnPremConfigError, match=r"capex_usd_per_server.*no published server"):
        OnPremConfig(gpu_name="L4")
    assert OnPremConfig(gpu_name="L4", capex_usd_per_server=20_000).server_capex_usd == 20_000


def test_every_range_is_ordered_dated_and_sourced() -> None:
    frame = ranges_frame()
    assert (frame["low"] <= frame["typical"]).all() and (frame["typical"] <= frame["high"]).all()
    sourced = frame.loc[frame["key"] != "none"]
    assert sourced["source"].str.len().gt(20).all()
    assert sourced["date"].ne("").sum() >= len(sourced) - 1  # the utilization factor: no date
    assert set(frame["confidence"]) <= {"H", "M", "L", ""}
    for gpu in ("H100-SXM", "H200-SXM", "B200", "B300"):
        assert gpu in set(frame.loc[frame["field"] == "capex_usd_per_server", "key"])
    assert {"infiniband", "roce", "ethernet"} <= set(NETWORK_BY_FABRIC)


def test_the_reference_csv_holds_the_same_ranges() -> None:
    stored = pd.read_csv(
        ROOT / "reference" / "onprem" / "default-ranges.csv", keep_default_na=False
    )
    ours = ranges_frame()
    assert list(stored.columns) == list(ours.columns)
    for column in ("low", "typical", "high"):
        assert stored[column].astype(float).tolist() == ours[column].astype(float).tolist()
    for column in ("field", "key", "unit", "source", "date", "confidence"):
        assert stored[column].astype(str).tolist() == ours[column].astype(str).tolist()


def test_utilization_comes_from_the_hours_of_work() -> None:
    config = OnPremConfig(servers=4)
    assert utilization_of_hours(config, 10_000) == pytest.approx(10_000 * 12 / (32 * 8760))
    sized, sizing = size_for_work(config, 10_000)
    assert sized.utilization == pytest.approx(0.428, abs=5e-4)
    assert sized.servers == 4 and not sizing.resized
    # 30,000 GPU-hours need 30,000 / (8 x 730 x 0.97) = 5.3 -> 6 servers.
    assert servers_needed(config, 30_000) == 6
    big, sizing = size_for_work(config, 30_000)
    assert big.servers == 6 and sizing.resized and sizing.servers_configured == 4
    assert big.utilization == pytest.approx(30_000 * 12 / (48 * 8760))
    with pytest.raises(OnPremConfigError, match="monthly_gpu_hours"):
        size_for_work(config, math.inf)


def test_break_even_utilization_is_where_the_costs_meet() -> None:
    price = 3.0
    u = float(tco.break_even_utilization(TINY, [price])[0])
    assert 0 < u < 1
    assert float(tco.amortized_usd_per_gpu_hour(TINY, u)) == pytest.approx(price)
    assert np.isinf(tco.break_even_utilization(TINY, [0.0])[0])


def test_payback_by_hand_flat_and_with_a_falling_cloud_price() -> None:
    assert float(payback_months(1000, 10, 60)) == pytest.approx(20.0)
    assert np.isinf(payback_months(1000, 60, 60))
    # Falling prices pay back later; rising prices sooner.
    falling, rising = payback_months(1000, 10, 60, [-0.2, 0.2])
    assert falling > 20 > rising
    # At the payback month the cumulative cloud bill equals upfront plus running cost.
    a = math.log(0.8) / 12
    assert 60 * math.expm1(a * falling) / a == pytest.approx(1000 + 10 * falling, rel=1e-6)
    assert np.isinf(payback_months(1000, 10, 60, -0.9))
    assert float(life_mean_price_factor(0.0, 4)) == 1.0
    assert float(life_mean_price_factor(-0.2, 4)) == pytest.approx(
        (0.8**4 - 1) / (4 * math.log(0.8))
    )


def test_payback_is_discounted_at_the_cost_of_capital() -> None:
    months = float(payback_months(1000, 10, 60, 0.0, 0.08))
    d = math.log(1.08) / 12
    assert 50 * (1 - math.exp(-d * months)) / d == pytest.approx(1000)
    assert months > 20  # later than the undiscounted 20 months
    trended = float(payback_months(1000, 10, 60, -1e-9, 0.08))
    assert trended == pytest.approx(months, rel=1e-4)  # bisection agrees with the closed form
    assert np.isinf(payback_months(1000, 10, 60, 0.0, 0.9))  # 50 / d < 1000: never


def test_break_even_months_use_the_upfront_and_running_cost() -> None:
    costs = tco.annual_costs(TINY).iloc[0]
    months = float(tco.break_even_months(TINY, [3.0], 2_000)[0])
    running = costs["running_usd_per_year"] / 12
    assert months == pytest.approx(costs["upfront_usd"] / (3.0 * 2_000 - running))


def test_example_config_takes_the_typical_values_and_lists_them() -> None:
    loaded = tco.load_onprem_config(EXAMPLE)
    config = loaded.config
    assert (config.servers, config.gpus) == (4, 32)
    assert "capex_usd_per_server" in loaded.defaulted and "pue" in loaded.defaulted
    assert config.server_capex_usd == 270_000
    notes = loaded.defaulted_notes()
    assert any(n.startswith("capex_usd_per_server = 270,000 USD (") for n in notes)
    assert any(n.startswith("power_kw_per_server = 7.50 kW") for n in notes)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"utilisation": 0.5}, "unknown key 'utilisation'; did you mean 'utilization'?"),
        ({"utilization": 0}, "field 'utilization': 0 is out of range"),
        ({"fabric": "infiniban"}, "did you mean 'infiniband'?"),
        ({"cost_of_capital_rate": 2}, "field 'cost_of_capital_rate': 2 is out of range"),
        ({"servers": 1.5}, "field 'servers': 1.5 is not a whole number"),
        ({"gpu_name": "H10"}, "field 'gpu_name'"),
        ({"servers": {"a": 1}}, "is a table"),
    ],
)
def test_bad_config_values_name_the_field(data: dict[str, object], message: str) -> None:
    with pytest.raises(OnPremConfigError) as caught:
        tco.config_from_mapping(data, "site.toml")
    assert message in str(caught.value) and "site.toml" in str(caught.value)


def test_a_copy_keeps_what_was_set_and_what_was_defaulted() -> None:
    config = OnPremConfig(servers=2, pue=1.2)
    moved = config.with_utilization(0.5).with_servers(3)
    assert (moved.servers, moved.pue, moved.utilization) == (3, 1.2, 0.5)
    assert "capex_usd_per_server" not in moved.model_fields_set
