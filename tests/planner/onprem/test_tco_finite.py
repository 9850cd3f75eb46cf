"""Every valid on-prem input gives finite figures: a property test draws every numeric field
of the on-prem config (and the work, the cloud price trend) over its whole valid range,
its edges included, and asserts every figure `gpuplan tco` shows is finite."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from edge.spreadsheet import csv_text
from planner.cli.main import app
from planner.onprem.answer import tco_answer
from planner.onprem.compare import compared_offers
from planner.onprem.config import NUMBER_FIELDS, VALID_RANGES, OnPremConfig, OnPremConfigError
from planner.onprem.lines import capital_recovery_factor
from planner.render.tco_words import worded_tco
from pricing.catalog import load_offers

runner = CliRunner()
DRAWS = 200  # Monte Carlo draws per answer: the figures' finiteness does not need more


def edge_and_inside(field: str) -> st.SearchStrategy[float]:
    """The field's lowest and highest valid values and values spread (log-uniformly for
    wide ranges) between them."""
    low, low_ok, high, _, _ = VALID_RANGES[field]
    lowest = low if low_ok else math.nextafter(low, math.inf)
    if field in ("servers", "gpus_per_server"):
        least, most = int(max(lowest, 1)), int(high)
        return st.sampled_from([least, most]) | st.integers(least, most)
    inside = st.floats(min_value=lowest, max_value=high, allow_nan=False)
    if lowest > 0 and high / lowest > 1e3:
        exponents = st.floats(min_value=math.log10(lowest), max_value=math.log10(high))
        inside = exponents.map(lambda e: min(max(10.0**e, lowest), high))
    return st.sampled_from([lowest, high]) | inside


CONFIGS = st.fixed_dictionaries(
    {},
    optional={field: edge_and_inside(field) for field in NUMBER_FIELDS if field in VALID_RANGES},
)


@pytest.fixture(scope="module")
def offers() -> pd.DataFrame:
    return compared_offers(load_offers(), "H100-SXM", None, "on-demand", None)


def finite_everywhere(frame: pd.DataFrame) -> list[str]:
    """'column: value' for every infinite or overflowing number in `frame`."""
    bad = []
    for column in frame.columns:
        values = pd.to_numeric(frame[column], errors="coerce").to_numpy(float)
        bad += [f"{column}: {v}" for v in values[np.isinf(values)]]
    return bad


def cells_of(text: str) -> list[str]:
    return [c for row in csv.reader(io.StringIO(text)) for c in row]


def shown_cells(frame: pd.DataFrame) -> list[str]:
    return cells_of(csv_text(frame))


SLOW = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]


@settings(max_examples=30, deadline=None, suppress_health_check=SLOW)
@given(
    fields=CONFIGS,
    monthly=st.none() | st.floats(min_value=1e-9, max_value=1e9),
    trend=st.none() | st.sampled_from([-0.9, 1.0]) | st.floats(min_value=-0.9, max_value=1.0),
)
def test_every_valid_input_gives_finite_figures(
    offers: pd.DataFrame, fields: dict[str, Any], monthly: float | None, trend: float | None
) -> None:
    try:
        config = OnPremConfig(name="x", gpu_name="H100-SXM", **fields)
        answer = tco_answer(config, offers, monthly_gpu_hours=monthly, trend_per_year=trend,
                            draws=DRAWS)  # fmt: skip
    except OnPremConfigError as exc:
        # only the work may be refused (more servers than allowed), and in words
        assert exc.field == "monthly_gpu_hours", exc
        return
    assert finite_everywhere(answer.rows) == []
    assert finite_everywhere(answer.breakdown) == []
    assert np.all(np.isfinite(np.asarray(answer.band, float)))
    words = worded_tco(answer)
    assert finite_everywhere(words) == []
    cells = {c.lower() for c in shown_cells(words)}
    assert not cells & {"inf", "-inf", "nan", "$inf"}


@pytest.mark.parametrize("rate", [0.0, 1e-300, 1e-17, 1e-9, 0.08, 1.0])
@pytest.mark.parametrize("years", [1 / 12, 1e-3, 1.0, 5.0, 30.0])
def test_the_annuity_tends_to_straight_line_as_the_rate_tends_to_zero(
    rate: float, years: float
) -> None:
    factor = float(capital_recovery_factor(rate, years))
    plain = rate / (1 - (1 + rate) ** -years) if rate > 1e-6 else 1 / years
    assert math.isfinite(factor) and factor == pytest.approx(plain, rel=1e-6)
    assert factor >= 1 / years * (1 - 1e-12)  # financing never makes capital cheaper


@pytest.mark.parametrize(
    ("line", "flags", "refused"),
    [
        ("cost_of_capital_rate = 1e-17", [], ""),
        ("lifetime_years = 0.0834", [], ""),
        ("lifetime_years = 1e-9", [], "must be >= 0.0833333"),
        ("servers_per_fte = 1e-300", [], "must be >= 0.01"),
        ("", ["--monthly-gpu-hours", "1e12"], "--monthly-gpu-hours 1e+12: needs"),
        ("", ["--monthly-gpu-hours", "1e-9"], "--monthly-gpu-hours 1e-09: is"),
    ],
)
def test_tco_at_the_edges_shows_finite_figures_or_names_the_range(
    tmp_path: Path, line: str, flags: list[str], refused: str
) -> None:
    config = tmp_path / "c.toml"
    config.write_text(f'name = "x"\ngpu_name = "H100-SXM"\nservers = 4\n{line}\n')
    done = runner.invoke(app, ["tco", "-c", str(config), "--format", "csv", *flags])
    if refused:
        assert done.exit_code == 2 and refused in done.stderr, done.stderr
        return
    assert done.exit_code == 0, done.output
    shown = {c.lower() for c in cells_of(done.stdout)}
    assert not shown & {"inf", "-inf", "nan"}
    assert "RuntimeWarning" not in done.stderr
