"""run_local retries an N-process run once, and only for the failures worth retrying."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from benchmarks.runners import local


@dataclasses.dataclass
class Options:
    workload: str = "gpt"
    size: str = "tiny"
    precision: str = "fp32"
    device: str = "cpu"
    peak_tflops: float | None = None


def fake_launch(outcomes: list[tuple[Path | None, list[str]]], calls: list[int]) -> Any:
    def launch(*args: Any, **kwargs: Any) -> tuple[Path | None, list[str]]:
        calls.append(1)
        return outcomes[len(calls) - 1]

    return launch


@pytest.mark.parametrize("mark", [local.PORT_TAKEN, local.GLOO_ABORT])
def test_a_retryable_failure_is_tried_once_more(
    mark: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    written = tmp_path / "r.json"
    monkeypatch.setattr(
        local, "launch", fake_launch([(None, [f"x {mark} y"]), (written, [])], calls)
    )
    said: list[str] = []
    assert local.run_local(Options(), 2, tmp_path, on_output=said.append) == written
    assert len(calls) == 2
    assert any("retrying once" in line for line in said)


def test_other_failures_and_a_second_abort_are_not_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    monkeypatch.setattr(local, "launch", fake_launch([(None, ["Traceback: ValueError"])], calls))
    with pytest.raises(local.RunFailed):
        local.run_local(Options(), 2, tmp_path)
    assert len(calls) == 1
    calls.clear()
    abort = (None, [local.GLOO_ABORT])
    monkeypatch.setattr(local, "launch", fake_launch([abort, abort], calls))
    with pytest.raises(local.RunFailed):
        local.run_local(Options(), 2, tmp_path)
    assert len(calls) == 2
