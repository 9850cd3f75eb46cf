"""Ending a sweep's cloud machines: find, terminate, confirm, and say exactly what happened.

A machine is written into the state file before its launch call is made (its name,
cloud, region/zone and the sweep's tag), so a launch whose call has not returned yet can
still be found by tag and name (`find_pending`) and ended. `end_machine` terminates and
confirms through a describe/get call; its `Outcome` says "terminated" only after the
cloud confirmed it. `CtrlCGuard` keeps a teardown going through further Ctrl-C presses:
the second one says what is still being ended, the third stops waiting (raising
`Abandoned`) so the caller can name what may still run and the cleanup command.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType, TracebackType
from typing import Any

from benchmarks.runners.machine import Machine, Provisioner, ProvisionError

TERMINATE_CONFIRM_S = 120.0  # for the cloud to confirm a terminate call
LAUNCH_RETURN_WAIT_S = 300.0  # for an in-flight launch call to return or its machine to show
POLL_S = 2.0

CONFIRMED, NOTHING, UNCONFIRMED = "terminated", "nothing launched", "not confirmed"


@dataclass(frozen=True)
class Outcome:
    """What the teardown of one target did: `status` is CONFIRMED, NOTHING or UNCONFIRMED."""

    index: int
    status: str
    machine: str  # the instance id, else its name
    where: str  # region or zone
    reason: str = ""


def search_places(record: Machine, project: str | None = None) -> list[str]:
    """Where `find_launched` looks for this machine: the AWS region, the GCP zone
    (as projects/P/zones/Z when the target names its project)."""
    if (record.cloud or record.backend) == "skypilot":
        return [record.region or "any"]  # SkyPilot's status lists every cloud at once
    if (record.cloud or record.backend) == "gcp":
        zone = record.zone or ""
        return [f"projects/{project}/zones/{zone}" if project else zone] if zone else []
    return [record.region] if record.region else []


def find_pending(
    provisioner: Provisioner,
    record: Machine,
    places: list[str],
    launched: Callable[[], Machine | None],
    in_flight: Callable[[], bool],
    wait_s: float = LAUNCH_RETURN_WAIT_S,
    poll_s: float = POLL_S,
    sleep: Callable[[float], None] = time.sleep,
) -> Machine | None:
    """The machine of a launch that had not returned when teardown began, or None.

    Asks `launched()` (the machine the launch call returned, once it has) and the cloud
    (by the sweep's tag and the machine's name) every `poll_s` seconds, for up to
    `wait_s` seconds or until the launch call ended without a machine (`in_flight()`
    false) and one last search finds nothing. Raises ProvisionError when it cannot tell:
    the launch call is still going after `wait_s`, or the search fails.
    """
    deadline = time.monotonic() + wait_s
    while True:
        machine = launched()
        if machine is not None and machine.instance_id:
            return machine
        finished = not in_flight()
        for found in provisioner.find_launched(places, record.sweep_id):
            if found.name == record.name:
                return found
        if finished:
            machine = launched()
            return machine if machine is not None and machine.instance_id else None
        if time.monotonic() >= deadline:
            raise ProvisionError(
                f"the launch call for {record.name} had not returned after {wait_s:.0f} s "
                "and no such machine was found yet"
            )
        sleep(poll_s)


def end_machine(
    provisioner: Provisioner,
    machine: Machine,
    confirm_s: float = TERMINATE_CONFIRM_S,
    poll_s: float = POLL_S,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Terminate `machine` and wait until the cloud confirms it; ProvisionError if not."""
    provisioner.terminate(machine)
    deadline = time.monotonic() + confirm_s
    while not provisioner.is_terminated(machine):
        if time.monotonic() >= deadline:
            raise ProvisionError(f"termination not confirmed {confirm_s:.0f} s after the request")
        sleep(poll_s)


class Abandoned(Exception):
    """The third Ctrl-C: stop waiting for the teardown (machines may still run)."""


class CtrlCGuard:
    """While active (in the main thread), Ctrl-C does not stop a teardown.

    The first press inside (the second of the sweep) calls `notice()` with what is being
    ended; the next raises Abandoned in the main thread. Elsewhere it does nothing.
    """

    def __init__(self, notice: Callable[[int], None]) -> None:
        self.notice = notice
        self.presses = 0
        self._previous: Any = None
        self._active = False

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.presses += 1
        if self.presses == 1:
            self.notice(self.presses)
        else:
            raise Abandoned()

    def __enter__(self) -> CtrlCGuard:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
            self._active = True
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._active:
            signal.signal(signal.SIGINT, self._previous)
