"""Wide-table cells are formatted by what their column holds."""

from __future__ import annotations

from edge.tables import wide_cell


def test_gpu_hours_are_an_amount_and_hours_a_duration() -> None:
    assert wide_cell("monthly_gpu_hours", 11688.0) == "11,688 GPU-h"  # was "487 d"
    assert wide_cell("hours_to_train", 48.0) != "48 GPU-h"
    assert wide_cell("usd_per_gpu_hour", 2.5).startswith("$")
