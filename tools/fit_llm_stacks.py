"""Fit the LLM stacks' parameters on the corpus and write planner/data/llm_stack_fit.csv.

    python tools/fit_llm_stacks.py [--check]

Fits planner.llm.stack_fit on every usable run of reference/calibration/
llm_training_throughput.csv and of gpuplan's own runs, reference/own_runs/
llm_training_throughput.csv (planner.llm.corpus.load_calibration), and leave-one-source-out (as
tools/evaluate_llm_corpus.py reports it) for each value's spread (10-90% over the folds
whose training runs include the stack), each stack's band (10-90% quantiles of its
held-out log(predicted / measured)) and the fp8 band (evaluate_llm_corpus.fp8_band_of). One
row per stack. --check compares the bundled file with a fresh fit and exits 1 when they differ
(the values rounded to 4 digits).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "tools"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from evaluate_llm_corpus import evaluate_llm_corpus, fp8_band_of, stack_bands  # noqa: E402

from planner.llm.stack_fit import POOLED_PARAMS, Fit  # noqa: E402
from planner.llm.stack_profiles import FIT_PATH  # noqa: E402

DIGITS = 4


def _spread(values: list[float]) -> tuple[float, float]:
    if not values:
        return float("nan"), float("nan")
    low, high = np.quantile(values, (0.10, 0.90))
    return float(low), float(high)


def fit_table(evaluated: dict[str, object] | None = None) -> pd.DataFrame:
    """The table tools/fit_llm_stacks.py writes (module docstring), from `evaluated`
    (evaluate_llm_corpus's result) where it is already at hand."""
    evaluated = evaluated or evaluate_llm_corpus()
    fit, folds, table = evaluated["fit"], evaluated["folds"], evaluated["runs"]
    assert isinstance(fit, Fit) and isinstance(folds, dict) and isinstance(table, pd.DataFrame)
    bands = stack_bands(table)
    fp8_band = fp8_band_of(table)
    rows = []
    for family, stack in sorted(fit.families.items()):
        row: dict[str, object] = {"framework": family, "attention_kernel": stack.attention_kernel}
        for name in POOLED_PARAMS:
            row[name] = getattr(stack, name)
            values = [
                getattr(f.families[family], name)
                for f in folds.values()
                if family in f.families and f.families[family].runs > 0
            ]
            row[f"{name}_p10"], row[f"{name}_p90"] = _spread(values)
        row["band_low"], row["band_high"] = bands.get(family, (np.nan, np.nan))
        row["fp8_band"] = fp8_band
        row["runs"] = stack.runs
        row["sources"] = "; ".join(sorted(set(table.loc[table["framework"] == family, "source"])))
        rows.append(row)
    out = pd.DataFrame(rows)
    numeric = out.select_dtypes("number").columns
    out[numeric] = out[numeric].round(DIGITS)
    return out


def write_atomically(table: pd.DataFrame, path: Path) -> None:
    """Write `table` as CSV to `path` through a temporary file in its folder."""
    handle, name = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    os.close(handle)
    try:
        table.to_csv(name, index=False)
        os.replace(name, path)
    finally:
        if os.path.exists(name):
            os.remove(name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    table = fit_table()
    if args.check:
        bundled = pd.read_csv(FIT_PATH)
        same = bundled.shape == table.shape and np.allclose(
            bundled.select_dtypes("number").to_numpy(float),
            table.select_dtypes("number").to_numpy(float),
            equal_nan=True,
            atol=10.0**-DIGITS,
        )
        print("bundled fit is current" if same else f"{FIT_PATH} differs from a fresh fit")
        sys.exit(0 if same else 1)
    write_atomically(table, FIT_PATH)
    print(table.to_string(index=False))
    print(f"wrote {FIT_PATH}")


if __name__ == "__main__":
    main()
