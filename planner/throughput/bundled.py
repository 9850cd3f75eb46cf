"""The tables a plan reads from files (GPU offers, CPU offers, published results), kept on
disk already parsed and validated, keyed by the content of the files they come from.

Reading and validating the price snapshots and the published figures is most of what a
first plan does besides importing pandas. Each table is stored by planner.throughput
.disk_cache under the SHA-256 of its files' bytes and of the code that reads and checks
them, so a table is validated once per content: an edited or tampered file (a negative
price, a row cut short) has another digest, is read afresh and refused as pricing.catalog
refuses it. The package's seed (planner/data/fitted, tools/build_fitted_seed.py) holds the
bundled files' tables, so a first run after install parses none of them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pandas as pd

from planner.throughput import disk_cache

_PACKAGES = Path(__file__).resolve().parents[2]
# The modules that read and check each table: an edit to one is a new table.
OFFER_CODE = ("pricing/catalog.py", "pricing/tiers.py", "pricing/gpus.py")
CPU_OFFER_CODE = ("pricing/catalog.py", "pricing/cpu_offers.py")
PUBLISHED_CODE = ("benchmarks/published/__init__.py", "benchmarks/results.py")


@dataclass(frozen=True)
class _Table:
    """One table as one picklable value for the disk cache."""

    frame: pd.DataFrame


def files_digest(files: Iterable[Path], code: Iterable[str] = ()) -> str:
    """SHA-256 of each file's name and bytes (a missing one counts as missing) and of the
    package modules `code` (paths under the repository root)."""
    h = hashlib.sha256()
    for path in [*files, *(_PACKAGES / name for name in code)]:
        h.update(f"\0{path.name}\0".encode())
        try:
            h.update(path.read_bytes())
        except OSError:
            h.update(b"\0missing")
    return h.hexdigest()


def cached_table(kind: str, digest: str, read: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """The table of (kind, digest) from the disk cache, else read() (which raises on a bad
    file, nothing stored) stored for next time."""
    return disk_cache.load_or_build(kind, digest, _Table, lambda: _Table(read())).frame


def load_offers() -> pd.DataFrame:
    """pricing.catalog.load_offers() (the manifest in use), cached by its files."""
    from pricing import catalog

    infos = catalog.read_manifest()
    manifests = sorted({info.path.parent / catalog.MANIFEST_NAME for info in infos})
    files = [*manifests, *(info.path for info in infos)]
    return cached_table("offers", files_digest(files, OFFER_CODE), catalog.load_offers).copy()


def load_cpu_offers() -> pd.DataFrame:
    """pricing.cpu_offers.load_cpu_offers() (the bundled CPU catalog), cached by its files
    (and in this process, as pricing.cpu_offers keeps the bundled catalog)."""
    return _bundled_cpu_offers().copy()


def cpu_offers_digest() -> str:
    """disk_cache.frame_digest of the bundled CPU catalog, computed once with it."""
    return _cpu_offers_digest(id(_bundled_cpu_offers()))


@lru_cache(maxsize=1)
def _cpu_offers_digest(_catalog_id: int) -> str:
    return disk_cache.frame_digest(_bundled_cpu_offers())


def clear_caches() -> None:
    """Forget the CPU catalog kept in this process (the disk cache stays)."""
    _bundled_cpu_offers.cache_clear()
    _cpu_offers_digest.cache_clear()


@lru_cache(maxsize=1)
def _bundled_cpu_offers() -> pd.DataFrame:
    from pricing import catalog, cpu_offers

    folder = cpu_offers.bundled_cpu_dir()
    infos = catalog.read_manifest(folder)
    files = [folder / catalog.MANIFEST_NAME, *(info.path for info in infos)]
    digest = files_digest(files, CPU_OFFER_CODE)
    return cached_table("cpu-offers", digest, cpu_offers.load_cpu_offers)


def published_results() -> pd.DataFrame:
    """benchmarks.published.published_frame() with each row's `benchmark_version`, cached
    by the published CSV."""
    from benchmarks.published import published_csv_path, published_frame, read_published_table

    def read() -> pd.DataFrame:
        versions = read_published_table().set_index("id")["benchmark_version"]
        frame = published_frame()
        return frame.assign(benchmark_version=frame["id"].map(versions))

    digest = files_digest([published_csv_path()], PUBLISHED_CODE)
    return cached_table("published", digest, read).copy()
