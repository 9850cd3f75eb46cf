"""Run a sweep: every target in parallel (up to max_parallel), each through its steps.

A target: provision (cloud) -> wait for ssh -> install -> each pending run (bench run,
fetch, validate, write into the results folder with where it ran) -> teardown (cloud:
terminate, then confirm with a describe/get call). The state file is saved after every
step; a cloud machine is in it before its launch call is made, so it can be found and
ended whatever happens next. One target failing is recorded with its reason; the others
go on.

Limits bind per target and per sweep, before and during: no target starts once the
dollars spent plus the worst case of every running target and of this one would pass
max_usd (an unknown worst case is a refusal, never $0); a target stops at
max_minutes_per_target counted from its start (all its steps and runs together); the
sweep stops when what it has spent reaches max_usd. Ctrl-C (KeyboardInterrupt in the
calling thread) stops every ssh process, ends every machine recorded or findable by tag
(waiting for each confirmation, through further Ctrl-C presses: see teardown.py) and
returns 130; `outcomes` says what was confirmed gone.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import re
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import intake
from benchmarks.results import ResultFileError
from benchmarks.runners import ship, ssh
from benchmarks.runners.cleanup import CleanupReport, terminate_all
from benchmarks.runners.machine import (
    CloudTarget,
    Launch,
    Machine,
    Provisioner,
    ProvisionError,
)
from benchmarks.runners.remote_output import kept, plain, plain_lines
from benchmarks.runners.ssh import RemoteResultRefused
from benchmarks.sweep import state as st
from benchmarks.sweep import teardown as td
from benchmarks.sweep.backends import provisioner_for
from benchmarks.sweep.preview import SweepPreview
from benchmarks.sweep.spec import RunItem, SweepSpec, TargetSpec
from benchmarks.sweep.startup import dead_man_script
from edge.format import money

EXIT_INTERRUPTED = 130
LAUNCH_WAIT_S = 900.0  # for the cloud to report the instance running with an address
SSH_WAIT_S = 600.0  # for sshd to answer on a fresh machine
TEARDOWN_MARGIN_S = 60.0  # a cloud target's runs end this long before its minutes are up
DEFAULT_REMOTE_BASE = ".gpuplan-sweep"  # on the machine, relative to the login's home
REMOTE_DIR_ENV = "GPUPLAN_SWEEP_REMOTE_DIR"  # another BASE for targets without remote_dir


class Interrupted(RuntimeError):
    """The sweep is stopping (Ctrl-C, or its dollar cap); the target ends as interrupted."""


class OutOfTime(RuntimeError):
    """The target reached max_minutes_per_target; its remaining runs are not started."""


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
    _wheel: ship.Wheel | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _teardown_locks: dict[int, threading.Lock] = field(default_factory=dict)
    _launching: set[int] = field(default_factory=set)  # targets inside Provisioner.launch
    _stop_lock: threading.Lock = field(default_factory=threading.Lock)
    _launched: dict[int, Machine] = field(default_factory=dict)  # what launch calls returned
    _ends: dict[int, float] = field(default_factory=dict)  # time.monotonic() a target must end
    halted: str | None = None  # why the sweep stopped on its own (its dollar cap)
    outcomes: dict[int, td.Outcome] = field(default_factory=dict)  # teardown, per target
    on_notice: Callable[[str], None] | None = None  # sweep-level messages (Ctrl-C)

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
                opts = {**self.bounds(backend), **self.provisioner_options.get(backend, {})}
                self._provisioners[backend] = provisioner_for(backend, **opts)
            return self._provisioners[backend]

    def bounds(self, backend: str) -> dict[str, float]:
        """Limits a provisioner's calls get from the target's minutes: each SkyPilot call
        a quarter of them (at most CALL_TIMEOUT_S), so a launch and the search of its
        teardown, both abandoned, still end inside the target's limit."""
        if backend != "skypilot":
            return {}
        from benchmarks.runners.skypilot import CALL_TIMEOUT_S

        return {"call_timeout_s": min(CALL_TIMEOUT_S, self.spec.max_minutes_per_target * 15)}

    def wheel(self) -> ship.Wheel:
        """The wheel of this gpuplan (runners/ship.py: built or rebuilt once, cached)."""
        with self._lock:
            if self._wheel is None:
                self._wheel = ship.local_wheel()
            return self._wheel

    def committed_usd(self, now: dt.datetime | None = None) -> float:
        """Spent by finished targets + the worst case of targets still going."""
        total = 0.0
        for t, p in zip(self.state.data["targets"], self.preview.targets, strict=True):
            if t["state"] in (st.PENDING, st.SKIPPED, *st.FINAL_STATES, st.INTERRUPTED):
                total += st.spend_usd(t, now)
            else:
                worst = float("inf") if p.worst_usd is None else p.worst_usd
                total += max(worst, st.spend_usd(t, now))
        return total

    def remote_root(self, target: TargetSpec) -> str:
        """The target's own folder on its machine: BASE/<sweep id>/t<index>-<label slug>.

        BASE is the target's `remote_dir`, else $GPUPLAN_SWEEP_REMOTE_DIR, else
        DEFAULT_REMOTE_BASE (relative paths start at the remote login's home). Two targets reaching
        the same host and user never share a folder, so neither overwrites the other's runs.
        """
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", target.label).strip("-.")[:40]
        return f"{self.remote_base(target)}/{self.sweep_id}/t{target.index}" + (
            f"-{slug}" if slug else ""
        )

    @staticmethod
    def remote_base(target: TargetSpec) -> str:
        """BASE of the target's remote folders (see remote_root), without a final '/'."""
        base = target.remote_dir or os.environ.get(REMOTE_DIR_ENV) or DEFAULT_REMOTE_BASE
        return base.rstrip("/") or "/"

    def remote_venv(self, target: TargetSpec) -> str:
        """The venv the wheel goes into: the target's remote_venv (shared by every sweep
        that names it: the installer keeps what it finds there), else the sweep's own,
        BASE/<sweep id>/venv (the sweep's targets on one host take turns installing)."""
        return target.remote_venv or f"{self.remote_base(target)}/{self.sweep_id}/venv"

    def _file_mounts(self, target: TargetSpec) -> tuple[tuple[str, str], ...]:
        """SkyPilot: the wheel as a file mount, where the SSH installer looks for it."""
        if target.remote_python:
            return ()
        wheel = self.wheel()
        remote = f"{ssh.wheel_folder(self.remote_root(target), wheel)}/{wheel.name}"
        if not remote.startswith(("/", "~")):
            remote = f"~/{remote}"  # relative paths start at the login's home
        return ((remote, str(wheel.path)),)

    # -- one target ----------------------------------------------------------------------

    def _cloud_target(self, target: TargetSpec) -> CloudTarget:
        if target.backend == "skypilot":
            return CloudTarget(
                backend="skypilot", instance_type=target.instance_type or "",
                region=target.region or "", spot=target.spot, image=target.image,
                cloud=target.cloud, zone=target.zone, accelerators=target.accelerators,
                file_mounts=self._file_mounts(target),
            )  # fmt: skip
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
        """Launch the target's machine, recorded in the state file before the call is made."""
        index = target.index
        provisioner = self.provisioner(target.backend)
        cloud = self._cloud_target(target)
        name = f"gpuplan-{self.sweep_id}-{index}"[:63]
        record = Machine(
            backend=target.backend, host="", cloud=target.backend, region=target.region,
            zone=target.zone if target.backend in ("gcp", "skypilot") else None,
            instance_type=target.instance_type, spot=target.spot, sweep_id=self.sweep_id,
            name=name, project=target.project,
        )  # fmt: skip
        now = st.utc_now()
        with self._stop_lock:  # Ctrl-C sees either no launch or this one recorded
            self._check_stop()
            self.state.update_target(
                index, state=st.PROVISIONING, detail="launching", reason=None,
                machine=st.machine_to_dict(record), launched_at=st.iso(now), terminated_at=None,
            )  # fmt: skip
            self._launching.add(index)
        self._event(index, "launching")
        expires = now + dt.timedelta(minutes=self.spec.max_minutes_per_target)
        try:
            switch = dead_man_script(
                self.spec.max_minutes_per_target, self.sweep_id, target.backend
            )
            machine = provisioner.launch(Launch(cloud, self.sweep_id, expires, switch, name))
            machine = dataclasses.replace(machine, name=machine.name or name)
            self._launched[index] = machine
            self.state.update_target(
                index, machine=st.machine_to_dict(machine),
                detail="waiting for the instance to run",
            )  # fmt: skip
        finally:
            self._launching.discard(index)
        self._event(index, f"launched {machine.instance_id}")
        self._check_stop()
        wait_s = min(self.launch_wait_s, self.time_left(index))
        machine = provisioner.wait_running(machine, wait_s)
        if not machine.user and target.ssh_user:
            machine = dataclasses.replace(machine, user=target.ssh_user)
        if not machine.identity_file and target.identity_file:
            machine = dataclasses.replace(machine, identity_file=target.identity_file)
        self.state.update_target(index, machine=st.machine_to_dict(machine))
        return machine

    def teardown(self, index: int) -> td.Outcome | None:
        """End target `index`'s cloud machine and confirm it (idempotent); None: not a cloud
        target. A machine whose launch call has not returned is found by tag and name."""
        lock = self._teardown_locks.setdefault(index, threading.Lock())
        with lock:
            t = self.state.target(index)
            record = st.machine_from_dict(t.get("machine"))
            if record is None or st.machine_cloud(t.get("machine")) is None:
                return None
            if index in self.outcomes and self.outcomes[index].status != td.UNCONFIRMED:
                return self.outcomes[index]
            where = record.zone or record.region or "?"
            if t.get("terminated_at"):
                done = td.Outcome(
                    index, td.CONFIRMED, record.instance_id or str(record.name), where
                )
                self.outcomes[index] = done
                return done
            provisioner = self.provisioner(record.cloud or record.backend)
            outcome = self._end(index, provisioner, record, where)
            self.outcomes[index] = outcome
            if outcome.status == td.UNCONFIRMED:
                note = (
                    f"{outcome.machine}: {outcome.reason}; "
                    f"run `gpuplan sweep cleanup {self.sweep_id}`"
                )
                self.state.update_target(index, reason=kept((t.get("reason") or "") + f" [{note}]"))
                self._event(index, note)
            elif outcome.status == td.NOTHING:  # no machine, so nothing was billed
                self.state.update_target(
                    index, launched_at=None, terminated_at=st.iso(st.utc_now())
                )
                self._event(index, outcome.status)
            else:
                self.state.update_target(index, terminated_at=st.iso(st.utc_now()))
                self._event(index, outcome.status)
            return outcome

    def _end(self, index: int, provisioner: Provisioner, record: Machine, where: str) -> td.Outcome:
        label = record.instance_id or str(record.name)
        try:
            machine: Machine | None = record
            if not record.instance_id:
                self._event(index, f"finding {record.name} (its launch call has not returned)")
                machine = td.find_pending(
                    provisioner, record, td.search_places(record, record.project),
                    lambda: self._launched.get(index), lambda: index in self._launching,
                )  # fmt: skip
            if machine is None:
                return td.Outcome(index, td.NOTHING, label, where)
            label = machine.instance_id or label
            self._event(index, f"terminating {label}")
            td.end_machine(provisioner, machine)
        except ProvisionError as exc:
            return td.Outcome(index, td.UNCONFIRMED, label, where, plain(str(exc)))
        return td.Outcome(index, td.CONFIRMED, label, where)

    # -- limits --------------------------------------------------------------------------

    def start_clock(self, target: TargetSpec) -> None:
        """The target's minutes start now; a cloud target keeps a margin for its teardown."""
        limit_s = self.spec.max_minutes_per_target * 60
        margin = min(TEARDOWN_MARGIN_S, 0.1 * limit_s) if target.is_cloud else 0.0
        self._ends[target.index] = time.monotonic() + limit_s - margin

    def time_left(self, index: int) -> float:
        """Seconds target `index` may still run (its max_minutes_per_target, all steps)."""
        end = self._ends.get(index)
        return float("inf") if end is None else max(0.0, end - time.monotonic())

    def _check_time(self, index: int, what: str) -> float:
        left = self.time_left(index)
        if left < 1.0:
            raise OutOfTime(
                f"stopped at max_minutes_per_target ({self.spec.max_minutes_per_target:g} min) "
                f"before {what}"
            )
        return left

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
            "cloud": target.provider
            if target.backend == "skypilot"
            else (machine.cloud or (target.backend if target.is_cloud else None)),
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

        left = self._check_time(index, run.key)
        ssh.run_benchmark(
            machine, python, run.argv(), remote_out, target.remote_env, line,
            timeout_s=left, extra=self.ssh_options,
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

    def _connect(self, target: TargetSpec) -> Machine:
        """The target's machine, launched (cloud) or named (ssh, local), answering ssh."""
        index = target.index
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
            wait_s = min(self.ssh_wait_s, self._check_time(index, "ssh answered"))
            ssh.wait_for_ssh(machine, wait_s, extra=self.ssh_options, stop=self.stop)
        return machine

    def run_target(self, target: TargetSpec) -> None:
        """One target from start to teardown; its outcome goes into the state file."""
        index = target.index
        runs = self.state.target(index)["runs"]
        pending = [r for r in self.spec.runs if runs[r.key]["status"] != st.DONE]
        if not pending:
            self.state.update_target(index, state=st.DONE, detail="all runs done", reason=None)
            return
        self.start_clock(target)
        failures: list[str] = []
        try:
            machine = self._connect(target)
            self._check_stop()
            left = self._check_time(index, "installing")
            self.state.update_target(index, state=st.INSTALLING, detail="installing")
            self._event(index, "installing")
            root = self.remote_root(target)
            wheel = None if target.remote_python else self.wheel()
            constraints = (
                Path(target.pip_constraints).expanduser() if target.pip_constraints else None
            )
            python = ssh.install(
                machine, root, wheel, target.remote_python, target.remote_env,
                extra=self.ssh_options, limit_s=left, venv=self.remote_venv(target),
                torch_index_url=target.torch_index_url, constraints=constraints,
            )  # fmt: skip
            for k, run in enumerate(pending, start=1):
                self._check_stop()
                self._check_time(index, run.key)
                detail = f"run {k} of {len(pending)}: {run.key}"
                self.state.update_target(index, state=st.RUNNING, detail=detail)
                self._event(index, detail)
                try:
                    self._run_one(target, machine, python, run, root)
                except (ssh.RemoteCommandFailed, ResultFileError, RemoteResultRefused) as exc:
                    if self.stop.is_set():
                        raise Interrupted("interrupted") from None
                    error = kept(str(exc))
                    self.state.update_run(index, run.key, status=st.FAILED, error=error)
                    failures.append(f"{run.key}: {error}")
                    self._event(index, f"failed {run.key}: {error}")
            if failures:
                self.state.update_target(
                    index, state=st.FAILED, detail="",
                    reason=kept(f"{len(failures)} of {len(pending)} run(s) failed; {failures[0]}"),
                )  # fmt: skip
            else:
                self.state.update_target(index, state=st.DONE, detail="all runs done", reason=None)
        except OutOfTime as exc:
            done = sum(
                1 for r in self.state.target(index)["runs"].values() if r["status"] == st.DONE
            )
            self.state.update_target(
                index, state=st.STOPPED, detail="",
                reason=f"{exc}; {done} of {len(runs)} run(s) done",
            )  # fmt: skip
            self._event(index, str(exc))
        except (Interrupted, KeyboardInterrupt):
            self._mark_stopped(index)
        except (
            ssh.SshError, ssh.RemoteCommandFailed, ProvisionError, ship.ShipError, ValueError,
            OSError,
        ) as exc:  # fmt: skip
            if self.stop.is_set():
                self._mark_stopped(index)
            else:
                reason = kept(plain_lines(str(exc)))
                self.state.update_target(index, state=st.FAILED, detail="", reason=reason)
                self._event(index, f"failed: {reason}")
        finally:
            if target.is_cloud:
                self.teardown(index)
            else:
                self.state.update_target(index, terminated_at=st.iso(st.utc_now()))

    def _mark_stopped(self, index: int) -> None:
        """The target ended because the sweep stopped: Ctrl-C, or the sweep's dollar cap."""
        if self.halted:
            self.state.update_target(index, state=st.STOPPED, detail="", reason=self.halted)
        else:
            self.state.update_target(index, state=st.INTERRUPTED, reason="interrupted (Ctrl-C)")

    def _check_stop(self) -> None:
        if self.stop.is_set():
            raise Interrupted("interrupted")

    # -- the whole sweep ---------------------------------------------------------------

    def _worker(self, target: TargetSpec, slots: threading.Semaphore) -> None:
        try:
            self.run_target(target)
        except Exception as exc:
            self.state.update_target(
                target.index, state=st.FAILED, reason=kept(f"internal error: {exc!r}")
            )
        finally:
            slots.release()

    def _admit(self, target: TargetSpec) -> bool:
        """Whether the budget allows starting this target; if not, record why.

        An unknown worst case (no price for a cloud target) is a refusal, never $0.
        """
        worst = self.preview.targets[target.index].worst_usd
        if worst is None:
            self.state.update_target(
                target.index, state=st.SKIPPED,
                reason="not started: its price is unknown, so its worst case cannot be capped",
            )  # fmt: skip
            return False
        worst = worst or 0.0
        committed = self.committed_usd()
        if self.halted or committed + worst > self.spec.max_usd + 1e-9:
            self.state.update_target(
                target.index, state=st.SKIPPED,
                reason=(
                    f"not started: ${committed:,.2f} spent or committed + worst case "
                    f"{money(worst, cents=True)} would pass max_usd "
                    f"{money(self.spec.max_usd, cents=True)}"
                ),
            )  # fmt: skip
            return False
        return True

    def _watch_budget(self) -> None:
        """Stop the sweep once what it has spent reaches max_usd (a running check). A sweep
        that has spent nothing has reached no cap, so `max_usd = 0` runs free targets."""
        spent = self.spent_usd_now()
        if self.halted or spent <= 0.0 or spent < self.spec.max_usd - 1e-9:
            return
        self.halted = (
            f"stopped: the sweep reached max_usd ${self.spec.max_usd:,.2f} "
            f"(spent ${self.spent_usd_now():,.2f})"
        )
        with self._stop_lock:
            self.stop.set()
        ssh.stop_all()

    def spent_usd_now(self) -> float:
        """Dollars spent so far, counting machines still running up to now."""
        now = st.utc_now()
        return sum(st.spend_usd(t, now) for t in self.state.data["targets"])

    def _wait(self, thread: threading.Thread | None, slots: threading.Semaphore) -> bool:
        """Wait 0.2 s for a free slot (thread None) or for `thread` to end; True when done."""
        self._watch_budget()
        if thread is None:
            return slots.acquire(timeout=0.2)
        thread.join(timeout=0.2)
        return not thread.is_alive()

    def run(self) -> int:
        """Run every unfinished target; 0 all done, 1 some failed, skipped or stopped at a
        limit, 130 Ctrl-C."""
        self.state.data["controller_pid"] = os.getpid()
        self.state.set_status("running")
        slots = threading.Semaphore(self.spec.max_parallel)
        threads: list[threading.Thread] = []
        try:
            for target in self.spec.targets:
                if self.state.target(target.index)["state"] == st.DONE:
                    continue
                while not self._wait(None, slots):
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
                while not self._wait(thread, slots):
                    pass
        except KeyboardInterrupt:
            self.interrupt()
            return EXIT_INTERRUPTED
        states = [t["state"] for t in self.state.data["targets"]]
        if all(s == st.DONE for s in states):
            status = "finished"
        elif self.halted or st.STOPPED in states:
            status = "stopped at a limit"
        else:
            status = "finished with failures"
        self.state.set_status(status)
        return 0 if status == "finished" else 1

    def interrupt(self) -> None:
        """Ctrl-C: stop every ssh process, then end every machine recorded in the state
        file (found by tag and name when its launch call has not returned), each in its
        own thread, waiting for each confirmation. Further Ctrl-C presses do not stop
        this (teardown.CtrlCGuard); the third stops waiting, and `outcomes` then lacks
        the targets whose teardown had not finished."""

        def notice(_: int) -> None:
            if self.on_notice:
                self.on_notice(
                    "still ending the sweep's machines; Ctrl-C once more to stop waiting "
                    f"(then run `gpuplan sweep cleanup {self.sweep_id}`)"
                )

        try:
            with td.CtrlCGuard(notice):
                with self._stop_lock:
                    self.stop.set()
                ssh.stop_all()
                for thread in self._teardown_threads():
                    while thread.is_alive():
                        thread.join(timeout=0.2)
        except td.Abandoned:
            pass
        for t in self.state.data["targets"]:
            if t["state"] not in st.FINAL_STATES:
                self.state.update_target(
                    t["index"], state=st.INTERRUPTED, reason="interrupted (Ctrl-C)"
                )
        self.state.set_status("interrupted")

    def end_leftovers(self) -> list[td.Outcome]:
        """Before a resume: end every cloud machine the state records and no teardown
        confirmed gone (a controller killed mid-sweep leaves its machines running until
        their dead-man switch), so no target ever has two machines. Each outcome says
        what was confirmed."""
        pending = [
            t["index"] for t in self.state.data["targets"]
            if st.machine_cloud(t.get("machine")) and not t.get("terminated_at")
        ]  # fmt: skip
        return [outcome for i in pending if (outcome := self.teardown(i)) is not None]

    def _teardown_threads(self) -> list[threading.Thread]:
        """One started thread per cloud machine recorded and not yet confirmed gone."""
        threads = [
            threading.Thread(target=self.teardown, args=(t["index"],), daemon=True,
                             name=f"teardown-{t['index']}")
            for t in self.state.data["targets"]
            if st.machine_cloud(t.get("machine")) and not t.get("terminated_at")
        ]  # fmt: skip
        for thread in threads:
            thread.start()
        return threads

    def still_running(self) -> list[str]:
        """Cloud machines not confirmed gone: 'instance (region)' for each. A teardown
        sets terminated_at once the cloud confirmed it (or nothing was launched)."""
        left = []
        for t in self.state.data["targets"]:
            record = st.machine_from_dict(t.get("machine"))
            if record is None or not st.machine_cloud(t.get("machine")) or t.get("terminated_at"):
                continue
            where = record.zone or record.region or "?"
            left.append(f"{record.instance_id or record.name} ({where})")
        return left


def cleanup_regions(states: list[dict[str, Any]]) -> dict[str, list[str]]:
    """backend -> where these sweeps launched: AWS regions; GCP zones, as
    projects/P/zones/Z when the target named its project."""
    regions: dict[str, set[str]] = {}
    for data in states:
        spec_targets = (data.get("spec") or {}).get("targets") or []
        for t in data.get("targets", []):
            machine = t.get("machine") or {}
            cloud = st.machine_cloud(machine)
            if not cloud:
                continue
            place = machine.get("zone") if cloud == "gcp" else machine.get("region")
            if cloud == "skypilot":
                place = "any"  # SkyPilot's status covers every cloud
            index = t.get("index", -1)
            raw = spec_targets[index] if 0 <= index < len(spec_targets) else {}
            project = raw.get("project") if isinstance(raw, dict) else None
            if cloud == "gcp" and place and isinstance(project, str) and project:
                place = f"projects/{project}/zones/{place}"
            if place:
                regions.setdefault(cloud, set()).add(place)
    return {cloud: sorted(places) for cloud, places in regions.items()}


CLEANUP_CALL_S = 30.0  # cleanup: the most one SkyPilot call may take before it is abandoned


def _cleanup_provisioner(cloud: str) -> Provisioner:
    opts = {"call_timeout_s": CLEANUP_CALL_S} if cloud == "skypilot" else {}
    return provisioner_for(cloud, **opts)


def cleanup(
    regions: dict[str, list[str]], sweep_id: str | None, dry_run: bool,
    provisioner: Callable[[str], Provisioner] = _cleanup_provisioner,
) -> list[CleanupReport]:  # fmt: skip
    """Find every machine tagged gpuplan-sweep (of `sweep_id`, or any) in these regions,
    terminate those still there and confirm it (benchmarks.runners.cleanup). A cloud
    whose search fails (no permission, an API server that does not answer) gets a report
    with that `error`; the other clouds are still cleaned."""
    reports = []
    for cloud, places in sorted(regions.items()):
        try:
            reports.append(terminate_all(provisioner(cloud), places, sweep_id, dry_run=dry_run))
        except ProvisionError as exc:
            reports.append(
                CleanupReport(cloud, list(places), sweep_id, dry_run, error=plain(str(exc)))
            )
    return reports
