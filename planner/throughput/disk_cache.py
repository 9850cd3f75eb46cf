"""Fitted models kept on disk between runs, keyed by what they were fitted from.

A cold `gpuplan plan` would otherwise re-fit the scaling laws and the spec regression
(seconds) from data that only changes when the user's own results do. Each value is
stored in one file named by the SHA-256 of its key: the inputs' content digest, the
value's kind, the package version and a digest of the code and spec table that fit it
(so an edited fitting module never reads a stale model).

Folder: $GPUPLAN_CACHE_DIR, else $XDG_CACHE_HOME/gpuplan, else ~/.cache/gpuplan (the XDG
Base Directory Specification). Behind it, read-only, the package's own folder of values
fitted from the bundled data when the package was built (planner/data/fitted, written by
`make fitted`): a first run after install reads those instead of fitting. A file is read
only when its header names the expected key; anything unreadable, foreign or of another
type is ignored and rebuilt, and a folder that cannot be written only costs the re-fit.
Files are written to a temporary name and renamed, so readers never see half a file. The
files are zlib-compressed pickles: like any file in the user's own cache folder (or the
installed package) they are trusted as much as that folder is.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import TypeVar

import pandas as pd

T = TypeVar("T")
MAGIC = b"gpuplan-cache 2\n"
# Values fitted from the bundled data at build time (tools/build_fitted_seed.py).
SEED_DIR = Path(__file__).resolve().parents[1] / "data" / "fitted"
# Files whose content decides a fitted model besides its inputs.
_CODE_FILES = (
    "throughput/offers.py",
    "throughput/step_model.py",
    "throughput/estimate.py",
    "throughput/scaling.py",
    "throughput/spec_model.py",
    "throughput/roofline.py",
    "throughput/run_spread.py",
    "throughput/siblings.py",
    "throughput/disk_cache.py",
    "machines/specs.py",
    "workloads/catalog.py",
    "data/gpu_specs.csv",
)


_fitting_into: Path | None = None  # set by fitting_into(): the only folder read or written


@contextmanager
def fitting_into(folder: Path) -> Iterator[Path]:
    """While inside, values are read from and stored in `folder` only: neither the user's
    cache nor the package's fitted folder is read, so everything is fitted afresh (how
    tools/build_fitted_seed.py builds planner/data/fitted)."""
    global _fitting_into
    saved, _fitting_into = _fitting_into, folder
    try:
        yield folder
    finally:
        _fitting_into = saved


def cache_dir() -> Path:
    """$GPUPLAN_CACHE_DIR, else $XDG_CACHE_HOME/gpuplan, else ~/.cache/gpuplan."""
    if _fitting_into is not None:
        return _fitting_into
    explicit = os.environ.get("GPUPLAN_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "gpuplan"


def frame_digest(frame: pd.DataFrame) -> str:
    """SHA-256 of a table's columns and row values (row order matters)."""
    h = hashlib.sha256(repr(list(frame.columns)).encode())
    if len(frame):
        values = pd.util.hash_pandas_object(frame, index=False).to_numpy()
        h.update(values.tobytes())
    return h.hexdigest()


@lru_cache(maxsize=1)
def code_digest() -> str:
    """SHA-256 of the package version, the fitting code and spec table, and the major
    versions of the libraries whose objects the pickles hold (numpy, pandas)."""
    import numpy as np

    from edge.version import VERSION

    libraries = f"numpy {np.__version__.split('.')[0]} pandas {pd.__version__.split('.')[0]}"
    h = hashlib.sha256(f"{VERSION}\0{libraries}".encode())
    root = Path(__file__).resolve().parents[1]
    for name in _CODE_FILES:
        try:
            h.update((root / name).read_bytes())
        except OSError:
            h.update(name.encode())
    return h.hexdigest()


def _key(kind: str, digest: str) -> str:
    return hashlib.sha256(f"{kind}\0{digest}\0{code_digest()}".encode()).hexdigest()


def file_name(kind: str, digest: str) -> str:
    """The name of the file that holds the value for (kind, digest)."""
    return f"{_key(kind, digest)}.pkl"


def load(kind: str, digest: str, expected: type[T]) -> T | None:
    """The stored value for (kind, digest) from the user's cache, else from the package's
    fitted folder; None when absent, corrupt or foreign in both."""
    key = _key(kind, digest)
    folders = (_fitting_into,) if _fitting_into is not None else (cache_dir(), SEED_DIR)
    for folder in folders:
        value = _read(folder / f"{key}.pkl", key)
        if isinstance(value, expected):
            return value
    return None


def _read(path: Path, key: str) -> object | None:
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    header = MAGIC + key.encode() + b"\n"
    if not blob.startswith(header):
        return None
    try:
        return pickle.loads(zlib.decompress(blob[len(header) :]))
    except Exception:
        return None


def store(kind: str, digest: str, value: object) -> None:
    """Write the value for (kind, digest) atomically; an unwritable folder is a no-op."""
    key = _key(kind, digest)
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{key[:12]}-", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(MAGIC + key.encode() + b"\n")
                out.write(zlib.compress(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)))
            os.replace(tmp, folder / f"{key}.pkl")
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except (OSError, pickle.PicklingError):
        return


def load_or_build(kind: str, digest: str, expected: type[T], build: Callable[[], T]) -> T:
    """The stored value for (kind, digest), else build() stored for next time."""
    hit = load(kind, digest, expected)
    if hit is not None:
        return hit
    value = build()
    store(kind, digest, value)
    return value
