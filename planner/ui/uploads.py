"""Uploaded result files: validate every file first, then save them all or none.

A file is checked as `gpuplan bench` reads one (UTF-8 JSON, then the BenchmarkResult
schema): a bad file is named with its field and changes nothing. Good files are written
with benchmarks.results.write_result (temp file + rename) into the results folder; a
different result already there under the same id is refused, never overwritten.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from benchmarks.results import (
    BenchmarkResult,
    ResultFileError,
    parse_result,
    read_result,
    result_path,
    write_result,
)


@dataclass(frozen=True)
class CheckedFile:
    """One uploaded file: its result when valid, else the message naming the field."""

    name: str
    result: BenchmarkResult | None = None
    error: str = ""


def check_upload(name: str, content: bytes) -> CheckedFile:
    """Validate one uploaded file's bytes as a result file."""
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        return CheckedFile(
            name, error=str(ResultFileError(name, "<json>", "not a UTF-8 text file"))
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        message = f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        return CheckedFile(name, error=str(ResultFileError(name, "<json>", message)))
    try:
        return CheckedFile(name, result=parse_result(data, name))
    except ResultFileError as exc:
        return CheckedFile(name, error=str(exc))


def already_saved(item: CheckedFile, directory: str | Path) -> bool:
    """Whether the same result is already in `directory` (same id, same content)."""
    if item.result is None:
        return False
    target = result_path(item.result, directory)
    try:
        return target.exists() and read_result(target) == item.result
    except ResultFileError:
        return False


def conflicts(files: list[CheckedFile], directory: str | Path) -> list[str]:
    """Messages for valid files whose id is taken by a different result in `directory`
    (or by another upload)."""
    problems = []
    seen: dict[str, str] = {}
    for item in files:
        if item.result is None:
            continue
        rid = item.result.id
        if rid in seen and seen[rid] != item.name:
            problems.append(f"{item.name}: id {rid!r} is also in {seen[rid]}; upload one of them")
        seen[rid] = item.name
        target = result_path(item.result, directory)
        if target.exists() and not already_saved(item, directory):
            problems.append(
                f"{item.name}: a different result with id {rid!r} is already in "
                f"{target}; give this run another id (or remove that file)"
            )
    return problems


def save_all(files: list[CheckedFile], directory: str | Path) -> list[Path]:
    """Write every valid file not already there into `directory` atomically; returns the
    paths written. Call only when no file has an error and `conflicts` is empty."""
    bad = [f.name for f in files if f.result is None]
    if bad:
        raise ValueError(f"not saving: invalid file(s) {', '.join(bad)}")
    return [
        write_result(f.result, directory)
        for f in files
        if f.result is not None and not already_saved(f, directory)
    ]
