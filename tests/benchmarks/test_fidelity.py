"""The fidelity benchmark's arithmetic: medians of alternating rounds, and their ratio."""

from __future__ import annotations

import re
import statistics

import pytest

from benchmarks import fidelity


def test_fidelity_prints_medians_and_their_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--rounds", "3", "--steps", "3", "--warmup", "1", "--no-progress-bar"]
    assert fidelity.main(args) == 0
    out = capsys.readouterr().out
    rounds = re.findall(r"round \d+: bare ([\d,.]+)\s+harness ([\d,.]+) \(wall\)", out)
    assert len(rounds) == 3
    bare = statistics.median(float(b.replace(",", "")) for b, _ in rounds)
    wall = statistics.median(float(w.replace(",", "")) for _, w in rounds)
    printed = float(re.search(r"ratio harness / bare \(same wall-clock definition\): ([\d.]+)",
                              out).group(1))  # type: ignore[union-attr]  # fmt: skip
    assert printed == pytest.approx(wall / bare, abs=2e-3)
    pairs = [float(w.replace(",", "")) / float(b.replace(",", "")) for b, w in rounds]
    headline = re.search(r"fidelity ratio \(harness / bare, paired rounds\): ([\d.]+)", out)
    assert headline is not None
    assert float(headline.group(1)) == pytest.approx(statistics.median(pairs), abs=2e-3)
