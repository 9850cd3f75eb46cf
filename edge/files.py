"""Files from outside read within bounds, JSON decoded within bounds, files written whole.

- `open_bounded` opens a path only when it is a regular file of at most `max_bytes`
  (checked before opening, so no device or FIFO is ever opened for its contents, and
  again on the opened file, so what is checked is what is read); `read_text_bounded`
  reads its UTF-8 text and `bounded_lines` its lines, stopping once more than the bound
  has been read (a file that grew). Every refusal is a RefusedFileError with a reason
  code the callers word in their own terms.
- `loads_bounded` is json.loads refusing NaN, Infinity, numbers that overflow a float
  (1e309), integers beyond 64 bits (10**400) and nesting deeper than a bound
  (`json_depth`, which also bounds TOML).
- `atomic_write_text` writes through a temp file in the same folder and a rename: a
  crash leaves the old file or the new one, never half of either, and no temp file.
"""

from __future__ import annotations

import io
import json
import math
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from edge.console import shorten

MAX_JSON_DEPTH = 64  # nested objects/arrays in a JSON document (real ones use a few)
# The largest integer a JSON document may hold: a signed 64-bit integer's, what numpy,
# pandas and every consumer of the file can hold without an OverflowError.
MAX_JSON_INT = 2**63 - 1


class UnsafeInputError(ValueError):
    """A name, path or file that is refused; the message says what and why."""


class RefusedFileError(UnsafeInputError):
    """A file `open_bounded` refuses. `reason` says which check failed, as a code:
    missing, dangling, unreadable, folder, not_regular, too_large (`size_bytes` from stat),
    grew (more than the limit when read), not_utf8; `detail` is the OS error's text, if any."""

    def __init__(
        self, reason: str, message: str, size_bytes: int | None = None, detail: str = ""
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.size_bytes = size_bytes
        self.detail = detail


def _unreadable(exc: OSError) -> RefusedFileError:
    why = str(exc.strerror or exc)
    return RefusedFileError("unreadable", f"cannot be read ({why})", detail=why)


def _check(info: os.stat_result, max_bytes: int) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise RefusedFileError("folder", "a folder, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise RefusedFileError("not_regular", "not a regular file")
    if info.st_size > max_bytes:
        raise RefusedFileError(
            "too_large",
            f"{info.st_size:,} bytes; the limit is {max_bytes:,} bytes",
            size_bytes=info.st_size,
        )


def open_bounded(path: str | Path, max_bytes: int) -> IO[bytes]:
    """`path` open for reading in binary when it is a regular file of at most
    `max_bytes`; RefusedFileError otherwise (missing, a dangling link, a folder, a device
    or FIFO, too large, unreadable). A FIFO swapped in after the first check is opened
    without waiting for a writer and then refused."""
    path = Path(path)
    try:
        _check(path.stat(), max_bytes)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        if path.is_symlink():
            raise RefusedFileError("dangling", "a dangling link") from None
        raise RefusedFileError("missing", "no such file") from None
    except OSError as exc:
        raise _unreadable(exc) from None
    try:
        _check(os.fstat(fd), max_bytes)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def read_text_bounded(path: str | Path, max_bytes: int) -> str:
    """The UTF-8 text of a regular file of at most `max_bytes` (open_bounded); also
    RefusedFileError 'grew' when more than that is read and 'not_utf8'."""
    try:
        with open_bounded(path, max_bytes) as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise _unreadable(exc) from None
    if len(data) > max_bytes:
        raise RefusedFileError("grew", f"more than {max_bytes:,} bytes; that is the limit")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise RefusedFileError("not_utf8", "not a UTF-8 text file") from None


def bounded_lines(handle: IO[bytes], max_bytes: int) -> Iterator[str]:
    """The UTF-8 lines of `handle` (a leading byte-order mark dropped, line ends kept);
    RefusedFileError 'grew' once more than `max_bytes` have been read, 'not_utf8' at an
    invalid byte."""
    text = io.TextIOWrapper(handle, encoding="utf-8-sig", errors="strict", newline="")
    read = 0
    try:
        for line in text:
            read += len(line.encode("utf-8"))
            if read > max_bytes:
                raise RefusedFileError("grew", f"more than {max_bytes:,} bytes; that is the limit")
            yield line
    except UnicodeDecodeError:
        raise RefusedFileError("not_utf8", "not a UTF-8 text file") from None


def json_depth(value: Any) -> int:
    """How deeply objects and arrays nest in a decoded JSON (or TOML) value: a scalar is
    0, `[]` and `{"a": 1}` are 1, `[[1]]` is 2."""
    deepest = 0
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
        else:
            deepest = max(deepest, depth)
            continue
        deepest = max(deepest, depth + 1)
    return deepest


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise UnsafeInputError(f"number {shorten(text, 40)} is too large for a float")
    return value


def _bounded_int(text: str) -> int:
    digits = text.lstrip("-")
    if len(digits) > len(str(MAX_JSON_INT)) or abs(int(text)) > MAX_JSON_INT:
        raise UnsafeInputError(
            f"integer {shorten(text, 40)} is beyond a 64-bit integer (at most {MAX_JSON_INT:,})"
        )
    return int(text)


def _no_constant(text: str) -> float:
    raise UnsafeInputError(f"{text} is not a JSON number; give a finite number or null")


def loads_bounded(text: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """json.loads that refuses (UnsafeInputError) NaN, Infinity, overflowing numbers,
    integers beyond MAX_JSON_INT and nesting deeper than `max_depth`;
    json.JSONDecodeError for text that is not JSON."""
    try:
        data = json.loads(
            text, parse_float=_finite_float, parse_int=_bounded_int, parse_constant=_no_constant
        )
    except RecursionError:
        raise UnsafeInputError(f"nested deeper than {max_depth} levels") from None
    if json_depth(data) > max_depth:
        raise UnsafeInputError(f"nested deeper than {max_depth} levels")
    return data


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write `text` to `path` through a temp file (`.NAME.*.tmp`) in the same folder,
    flushed to disk, and a rename. The folder is created if missing. A crash leaves
    either the old file or the new one; an error removes the temp file and is raised."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
