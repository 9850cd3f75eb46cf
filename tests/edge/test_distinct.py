"""per_distinct: the per-row answer, computed once per distinct row."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from edge.distinct import per_distinct


def test_each_row_gets_the_answer_for_its_own_values_in_row_order() -> None:
    provider = pd.Series(["aws", "gcp", "aws", "azure", "gcp"], dtype="string")
    size = pd.Series(["p5", "a3", "p4d", "nd", "a3"])
    calls: list[tuple[str, str]] = []

    def label(p: str, s: str) -> str:
        calls.append((p, s))
        return f"{p}/{s}"

    found = per_distinct(label, provider, size)
    assert list(found) == ["aws/p5", "gcp/a3", "aws/p4d", "azure/nd", "gcp/a3"]
    assert sorted(calls) == sorted(set(calls)) and len(calls) == 4


def test_tuples_stay_whole_and_missing_values_are_passed_as_nan() -> None:
    found = per_distinct(lambda v: (v, v), pd.Series([1.0, np.nan, 1.0]))
    assert found[0] == (1.0, 1.0) and found[2] == (1.0, 1.0)
    assert all(math.isnan(v) for v in found[1])


def test_an_empty_table_gives_an_empty_answer_and_no_column_is_refused() -> None:
    assert per_distinct(str, pd.Series([], dtype=object)).shape == (0,)
    with pytest.raises(ValueError, match="at least one column"):
        per_distinct(str)
