"""The status table's "why" cell: what failed and the failing step's last lines, whole
words only (it once began mid-word: "uild a gpuplan wheel…")."""

from __future__ import annotations

from rich.console import Console

from benchmarks.runners.remote_output import cut_at_word, why_lines
from benchmarks.runners.ssh import RemoteCommandFailed
from benchmarks.sweep import state as st
from benchmarks.sweep.cli import status_table

PIP_TAIL = [f"  Collecting package-{n} (from gpuplan[bench])" for n in range(15)] + [
    "ERROR: Could not find a version that satisfies the requirement nvidia-ml-py>=12.535",
    "ERROR: No matching distribution found for nvidia-ml-py>=12.535",
]


def test_a_failure_shows_what_failed_and_its_last_lines() -> None:
    reason = str(RemoteCommandFailed("installing gpuplan[bench]", 1, PIP_TAIL))
    shown = why_lines(reason).splitlines()
    assert shown[0] == "installing gpuplan[bench] exited with 1; last output:"
    assert shown[1:] == [PIP_TAIL[-3].strip(), *PIP_TAIL[-2:]]


def test_a_long_line_is_cut_at_a_word_boundary() -> None:
    line = "cannot build a gpuplan wheel: " + "the build backend said something long " * 6
    cut = cut_at_word(line, 100)
    assert len(cut) <= 100 and cut.endswith("…")
    assert line.startswith(cut[:-1]) and line[len(cut) - 1] == " "


def _status_text(data: dict[str, object], width: int) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(status_table(data, width=width))
    return console.export_text()


def test_the_status_table_cell_starts_with_the_first_word_of_the_reason() -> None:
    reason = (
        "building the gpuplan wheel failed (pip wheel exited 1; this Python has no "
        "setuptools>=77, so pip had to install it for the build (fix: pip install "
        "'setuptools>=77', or reach the package index)); last output:\n" + "\n".join(PIP_TAIL)
    )
    data = st.new_state("s-1", "spec.toml", {}, "results", ["box"], ["run-a"], [None])
    data["targets"][0].update(state=st.FAILED, reason=reason)
    for width in (80, 100):
        text = _status_text(data, width)
        lines = text.splitlines()
        at = next(line for line in lines if line.startswith("target")).index("why / last line")
        cell = [line[at:].strip() for line in lines[3:]]
        assert cell[0].startswith("building the gpuplan wheel failed"), cell
        assert lines[3].startswith("box ") and "failed" in lines[3]
        assert "No matching distribution found for" in " ".join(cell)
        assert "Collecting package-0 " not in text  # the middle of the tail is left out
        assert max(len(line) for line in lines) <= width


def test_each_line_of_the_reason_starts_a_line_of_its_own() -> None:
    """The first line (what failed) and each of the failing step's last lines begin a
    line of the cell, as why_lines gives them, wrapped at words where they are longer."""
    reason = str(RemoteCommandFailed("installing gpuplan[bench]", 1, PIP_TAIL))
    data = st.new_state("s-1", "spec.toml", {}, "results", ["box"], ["run-a"], [None])
    data["targets"][0].update(state=st.FAILED, reason=reason)
    text = _status_text(data, 200)
    at = text.splitlines()[1].index("why / last line")
    cell = [line[at:].strip() for line in text.splitlines()[3:]]
    assert cell == why_lines(reason).splitlines()
