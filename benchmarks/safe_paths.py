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
  MAX_JSON_DEPTH, NaN, Infinity and numbers that overflow a float (1e309) are refused
  (both from edge.files, imported from here as before);
- an OpenSSH public key (one line: type, base64, optional printable comment) and a
  login name are checked by `ssh_public_key_problem` / `login_name_problem` before they
  go into instance metadata or onto a command line.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

# Imported from here by the benchmarks and the planner, as before they moved to edge.
from edge.console import MAX_SHOWN_CHARS as MAX_SHOWN_CHARS
from edge.console import shorten as shorten
from edge.files import MAX_JSON_DEPTH as MAX_JSON_DEPTH
from edge.files import RefusedFileError as RefusedFileError
from edge.files import UnsafeInputError as UnsafeInputError
from edge.files import json_depth as json_depth
from edge.files import loads_bounded as loads_bounded
from edge.files import read_text_bounded as _read_text_bounded

RESULT_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
_RESULT_ID = re.compile(RESULT_ID_PATTERN)
MAX_RESULT_BYTES = 2 * 1024 * 1024  # one result file (an upload, a file in a results folder)
MAX_FOLDER_DEPTH = 8  # sub-folders of a results folder that are searched
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


def read_text_bounded(path: str | Path, max_bytes: int = MAX_RESULT_BYTES) -> str:
    """edge.files.read_text_bounded with a result file's bound as the default."""
    return _read_text_bounded(path, max_bytes)


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
