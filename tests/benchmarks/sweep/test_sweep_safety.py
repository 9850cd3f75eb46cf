"""A sweep never leaves a machine running or spends past its cap.

The cloud is a FakeProvisioner that behaves like a slow cloud (creates the machine at
once, returns from launch later; confirms a termination late or never); the sweep runs
as a real `gpuplan` process that gets SIGINT, as a user's Ctrl-C, at each step.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.sweep import state as st
from benchmarks.sweep.backends import register
from benchmarks.sweep.orchestrate import SweepRun
from benchmarks.sweep.preview import NoData, preview_sweep
from benchmarks.sweep.spec import load_spec
from tests.benchmarks.sweep.conftest import ONE_RUN, REMOTE, spec_text, sweep_cli
from tests.benchmarks.sweep.fakes import FakeProvisioner, log_events
from tests.sshd import SshServer

HERE = Path(__file__).resolve().parent


def aws_target(region: str = "us-east-1", extra: str = "") -> str:
    return (
        f'[[targets]]\nbackend = "aws"\ninstance_type = "g5.xlarge"\nregion = "{region}"\n'
        f"{REMOTE}{extra}\n"
    )


class Controller:
    """`gpuplan sweep run` in its own process, with the fake cloud of sweep_with_fake.py."""

    def __init__(self, tmp_path: Path, sshd: SshServer, spec: str, **fake: str) -> None:
        self.log = tmp_path / "fake.log"
        self.sweeps = tmp_path / "sweeps"
        spec_path = tmp_path / "spec.toml"
        spec_path.write_text(spec)
        env = {
            **os.environ, "FAKE_LOG": str(self.log), "FAKE_SSH_PORT": str(sshd.port),
            "GPUPLAN_SWEEP_DIR": str(self.sweeps), "PYTHONUNBUFFERED": "1",
            "GPUPLAN_SSH_OPTIONS": f"-o UserKnownHostsFile={sshd.known_hosts}",
            **{f"FAKE_{k.upper()}": v for k, v in fake.items()},
        }  # fmt: skip
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "sweep_with_fake.py"), "sweep", "run", str(spec_path),
             "--yes", "--results", str(tmp_path / "results")],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in log_events(self.log) if e["event"] == kind]

    def wait_for(self, condition: Any, what: str, timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not condition():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()
                raise AssertionError(f"never {what}: {self.proc.communicate()[0]}")
            time.sleep(0.05)

    def state(self) -> dict[str, Any]:
        (path,) = [p for p in self.sweeps.glob("*.json")]
        return dict(json.loads(path.read_text()))

    def ctrl_c(self) -> None:
        self.proc.send_signal(signal.SIGINT)

    def finish(self, timeout_s: float = 60.0) -> str:
        output, _ = self.proc.communicate(timeout=timeout_s)
        return str(output)


def target_detail(controller: Controller, text: str) -> Any:
    def seen() -> bool:
        try:
            return any(text in (t.get("detail") or "") for t in controller.state()["targets"])
        except (ValueError, FileNotFoundError):
            return False

    return seen


@pytest.mark.timeout(120)
def test_ctrl_c_while_the_launch_call_has_not_returned_ends_the_machine(
    sshd: SshServer, tmp_path: Path
) -> None:
    """The machine exists while its launch call is still out: it is recorded before the
    call, found by tag and name, terminated and confirmed, without waiting for the call."""
    sweep = Controller(tmp_path, sshd, spec_text(aws_target(), ONE_RUN), launch_delay_s="60")
    sweep.wait_for(lambda: sweep.events("launch"), "launched")
    record = sweep.state()["targets"][0]["machine"]
    assert record["instance_id"] is None and record["name"] and record["region"] == "us-east-1"
    started = time.monotonic()
    sweep.ctrl_c()
    output = sweep.finish()
    assert sweep.proc.returncode == 130, output
    assert time.monotonic() - started < 30  # not the 60 s of the launch call
    (launch,) = sweep.events("launch")
    assert [e["id"] for e in sweep.events("terminate")] == [launch["id"]]
    assert f"interrupted: 1 machine(s) confirmed terminated ({launch['id']})" in output
    target = sweep.state()["targets"][0]
    assert target["state"] == "interrupted" and target["terminated_at"]


@pytest.mark.timeout(120)
def test_ctrl_c_while_installing_ends_the_machine(sshd: SshServer, tmp_path: Path) -> None:
    """Interrupted during the install step (an import check that hangs)."""
    hang = tmp_path / "hanging-python"
    hang.write_text("#!/bin/sh\nsleep 300\n")
    hang.chmod(0o755)
    target = aws_target().replace(
        f'remote_python = "{sys.executable}"', f'remote_python = "{hang}"'
    )
    sweep = Controller(tmp_path, sshd, spec_text(target, ONE_RUN), ssh_user=sshd.user,
                       ssh_key=str(sshd.identity_file))  # fmt: skip
    sweep.wait_for(target_detail(sweep, "installing"), "installing")
    time.sleep(0.5)
    sweep.ctrl_c()
    output = sweep.finish()
    assert sweep.proc.returncode == 130, output
    (launch,) = sweep.events("launch")
    assert [e["id"] for e in sweep.events("terminate")] == [launch["id"]]
    assert "confirmed terminated" in output and "may still be running" not in output


def _interrupted_twice_in_teardown(
    sshd: SshServer, tmp_path: Path, confirm_after_s: str
) -> Controller:
    """A sweep of one AWS target whose run hangs: Ctrl-C once it has launched, and again
    once the teardown has asked the cloud to terminate (confirmed `confirm_after_s` later)."""
    sweep = Controller(tmp_path, sshd, spec_text(aws_target(), ONE_RUN), hang_s="60",
                       confirm_after_s=confirm_after_s)  # fmt: skip
    sweep.wait_for(lambda: sweep.events("launch"), "launched")
    time.sleep(0.3)
    sweep.ctrl_c()
    sweep.wait_for(lambda: sweep.events("terminate"), "asked to terminate")
    sweep.ctrl_c()
    return sweep


@pytest.mark.timeout(120)
def test_a_second_ctrl_c_does_not_stop_the_teardown(sshd: SshServer, tmp_path: Path) -> None:
    """Termination is confirmed 4 s after it is asked; a second Ctrl-C in that time is
    answered with what is going on, and the teardown still waits for the confirmation."""
    sweep = _interrupted_twice_in_teardown(sshd, tmp_path, confirm_after_s="4")
    output = sweep.finish()
    assert sweep.proc.returncode == 130, output
    assert "still ending the sweep's machines; Ctrl-C once more to stop waiting" in output
    assert "interrupted: 1 machine(s) confirmed terminated" in output
    assert sweep.state()["targets"][0]["terminated_at"]


@pytest.mark.timeout(120)
def test_a_third_ctrl_c_names_what_may_still_run_and_the_cleanup_command(
    sshd: SshServer, tmp_path: Path
) -> None:
    """A cloud that never confirms: the third Ctrl-C stops waiting, and the output says
    which machine may still run and how to clean it up, never that it was torn down."""
    sweep = _interrupted_twice_in_teardown(sshd, tmp_path, confirm_after_s="inf")
    time.sleep(0.5)
    sweep.ctrl_c()
    output = sweep.finish(timeout_s=30)
    assert sweep.proc.returncode == 130, output
    (launch,) = sweep.events("launch")
    sweep_id = sweep.state()["id"]
    assert f"may still be running: {launch['id']} (us-east-1)" in output
    assert f"gpuplan sweep cleanup {sweep_id}" in output
    assert "confirmed terminated" not in output and "torn down" not in output
    target = sweep.state()["targets"][0]
    assert target["state"] == "interrupted" and not target["terminated_at"]


@pytest.fixture()
def slow_cloud(tmp_path: Path) -> Iterator[FakeProvisioner]:
    fake = FakeProvisioner(log_path=str(tmp_path / "fake.log"), launch_delay_s=120)
    register("aws", lambda **_: fake)
    yield fake
    fake.release.set()
    register("aws", None)


@pytest.mark.timeout(60)
def test_cleanup_finds_a_machine_whose_launch_call_never_returned(
    slow_cloud: FakeProvisioner, sweep_dir: Path, tmp_path: Path
) -> None:
    """The controller is stuck in (or died during) the launch call: `sweep cleanup`
    still knows where to look, from the record written before the call."""
    spec_path = tmp_path / "stuck.toml"
    spec_path.write_text(spec_text(aws_target(region="us-east-2"), ONE_RUN))
    spec = load_spec(spec_path)
    data = st.new_state(
        "stuck-20261201t000000-ab12", str(spec_path), spec.raw, str(tmp_path / "r"),
        [t.label for t in spec.targets], [r.key for r in spec.runs], [1.006],
    )  # fmt: skip
    state = st.StateFile(data)
    state.save()
    sweep = SweepRun(spec, state, preview_sweep(spec, NoData()), tmp_path / "r")
    launcher = threading.Thread(target=sweep._launch, args=(spec.targets[0],), daemon=True)
    launcher.start()
    deadline = time.monotonic() + 20
    while not log_events(tmp_path / "fake.log"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert launcher.is_alive()  # the launch call has not returned
    (left,) = slow_cloud.find_launched(["us-east-2"])
    outcome = sweep_cli("cleanup", state.data["id"])
    assert outcome.exit_code == 0, outcome.output
    assert f"{left.instance_id}: confirmed down (terminated now)" in outcome.output
    assert slow_cloud.find_launched(["us-east-2"]) == []


@pytest.mark.timeout(120)
def test_a_target_stops_at_its_minutes_for_all_its_runs_together(
    sshd: SshServer, sweep_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three long runs on a target limited to a quarter minute at $3,600/h (worst case
    $15 of a $60 cap): the first run is ended at the limit, the others never start, the
    target is `stopped` and the sweep is not reported as finished. Before, the limit
    applied to each run, so three runs could take three times the target's minutes."""
    monkeypatch.setenv("GPUPLAN_SSH_OPTIONS", f"-o UserKnownHostsFile={sshd.known_hosts}")
    runs = ONE_RUN.replace("steps = 2", "steps = 1000000").replace("batch = 2", "batch = [1, 2, 3]")
    target = (
        f'[[targets]]\nbackend = "ssh"\nhost = "{sshd.host}"\nport = {sshd.port}\n'
        f'user = "{sshd.user}"\nidentity_file = "{sshd.identity_file}"\n'
        f"usd_per_hour = 3600\n{REMOTE}\n"
    )
    spec_path = tmp_path / "limit.toml"
    spec_path.write_text(spec_text(target, runs, max_usd=60))
    spec = dataclasses.replace(load_spec(spec_path), max_minutes_per_target=0.25)
    assert len(spec.runs) == 3
    preview = preview_sweep(spec, NoData())
    data = st.new_state(
        "limit-20261201t000000-ab12", str(spec_path), spec.raw, str(tmp_path / "r"),
        [t.label for t in spec.targets], [r.key for r in spec.runs], [3600.0],
    )  # fmt: skip
    state = st.StateFile(data)
    started = time.monotonic()
    code = SweepRun(spec, state, preview, tmp_path / "r").run()
    elapsed = time.monotonic() - started
    assert code == 1
    assert elapsed < 15 + 20  # the limit, then the kill and the state written
    t = state.target(0)
    assert t["state"] == "stopped" and "max_minutes_per_target" in t["reason"], t
    assert state.data["status"] == "stopped at a limit"
    assert [r["status"] for r in t["runs"].values()].count("done") == 0
    assert st.spend_usd(t) <= 15 + 3600 * 20 / 3600  # the limit, plus its teardown seconds


def test_the_sweep_stops_when_what_it_spent_reaches_max_usd(tmp_path: Path) -> None:
    """The running check behind the admission check: spend is tracked as runs go."""
    spec_path = tmp_path / "spend.toml"
    target = '[[targets]]\nbackend = "ssh"\nhost = "box"\nusd_per_hour = 60\n'
    spec_path.write_text(spec_text(target, ONE_RUN, max_usd=1))
    spec = load_spec(spec_path)
    data = st.new_state(
        "spend-20261201t000000-ab12", str(spec_path), spec.raw, str(tmp_path / "r"),
        [t.label for t in spec.targets], [r.key for r in spec.runs], [60.0],
    )  # fmt: skip
    state = st.StateFile(data, tmp_path / "state.json")
    sweep = SweepRun(spec, state, preview_sweep(spec, NoData()), tmp_path / "r")
    state.data["targets"][0]["launched_at"] = st.iso(st.utc_now() - dt_minutes(0.5))
    sweep._watch_budget()
    assert sweep.halted is None and not sweep.stop.is_set()  # $0.50 of $1
    state.data["targets"][0]["launched_at"] = st.iso(st.utc_now() - dt_minutes(1.5))
    sweep._watch_budget()
    assert sweep.stop.is_set() and sweep.halted and "max_usd $1.00" in sweep.halted
    sweep._mark_stopped(0)
    assert state.target(0)["state"] == "stopped"


def dt_minutes(minutes: float) -> Any:
    import datetime as dt

    return dt.timedelta(minutes=minutes)


@pytest.mark.slow  # a real benchmark process
def test_a_free_sweep_with_max_usd_0_runs(sweep_dir: Path, tmp_path: Path) -> None:
    """`max_usd = 0` (the shipped on-prem example): the preview's "worst case $0.00 is
    within max_usd $0.00" holds in the run too. Before, the running budget check read $0
    spent as having reached a $0 cap and skipped every target."""
    target = f'[[targets]]\nbackend = "local"\nremote_dir = "{tmp_path}/remote"\n{REMOTE}'
    spec_path = tmp_path / "free.toml"
    spec_path.write_text(spec_text(target, ONE_RUN, max_usd=0))
    outcome = sweep_cli("run", str(spec_path), "--yes", "--results", str(tmp_path / "results"))
    assert outcome.exit_code == 0, outcome.output
    assert "within max_usd $0.00" in outcome.output
    (path,) = sweep_dir.glob("*.json")
    state = json.loads(path.read_text())
    assert state["status"] == "finished", state["targets"][0]
    (run,) = state["targets"][0]["runs"].values()
    assert run["status"] == "done" and run["result_ids"]
