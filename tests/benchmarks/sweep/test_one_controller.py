"""One controller per sweep (benchmarks/sweep/lock.py).

A second `gpuplan sweep resume` (or `cleanup`) while the sweep's controller still runs is
refused with that controller's process id and host: during a cloud launch (EC2 is moto,
its launch call held back), during a benchmark over the loopback sshd. After a kill -9,
`status` and `list` say "interrupted" with the clock stopped, and `resume --takeover`
ends the machine the dead controller left, reruns only what did not finish, and no
target ever has two machines.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.sweep import lock as sweep_lock
from benchmarks.sweep import state as st
from tests.benchmarks.fake_gce import FakeGce
from tests.benchmarks.moto_ec2 import ec2, moto_server
from tests.benchmarks.sweep.conftest import ROOT, spec_text
from tests.benchmarks.sweep.test_cloud_sweep import Sweep
from tests.sshd import SshServer

SID = "lock-20261201t000000-ab12"
HOLD_LOCK = (
    "import sys, time\nfrom benchmarks.sweep import lock\n"
    "held = lock.acquire(sys.argv[1], 'run')\nprint('held', flush=True)\ntime.sleep(300)\n"
)


def hold_in_child(sweep_id: str) -> subprocess.Popen[str]:
    """A process that takes the sweep's lock and keeps it (a controller at work)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, sweep_id], stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_held_lock_refuses_a_second_controller_and_a_dead_ones_needs_takeover(
    sweep_dir: Path,
) -> None:
    child = hold_in_child(SID)
    try:
        seen = sweep_lock.holder(SID)
        assert seen.held and seen.holder is not None and seen.holder.pid == child.pid
        assert seen.holder.host == socket.gethostname() and seen.holder.command == "run"
        for takeover in (False, True):  # a live controller is never taken over
            with pytest.raises(sweep_lock.SweepLocked, match=f"process {child.pid} on "):
                sweep_lock.acquire(SID, "resume", takeover=takeover)
    finally:
        child.kill()  # kill -9: no clean exit, the kernel drops its flock
        child.wait()
    seen = sweep_lock.holder(SID)
    assert seen.stale and seen.holder is not None and seen.holder.pid == child.pid
    with pytest.raises(sweep_lock.SweepLocked, match="--takeover"):
        sweep_lock.acquire(SID, "resume")
    with sweep_lock.acquire(SID, "resume", takeover=True) as held:
        assert held.previous is not None and held.previous.pid == child.pid
        assert sweep_lock.holder(SID).holder.pid == os.getpid()  # type: ignore[union-attr]
    # A clean exit leaves nothing to take over.
    assert sweep_lock.holder(SID) == sweep_lock.LockState(None, False)
    sweep_lock.acquire(SID, "resume").release()


def test_a_running_sweep_whose_controller_is_gone_reads_interrupted_and_its_clock_stops(
    sweep_dir: Path,
) -> None:
    then = st.utc_now().replace(year=2026, month=12, day=1, hour=10, minute=0, second=0)
    data = st.new_state(SID, "s.toml", {"name": "lock"}, "r", ["a", "b"], ["k"], [36.0, None])
    data.update(status="running", updated_at=st.iso(then.replace(minute=30)))
    data["targets"][0].update(state="running", launched_at=st.iso(then))
    data["targets"][1].update(state="done")
    child = hold_in_child(SID)
    try:
        assert sweep_lock.as_seen(data) is data  # its controller is alive: as written
    finally:
        child.kill()
        child.wait()
    seen = sweep_lock.as_seen(data)
    assert seen["status"] == "interrupted" and str(child.pid) in seen["controller_gone"]
    assert [t["state"] for t in seen["targets"]] == ["interrupted", "done"]
    assert data["status"] == "running"  # the state itself is not rewritten
    # $36/h for the 30 minutes to the last write, whenever it is read.
    assert st.spend_usd(seen["targets"][0], sweep_lock.as_of(seen)) == pytest.approx(18.0)


# -- the sweep commands, against moto and the loopback sshd ------------------------------

HOLD_WRAPPER = """#!/bin/sh
# The remote's python: a benchmark run with batch {batch} waits while {hold} exists.
case "$*" in *"bench run"*"--batch {batch}"*)
  while [ -f {hold} ]; do sleep 0.2; done ;;
esac
exec {python} "$@"
"""
TWO_RUNS = (
    '\n[[runs]]\nworkload = "gpt"\nsize = "tiny"\ndevice = "cpu"\nprecision = "fp32"\n'
    "steps = 2\nwarmup = 1\nbatch = [2, 4]\n"
)


@pytest.fixture(scope="module")
def moto_url() -> Iterator[str]:
    with moto_server() as url:
        yield url


class Controllers(Sweep):
    """`gpuplan sweep` in child processes (the first controller) and in this process
    (the second), against moto and the loopback sshd; a remote python whose batch-4 run
    waits while the hold file exists (and, with `hold_launch`, an EC2 launch call that
    returns only once it is gone)."""

    def __init__(self, tmp: Path, sshd: SshServer, sweep_dir: Path, moto_url: str,
                 gce: FakeGce, hold_launch: bool = False) -> None:  # fmt: skip
        super().__init__(tmp, sshd, sweep_dir, moto_url, gce)
        self.hold = tmp / "hold"
        self.hold.touch()
        if hold_launch:  # the launch call returns once the hold file is gone
            config = json.loads(self.config.read_text())
            config["aws"]["launch_hold"] = str(self.hold)
            self.config.write_text(json.dumps(config))
        python = tmp / "remote-python"
        python.write_text(HOLD_WRAPPER.format(batch=4, hold=self.hold, python=sys.executable))
        python.chmod(0o755)
        self.remote = (
            f'remote_python = "{python}"\n'
            f'remote_env = {{ PYTHONPATH = "{ROOT}", OMP_NUM_THREADS = "1" }}\n'
        )

    def aws_spec(self) -> str:
        target = (
            f'[[targets]]\nbackend = "aws"\ninstance_type = "g4dn.xlarge"\n'
            f'region = "us-east-1"\nimage = "{self.image}"\n{self.remote}\n'
        )
        path = self.tmp / "one.toml"
        path.write_text(spec_text(target, TWO_RUNS, max_usd=20, parallel=1))
        return str(path)

    def ssh_spec(self, sshd: SshServer) -> str:
        target = f'[[targets]]\nbackend = "ssh"\nhost = "{sshd.alias}"\n{self.remote}\n'
        path = self.tmp / "ssh.toml"
        path.write_text(spec_text(target, TWO_RUNS, max_usd=0, parallel=1))
        return str(path)

    def wait_state(self, proc: subprocess.Popen[str], ready: Any, what: str) -> dict[str, Any]:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise AssertionError(proc.stdout.read() if proc.stdout else "exited")
            files = list(self.sweep_dir.glob("*.json"))
            if files:
                data = json.loads(files[0].read_text())
                if ready(data):
                    return dict(data)
            time.sleep(0.1)
        raise AssertionError(f"never {what}")

    def sweep_instances(self, sweep_id: str) -> list[dict[str, Any]]:
        """Every instance moto ever launched for this sweep, terminated ones included."""
        found = ec2(self.moto_url).describe_instances(
            Filters=[{"Name": "tag:gpuplan-sweep", "Values": [sweep_id]}]
        )["Reservations"]
        return [i for r in found for i in r["Instances"]]


@pytest.fixture()
def controllers(
    tmp_path: Path, sshd: SshServer, sweep_dir: Path, moto_url: str, request: Any
) -> Iterator[Controllers]:
    with FakeGce(nat_ip="127.0.0.1") as gce:
        both = Controllers(tmp_path, sshd, sweep_dir, moto_url, gce,
                           getattr(request, "param", False))  # fmt: skip
        yield both
        both.hold.unlink(missing_ok=True)
        both.reap()


def refused_naming(result: Any, proc: subprocess.Popen[str]) -> None:
    assert result.exit_code == 1, result.output
    text = " ".join(result.output.split())
    assert f"process {proc.pid} on {socket.gethostname()}" in text, text


@pytest.mark.slow  # a sweep child process, benchmarks over ssh
@pytest.mark.timeout(300)
@pytest.mark.parametrize("controllers", [True], ids=["held-launch"], indirect=True)
def test_resume_during_a_launch_is_refused_and_launches_nothing(
    controllers: Controllers,
) -> None:
    proc = controllers.start(controllers.aws_spec())
    data = controllers.wait_state(
        proc, lambda d: d["targets"][0]["machine"] is not None, "recorded its launch"
    )
    assert data["targets"][0]["machine"]["instance_id"] is None  # the call has not returned
    refused_naming(controllers.cli("resume", data["id"], "--yes"), proc)
    refused_naming(controllers.cli("resume", data["id"], "--yes", "--takeover"), proc)
    refused_naming(controllers.cli("cleanup", data["id"]), proc)
    status = controllers.cli("status", data["id"])
    assert "(running)" in status.output and "interrupted" not in status.output
    controllers.hold.unlink()
    output, _ = proc.communicate(timeout=180)
    assert proc.returncode == 0, output
    (instance,) = controllers.sweep_instances(data["id"])  # one launch, by the first only
    assert instance["State"]["Name"] == "terminated"
    assert sweep_lock.holder(data["id"]) == sweep_lock.LockState(None, False)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_resume_during_a_run_over_ssh_is_refused(controllers: Controllers, sshd: SshServer) -> None:
    proc = controllers.start(controllers.ssh_spec(sshd))
    data = controllers.wait_state(
        proc, lambda d: "-b4" in (d["targets"][0]["detail"] or ""),
        "started the held run",
    )  # fmt: skip
    refused_naming(controllers.cli("resume", data["id"], "--yes"), proc)
    listed = controllers.cli("list")
    assert data["id"] in listed.output and "running" in listed.output
    controllers.hold.unlink()
    output, _ = proc.communicate(timeout=180)
    assert proc.returncode == 0, output
    runs = [r for t in only_targets(controllers) for r in t["runs"].values()]
    assert [len(r["result_ids"]) for r in runs] == [1, 1]  # each run once, by one controller


def only_targets(controllers: Controllers) -> list[dict[str, Any]]:
    (path,) = controllers.sweep_dir.glob("*.json")
    return list(json.loads(path.read_text())["targets"])


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_after_kill_9_the_sweep_reads_interrupted_and_takeover_launches_nothing_twice(
    controllers: Controllers,
) -> None:
    proc = controllers.start(controllers.aws_spec())
    data = controllers.wait_state(
        proc, lambda d: d["targets"][0]["state"] == "running"
        and sum(r["status"] == "done" for r in d["targets"][0]["runs"].values()) == 1,
        "finished its first run and started the held one",
    )  # fmt: skip
    sid = data["id"]
    first_done = {
        k: r["result_ids"] for k, r in data["targets"][0]["runs"].items() if r["result_ids"]
    }
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    controllers.reap()
    (first,) = controllers.sweep_instances(sid)
    assert first["State"]["Name"] == "running"  # left by the dead controller

    status = controllers.cli("status", sid)
    assert "(interrupted)" in status.output and f"process {proc.pid}" in " ".join(
        status.output.split()
    )
    time.sleep(1.5)
    again = controllers.cli("status", sid, "--format", "json")
    assert json.loads(again.output)["targets"][0]["state"] == "interrupted"
    assert controllers.cli("status", sid).output == status.output  # elapsed and spend frozen
    listed = controllers.cli("list")
    assert "interrupted" in listed.output and "running" not in listed.output

    refused = controllers.cli("resume", sid, "--yes")
    assert refused.exit_code == 1 and "--takeover" in refused.output, refused.output
    assert len(controllers.sweep_instances(sid)) == 1  # a refusal launches nothing

    controllers.hold.unlink()
    resumed = controllers.cli("resume", sid, "--yes", "--takeover")
    assert resumed.exit_code == 0, resumed.output
    assert f"ended {first['InstanceId']}" in resumed.output
    instances = controllers.sweep_instances(sid)
    assert len(instances) == 2 and all(i["State"]["Name"] == "terminated" for i in instances)
    # The left machine was ended before the new one was launched.
    assert resumed.output.index(f"ended {first['InstanceId']}") < resumed.output.index("launching")
    target = only_targets(controllers)[0]
    assert target["state"] == "done"
    for key, ids in first_done.items():  # the run done before the kill was not redone
        assert target["runs"][key]["result_ids"] == ids
    assert sweep_lock.holder(sid) == sweep_lock.LockState(None, False)
