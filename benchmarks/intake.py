"""Adding result files to a results folder: the app's upload and `gpuplan bench add`.

Every file is checked first as `gpuplan bench` reads one (at most MAX_RESULT_BYTES,
UTF-8 JSON nested at most MAX_JSON_DEPTH deep, finite numbers, then the BenchmarkResult
schema with its id pattern): a bad file is named with its field and nothing is saved.
Good files are written with write_result (temp file + rename, inside the folder); a
different result already there under the same id is refused, never overwritten.

Checks that need more than the schema (a result's figures against its GPU's datasheet
peaks, which the planner holds and benchmarks must not import) are added through
benchmarks.result_checks: the gpuplan command line and the app add the planner's
(planner.io.result_physics), so `bench add`, the upload and a sweep's intake refuse a
result above its GPU's peak as they refuse a bad field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from benchmarks.result_checks import result_problem
from benchmarks.results import (
    BenchmarkResult,
    ResultFileError,
    parse_result,
    read_result,
    result_path,
    write_result,
)
from benchmarks.safe_paths import (
    MAX_RESULT_BYTES,
    UnsafeInputError,
    loads_bounded,
    read_text_bounded,
    shorten,
)


@dataclass(frozen=True)
class CheckedFile:
    """One file to add: its result when valid, else the message naming the field."""

    name: str
    result: BenchmarkResult | None = None
    error: str = ""


def check_content(name: str, content: bytes) -> CheckedFile:
    """Validate one file's bytes (an upload) as a result file; `name` is only shown."""
    name = shorten(name)
    if len(content) > MAX_RESULT_BYTES:
        message = f"{len(content):,} bytes; the limit is {MAX_RESULT_BYTES:,} bytes"
        return CheckedFile(name, error=str(ResultFileError(name, "<file>", message)))
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        return CheckedFile(
            name, error=str(ResultFileError(name, "<json>", "not a UTF-8 text file"))
        )
    return _check_text(name, text)


def check_file(path: str | Path) -> CheckedFile:
    """Validate one file on disk (a regular file, bounded) as a result file."""
    name = shorten(path)
    try:
        text = read_text_bounded(path, MAX_RESULT_BYTES)
    except UnsafeInputError as exc:
        return CheckedFile(name, error=str(ResultFileError(name, "<file>", str(exc))))
    return _check_text(name, text)


def _check_text(name: str, text: str) -> CheckedFile:
    try:
        data = loads_bounded(text)
    except json.JSONDecodeError as exc:
        message = f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        return CheckedFile(name, error=str(ResultFileError(name, "<json>", message)))
    except UnsafeInputError as exc:
        return CheckedFile(name, error=str(ResultFileError(name, "<json>", str(exc))))
    try:
        result = parse_result(data, name)
    except ResultFileError as exc:
        return CheckedFile(name, error=str(exc))
    problem = result_problem(result)
    if problem:
        return CheckedFile(name, error=f"{name}: {problem}")
    return CheckedFile(name, result=result)


def already_saved(item: CheckedFile, directory: str | Path) -> bool:
    """Whether the same result is already in `directory` (same id, same content)."""
    if item.result is None:
        return False
    try:
        target = result_path(item.result, directory)
        return target.exists() and read_result(target) == item.result
    except (ResultFileError, OSError, ValueError):
        return False


def conflicts(files: list[CheckedFile], directory: str | Path) -> list[str]:
    """Messages for valid files whose id is taken by a different result in `directory`
    (or by another file of the same batch), or whose target is unsafe."""
    problems = []
    seen: dict[str, str] = {}
    for item in files:
        if item.result is None:
            continue
        rid = item.result.id
        if rid in seen and seen[rid] != item.name:
            problems.append(f"{item.name}: id {rid!r} is also in {seen[rid]}; add one of them")
        seen[rid] = item.name
        try:
            target = result_path(item.result, directory)
        except UnsafeInputError as exc:
            problems.append(f"{item.name}: {exc}")
            continue
        if (target.exists() or target.is_symlink()) and not already_saved(item, directory):
            problems.append(
                f"{item.name}: a different result with id {rid!r} is already in "
                f"{target}; give this run another id (or remove that file)"
            )
    return problems


def save_all(files: list[CheckedFile], directory: str | Path) -> list[Path]:
    """Write every valid file not already there into `directory` atomically; returns the
    paths written. Call only when no file has an error and `conflicts` is empty. When a
    write fails, the files this call wrote are removed again and the error raised."""
    bad = [f.name for f in files if f.result is None]
    if bad:
        raise ValueError(f"not saving: invalid file(s) {', '.join(bad)}")
    written: list[Path] = []
    try:
        for item in files:
            if item.result is not None and not already_saved(item, directory):
                written.append(write_result(item.result, directory))
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        raise
    return written
