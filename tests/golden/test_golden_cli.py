"""Golden outputs of the `gpuplan` CLI: every figure it prints now, kept as it is.

Each case in tools/golden_cases.py is run as a subprocess in an isolated environment
(a fresh temporary HOME and XDG folders, empty GPUPLAN_RESULTS_DIR, GPUPLAN_SNAPSHOT_DIR,
GPUPLAN_SWEEP_DIR and GPUPLAN_CACHE_DIR, price-source URLs pointed at a closed local port,
cloud metadata lookups off, COLUMNS=200, TZ=UTC, NO_COLOR=1, one BLAS thread) and its
output compared with the recording under tests/golden/data:

* JSON (--format json): parsed and compared structurally (same keys in the same order,
  same list lengths); numbers (not booleans) at a relative tolerance of 1e-6, NaN equal to
  NaN; everything else exactly;
* CSV (--format csv): parsed with the csv module; cells that read as numbers compared at a
  relative tolerance of 1e-6, other cells (the header included) exactly;
* tables (txt): exactly;
* stderr (<name>.stderr.txt, or nothing where there is no such file): exactly, except that
  runs of white space, line breaks included, count as one space, since the console wraps
  stderr at the terminal width.

Before recording and before comparing, paths and the age of prices are normalised: the
repository root reads `<REPO>`, the temporary home `<TMP>`, `"age_days": 548` reads
`"age_days": "<N>"` and `at most 548 d` reads `at most <N> d`; a table line cut at the
terminal width (ending in `…`) is cut right after its first age. The regexes are in
tools/golden_cases.py (`normalise`).

A failure names the first differing JSON path, CSV row and column, or line, with both
values. If the change is intended, record the new outputs with
`python tools/update_golden.py` (or `python tools/update_golden.py NAME`) and review
`git diff tests/golden/data`.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest

from tools.golden_cases import CASES, DATA, INPUTS, REGENERATE, Case, Output, run_case

# A refit moves a fitted throughput by ~1e-8 and a band edge by a few 1e-6 between numpy /
# scipy releases (an optimizer stops at its tolerance); a real change moves them far more.
REL_TOL = 1e-5
# Commands run at once; each is one single-threaded Python process.
JOBS = 2
_NUMBER = re.compile(
    r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:nan|inf|infinity)", re.IGNORECASE
)


@pytest.fixture(scope="module")
def outputs(request: pytest.FixtureRequest) -> Iterator[dict[str, Future[Output]]]:
    """Every selected case started at once (JOBS at a time); each test waits for its own."""
    selected = [
        item.callspec.params["case"]
        for item in request.session.items
        if item.module is request.module
        and hasattr(item, "callspec")
        and "case" in item.callspec.params
    ]
    pool = ThreadPoolExecutor(max_workers=JOBS)
    try:
        yield {case.name: pool.submit(run_case, case) for case in selected}
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_output_matches_the_recording(
    case: Case,
    outputs: dict[str, Future[Output]],
    record_property: Any,
) -> None:
    out = outputs[case.name].result()
    record_property("command_seconds", round(out.seconds, 3))
    assert out.returncode == 0, (
        f"`{case.command_line}` exited {out.returncode}\nstderr:\n{out.stderr}"
    )
    assert case.stdout_file.is_file(), (
        f"no recording {case.stdout_file.name} for `{case.command_line}`; "
        f"record it with `{REGENERATE} {case.name}`"
    )
    recorded = case.stdout_file.read_text(encoding="utf-8")
    difference = first_difference(case.fmt, recorded, out.stdout)
    if difference is not None:
        pytest.fail(_message(case, case.stdout_file.name, difference), pytrace=False)

    recorded_err = (
        case.stderr_file.read_text(encoding="utf-8") if case.stderr_file.is_file() else ""
    )
    difference = stderr_difference(recorded_err, out.stderr)
    if difference is not None:
        pytest.fail(_message(case, case.stderr_file.name, difference), pytrace=False)


def test_every_recording_belongs_to_a_case() -> None:
    expected = {p.name for case in CASES for p in (case.stdout_file, case.stderr_file)}
    orphans = sorted(p.name for p in DATA.iterdir() if p.is_file() and p.name not in expected)
    assert not orphans, (
        f"recorded files no case writes: {', '.join(orphans)}; "
        f"`{REGENERATE}` (every case) removes them"
    )
    assert sorted(p.name for p in INPUTS.iterdir()) == [
        "estimate-llm-queries.csv",
        "estimate-queries.csv",
    ]


def _message(case: Case, filename: str, difference: str) -> str:
    return (
        f"`{case.command_line}` no longer prints what {filename} recorded:\n"
        f"  {difference}\n"
        f"If this change is intended, record the new output with "
        f"`{REGENERATE} {case.name}` (or `{REGENERATE}` for every case) "
        f"and review `git diff tests/golden/data`."
    )


def first_difference(fmt: str, recorded: str, actual: str) -> str | None:
    """Where `actual` first differs from `recorded`, in words; None if they agree."""
    if fmt == "json":
        try:
            now = json.loads(actual)
        except json.JSONDecodeError as exc:
            return f"output is no longer valid JSON ({exc}); it starts {actual[:200]!r}"
        return json_difference(json.loads(recorded), now, "$")
    if fmt == "csv":
        return csv_difference(recorded, actual)
    return text_difference(recorded, actual)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def numbers_agree(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or math.isclose(a, b, rel_tol=REL_TOL, abs_tol=0.0)


def json_difference(recorded: Any, actual: Any, path: str) -> str | None:
    """The first JSON path where the values differ, with both values."""
    if _is_number(recorded) and _is_number(actual):
        if numbers_agree(float(recorded), float(actual)):
            return None
        return f"{path}: recorded {recorded!r}, now {actual!r} (relative tolerance {REL_TOL})"
    if isinstance(recorded, dict) and isinstance(actual, dict):
        if list(recorded) != list(actual):
            missing = [k for k in recorded if k not in actual]
            extra = [k for k in actual if k not in recorded]
            if missing or extra:
                return f"{path}: keys missing now {missing}, keys new now {extra}"
            return f"{path}: keys in another order: recorded {list(recorded)}, now {list(actual)}"
        for key, value in recorded.items():
            found = json_difference(value, actual[key], f"{path}.{key}")
            if found is not None:
                return found
        return None
    if isinstance(recorded, list) and isinstance(actual, list):
        for index, (old, new) in enumerate(zip(recorded, actual, strict=False)):
            found = json_difference(old, new, f"{path}[{index}]")
            if found is not None:
                return found
        if len(recorded) != len(actual):
            return f"{path}: recorded {len(recorded)} items, now {len(actual)}"
        return None
    if type(recorded) is not type(actual) or recorded != actual:
        return f"{path}: recorded {recorded!r}, now {actual!r}"
    return None


def _cells_agree(old: str, new: str) -> bool:
    if old == new:
        return True
    if _NUMBER.fullmatch(old) and _NUMBER.fullmatch(new):
        return numbers_agree(float(old), float(new))
    return False


def csv_difference(recorded: str, actual: str) -> str | None:
    """The first CSV row and column where the cells differ, with both cells."""
    old_rows = list(csv.reader(io.StringIO(recorded)))
    new_rows = list(csv.reader(io.StringIO(actual)))
    header = old_rows[0] if old_rows else []
    for index, (old, new) in enumerate(zip(old_rows, new_rows, strict=False)):
        where = "header" if index == 0 else f"row {index} (line {index + 1})"
        for column, (a, b) in enumerate(zip(old, new, strict=False)):
            if not _cells_agree(a, b):
                name = header[column] if column < len(header) else f"#{column + 1}"
                return f"{where}, column {name!r}: recorded {a!r}, now {b!r}"
        if len(old) != len(new):
            return f"{where}: recorded {len(old)} cells, now {len(new)} ({old} / {new})"
    if len(old_rows) != len(new_rows):
        return f"recorded {len(old_rows)} rows (header included), now {len(new_rows)}"
    return None


def text_difference(recorded: str, actual: str) -> str | None:
    """The first line that differs, with both lines."""
    if recorded == actual:
        return None
    old_lines, new_lines = recorded.split("\n"), actual.split("\n")
    for number, (a, b) in enumerate(zip(old_lines, new_lines, strict=False), start=1):
        if a != b:
            return f"line {number}: recorded {a!r}, now {b!r}"
    return f"recorded {len(old_lines)} lines, now {len(new_lines)}"


def stderr_difference(recorded: str, actual: str) -> str | None:
    """The first word of stderr that differs (line breaks and runs of spaces are one space),
    with a few words around it."""
    old_words, new_words = recorded.split(), actual.split()
    if old_words == new_words:
        return None
    at = next(
        (i for i, (a, b) in enumerate(zip(old_words, new_words, strict=False)) if a != b),
        min(len(old_words), len(new_words)),
    )
    start = max(0, at - 8)
    old = " ".join(old_words[start : at + 8]) or "(nothing)"
    new = " ".join(new_words[start : at + 8]) or "(nothing)"
    return f"stderr, word {at + 1}: recorded {old!r}, now {new!r}"
