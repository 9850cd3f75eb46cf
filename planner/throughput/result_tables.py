"""Result files as the results table the planner reads: the bundled samples kept in the
disk cache as a table (so a plan with no results of its own loads no result schema), and
results as a table with each one's benchmark version."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from planner.io.result_folders import folder_results
from planner.throughput import disk_cache
from planner.throughput.bundled import files_digest

if TYPE_CHECKING:
    import pandas as pd

    from benchmarks.results import BenchmarkResult

# The results-table column with each published figure's benchmark version (v0, v1, ...).
GENERATION_COLUMN = "generation"
# The modules that read and check a result file: an edit to one is a new sample table.
SAMPLE_CODE = (
    "benchmarks/results.py",
    "benchmarks/op_figures.py",
    "planner/io/result_physics.py",
    "planner/io/result_folders.py",
    "planner/throughput/result_tables.py",
)


@dataclass(frozen=True)
class _SampleTable:
    """The bundled samples' table as one picklable value for the disk cache."""

    frame: pd.DataFrame


def results_with_generation(results: Iterable[BenchmarkResult]) -> pd.DataFrame:
    """benchmarks.results.results_frame(results) with a `generation` column: each
    result's benchmark version (its env's benchmark_version), blank where it has none."""
    from benchmarks.results import results_frame

    results = list(results)
    frame = results_frame(results)
    by_id = {r.id: str((r.env or {}).get("benchmark_version") or "") for r in results}
    frame[GENERATION_COLUMN] = frame["id"].map(by_id).fillna("").astype(str)
    return frame


def sample_table(directory: str) -> tuple[pd.DataFrame, list[str]]:
    """The bundled samples' folder as a results table (results_with_generation of
    folder_results), and one message per file left out; kept in the disk cache by the
    files' bytes when none is left out (a message names the folder, which the digest does
    not)."""
    from benchmarks.safe_paths import walk_files

    paths, _ = walk_files(directory, ".json")
    digest = files_digest(paths, SAMPLE_CODE)
    stored = disk_cache.load("sample-table", digest, _SampleTable)
    if stored is not None:
        return stored.frame.copy(), []
    kept, problems = folder_results(directory)
    frame = results_with_generation(kept)
    if not problems:
        disk_cache.store("sample-table", digest, _SampleTable(frame))
    return frame, problems
