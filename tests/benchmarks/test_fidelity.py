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
    # The round figures are printed to 0.1 samples/s: allow for that rounding in the ratio.
    rounding = 0.05 * (1 / bare + wall / bare**2)
    assert printed == pytest.approx(wall / bare, abs=rounding + 1e-3)
    # Each round prints its own ratio from unrounded figures: the headline is their median.
    pairs = [float(r) for r in re.findall(r"samples/s, ratio ([\d.]+)", out)]
    assert len(pairs) == 3
    headline = re.search(r"fidelity ratio \(harness / bare, paired rounds\): ([\d.]+)", out)
    assert headline is not None
    assert float(headline.group(1)) == pytest.approx(statistics.median(pairs), abs=2e-3)
