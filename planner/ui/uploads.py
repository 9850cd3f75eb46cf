"""Uploaded result files: validate every file first, then save them all or none.

The checks are benchmarks.intake's (the same as `gpuplan bench add`): size limit,
bounded JSON, the BenchmarkResult schema and its id pattern, figures within the GPU's
datasheet peaks (planner.io.result_physics), writes that stay inside the results
folder, and a different result with the same id never overwritten.

Streamlit refuses larger uploads before they reach memory: MAX_UPLOAD_MB, the intake's
MAX_RESULT_BYTES in Streamlit's megabytes (server.maxUploadSize and file_uploader's
max_upload_size count 1024 x 1024 bytes to one), rounded up to a whole one.
"""

from __future__ import annotations

import math

from benchmarks.intake import CheckedFile, already_saved, check_content, conflicts, save_all
from benchmarks.result_checks import add_result_check
from benchmarks.safe_paths import MAX_RESULT_BYTES
from planner.io.result_physics import physics_problem

STREAMLIT_MB = 1024 * 1024  # bytes in Streamlit's upload megabyte
MAX_UPLOAD_MB = math.ceil(MAX_RESULT_BYTES / STREAMLIT_MB)  # 2 for the 2 MiB result limit

add_result_check(physics_problem)  # an upload above its GPU's datasheet peak is refused
check_upload = check_content


def limit_text() -> str:
    """The per-file upload limit in words: '2 MiB (2,097,152 bytes)'."""
    return f"{MAX_RESULT_BYTES / STREAMLIT_MB:g} MiB ({MAX_RESULT_BYTES:,} bytes)"


__all__ = [
    "MAX_RESULT_BYTES",
    "MAX_UPLOAD_MB",
    "CheckedFile",
    "already_saved",
    "check_upload",
    "conflicts",
    "limit_text",
    "save_all",
]
