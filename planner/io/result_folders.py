"""The user's result folders, read and checked: valid results within their GPU's peaks."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from benchmarks.results import BenchmarkResult


def folder_results(directory: str) -> tuple[list[BenchmarkResult], list[str]]:
    """The valid results of a folder that are within their GPU's peaks
    (benchmarks.results.load_results, planner.io.result_physics.split_physical), and one
    message per file left out. A missing or empty folder loads no result schema."""
    from benchmarks.safe_paths import walk_files

    folder = Path(directory)
    if not folder.exists() or (folder.is_dir() and walk_files(folder, ".json") == ([], [])):
        return [], []
    from benchmarks.results import load_results
    from planner.io.result_physics import split_physical

    loaded, bad = load_results(directory)
    kept, impossible = split_physical(loaded, directory)
    return kept, bad + impossible
