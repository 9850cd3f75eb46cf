"""A per-row lookup done once per distinct row: offer tables have thousands of rows and a
handful of providers and instance types, so a Python function of (provider, instance type)
is called a few dozen times, not once a row.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd


def per_distinct(value: Callable[..., Any], *columns: pd.Series) -> np.ndarray:
    """`value(*row)` for each row of the aligned `columns`, called once per distinct row:
    an object array in row order. Missing values are passed as NaN."""
    if not columns:
        raise ValueError("per_distinct needs at least one column")
    rows = len(columns[0])
    key = np.zeros(rows, dtype=np.int64)
    uniques = []
    for column in columns:
        codes, distinct = pd.factorize(column, use_na_sentinel=False)
        key = key * len(distinct) + codes
        uniques.append(distinct.tolist())
    found, inverse = np.unique(key, return_inverse=True)
    results = np.empty(len(found), dtype=object)
    for i, combined in enumerate(found.tolist()):
        row = []
        for distinct in reversed(uniques):
            combined, code = divmod(combined, len(distinct))
            row.append(distinct[code])
        results[i] = value(*reversed(row))
    return results[inverse.reshape(rows)]
