"""Checks of a valid result beyond its schema, added by the program that reads it.

A result's figures are held to its GPU's datasheet peaks where the planner reads them
(planner.io.result_physics); benchmarks must not import the planner, so the gpuplan
command line and the app add that check here and benchmarks.intake (`bench add`, the
app's upload, a sweep's intake) applies every check added. Light: no imports, so the
command line can add its check without loading anything.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Each takes a valid BenchmarkResult and returns why it cannot be kept (naming the
# field and the bound), or None.
ResultCheck = Callable[[Any], "str | None"]
_CHECKS: list[ResultCheck] = []


def add_result_check(check: ResultCheck) -> None:
    """Apply `check` to every result benchmarks.intake checks from now on (added once)."""
    if check not in _CHECKS:
        _CHECKS.append(check)


def result_problem(result: Any) -> str | None:
    """The first added check's objection to `result`, or None when every check passes."""
    for check in _CHECKS:
        problem = check(result)
        if problem:
            return problem
    return None
