"""edge.console.working: a spinner on stderr for slow work, only at a terminal."""

from __future__ import annotations

import time

import pytest

from edge import console


def test_slow_work_at_a_terminal_shows_its_message(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich takes stderr for a terminal
    monkeypatch.setattr(console, "SPINNER_DELAY_S", 0.05)
    with console.working("planning resnet50"):
        time.sleep(0.4)
    assert "planning resnet50" in capsys.readouterr().err


def test_quick_work_or_redirected_stderr_shows_nothing(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    with console.working("planning resnet50"):  # done before SPINNER_DELAY_S
        pass
    monkeypatch.delenv("FORCE_COLOR")
    monkeypatch.setattr(console, "SPINNER_DELAY_S", 0.0)
    with console.working("planning resnet50"):  # not a terminal
        time.sleep(0.1)
    assert capsys.readouterr().err == ""
