"""Fitted models kept on disk between runs, keyed by what they were fitted from.

A cold `gpuplan plan` would otherwise re-fit the scaling laws and the spec regression
(seconds) from data that only changes when the user's own results do. Each value is
stored in one file named by the SHA-256 of its key: the inputs' content digest, the
value's kind, the package version and a digest of the code and spec table that fit it
(so an edited fitting module never reads a stale model).

Folder: $GPUPLAN_CACHE_DIR, else $XDG_CACHE_HOME/gpuplan, else ~/.cache/gpuplan (the XDG
Base Directory Specification). A file is read only when its header names the expected
key; anything unreadable, foreign or of another type is ignored and rebuilt, and a
folder that cannot be written only costs the re-fit. Files are written to a temporary
name and renamed, so readers never see half a file. The files are pickles: like any
file in the user's own cache folder they are trusted as much as that folder is.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TypeVar

import pandas as pd

T = TypeVar("T")
MAGIC = b"gpuplan-cache 1\n"
# Files whose content decides a fitted model besides its inputs.
_CODE_FILES = (
    "throughput/offers.py",
    "throughput/step_model.py",
    "throughput/estimate.py",
    "throughput/scaling.py",
    "throughput/spec_model.py",
    "hardware.py",
    "data/gpu_specs.csv",
)


def cache_dir() -> Path:
    """$GPUPLAN_CACHE_DIR, else $XDG_CACHE_HOME/gpuplan, else ~/.cache/gpuplan."""
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
    """SHA-256 of the package version and the fitting code and spec table."""
    from importlib import metadata

    try:
        version = metadata.version("gpuplan")
    except metadata.PackageNotFoundError:
        version = "unknown"
    h = hashlib.sha256(version.encode())
    root = Path(__file__).resolve().parents[1]
    for name in _CODE_FILES:
        try:
            h.update((root / name).read_bytes())
        except OSError:
            h.update(name.encode())
    return h.hexdigest()


def _key(kind: str, digest: str) -> str:
    return hashlib.sha256(f"{kind}\0{digest}\0{code_digest()}".encode()).hexdigest()


def load(kind: str, digest: str, expected: type[T]) -> T | None:
    """The stored value for (kind, digest), or None when absent, corrupt or foreign."""
    key = _key(kind, digest)
    path = cache_dir() / f"{key}.pkl"
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    header = MAGIC + key.encode() + b"\n"
    if not blob.startswith(header):
        return None
    try:
        value = pickle.loads(blob[len(header) :])
    except Exception:
        return None
    return value if isinstance(value, expected) else None


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
                pickle.dump(value, out, protocol=pickle.HIGHEST_PROTOCOL)
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
