"""edge.files: bounded reads, JSON within a depth, atomic writes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from edge.files import (
    RefusedFileError,
    UnsafeInputError,
    atomic_write_text,
    bounded_lines,
    json_depth,
    loads_bounded,
    open_bounded,
    read_text_bounded,
)


def _reason(path: str | Path, max_bytes: int = 100) -> str:
    with pytest.raises(RefusedFileError) as refused:
        read_text_bounded(path, max_bytes)
    return refused.value.reason


def test_a_small_regular_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("héllo\n", encoding="utf-8")
    assert read_text_bounded(tmp_path / "a.txt", 100) == "héllo\n"


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_a_device_is_refused_without_reading_it(tmp_path: Path) -> None:
    assert _reason("/dev/zero") == "not_regular"
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    assert _reason(tmp_path / "zero.json") == "not_regular"


def test_refusals_say_why(tmp_path: Path) -> None:
    assert _reason(tmp_path / "nope") == "missing"
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    assert _reason(tmp_path / "dangling") == "dangling"
    assert _reason(tmp_path) == "folder"
    os.mkfifo(tmp_path / "fifo")
    assert _reason(tmp_path / "fifo") == "not_regular"  # and no wait for a writer
    (tmp_path / "big").write_bytes(b"x" * 101)
    with pytest.raises(RefusedFileError) as refused:
        read_text_bounded(tmp_path / "big", 100)
    assert refused.value.reason == "too_large" and refused.value.size_bytes == 101
    (tmp_path / "latin1").write_bytes(b"caf\xe9")
    assert _reason(tmp_path / "latin1") == "not_utf8"


def test_bounded_lines_stop_once_past_the_bound(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_bytes(b"\xef\xbb\xbfa,b\n1,2\n")
    with open_bounded(tmp_path / "a.csv", 100) as handle:
        assert list(bounded_lines(handle, 100)) == ["a,b\n", "1,2\n"]
    with open_bounded(tmp_path / "a.csv", 100) as handle, pytest.raises(RefusedFileError) as grew:
        list(bounded_lines(handle, 5))
    assert grew.value.reason == "grew"


def test_json_depth_counts_containers() -> None:
    assert json_depth(1) == 0
    assert json_depth([]) == 1
    assert json_depth({"a": 1}) == 1
    assert json_depth([[1], {"b": {"c": []}}]) == 4


def test_json_nested_65_deep_is_refused_64_is_read() -> None:
    assert json_depth(loads_bounded("[" * 64 + "]" * 64)) == 64
    with pytest.raises(UnsafeInputError, match="nested deeper than 64 levels"):
        loads_bounded("[" * 65 + "]" * 65)
    with pytest.raises(UnsafeInputError, match="nested deeper than 64 levels"):
        loads_bounded("[" * 100_000 + "]" * 100_000)  # a RecursionError never escapes


def test_json_numbers_must_be_finite() -> None:
    assert loads_bounded('{"x": 1.5}') == {"x": 1.5}
    for text in ("NaN", "[Infinity]", "-Infinity", "1e309"):
        with pytest.raises(UnsafeInputError):
            loads_bounded(text)
    with pytest.raises(json.JSONDecodeError):
        loads_bounded("{")


def test_json_integers_beyond_64_bits_are_refused() -> None:
    biggest = 2**63 - 1
    assert loads_bounded(f"[{biggest}, -{biggest}, 0]") == [biggest, -biggest, 0]
    for text in (f"[{biggest + 1}]", f"[-{biggest + 1}]", "[" + "9" * 400 + "]", "1" + "0" * 5000):
        with pytest.raises(UnsafeInputError, match="beyond a 64-bit integer"):
            loads_bounded(text)


def test_an_atomic_write_replaces_the_file_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "state.json"
    atomic_write_text(target, "one")
    atomic_write_text(target, "two\r\n")
    assert target.read_bytes() == b"two\r\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["state.json"]


def test_a_failed_atomic_write_keeps_the_old_file_and_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    target.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        atomic_write_text(target, "bad \udc80 surrogate")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]
