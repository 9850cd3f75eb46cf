"""What a sweep target runs on: a machine reachable over SSH, and who provisions it.

`Machine` is the one record every backend hands the sweep: an on-prem server named in
the spec (backend "ssh"), this machine (backend "local"), or a cloud instance that a
`Provisioner` launched (backends "aws", "gcp" and "skypilot"). The sweep orchestration
(`benchmarks/sweep/`) only ever talks to a cloud through the `Provisioner` protocol, so
each cloud's code lives in one runner module (`runners/aws.py`, `runners/gcp.py`) and is
tested against its local stand-in (moto, a fake Compute REST server).

Tags/labels every provisioner sets on everything it creates:
`gpuplan-sweep=<sweep id>` and `gpuplan-expires=<UTC time, %Y%m%dt%H%M%Sz>` (lower case, so
that it is a valid GCP label value too).
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

SWEEP_TAG = "gpuplan-sweep"
EXPIRES_TAG = "gpuplan-expires"
EXPIRES_FORMAT = "%Y%m%dt%H%M%Sz"  # 20261130t231500z: valid as an AWS tag and a GCP label


def expires_label(when: dt.datetime) -> str:
    """A UTC time as the `gpuplan-expires` tag/label value."""
    return when.astimezone(dt.UTC).strftime(EXPIRES_FORMAT)


@dataclass(frozen=True)
class Machine:
    """One machine a sweep target runs its benchmarks on, reachable over SSH.

    `host`/`port`/`user`/`identity_file` are what `ssh` needs (None = ssh's own default
    or ~/.ssh/config). Cloud fields are None for on-prem and local machines.
    """

    backend: str  # ssh | local | aws | gcp | skypilot
    host: str
    user: str | None = None
    port: int | None = None
    identity_file: str | None = None
    cloud: str | None = None  # aws | gcp | skypilot (who launched it, so who ends it)
    region: str | None = None  # AWS region or GCP zone's region
    zone: str | None = None  # GCP zone (AWS: the placement's availability zone, if known)
    instance_type: str | None = None
    instance_id: str | None = None  # EC2 instance id, or GCE instance name
    spot: bool = False
    launched_at: str | None = None  # ISO 8601 UTC
    sweep_id: str | None = None  # cloud: the `gpuplan-sweep` tag/label it carries
    name: str | None = None  # cloud: the instance's Name tag (AWS) / instance name (GCP)
    project: str | None = None  # GCP project the instance is in


@dataclass(frozen=True)
class CloudTarget:
    """What to launch: one [[targets]] entry of a sweep spec with backend aws or gcp."""

    backend: str  # aws | gcp | skypilot
    instance_type: str  # skypilot: "" when accelerators say what to launch
    region: str  # AWS region; for GCP the zone (e.g. us-central1-a); skypilot: "" = any
    spot: bool = False
    image: str | None = None  # AMI id / GCE image or image family URL; None = a default DL image
    key_name: str | None = None  # AWS key pair; GCP: ssh key goes into metadata instead
    subnet_id: str | None = None
    security_group_ids: tuple[str, ...] = ()
    project: str | None = None  # GCP project
    ssh_user: str | None = None  # login user on the image (default: per image)
    ssh_public_key: str | None = None  # GCP: put into instance metadata `ssh-keys`
    cloud: str | None = None  # skypilot: the infrastructure (lambda, nebius, kubernetes, ...)
    zone: str | None = None  # skypilot: a zone to pin
    accelerators: str | None = None  # skypilot: e.g. "H100:8"
    file_mounts: tuple[tuple[str, str], ...] = ()  # skypilot: (remote path, local path)


@dataclass(frozen=True)
class Launch:
    """One instance a sweep asks a provisioner for: the target, the sweep it belongs to,
    when it must be gone (UTC), the script it runs first (the dead-man switch) and its name."""

    target: CloudTarget
    sweep_id: str
    expires_at: dt.datetime
    startup_script: str
    name: str

    def tags(self, sweep_value: str | None = None) -> dict[str, str]:
        """The `gpuplan-sweep` and `gpuplan-expires` tags/labels (the sweep's value as the
        cloud takes it, if it must be rewritten)."""
        return {
            SWEEP_TAG: self.sweep_id if sweep_value is None else sweep_value,
            EXPIRES_TAG: expires_label(self.expires_at),
        }


class Provisioner(Protocol):
    """Launches, finds and terminates the cloud machines of a sweep (one per cloud).

    Every call that talks to the cloud may raise `ProvisionError` with a message a user
    can act on (capacity, quota, permissions, unknown image). Never raises for
    "already gone" on terminate.
    """

    backend: str

    def launch(self, request: Launch) -> Machine:
        """Create the instance (tagged/labelled, self-terminating) and return it as soon as
        the cloud has accepted it; `host` may be empty until `wait_running` returns."""
        ...

    def wait_running(self, machine: Machine, timeout_s: float) -> Machine:
        """Block until the instance runs and has an address; the machine with `host` set."""
        ...

    def terminate(self, machine: Machine) -> None:
        """Ask the cloud to terminate/delete the instance (idempotent)."""
        ...

    def is_terminated(self, machine: Machine) -> bool:
        """Confirm through a describe/get call that the instance is gone or terminating."""
        ...

    def find_launched(self, regions: list[str], sweep_id: str | None = None) -> list[Machine]:
        """Every instance carrying the `gpuplan-sweep` tag (of that sweep, or any) in these
        regions (GCP: zones) that is not yet terminated."""
        ...


class ProvisionError(RuntimeError):
    """A cloud call failed in a way the user can act on; the message says how."""


def poll_until_running(
    probe: Callable[[], tuple[Machine | None, str | None]],
    timeout_s: float,
    poll_s: float,
    sleep: Callable[[float], None],
    not_running: Callable[[str], str],
) -> Machine:
    """The machine `probe` returns once it runs with an address (a `wait_running` loop).

    `probe` answers (the running machine or None, the state it saw or None if it saw no
    instance) and raises ProvisionError itself when the instance ended. It is asked every
    `poll_s` seconds until `timeout_s` seconds have passed; then ProvisionError with
    `not_running(last state seen)` ("unknown" if none). `sleep` waits seconds.
    """
    deadline = time.monotonic() + timeout_s
    state = "unknown"
    while True:
        running, seen = probe()
        if running is not None:
            return running
        if seen is not None:
            state = seen
        if time.monotonic() >= deadline:
            raise ProvisionError(not_running(state))
        sleep(min(poll_s, max(0.0, deadline - time.monotonic())))
