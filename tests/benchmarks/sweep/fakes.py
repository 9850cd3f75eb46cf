"""An in-memory Provisioner for sweep tests: "launches" machines that are the loopback sshd.

Like a slow cloud, it can create the machine at once and return from `launch` only
`launch_delay_s` later (the machine is findable by tag and name meanwhile), and confirm a
termination only `confirm_after_s` after it was asked (inf: never).

Every call is appended as one JSON line to `log_path` (when given), so a test can read
what a sweep subprocess launched and terminated after the process is gone.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.runners.machine import Launch, Machine, ProvisionError


class FakeProvisioner:
    """Launches nothing; hands out `host:port` as every machine's address."""

    def __init__(
        self, backend: str = "aws", host: str = "127.0.0.1", port: int | None = None,
        user: str | None = None, identity_file: str | None = None,
        log_path: str | None = None, hang_s: float = 0.0, fail_launch: str | None = None,
        launch_delay_s: float = 0.0, confirm_after_s: float = 0.0,
    ) -> None:  # fmt: skip
        self.backend = backend
        self.host, self.port, self.user, self.identity_file = host, port, user, identity_file
        self.log_path = Path(log_path) if log_path else None
        self.hang_s = hang_s
        self.fail_launch = fail_launch
        self.launch_delay_s = launch_delay_s
        self.confirm_after_s = confirm_after_s
        self.release = threading.Event()  # set: a delayed launch returns at once
        self.machines: dict[str, dict[str, Any]] = {}
        self.lock = threading.Lock()

    def _log(self, **event: Any) -> None:
        if self.log_path:
            with self.lock, self.log_path.open("a") as handle:
                handle.write(json.dumps(event) + "\n")

    def launch(self, request: Launch) -> Machine:
        target, sweep_id, name = request.target, request.sweep_id, request.name
        expires_at, startup_script = request.expires_at, request.startup_script
        if self.fail_launch:
            raise ProvisionError(self.fail_launch)
        with self.lock:
            instance_id = f"i-fake{len(self.machines):04d}"
        machine = Machine(
            backend=self.backend, host="", cloud=self.backend, region=target.region,
            instance_type=target.instance_type, instance_id=instance_id, spot=target.spot,
            launched_at=dt.datetime.now(dt.UTC).isoformat(), sweep_id=sweep_id, name=name,
        )  # fmt: skip
        with self.lock:
            self.machines[instance_id] = {
                "machine": machine, "running": True, "sweep_id": sweep_id,
                "tags": {"gpuplan-sweep": sweep_id, "gpuplan-expires": expires_at.isoformat()},
                "startup_script": startup_script, "name": name,
            }  # fmt: skip
        self._log(event="launch", id=instance_id, sweep_id=sweep_id, name=name,
                  expires_at=expires_at.isoformat(), startup_script=startup_script)  # fmt: skip
        if self.launch_delay_s:
            self.release.wait(self.launch_delay_s)
        return machine

    def wait_running(self, machine: Machine, timeout_s: float) -> Machine:
        if self.hang_s:
            time.sleep(self.hang_s)
        return Machine(**{
            **machine.__dict__, "host": self.host, "port": self.port, "user": self.user,
            "identity_file": self.identity_file,
        })  # fmt: skip

    def terminate(self, machine: Machine) -> None:
        with self.lock:
            if machine.instance_id in self.machines:
                entry = self.machines[str(machine.instance_id)]
                entry["running"] = False
                entry.setdefault("terminate_at", time.monotonic())
        self._log(event="terminate", id=machine.instance_id)

    def is_terminated(self, machine: Machine) -> bool:
        with self.lock:
            entry = self.machines.get(str(machine.instance_id))
            if entry is None:
                return True
            asked = entry.get("terminate_at")
            return asked is not None and time.monotonic() - asked >= self.confirm_after_s

    def find_launched(self, regions: list[str], sweep_id: str | None = None) -> list[Machine]:
        with self.lock:
            return [
                e["machine"] for e in self.machines.values()
                if "terminate_at" not in e and e["machine"].region in regions
                and (sweep_id is None or e["sweep_id"] == sweep_id)
            ]  # fmt: skip


def log_events(path: Path) -> list[dict[str, Any]]:
    """The events a FakeProvisioner wrote."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
