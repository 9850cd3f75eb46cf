"""Where results live by default: one small module, so commands that only need the folder's
name (plan, calibrate, sweeps) do not import the bench command's CLI."""

from __future__ import annotations

import os
from pathlib import Path


def default_results_dir() -> Path:
    """$GPUPLAN_RESULTS_DIR, else ./results."""
    return Path(os.environ.get("GPUPLAN_RESULTS_DIR", "results"))
