"""Run `gpuplan` in a child process with the cloud provisioners pointed at the stand-ins.

    python -m tests.benchmarks.cloud_sweep_driver CONFIG.json sweep run SPEC --yes ...

CONFIG.json: {"aws": {"endpoint_url": moto, "launch_hold": path (optional)},
"gcp": {"api_endpoint": fake, "project": p}, "ssh": {"host", "port", "user",
"identity_file"}}. The real AwsProvisioner and
GcpProvisioner do every cloud call (against moto and the fake Compute server); only the
address they return is replaced by the loopback sshd's, since no cloud machine exists
behind them. Like the test process, this child may connect to 127.0.0.1 only. Tests
that need no child process call `register` themselves.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.runners.aws import AwsProvisioner
from benchmarks.runners.gcp import GcpProvisioner
from benchmarks.runners.machine import Machine

if TYPE_CHECKING:
    from tests.sshd import SshServer

# The longest a held launch call waits for its hold file to go (a test that never removes
# it fails instead of hanging).
LAUNCH_HOLD_MAX_S = 240.0


def guard_loopback_only() -> None:
    """Make every socket connect outside 127.0.0.1/::1 fail (as tests/conftest.py does)."""
    connect = socket.socket.connect

    def loopback_only(self: socket.socket, address: Any) -> None:
        if isinstance(address, tuple):
            host = "127.0.0.1" if address[0] == "localhost" else str(address[0])
            if not ipaddress.ip_address(host).is_loopback:
                raise OSError(f"the sweep test driver may not connect to {host}")
        return connect(self, address)

    socket.socket.connect = loopback_only  # type: ignore[method-assign]


class _Loopback:
    """A provisioner whose running machines are reached at `point(machine)` (the loopback
    sshd) instead of the address the stand-in cloud gave them."""

    def __init__(
        self, point: Callable[[Machine], Machine], launch_hold: str | None = None, **options: Any
    ) -> None:
        super().__init__(**options)
        self.point = point
        self.launch_hold = launch_hold

    def launch(self, *args: Any, **kwargs: Any) -> Machine:
        """The cloud's launch; with `launch_hold`, the call returns only once that file is
        gone (the instance exists meanwhile), as a slow cloud's does: the test decides when
        the call returns, whatever the machine's load (at most LAUNCH_HOLD_MAX_S)."""
        machine: Machine = super().launch(*args, **kwargs)  # type: ignore[misc]
        deadline = time.monotonic() + LAUNCH_HOLD_MAX_S
        while self.launch_hold and Path(self.launch_hold).exists():
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.launch_hold} still there after {LAUNCH_HOLD_MAX_S} s")
            time.sleep(0.05)
        return machine

    def wait_running(self, machine: Machine, timeout_s: float) -> Machine:
        return self.point(super().wait_running(machine, timeout_s))  # type: ignore[misc]


class LoopbackAws(_Loopback, AwsProvisioner):
    """EC2 calls against moto; machines reached at the loopback sshd."""


class LoopbackGcp(_Loopback, GcpProvisioner):
    """Compute calls against the fake Compute server; machines reached at the loopback sshd."""


def loopback_ssh(sshd: SshServer) -> dict[str, Any]:
    """CONFIG.json's "ssh" entry for `sshd`."""
    return {
        "host": "127.0.0.1",
        "port": sshd.port,
        "user": sshd.user,
        "identity_file": str(sshd.identity_file),
    }


def pointer(ssh: dict[str, Any]) -> Callable[[Machine], Machine]:
    """A machine as reached at `ssh` (CONFIG.json's "ssh" entry)."""

    def point(machine: Machine) -> Machine:
        return dataclasses.replace(
            machine,
            host=ssh["host"],
            port=ssh["port"],
            user=ssh["user"],
            identity_file=ssh["identity_file"],
        )

    return point


def register(config: dict[str, Any]) -> None:
    """Make the sweep's backend registry build the stand-in-bound provisioners."""
    from google.auth.credentials import AnonymousCredentials

    from benchmarks.sweep import backends

    point = pointer(config["ssh"])
    if "aws" in config:
        url = config["aws"]["endpoint_url"]
        hold = config["aws"].get("launch_hold")
        backends.register(
            "aws",
            lambda **_: LoopbackAws(point, hold, endpoint_url=url, poll_s=0.05),
        )
    if "gcp" in config:
        gcp = config["gcp"]
        backends.register(
            "gcp",
            lambda **_: LoopbackGcp(
                point,
                project=gcp["project"],
                credentials=AnonymousCredentials(),
                api_endpoint=gcp["api_endpoint"],
                poll_s=0.05,
            ),
        )


def main(argv: list[str]) -> None:
    guard_loopback_only()
    register(json.loads(Path(argv[0]).read_text()))
    from planner.cli.main import main as gpuplan

    sys.argv = ["gpuplan", *argv[1:]]
    gpuplan()


if __name__ == "__main__":
    main(sys.argv[1:])
