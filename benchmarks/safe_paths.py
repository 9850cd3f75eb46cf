"""Names and files from outside, made safe before they are used.

A result's `id` becomes its file name, and results folders are read that someone else
may have written. So:

- an id must match RESULT_ID_PATTERN (letters, digits, `.`, `_`, `-`; starts with a
  letter or digit; at most 128 characters; no `..`; not ending in `.json`), checked by
  `check_result_id` before any path is built from it;
- every write goes through `path_under(folder, name)`, which resolves the target
  (symlinks included) and refuses anything that lands outside the folder;
- a file is read only when it is a regular file of at most MAX_RESULT_BYTES
  (`read_text_bounded`), and JSON is decoded with `loads_bounded`: nesting deeper than
  MAX_JSON_DEPTH, NaN, Infinity and numbers that overflow a float (1e309) are refused;
- an OpenSSH public key (one line: type, base64, optional printable comment) and a
  login name are checked by `ssh_public_key_problem` / `login_name_problem` before they
  go into instance metadata or onto a command line.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any

RESULT_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
_RESULT_ID = re.compile(RESULT_ID_PATTERN)
MAX_RESULT_BYTES = 2 * 1024 * 1024  # one result file (an upload, a file in a results folder)
MAX_JSON_DEPTH = 64  # nested objects/arrays in a result file (real ones use 3)
MAX_FOLDER_DEPTH = 8  # sub-folders of a results folder that are searched
MAX_SHOWN_CHARS = 200  # what of a name or value is echoed back in a message
SSH_KEY_TYPES = (
    "ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521", "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com",
)  # fmt: skip
_SSH_PUBLIC_KEY = re.compile(
    r"\A(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(?:256|384|521)|sk-ssh-ed25519@openssh\.com"
    r"|sk-ecdsa-sha2-nistp256@openssh\.com) ([A-Za-z0-9+/]+={0,3})(?: (.+))?\Z"
)
MAX_SSH_PUBLIC_KEY_CHARS = 16 * 1024  # an RSA-16384 key is about 2,800 characters
# POSIX portable login names; upper case too (many systems allow it), never a leading '-'
LOGIN_NAME_PATTERN = re.compile(r"\A[A-Za-z_][A-Za-z0-9_.-]{0,31}\Z")


class UnsafeInputError(ValueError):
    """A name, path or file that is refused; the message says what and why."""


def shorten(text: object, limit: int = MAX_SHOWN_CHARS) -> str:
    """`text` as a string cut to `limit` characters (`...` and the full length added)."""
    value = str(text)
    if len(value) <= limit:
        return value
    return f"{value[:limit]}... ({len(value):,} characters)"


def check_result_id(value: str) -> str:
    """`value` when it is a safe result id (RESULT_ID_PATTERN, no `..`, no `.json` end)."""
    shown = repr(shorten(value))
    if not _RESULT_ID.fullmatch(value):
        raise UnsafeInputError(
            f"id {shown} is not a valid result id: use 1-128 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit (no '/', spaces or other characters)"
        )
    if ".." in value:
        raise UnsafeInputError(f"id {shown} is not a valid result id: it may not contain '..'")
    if value.lower().endswith(".json"):
        raise UnsafeInputError(
            f"id {shown} is not a valid result id: leave out the '.json' ending "
            "(the file name adds it)"
        )
    return value


def path_under(directory: str | Path, name: str) -> Path:
    """DIR/name, refused (UnsafeInputError) unless it resolves inside DIR.

    Resolution follows symlinks, so a link at DIR/name pointing elsewhere is refused
    too. `name` must be one plain file name (no separators).
    """
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
        raise UnsafeInputError(f"{shorten(name)!r} is not a plain file name")
    folder = Path(directory).resolve()
    target = (folder / name).resolve()
    if target.parent != folder:
        raise UnsafeInputError(
            f"{Path(directory) / name} resolves to {target}, outside {folder}; refusing to "
            "write there (remove the link or choose another id)"
        )
    return Path(directory) / name


class RefusedFileError(UnsafeInputError):
    """A file `read_text_bounded` refuses. `reason` says which check failed, as a code:
    missing, dangling, unreadable, folder, not_regular, too_large (`size_bytes` from stat),
    grew (more than the limit when read), not_utf8; `detail` is the OS error's text, if any."""

    def __init__(
        self, reason: str, message: str, size_bytes: int | None = None, detail: str = ""
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.size_bytes = size_bytes
        self.detail = detail


def read_text_bounded(path: str | Path, max_bytes: int = MAX_RESULT_BYTES) -> str:
    """The UTF-8 text of a regular file of at most `max_bytes`; RefusedFileError otherwise
    (a folder, a dangling link, a device, too large, not UTF-8, unreadable)."""
    path = Path(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        if path.is_symlink():
            raise RefusedFileError("dangling", "a dangling link") from None
        raise RefusedFileError("missing", "no such file") from None
    except OSError as exc:
        why = str(exc.strerror or exc)
        raise RefusedFileError("unreadable", f"cannot be read ({why})", detail=why) from None
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
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        why = str(exc.strerror or exc)
        raise RefusedFileError("unreadable", f"cannot be read ({why})", detail=why) from None
    if len(data) > max_bytes:
        raise RefusedFileError("grew", f"more than {max_bytes:,} bytes; that is the limit")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise RefusedFileError("not_utf8", "not a UTF-8 text file") from None


def ssh_public_key_problem(key: str) -> str | None:
    """None when `key` is one OpenSSH public key line ("ssh-ed25519 AAAA... comment", at
    most MAX_SSH_PUBLIC_KEY_CHARS, no newline or control character), else what is wrong."""
    if len(key) > MAX_SSH_PUBLIC_KEY_CHARS:
        return f"{len(key):,} characters; a public key has at most {MAX_SSH_PUBLIC_KEY_CHARS:,}"
    if not key.isprintable():
        return (
            "contains a newline or another control character; give exactly one line, "
            "the contents of a .pub file"
        )
    if not _SSH_PUBLIC_KEY.fullmatch(key):
        return (
            f"{shorten(key, 60)!r} is not an OpenSSH public key: give 'TYPE BASE64 [comment]' "
            f"as in a .pub file, TYPE one of {', '.join(SSH_KEY_TYPES)}"
        )
    return None


def login_name_problem(name: str) -> str | None:
    """None when `name` is a login name (LOGIN_NAME_PATTERN: 1-32 letters, digits, `_.-`,
    starting with a letter or `_`), else what is wrong."""
    if LOGIN_NAME_PATTERN.fullmatch(name):
        return None
    return (
        f"{shorten(name, 60)!r} is not a login name: use 1-32 letters, digits, '_', '.' or '-', "
        "starting with a letter or '_' (e.g. 'ubuntu')"
    )


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise UnsafeInputError(f"number {shorten(text, 40)} is too large for a float")
    return value


def _no_constant(text: str) -> float:
    raise UnsafeInputError(f"{text} is not a JSON number; give a finite number or null")


def json_depth(value: Any) -> int:
    """How deeply objects and arrays nest in a decoded JSON value (a scalar is 0)."""
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


def loads_bounded(text: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """json.loads that refuses (UnsafeInputError) NaN, Infinity, overflowing numbers and
    nesting deeper than `max_depth`; json.JSONDecodeError for text that is not JSON."""
    try:
        data = json.loads(text, parse_float=_finite_float, parse_constant=_no_constant)
    except RecursionError:
        raise UnsafeInputError(f"nested deeper than {max_depth} levels") from None
    if json_depth(data) > max_depth:
        raise UnsafeInputError(f"nested deeper than {max_depth} levels")
    return data


def walk_files(
    directory: str | Path, suffix: str, max_depth: int = MAX_FOLDER_DEPTH
) -> tuple[list[Path], list[tuple[Path, str]]]:
    """Entries named `*suffix` under `directory` (sorted), and (entry, why) for those
    skipped: folders named `*suffix`, sub-folders deeper than `max_depth` and folders that
    cannot be listed. Linked folders are never descended into (no loops); hidden names are
    left out. Entries are returned as found: reading them safely (a link named `*suffix`
    may dangle or lead to a folder) is the caller's job."""
    found: list[Path] = []
    skipped: list[tuple[Path, str]] = []
    stack = [(Path(directory), 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            skipped.append((folder, f"folder cannot be listed ({exc.strerror or exc})"))
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path = Path(entry.path)
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                if entry.name.endswith(suffix):
                    skipped.append((path, f"a folder named *{suffix}, not a file"))
                elif depth + 1 > max_depth:
                    skipped.append((path, f"deeper than {max_depth} folders"))
                else:
                    stack.append((path, depth + 1))
            elif entry.name.endswith(suffix):
                found.append(path)
    return sorted(found), skipped
