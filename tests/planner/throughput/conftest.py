"""Fixtures of the throughput tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from planner.throughput import offers


@pytest.fixture()
def empty_user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A new, empty user cache (the package's fitted seed still behind it), nothing kept
    in this process before or after."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("GPUPLAN_CACHE_DIR", str(folder))
    offers.clear_caches()
    yield folder
    offers.clear_caches()
