"""A wheel of the running gpuplan, from any install, cached by version and content.

`local_wheel()` gives the path of `gpuplan-<version>-py3-none-any.whl` for the code that
is running now:

- From a source checkout (the folder above this package holds gpuplan's pyproject.toml):
  the sources are copied into a temporary folder (no build files left in the checkout,
  no stale build/ folder swept in) and built with `pip wheel --no-deps`. Without build
  isolation (no network) when this interpreter has the build backend the pyproject
  pins (`setuptools>=77`, which the PEP 639 `license` field needs); else with it, so
  that pip installs that backend into the build's own environment.
- From an installed distribution (a `pip install` of the wheel, no source tree): the
  wheel is rebuilt from the installed files that the distribution's RECORD lists
  (packages, data, METADATA, entry_points.txt, licenses), with a new RECORD of sha256
  digests (PEP 376/PEP 627, the binary distribution format of PEP 427/PEP 491). Scripts,
  byte code and the installer's own files (INSTALLER, REQUESTED, direct_url.json) are
  left out; pip writes them again where it installs.

Wheels are cached in CACHE/wheels/<version>-<content digest>/ (CACHE: $GPUPLAN_CACHE_DIR,
else $XDG_CACHE_HOME/gpuplan, else ~/.cache/gpuplan), the digest being sha256 over every
file that goes into the wheel, so a changed file builds a new wheel and an unchanged
install reuses the last one. Failures raise ShipError with the failing step's last
output lines.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.metadata
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.runners.remote_output import plain
from edge.version import VERSION

DIST_NAME = "gpuplan"
BACKEND_REQUIREMENT = "setuptools>=77"  # as [build-system] requires in pyproject.toml
BACKEND_MINIMUM = (77, 0)
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "NOTICE", "edge", "planner", "pricing",
           "benchmarks")  # fmt: skip
PACKAGES = ("edge", "planner", "pricing", "benchmarks")
BUILD_LIMIT_S = 600  # for one `pip wheel` (with isolation it downloads setuptools)
TAIL_LINES = 8  # output lines kept of a failed step
DIGEST_CHARS = 16  # of the content digest in the cache folder's name
# Files of an installed .dist-info that belong to that install, not to the wheel.
INSTALL_ONLY = ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json")
# pip's own lines around a backend's failure, which say nothing about the cause.
PIP_NOISE = re.compile(
    r"^\s*(note: This error originates|note: This is an issue with the package|hint: See above|"
    r"╰─>|[×│]|\[end of output\]|ERROR: Failed to build|ERROR: Failed building|"
    r"error: subprocess-exited-with-error|error: metadata-generation-failed|WARNING: Location)"
)
# A line that says what went wrong: "configuration error: ...", "ValueError: ...".
ERROR_LINE = re.compile(r"(?i)(?:^|\s)error\b|\b\w+(?:Error|Exception):")
MAX_ERROR_LINES = 3


class ShipError(RuntimeError):
    """A wheel of this gpuplan could not be built or rebuilt; the message says why."""


@dataclass(frozen=True)
class Wheel:
    """A built wheel: its file, gpuplan's version in it and the content digest."""

    path: Path
    version: str
    digest: str

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def sha256(self) -> str:
        """The wheel file's sha256, hex (to tell whether a machine has it already)."""
        return hashlib.sha256(self.path.read_bytes()).hexdigest()


def cache_dir() -> Path:
    """$GPUPLAN_CACHE_DIR, else $XDG_CACHE_HOME/gpuplan, else ~/.cache/gpuplan; /wheels."""
    base = os.environ.get("GPUPLAN_CACHE_DIR")
    if not base:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = str(Path(xdg) / "gpuplan") if xdg else str(Path.home() / ".cache" / "gpuplan")
    return Path(base) / "wheels"


def source_root() -> Path | None:
    """The source checkout this code runs from (its pyproject.toml names gpuplan), or None."""
    root = Path(__file__).resolve().parents[2]
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        return None
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None
    return root if project.get("name") == DIST_NAME else None


def local_wheel(cache: Path | None = None) -> Wheel:
    """The wheel of the running gpuplan, built (checkout) or rebuilt (install) once per
    version and content, then reused from `cache` (default cache_dir())."""
    cache = cache or cache_dir()
    root = source_root()
    if root is not None:
        version = VERSION  # the checkout's own (pyproject reads it from edge/version.py)
        files = dict(_checkout_files(root))
        digest = _digest(files)
        return _cached(cache, version, digest) or _build_from_checkout(root, cache, version, digest)
    dist = _running_distribution()
    version = dist.version
    files = dict(_installed_files(dist))
    digest = _digest(files)
    return _cached(cache, version, digest) or _rebuild(dist, files, cache, version, digest)


def _wheel_name(version: str) -> str:
    return f"{DIST_NAME}-{version}-py3-none-any.whl"


def _cached(cache: Path, version: str, digest: str) -> Wheel | None:
    path = cache / f"{version}-{digest}" / _wheel_name(version)
    return Wheel(path, version, digest) if path.is_file() else None


def _digest(files: dict[str, Path]) -> str:
    """sha256 over each file's name and bytes, in name order; its first DIGEST_CHARS."""
    total = hashlib.sha256()
    for name in sorted(files):
        total.update(name.encode() + b"\0")
        total.update(hashlib.sha256(files[name].read_bytes()).digest())
    return total.hexdigest()[:DIGEST_CHARS]


def _skipped(path: Path) -> bool:
    return "__pycache__" in path.parts or path.suffix in (".pyc", ".pyo")


def _checkout_files(root: Path) -> Iterator[tuple[str, Path]]:
    """Every file of SOURCES in the checkout (byte code left out)."""
    for name in SOURCES:
        path = root / name
        if path.is_file():
            yield name, path
        elif path.is_dir():
            for item in sorted(path.rglob("*")):
                if item.is_file() and not _skipped(item.relative_to(root)):
                    yield item.relative_to(root).as_posix(), item


def backend_ok() -> bool:
    """Whether this interpreter has setuptools >= BACKEND_MINIMUM (a build without isolation)."""
    try:
        version = importlib.metadata.version("setuptools")
    except importlib.metadata.PackageNotFoundError:
        return False
    parts = [int(p) for p in re.findall(r"\d+", version)[:2]]
    return tuple(parts + [0] * (2 - len(parts))) >= BACKEND_MINIMUM


def _tail(text: str, lines: int = TAIL_LINES) -> list[str]:
    """What a failed build said, made plain: its first lines that name an error (a
    backend's own "configuration error: ..." comes long before the end of its output),
    then its last lines, at most `lines` in all; pip's own framing left out."""
    kept = [plain(line.rstrip(), 300) for line in text.splitlines()]
    kept = [line for line in kept if line.strip() and not PIP_NOISE.match(line)]
    errors = [i for i, line in enumerate(kept) if ERROR_LINE.search(line)][:MAX_ERROR_LINES]
    last = list(range(max(0, len(kept) - (lines - len(errors))), len(kept)))
    chosen = sorted(set(errors) | set(last))
    shown: list[str] = []
    for n, i in enumerate(chosen):
        if n and i != chosen[n - 1] + 1:
            shown.append("…")
        shown.append(kept[i].strip())
    return shown


def _build_from_checkout(root: Path, cache: Path, version: str, digest: str) -> Wheel:
    isolated = not backend_ok()
    with tempfile.TemporaryDirectory(prefix="gpuplan-build-") as tmp:
        source = Path(tmp) / "src"
        source.mkdir()
        for name in SOURCES:
            path = root / name
            if path.is_dir():
                shutil.copytree(path, source / name,
                                ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))  # fmt: skip
            elif path.is_file():
                shutil.copy2(path, source / name)
        out = Path(tmp) / "out"
        argv = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out),
                str(source)]  # fmt: skip
        if not isolated:
            argv.insert(4, "--no-build-isolation")
        try:
            done = subprocess.run(
                argv, capture_output=True, text=True, check=False, timeout=BUILD_LIMIT_S, cwd=tmp
            )
        except subprocess.TimeoutExpired:
            raise ShipError(
                f"building the gpuplan wheel: pip wheel stopped after {BUILD_LIMIT_S} s"
            ) from None
        built = sorted(out.glob(f"{DIST_NAME}-*.whl"))
        if done.returncode != 0 or not built:
            how = (
                f"this Python has no {BACKEND_REQUIREMENT}, so pip had to install it for the "
                f"build (fix: pip install '{BACKEND_REQUIREMENT}', or reach the package index)"
                if isolated
                else "built without build isolation"
            )
            shown = "\n".join(_tail(done.stdout + "\n" + done.stderr)) or "(no output)"
            raise ShipError(
                f"building the gpuplan wheel failed (pip wheel exited {done.returncode}; {how}); "
                f"last output:\n{shown}"
            )
        return _store(built[-1], cache, version, digest)


def _store(built: Path, cache: Path, version: str, digest: str) -> Wheel:
    """Move a built wheel into its cache folder (through a temporary name, then renamed)."""
    folder = cache / f"{version}-{digest}"
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / _wheel_name(version)
    handle, tmp = tempfile.mkstemp(dir=folder, prefix=".", suffix=".whl.tmp")
    os.close(handle)
    try:
        shutil.copyfile(built, tmp)
        os.replace(tmp, final)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Wheel(final, version, digest)


def _running_distribution() -> importlib.metadata.Distribution:
    """The installed distribution that holds the code running now, or ShipError."""
    here = Path(__file__).resolve()
    try:
        dist = importlib.metadata.distribution(DIST_NAME)
    except importlib.metadata.PackageNotFoundError:
        raise ShipError(
            f"cannot make a gpuplan wheel: {here.parents[2]} is neither a source checkout nor "
            "an installed gpuplan (install it with pip, or give each target a remote_python "
            "that has gpuplan[bench])"
        ) from None
    located = Path(str(dist.locate_file("benchmarks/runners/ship.py"))).resolve()
    if located != here:
        raise ShipError(
            f"cannot make a gpuplan wheel: the gpuplan installed at {dist.locate_file('')} is "
            f"not the one running ({here.parents[2]}); run from one install only"
        )
    return dist


def _installed_files(dist: importlib.metadata.Distribution) -> Iterator[tuple[str, Path]]:
    """The files of the installed distribution that belong in its wheel (see module doc)."""
    if not dist.files:
        raise ShipError("cannot rebuild the gpuplan wheel: its installed RECORD lists no files")
    info = None
    for entry in dist.files:
        name = entry.as_posix()
        parts = entry.parts
        if name.startswith("..") or _skipped(Path(name)):
            continue  # scripts (bin/gpuplan) and byte code: pip writes them at install
        if parts[0].endswith(".dist-info"):
            info = parts[0]
            if len(parts) == 2 and parts[1] in INSTALL_ONLY:
                continue
        elif parts[0] not in PACKAGES:
            continue  # an editable install's .pth and finder, anything not ours
        path = Path(str(dist.locate_file(entry)))
        if not path.is_file():
            raise ShipError(
                f"cannot rebuild the gpuplan wheel: {path} is in its RECORD but missing; "
                "reinstall gpuplan"
            )
        yield name, path
    if info is None:
        raise ShipError("cannot rebuild the gpuplan wheel: its RECORD lists no .dist-info")


def _record_line(name: str, data: bytes) -> list[str]:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return [name, f"sha256={digest}", str(len(data))]


def _rebuild(
    dist: importlib.metadata.Distribution, files: dict[str, Path], cache: Path, version: str,
    digest: str,
) -> Wheel:  # fmt: skip
    """A wheel of the installed files, with its own WHEEL and RECORD."""
    info = f"{DIST_NAME}-{version}.dist-info"
    if f"{info}/METADATA" not in files:
        raise ShipError(f"cannot rebuild the gpuplan wheel: {info}/METADATA is not installed")
    wheel_meta = (
        b"Wheel-Version: 1.0\nGenerator: gpuplan (rebuilt from an install)\n"
        b"Root-Is-Purelib: true\nTag: py3-none-any\n"
    )
    with tempfile.TemporaryDirectory(prefix="gpuplan-rebuild-") as tmp:
        built = Path(tmp) / _wheel_name(version)
        record = io.StringIO()
        writer = csv.writer(record, lineterminator="\n")
        with zipfile.ZipFile(built, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for name in sorted(n for n in files if not n.startswith(info)):
                _add(archive, writer, name, files[name].read_bytes())
            for name in sorted(n for n in files if n.startswith(info) and n != f"{info}/WHEEL"):
                _add(archive, writer, name, files[name].read_bytes())
            _add(archive, writer, f"{info}/WHEEL", wheel_meta)
            writer.writerow([f"{info}/RECORD", "", ""])
            archive.writestr(_info(f"{info}/RECORD"), record.getvalue())
        return _store(built, cache, version, digest)


def _info(name: str) -> zipfile.ZipInfo:
    """A zip entry with a fixed date and mode rw-r--r-- (the same bytes on every rebuild)."""
    entry = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    entry.external_attr = 0o644 << 16
    entry.compress_type = zipfile.ZIP_DEFLATED
    return entry


def _add(archive: zipfile.ZipFile, writer: Any, name: str, data: bytes) -> None:
    archive.writestr(_info(name), data)
    writer.writerow(_record_line(name, data))
