"""poll_until_running: the one wait loop behind both provisioners' wait_running."""

from __future__ import annotations

import pytest

from benchmarks.runners.machine import Machine, ProvisionError, poll_until_running

RUNNING = Machine(backend="aws", host="10.0.0.1")


def test_returns_the_machine_once_the_probe_sees_it_running() -> None:
    answers = iter([(None, None), (None, "pending"), (RUNNING, "running")])
    waits: list[float] = []
    got = poll_until_running(lambda: next(answers), 60.0, 2.0, waits.append, str)
    assert got is RUNNING
    assert waits == [2.0, 2.0]


def test_times_out_with_the_last_state_seen() -> None:
    answers = iter([(None, "pending"), (None, None)])
    with pytest.raises(ProvisionError, match=r"^gave up \(last: pending\)$"):
        poll_until_running(
            lambda: next(answers), 0.0, 1.0, lambda s: None, lambda st: f"gave up (last: {st})"
        )


def test_times_out_as_unknown_when_no_state_was_seen() -> None:
    with pytest.raises(ProvisionError, match=r"^last: unknown$"):
        poll_until_running(lambda: (None, None), 0.0, 1.0, lambda s: None, "last: {}".format)


def test_never_sleeps_past_the_deadline() -> None:
    waits: list[float] = []
    with pytest.raises(ProvisionError):
        poll_until_running(lambda: (None, "pending"), 0.05, 10.0, waits.append, str)
    assert waits and all(0.0 <= w <= 0.05 for w in waits)


def test_an_ended_instance_stops_the_wait_at_once() -> None:
    def ended() -> tuple[Machine | None, str | None]:
        raise ProvisionError("ended while starting")

    with pytest.raises(ProvisionError, match="ended while starting"):
        poll_until_running(ended, 60.0, 1.0, lambda s: None, str)
