"""Uploaded result files: validate every file first, then save them all or none.

The checks are benchmarks.intake's (the same as `gpuplan bench add`): size limit,
bounded JSON, the BenchmarkResult schema and its id pattern, writes that stay inside
the results folder, and a different result with the same id never overwritten.
"""

from __future__ import annotations

from benchmarks.intake import CheckedFile, already_saved, check_content, conflicts, save_all

check_upload = check_content

__all__ = ["CheckedFile", "already_saved", "check_upload", "conflicts", "save_all"]
