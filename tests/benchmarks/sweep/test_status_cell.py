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


def test_the_status_table_cell_starts_with_the_first_word_of_the_reason() -> None:
    reason = (
        "building the gpuplan wheel failed (pip wheel exited 1; this Python has no "
        "setuptools>=77, so pip had to install it for the build (fix: pip install "
        "'setuptools>=77', or reach the package index)); last output:\n" + "\n".join(PIP_TAIL)
    )
    data = st.new_state("s-1", "spec.toml", {}, "results", ["box"], ["run-a"], [None])
    data["targets"][0].update(state=st.FAILED, reason=reason)
    console = Console(width=100, record=True, color_system=None)
    console.print(status_table(data))
    text = console.export_text()
    cell = [line.split("│")[-2].strip() for line in text.splitlines() if line.count("│") >= 7]
    assert cell[0].startswith("building the gpuplan wheel failed"), cell
    assert "No matching distribution found for" in text
    assert "Collecting package-0 " not in text  # the middle of the tail is left out
    assert max(len(line) for line in text.splitlines()) <= 100
