"""Run a sweep: every target in parallel (up to max_parallel), each through its steps.

A target: provision (cloud) -> wait for ssh -> install -> each pending run (bench run,
fetch, validate, write into the results folder with where it ran) -> teardown (cloud:
terminate, then confirm with a describe/get call). The state file is saved after every
step. One target failing is recorded with its reason; the others go on. No target
starts once the dollars already spent plus the worst case of every running target and
of this one would pass max_usd. Ctrl-C (KeyboardInterrupt in the calling thread) stops
every ssh process, tears down every launched machine and returns 130.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import intake
from benchmarks.results import ResultFileError
from benchmarks.runners import ssh
from benchmarks.runners.cleanup import CleanupReport, terminate_all
from benchmarks.runners.machine import CloudTarget, Machine, Provisioner, ProvisionError
from benchmarks.sweep import state as st
from benchmarks.sweep.backends import provisioner_for
from benchmarks.sweep.preview import SweepPreview
from benchmarks.sweep.spec import RunItem, SweepSpec, TargetSpec
from benchmarks.sweep.startup import dead_man_script

EXIT_INTERRUPTED = 130
LAUNCH_WAIT_S = 900.0  # for the cloud to report the instance running with an address
SSH_WAIT_S = 600.0  # for sshd to answer on a fresh machine
TERMINATE_CONFIRM_S = 120.0
JOIN_AFTER_INTERRUPT_S = 15.0
DEFAULT_REMOTE_BASE = ".gpuplan-sweep"  # on the machine, relative to the login's home
REMOTE_DIR_ENV = "GPUPLAN_SWEEP_REMOTE_DIR"  # another BASE for targets without remote_dir


class Interrupted(RuntimeError):
    """The sweep is stopping (Ctrl-C); the target ends as interrupted."""


class RemoteResultRefused(RuntimeError):
    """Result files fetched from a machine failed the intake checks; nothing was saved."""

    def __init__(self, host: str, problems: list[str]) -> None:
        super().__init__(f"result file(s) from {host} refused: {'; '.join(problems)}")


@dataclass
class SweepRun:
    """Everything one sweep run needs; `run()` does it."""

    spec: SweepSpec
    state: st.StateFile
    preview: SweepPreview
    results_dir: Path
    ssh_options: list[str] | None = None
    on_event: Callable[[int, str], None] | None = None  # (target index, what happened)
    ssh_wait_s: float = SSH_WAIT_S
    launch_wait_s: float = LAUNCH_WAIT_S
    provisioner_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    stop: threading.Event = field(default_factory=threading.Event)
    live_line: dict[int, str] = field(default_factory=dict)  # last output line per target
    _provisioners: dict[str, Provisioner] = field(default_factory=dict)
    _wheel: Path | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _teardown_locks: dict[int, threading.Lock] = field(default_factory=dict)
    _launching: set[int] = field(default_factory=set)  # targets inside Provisioner.launch

    @property
    def sweep_id(self) -> str:
        return str(self.state.data["id"])

    # -- helpers -------------------------------------------------------------------------

    def _event(self, index: int, text: str) -> None:
        if self.on_event:
            self.on_event(index, text)

    def provisioner(self, backend: str) -> Provisioner:
        with self._lock:
            if backend not in self._provisioners:
                opts = self.provisioner_options.get(backend, {})
                self._provisioners[backend] = provisioner_for(backend, **opts)
            return self._provisioners[backend]

    def wheel(self) -> Path:
        with self._lock:
            if self._wheel is None:
                self._wheel = ssh.build_wheel(Path(tempfile.mkdtemp(prefix="gpuplan-wheel-")))
            return self._wheel

    def committed_usd(self, now: dt.datetime | None = None) -> float:
        """Spent by finished targets + the worst case of targets still going."""
        total = 0.0
        for t, p in zip(self.state.data["targets"], self.preview.targets, strict=True):
            if t["state"] in (st.PENDING, st.SKIPPED, *st.FINAL_STATES, st.INTERRUPTED):
                total += st.spend_usd(t, now)
            else:
                total += max(p.worst_usd or 0.0, st.spend_usd(t, now))
        return total

    def spent_usd(self) -> float:
        return sum(st.spend_usd(t) for t in self.state.data["targets"])

    def remote_root(self, target: TargetSpec) -> str:
        """The target's own folder on its machine: BASE/<sweep id>/t<index>-<label slug>.

        BASE is the target's `remote_dir`, else $GPUPLAN_SWEEP_REMOTE_DIR, else
        DEFAULT_REMOTE_BASE (relative paths start at the remote login's home). Two targets reaching
        the same host and user never share a folder, so neither overwrites the other's runs.
        """
        base = target.remote_dir or os.environ.get(REMOTE_DIR_ENV) or DEFAULT_REMOTE_BASE
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", target.label).strip("-.")[:40]
        return f"{base.rstrip('/')}/{self.sweep_id}/t{target.index}" + (f"-{slug}" if slug else "")

    # -- one target ----------------------------------------------------------------------

    def _cloud_target(self, target: TargetSpec) -> CloudTarget:
        assert target.instance_type and target.region
        public_key = target.ssh_public_key
        if public_key is None and target.identity_file:
            candidate = Path(target.identity_file + ".pub").expanduser()
            public_key = candidate.read_text().strip() if candidate.exists() else None
        return CloudTarget(
            backend=target.backend,
            instance_type=target.instance_type,
            region=target.zone if target.backend == "gcp" and target.zone else target.region,
            spot=target.spot,
            image=target.image,
            key_name=target.key_name,
            subnet_id=target.subnet_id,
            security_group_ids=target.security_group_ids,
            project=target.project,
            ssh_user=target.ssh_user,
            ssh_public_key=public_key,
        )

    def _launch(self, target: TargetSpec) -> Machine:
        index = target.index
        provisioner = self.provisioner(target.backend)
        self.state.update_target(index, state=st.PROVISIONING, detail="launching", reason=None)
        self._event(index, "launching")
        now = st.utc_now()
        expires = now + dt.timedelta(minutes=self.spec.max_minutes_per_target)
        self._check_stop()
        self._launching.add(index)
        try:
            machine = provisioner.launch(
                self._cloud_target(target),
                self.sweep_id,
                expires,
                dead_man_script(self.spec.max_minutes_per_target, self.sweep_id, target.backend),
                f"gpuplan-{self.sweep_id}-{index}"[:63],
            )
            self.state.update_target(
                index,
                machine=st.machine_to_dict(machine),
                launched_at=machine.launched_at or st.iso(now),
                terminated_at=None,
                detail="waiting for the instance to run",
            )
        finally:
            self._launching.discard(index)
        self._event(index, f"launched {machine.instance_id}")
        if self.stop.is_set():
            raise Interrupted("interrupted")
        machine = provisioner.wait_running(machine, self.launch_wait_s)
        if not machine.user and target.ssh_user:
            machine = dataclasses.replace(machine, user=target.ssh_user)
        if not machine.identity_file and target.identity_file:
            machine = dataclasses.replace(machine, identity_file=target.identity_file)
        self.state.update_target(index, machine=st.machine_to_dict(machine))
        return machine

    def teardown(self, index: int) -> None:
        """Terminate target `index`'s cloud machine and confirm it (idempotent)."""
        lock = self._teardown_locks.setdefault(index, threading.Lock())
        with lock:
            t = self.state.target(index)
            machine = st.machine_from_dict(t.get("machine"))
            if machine is None or (machine.cloud is None and machine.backend not in ("aws", "gcp")):
                return
            if t.get("terminated_at"):
                return
            provisioner = self.provisioner(machine.cloud or machine.backend)
            self._event(index, f"terminating {machine.instance_id}")
            try:
                provisioner.terminate(machine)
                deadline = time.monotonic() + TERMINATE_CONFIRM_S
                while not provisioner.is_terminated(machine):
                    if time.monotonic() > deadline:
                        raise ProvisionError("termination not confirmed")
                    time.sleep(2)
            except ProvisionError as exc:
                note = f"{machine.instance_id}: {exc}; run `gpuplan sweep cleanup {self.sweep_id}`"
                self.state.update_target(index, reason=(t.get("reason") or "") + f" [{note}]")
                self._event(index, note)
                return
            self.state.update_target(index, terminated_at=st.iso(st.utc_now()))
            self._event(index, "terminated")

    def _collect(self, target: TargetSpec, machine: Machine, files: list[Path]) -> list[str]:
        """Check fetched result files as an upload is checked (benchmarks.intake: size,
        depth, schema, id pattern; a different result under the same id is never
        overwritten), record where they ran, write them atomically. RemoteResultRefused
        names every refused file; then nothing of this run is written."""
        out_dir = self.results_dir / self.sweep_id
        checked = [intake.check_file(path) for path in files]
        bad = [item.error for item in checked if item.result is None]
        if bad:
            raise RemoteResultRefused(machine.host, bad)
        where = {
            "sweep_id": self.sweep_id,
            "backend": target.backend,
            "cloud": machine.cloud or (target.backend if target.is_cloud else None),
            "region": machine.region or target.region,
            "instance_type": machine.instance_type or target.instance_type,
            "spot": bool(target.spot),
        }
        tagged = [
            dataclasses.replace(
                item, result=item.result.model_copy(update={"sweep": where, "schema_version": 3})
            )
            for item in checked
            if item.result is not None
        ]
        problems = intake.conflicts(tagged, out_dir)
        if problems:
            raise RemoteResultRefused(machine.host, problems)
        intake.save_all(tagged, out_dir)
        return [item.result.id for item in tagged if item.result is not None]

    def _run_one(
        self, target: TargetSpec, machine: Machine, python: str, run: RunItem, root: str
    ) -> None:
        index = target.index
        remote_out = f"{root}/runs/{run.key}"

        def line(text: str) -> None:
            self.live_line[index] = text

        ssh.run_benchmark(
            machine, python, run.argv(), remote_out, target.remote_env, line,
            timeout_s=self.spec.max_minutes_per_target * 60, extra=self.ssh_options,
        )  # fmt: skip
        self.state.update_target(index, state=st.COLLECTING, detail=f"collecting {run.key}")
        folder, files = ssh.fetch_results(machine, remote_out, self.ssh_options)
        try:
            if not files:
                raise ssh.RemoteCommandFailed(f"{run.key}: the run wrote no result file", 1, [])
            ids = self._collect(target, machine, files)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        self.state.update_run(index, run.key, status=st.DONE, result_ids=ids, error=None)
        self._event(index, f"collected {run.key}: {', '.join(ids)}")

    def run_target(self, target: TargetSpec) -> None:
        """One target from start to teardown; its outcome goes into the state file."""
        index = target.index
        runs = self.state.target(index)["runs"]
        pending = [r for r in self.spec.runs if runs[r.key]["status"] != st.DONE]
        if not pending:
            self.state.update_target(index, state=st.DONE, detail="all runs done", reason=None)
            return
        failures: list[str] = []
        try:
            if target.is_cloud:
                machine = self._launch(target)
            else:
                machine = Machine(
                    backend=target.backend, host=target.host or "localhost", user=target.user,
                    port=target.port, identity_file=target.identity_file,
                )  # fmt: skip
                self.state.update_target(
                    index, machine=st.machine_to_dict(machine), launched_at=st.iso(st.utc_now()),
                    terminated_at=None, reason=None,
                )  # fmt: skip
            if machine.backend != "local":
                self.state.update_target(index, state=st.PROVISIONING, detail="waiting for ssh")
                ssh.wait_for_ssh(machine, self.ssh_wait_s, extra=self.ssh_options, stop=self.stop)
            self._check_stop()
            self.state.update_target(index, state=st.INSTALLING, detail="installing")
            self._event(index, "installing")
            root = self.remote_root(target)
            wheel = None if target.remote_python else self.wheel()
            python = ssh.install(
                machine, root, wheel, target.remote_python, target.remote_env,
                extra=self.ssh_options,
            )  # fmt: skip
            for k, run in enumerate(pending, start=1):
                self._check_stop()
                detail = f"run {k} of {len(pending)}: {run.key}"
                self.state.update_target(index, state=st.RUNNING, detail=detail)
                self._event(index, detail)
                try:
                    self._run_one(target, machine, python, run, root)
                except (ssh.RemoteCommandFailed, ResultFileError, RemoteResultRefused) as exc:
                    if self.stop.is_set():
                        raise Interrupted("interrupted") from None
                    self.state.update_run(index, run.key, status=st.FAILED, error=str(exc))
                    failures.append(f"{run.key}: {exc}")
                    self._event(index, f"failed {run.key}: {exc}")
            if failures:
                self.state.update_target(
                    index, state=st.FAILED, detail="",
                    reason=f"{len(failures)} of {len(pending)} run(s) failed; {failures[0]}",
                )  # fmt: skip
            else:
                self.state.update_target(index, state=st.DONE, detail="all runs done", reason=None)
        except (Interrupted, KeyboardInterrupt):
            self.state.update_target(index, state=st.INTERRUPTED, reason="interrupted (Ctrl-C)")
        except (ssh.SshError, ssh.RemoteCommandFailed, ProvisionError, ValueError, OSError) as exc:
            if self.stop.is_set():
                self.state.update_target(index, state=st.INTERRUPTED, reason="interrupted (Ctrl-C)")
            else:
                self.state.update_target(index, state=st.FAILED, detail="", reason=str(exc))
                self._event(index, f"failed: {exc}")
        finally:
            if target.is_cloud:
                self.teardown(index)
            else:
                self.state.update_target(index, terminated_at=st.iso(st.utc_now()))

    def _check_stop(self) -> None:
        if self.stop.is_set():
            raise Interrupted("interrupted")

    # -- the whole sweep ---------------------------------------------------------------

    def _worker(self, target: TargetSpec, slots: threading.Semaphore) -> None:
        try:
            self.run_target(target)
        except Exception as exc:
            self.state.update_target(
                target.index, state=st.FAILED, reason=f"internal error: {exc!r}"
            )
        finally:
            slots.release()

    def _admit(self, target: TargetSpec) -> bool:
        """Whether the budget allows starting this target; if not, record why."""
        worst = self.preview.targets[target.index].worst_usd or 0.0
        committed = self.committed_usd()
        if committed + worst > self.spec.max_usd + 1e-9:
            self.state.update_target(
                target.index, state=st.SKIPPED,
                reason=(
                    f"not started: ${committed:,.2f} spent or committed + worst case "
                    f"${worst:,.2f} would pass max_usd ${self.spec.max_usd:,.2f}"
                ),
            )  # fmt: skip
            return False
        return True

    def run(self) -> int:
        """Run every unfinished target; 0 all done, 1 some failed or skipped, 130 Ctrl-C."""
        self.state.data["controller_pid"] = os.getpid()
        self.state.set_status("running")
        slots = threading.Semaphore(self.spec.max_parallel)
        threads: list[threading.Thread] = []
        try:
            for target in self.spec.targets:
                if self.state.target(target.index)["state"] == st.DONE:
                    continue
                while not slots.acquire(timeout=0.2):
                    pass
                if not self._admit(target):
                    slots.release()
                    continue
                self.state.update_target(target.index, state=st.PROVISIONING, detail="starting")
                thread = threading.Thread(
                    target=self._worker, args=(target, slots), daemon=True,
                    name=f"sweep-target-{target.index}",
                )  # fmt: skip
                threads.append(thread)
                thread.start()
            for thread in threads:
                while thread.is_alive():
                    thread.join(timeout=0.2)
        except KeyboardInterrupt:
            self.interrupt()
            return EXIT_INTERRUPTED
        states = [t["state"] for t in self.state.data["targets"]]
        self.state.set_status(
            "finished" if all(s == st.DONE for s in states) else "finished with failures"
        )
        return 0 if all(s == st.DONE for s in states) else 1

    def interrupt(self) -> None:
        """Ctrl-C: stop every ssh process and tear down every launched machine."""
        self.stop.set()
        ssh.stop_all()
        for t in self.state.data["targets"]:
            if t.get("machine") and not t.get("terminated_at"):
                self.teardown(t["index"])
        # A launch in flight returns a machine that must go too: wait for those calls.
        deadline = time.monotonic() + JOIN_AFTER_INTERRUPT_S
        while self._launching and time.monotonic() < deadline:
            time.sleep(0.1)
        for t in self.state.data["targets"]:  # launched while we were tearing down
            if t.get("machine") and not t.get("terminated_at"):
                self.teardown(t["index"])
            if t["state"] not in st.FINAL_STATES:
                self.state.update_target(
                    t["index"], state=st.INTERRUPTED, reason="interrupted (Ctrl-C)"
                )
        self.state.set_status("interrupted")


def cleanup_regions(states: list[dict[str, Any]]) -> dict[str, list[str]]:
    """backend -> where these sweeps launched: AWS regions; GCP zones, as
    projects/P/zones/Z when the target named its project."""
    regions: dict[str, set[str]] = {}
    for data in states:
        spec_targets = (data.get("spec") or {}).get("targets") or []
        for t in data.get("targets", []):
            machine = t.get("machine") or {}
            cloud = machine.get("cloud") or (
                machine.get("backend") if machine.get("backend") in ("aws", "gcp") else None
            )
            if not cloud:
                continue
            place = machine.get("zone") if cloud == "gcp" else machine.get("region")
            index = t.get("index", -1)
            raw = spec_targets[index] if 0 <= index < len(spec_targets) else {}
            project = raw.get("project") if isinstance(raw, dict) else None
            if cloud == "gcp" and place and isinstance(project, str) and project:
                place = f"projects/{project}/zones/{place}"
            if place:
                regions.setdefault(cloud, set()).add(place)
    return {cloud: sorted(places) for cloud, places in regions.items()}


def cleanup(
    regions: dict[str, list[str]], sweep_id: str | None, dry_run: bool,
    provisioner: Callable[[str], Provisioner] = provisioner_for,
) -> list[CleanupReport]:  # fmt: skip
    """Find every machine tagged gpuplan-sweep (of `sweep_id`, or any) in these regions,
    terminate those still there and confirm it (benchmarks.runners.cleanup)."""
    return [
        terminate_all(provisioner(cloud), places, sweep_id, dry_run=dry_run)
        for cloud, places in sorted(regions.items())
    ]
