"""On-prem TCO: amortized cost by hand, break-even, sensitivity, config loading."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from planner.onprem import tco
from planner.onprem.tco import OnPremConfig, OnPremConfigError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "onprem-dgx-h100.toml"

TINY = OnPremConfig(
    name="tiny",
    gpu_name="A100-SXM-80GB",
    servers=2,
    gpus_per_server=4,
    capex_usd_per_server=100_000,
    extra_capex_usd=20_000,
    lifetime_years=4,
    power_kw_per_server=3.0,
    idle_power_fraction=1.0,
    pue=1.5,
    usd_per_kwh=0.10,
    colocation_usd_per_kw_month=200,
    facility_usd_per_year=1_000,
    staff_usd_per_year=5_000,
    maintenance_fraction_per_year=0.10,
    utilization=0.5,
)
# By hand: capex 220,000 / 4 = 55,000; maintenance 22,000; energy 6 kW x 8760 x 1.5 x 0.10 =
# 7,884; colocation 6 kW x 200 x 12 = 14,400; facility 1,000; staff 5,000 -> 105,284 per year
# over 8 GPUs x 8760 h x 0.5 = 35,040 GPU-hours.
TINY_TOTAL = 55_000 + 22_000 + 7_884 + 14_400 + 1_000 + 5_000
TINY_GPU_HOURS = 8 * 8760 * 0.5


def test_amortized_cost_by_hand() -> None:
    assert TINY_TOTAL == 105_284
    assert float(tco.amortized_usd_per_gpu_hour(TINY)) == pytest.approx(TINY_TOTAL / TINY_GPU_HOURS)
    costs = tco.annual_costs(TINY).iloc[0]
    expected = {
        "capex": 55_000,
        "maintenance": 22_000,
        "energy": 7_884,
        "colocation": 14_400,
        "facility": 1_000,
        "staff": 5_000,
    }
    for component, usd in expected.items():
        assert costs[f"{component}_usd_per_year"] == pytest.approx(usd)
    assert costs["gpu_hours_per_year"] == TINY_GPU_HOURS


def test_idle_power_fraction_scales_only_the_energy() -> None:
    half_idle = OnPremConfig(**{**TINY.__dict__, "idle_power_fraction": 0.25})
    costs = tco.annual_costs(half_idle).iloc[0]
    assert costs["energy_usd_per_year"] == pytest.approx(7_884 * (0.25 + 0.75 * 0.5))
    assert costs["variable_usd_per_year"] == pytest.approx(7_884 * 0.75)
    assert costs["fixed_usd_per_year"] + 0.5 * costs["variable_usd_per_year"] == pytest.approx(
        costs["total_usd_per_year"]
    )


def test_breakdown_adds_up_to_the_total() -> None:
    frame = tco.cost_breakdown(TINY)
    parts = frame.loc[frame["component"] != "total"]
    total = frame.loc[frame["component"] == "total"].iloc[0]
    assert list(parts["component"]) == list(tco.COMPONENTS)
    assert parts["usd_per_year"].sum() == pytest.approx(total["usd_per_year"])
    assert parts["usd_per_gpu_hour"].sum() == pytest.approx(TINY_TOTAL / TINY_GPU_HOURS)
    assert parts["share"].sum() == pytest.approx(1.0)
    assert "$220,000 / 4 years" in parts.iloc[0]["basis"]


def test_amortized_cost_is_vectorized_over_utilization_and_configs() -> None:
    u = np.array([0.25, 0.5, 1.0])
    values = tco.amortized_usd_per_gpu_hour(TINY, u)
    assert values.shape == (3,)
    # Every cost is fixed (idle_power_fraction = 1): cost per GPU-hour is inversely
    # proportional to utilization.
    np.testing.assert_allclose(values * u, TINY_TOTAL / (8 * 8760))
    params = TINY.params()
    params["usd_per_kwh"] = np.array([0.05, 0.10, 0.20])
    many = tco.amortized_usd_per_gpu_hour(params)
    one_by_one = [
        float(tco.amortized_usd_per_gpu_hour(OnPremConfig(**{**TINY.__dict__, "usd_per_kwh": p})))
        for p in (0.05, 0.10, 0.20)
    ]
    np.testing.assert_allclose(many, one_by_one, rtol=1e-15)


@pytest.mark.parametrize("idle", [1.0, 0.3])
def test_break_even_utilization_makes_the_costs_equal(idle: float) -> None:
    config = OnPremConfig(**{**TINY.__dict__, "idle_power_fraction": idle})
    prices = np.array([3.0, 4.0, 8.0, 20.0])
    u_star = tco.break_even_utilization(config, prices)
    assert np.all((u_star > 0) & (u_star <= 1))
    np.testing.assert_allclose(tco.amortized_usd_per_gpu_hour(config, u_star), prices, rtol=1e-12)
    # Above the break-even on-prem is cheaper, below it the cloud is.
    assert np.all(tco.amortized_usd_per_gpu_hour(config, np.minimum(u_star * 1.1, 1)) < prices)
    assert np.all(tco.amortized_usd_per_gpu_hour(config, u_star * 0.9) > prices)


def test_break_even_utilization_out_of_reach() -> None:
    full_use = float(tco.amortized_usd_per_gpu_hour(TINY, 1.0))
    u_star = tco.break_even_utilization(TINY, [full_use * 0.8])
    assert u_star[0] == pytest.approx(1.25)  # needs 125%: never cheaper
    idle = OnPremConfig(**{**TINY.__dict__, "idle_power_fraction": 0.0})
    energy_per_gpu_hour = 7_884 / (8 * 8760)
    assert np.isinf(tco.break_even_utilization(idle, [energy_per_gpu_hour * 0.9]))[0]


def test_break_even_months_with_a_crossing() -> None:
    demand = 8 * 730 * 0.5  # half the capacity
    price = 6.0
    months = float(tco.break_even_months(TINY, [price], demand)[0])
    running = (TINY_TOTAL - 55_000) / 12  # all but depreciation; energy fixed at idle = 1
    assert months == pytest.approx(220_000 / (price * demand - running))
    # At the crossing, cumulative cloud spend equals capex + cumulative running cost.
    assert price * demand * months == pytest.approx(220_000 + running * months)


def test_break_even_months_never() -> None:
    demand = 8 * 730 * 0.5
    running = (TINY_TOTAL - 55_000) / 12
    cheap = running / demand * 0.99  # cloud bill below the running cost alone
    months = tco.break_even_months(TINY, [cheap, 6.0], demand)
    assert np.isinf(months[0]) and np.isfinite(months[1])
    frame = tco.compare_with_cloud(TINY, pd.Series([cheap, 6.0], index=["a", "b"]), demand)
    assert list(frame.index) == ["a", "b"]
    assert "never pays back" in frame.loc["a", "break_even_note"]
    assert "pays back in" in frame.loc["b", "break_even_note"]


def test_break_even_months_checks_the_demand() -> None:
    with pytest.raises(OnPremConfigError, match=r"monthly_gpu_hours.*exceeds.*5,840"):
        tco.break_even_months(TINY, [5.0], 6_000)
    with pytest.raises(OnPremConfigError, match="monthly_gpu_hours"):
        tco.break_even_months(TINY, [5.0], 0)


def test_compare_with_cloud_defaults_the_demand_to_the_utilization() -> None:
    frame = tco.compare_with_cloud(TINY, pd.Series([1.0, 10.0]))
    assert frame["monthly_gpu_hours"].iloc[0] == pytest.approx(8 * 730 * 0.5)
    assert frame["cheaper"].tolist() == ["cloud", "on-prem"]
    assert "never cheaper" in frame["break_even_note"].iloc[0]


def test_sensitivity_moves_each_input_by_the_fraction() -> None:
    frame = tco.sensitivity(TINY, 0.2).set_index("field")
    base = TINY_TOTAL / TINY_GPU_HOURS
    np.testing.assert_allclose(frame["base_usd_per_gpu_hour"], base)
    capex = frame.loc["capex_usd_per_server"]
    assert capex["low_value"] == pytest.approx(80_000)
    assert capex["high_value"] == pytest.approx(120_000)
    # Capex per server moves depreciation and maintenance (200,000 of the 220,000 capex).
    per_year = 0.2 * 200_000 * (1 / 4 + 0.10)
    assert capex["high_usd_per_gpu_hour"] - base == pytest.approx(per_year / TINY_GPU_HOURS)
    kwh = frame.loc["usd_per_kwh"]
    assert kwh["swing_usd_per_gpu_hour"] == pytest.approx(2 * 0.2 * 7_884 / TINY_GPU_HOURS)
    swings = tco.sensitivity(TINY)["swing_usd_per_gpu_hour"]
    assert swings.is_monotonic_decreasing


def test_sensitivity_clips_to_valid_values() -> None:
    busy = OnPremConfig(**{**TINY.__dict__, "utilization": 0.9, "pue": 1.1})
    frame = tco.sensitivity(busy, 0.2).set_index("field")
    assert frame.loc["utilization", "high_value"] == 1.0
    assert frame.loc["pue", "low_value"] == 1.0
    with pytest.raises(ValueError, match="did you mean 'pue'"):
        tco.sensitivity(busy, fields=["puee"])
    with pytest.raises(ValueError, match="fraction"):
        tco.sensitivity(busy, 1.5)


def test_power_defaults_to_the_gpus_tdp_plus_host_overhead() -> None:
    dgx = OnPremConfig(gpu_name="H100", servers=1)
    assert dgx.gpu_name == "H100-SXM"
    assert dgx.server_power_kw == pytest.approx(8 * 0.700 * 1.34)
    assert 6.5 <= dgx.server_power_kw <= 8.5  # DGX H100 typical draw (reference/onprem-tco.md)
    assert "TDP-derived" in dgx.power_basis
    measured = OnPremConfig(power_kw_per_server=6.1)
    assert measured.server_power_kw == 6.1
    with pytest.raises(OnPremConfigError, match=r"power_kw_per_server.*no TDP for TPU-v5e"):
        OnPremConfig(gpu_name="TPU-v5e")
    assert OnPremConfig(gpu_name="TPU-v5e", power_kw_per_server=2.0).server_power_kw == 2.0


def test_defaults_carry_the_reference_figures() -> None:
    reference = (ROOT / "reference" / "onprem-tco.md").read_text()
    checks = {
        "capex_usd_per_server": ("$199,000", 199_000),
        "pue": ("1.58", 1.58),
        "colocation_usd_per_kw_month": ("$184.06", 184.06),
        "usd_per_kwh": ("11.94", 0.1194),
        "maintenance_fraction_per_year": ("≈20%", 0.20),
    }
    for field, (text, value) in checks.items():
        assert text in reference, text
        assert tco.DEFAULTS[field].value == pytest.approx(value)
        assert getattr(OnPremConfig(), field) == pytest.approx(value)
    frame = tco.defaults_frame()
    assert set(frame["field"]) == set(tco.CONFIG_KEYS)
    assert frame["source"].str.len().min() > 5


# ---------------------------------------------------------------- config loading


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "onprem.toml"
    path.write_text(text)
    return path


def test_example_config_loads_and_lists_its_defaults() -> None:
    loaded = tco.load_onprem_config(EXAMPLE)
    assert loaded.config.name == "dgx-h100-x4"
    assert loaded.config.gpus == 32
    assert set(loaded.defaulted) == {
        "power_kw_per_server",
        "host_overhead_fraction",
        "idle_power_fraction",
    }
    notes = loaded.defaulted_notes()
    assert any(n.startswith("power_kw_per_server = 7.50 kW") for n in notes)


def test_missing_keys_are_defaulted_and_listed(tmp_path: Path) -> None:
    loaded = tco.load_onprem_config(write(tmp_path, "servers = 2\nutilization = 0.9\n"))
    assert loaded.config.servers == 2
    assert loaded.config.capex_usd_per_server == tco.DEFAULTS["capex_usd_per_server"].value
    assert "servers" not in loaded.defaulted
    assert "capex_usd_per_server" in loaded.defaulted
    assert len(loaded.defaulted) == len(tco.CONFIG_KEYS) - 2


def test_unknown_key_names_the_closest_match(tmp_path: Path) -> None:
    path = write(tmp_path, "utilisation = 0.5\n")
    with pytest.raises(
        OnPremConfigError, match=r"unknown key 'utilisation'; did you mean 'utilization'"
    ):
        tco.load_onprem_config(path)


@pytest.mark.parametrize("value", ["0", "-0.1", "1.5"])
def test_utilization_out_of_range_names_the_field_and_range(tmp_path: Path, value: str) -> None:
    path = write(tmp_path, f"utilization = {value}\n")
    with pytest.raises(OnPremConfigError) as info:
        tco.load_onprem_config(path)
    message = str(info.value)
    assert str(path) in message
    assert "field 'utilization'" in message
    assert "> 0 and <= 1" in message
    assert info.value.field == "utilization"


@pytest.mark.parametrize(
    ("text", "field", "why"),
    [
        ("capex_usd_per_server = -5\n", "capex_usd_per_server", "> 0"),
        ("servers = 'four'\n", "servers", "not a number"),
        ("servers = 2.5\n", "servers", "not a whole number"),
        ("pue = true\n", "pue", "not a number"),
        ("pue = 0.9\n", "pue", ">= 1"),
        ("lifetime_years = 0\n", "lifetime_years", "> 0"),
        ("gpu_name = 'H10'\n", "gpu_name", "did you mean 'H100'"),
        ("[onprem]\nservers = 2\n", "onprem", "is a table"),
    ],
)
def test_bad_values_name_the_field(tmp_path: Path, text: str, field: str, why: str) -> None:
    with pytest.raises(OnPremConfigError) as info:
        tco.load_onprem_config(write(tmp_path, text))
    assert f"field {field!r}" in str(info.value) or f"{field!r}" in str(info.value)
    assert why in str(info.value)


def test_whole_floats_are_accepted_for_counts(tmp_path: Path) -> None:
    loaded = tco.load_onprem_config(write(tmp_path, "servers = 3.0\n"))
    assert loaded.config.servers == 3
    assert isinstance(loaded.config.servers, int)


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(OnPremConfigError, match="not valid TOML"):
        tco.load_onprem_config(write(tmp_path, "servers = [\n"))
    with pytest.raises(OnPremConfigError, match="no such file"):
        tco.load_onprem_config(tmp_path / "missing.toml")


def test_with_utilization_validates() -> None:
    assert TINY.with_utilization(0.25).utilization == 0.25
    for bad in (0.0, -0.1):
        with pytest.raises(OnPremConfigError, match="utilization"):
            TINY.with_utilization(bad)
    with pytest.raises(OnPremConfigError, match="utilization"):
        tco.amortized_usd_per_gpu_hour(TINY, [0.5, 0.0])


def test_tco_table_rows_and_columns() -> None:
    offers = pd.DataFrame(
        {
            "ref": ["x:r:a", "y:r:b"],
            "provider": ["x", "y"],
            "region": ["r", "r"],
            "instance_type": ["a", "b"],
            "gpu_name": ["A100-SXM-80GB"] * 2,
            "gpu_count": [8.0, 1.0],
            "pricing": ["on-demand"] * 2,
            "usd_per_gpu_hour": [1.0, 10.0],
            "priced_at": ["2025-01-01"] * 2,
            "source": ["test"] * 2,
        }
    )
    table = tco.tco_table(TINY, offers, source="tiny.toml")
    assert list(table.columns) == list(tco.TCO_COLUMNS)
    assert table["option"].tolist() == ["on-prem", "cloud", "cloud"]
    onprem = table.iloc[0]
    assert onprem["usd_per_gpu_hour"] == pytest.approx(TINY_TOTAL / TINY_GPU_HOURS)
    parts = [onprem[f"{c}_usd_per_gpu_hour"] for c in tco.COMPONENTS]
    assert sum(parts) == pytest.approx(onprem["usd_per_gpu_hour"])
    # $1/GPU-h is out of reach (NaN + note); $10 has a break-even below 1.
    assert math.isnan(table.iloc[1]["break_even_utilization"])
    assert "never cheaper" in table.iloc[1]["break_even_note"]
    assert table.iloc[2]["break_even_utilization"] == pytest.approx(
        float(tco.break_even_utilization(TINY, [10.0])[0])
    )
