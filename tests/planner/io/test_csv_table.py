"""planner.io.validate.read_csv_table: the bounded reader of reference and query CSV files."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from planner.io.validate import MAX_TABLE_COLUMNS, read_csv_table


class Refused(ValueError):
    pass


def read(path: Path, text: str | bytes, **kwargs: int) -> list[list[str]]:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    frame = read_csv_table(path, "queries", Refused, **kwargs)
    return [list(frame.columns), *frame.to_numpy().tolist()]


def test_cells_stay_text_short_rows_are_padded_and_blank_lines_skipped(tmp_path: Path) -> None:
    text = '\ufeffa, b ,c\n1, "x,y",007\n\n4,5\n'
    assert read(tmp_path / "t.csv", text) == [["a", "b", "c"], ["1", "x,y", "007"], ["4", "5", ""]]


def test_the_row_limit_is_the_last_row_allowed(tmp_path: Path) -> None:
    text = "a\n" + "1\n" * 3
    assert len(read(tmp_path / "t.csv", text, max_rows=3)) == 4
    with pytest.raises(Refused, match=r"t\.csv: more than 3 rows, the most one file may hold"):
        read(tmp_path / "t.csv", text + "1\n", max_rows=3)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "t.csv: empty; a CSV file starts with a row of column names"),
        ("\n\n", "t.csv: empty"),
        (",".join(["c"] * 2) + "\n", "t.csv, line 1: columns 1 and 2 are both named 'c'"),
        (
            ",".join(f"c{i}" for i in range(MAX_TABLE_COLUMNS + 1)) + "\n",
            f"t.csv, line 1: {MAX_TABLE_COLUMNS + 1} columns, more than the {MAX_TABLE_COLUMNS}",
        ),
        ("a," + "b" * 1001 + "\n", "t.csv, line 1, column 2: a name of 1,001 characters"),
        ("a,b\n1,2,3\n", "t.csv, line 2: 3 cells, but the header names 2 columns"),
        (b"a\n\xff\n", "queries file .*t.csv: not a UTF-8 text file"),
    ],
)
def test_a_file_over_a_bound_is_refused_naming_where(
    tmp_path: Path, text: str | bytes, message: str
) -> None:
    with pytest.raises(Refused) as refused:
        read(tmp_path / "t.csv", text)
    assert re.search(message, str(refused.value)), str(refused.value)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(Refused, match="is not a regular file; give a CSV file"):
        read_csv_table(tmp_path / "fifo", "queries", Refused)
