"""Cloud sweeps end to end with the real provisioners: AwsProvisioner against moto,
GcpProvisioner against the Compute REST stand-in, the SSH step on the loopback sshd.
`gpuplan sweep run` runs in this process, or in a child process where the test
interrupts (SIGINT) or kills (SIGKILL) it. Every way a sweep ends (success, failed
targets, Ctrl-C, kill -9 followed by `gpuplan sweep cleanup`) leaves no instance running
on either cloud and the state file whole.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from click.testing import Result

from benchmarks.results import read_result
from benchmarks.runners.machine import SWEEP_TAG
from benchmarks.sweep import backends
from tests.benchmarks.cloud_sweep_driver import loopback_ssh, register
from tests.benchmarks.fake_gce import FakeGce
from tests.benchmarks.moto_ec2 import any_image, ec2, live_instances, moto_server
from tests.benchmarks.sweep.conftest import REMOTE, ROOT, only_state, spec_text, sweep_cli
from tests.sshd import SshServer

ONE_RUN = (
    '\n[[runs]]\nworkload = "gpt"\nsize = "tiny"\ndevice = "cpu"\nprecision = "fp32"\n'
    "steps = {steps}\nwarmup = 1\nbatch = 2\n"
)
SHORT_RUN, LONG_RUN = ONE_RUN.format(steps=2), ONE_RUN.format(steps=200_000)
BROKEN = 'remote_python = "/nonexistent/python3"\n'  # the install check fails at once
WAIT_S = 180.0

pytestmark = pytest.mark.slow  # a real sweep child process, benchmarks over ssh


@pytest.fixture(scope="module")
def moto_url() -> Iterator[str]:
    with moto_server() as url:
        yield url


@pytest.fixture()
def gce() -> Iterator[FakeGce]:
    with FakeGce(nat_ip="127.0.0.1") as fake:
        yield fake


class Sweep:
    """`gpuplan sweep ...` in a child process, provisioners bound to moto and the fake
    Compute server, every machine's ssh pointed at `sshd`."""

    def __init__(
        self, tmp: Path, sshd: SshServer, sweep_dir: Path, moto_url: str, gce: FakeGce
    ) -> None:
        self.tmp, self.sweep_dir, self.moto_url, self.gce = tmp, sweep_dir, moto_url, gce
        self.results = tmp / "results"
        self.config = tmp / "stand-ins.json"
        self.config.write_text(json.dumps({
            "aws": {"endpoint_url": moto_url},
            "gcp": {"api_endpoint": gce.url, "project": "gpuplan-test"},
            "ssh": loopback_ssh(sshd),
        }))  # fmt: skip
        self.env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "GPUPLAN_SWEEP_DIR": str(sweep_dir),
            "GPUPLAN_SSH_OPTIONS": f"-F {sshd.client_config}",  # its known_hosts
        }
        self.image = any_image(moto_url, "us-east-1")

    def spec(
        self, runs: str, remote: str = REMOTE, parallel: int = 2, clouds: str = "aws gcp"
    ) -> str:
        """An AWS and a GCP target, side by side (parallel=2) or one after the other. Both
        "machines" are this one, so runs that finish must not overlap: both targets would
        write into the same remote folder."""
        targets = {
            "aws": f'[[targets]]\nbackend = "aws"\ninstance_type = "g4dn.xlarge"\n'
            f'region = "us-east-1"\nimage = "{self.image}"\n{remote}\n',
            "gcp": f'[[targets]]\nbackend = "gcp"\ninstance_type = "g2-standard-4"\n'
            f'zone = "us-central1-a"\nproject = "gpuplan-test"\n{remote}\n',
        }
        path = self.tmp / "sweep.toml"
        text = "".join(targets[cloud] for cloud in clouds.split())
        path.write_text(spec_text(text, runs, max_usd=20, parallel=parallel))
        return str(path)

    def run(self, spec: str) -> Result:
        """`gpuplan sweep run SPEC --yes` in this process."""
        return self.cli("run", spec, "--yes", "--results", str(self.results))

    def cli(self, *args: str) -> Result:
        """`gpuplan sweep ...` in this process, provisioners bound to the stand-ins."""
        with mock.patch.dict(os.environ, self.env):
            register(json.loads(self.config.read_text()))
            try:
                return sweep_cli(*args)
            finally:
                backends.register("aws", None)
                backends.register("gcp", None)

    def start(self, spec: str) -> subprocess.Popen[str]:
        """`gpuplan sweep run SPEC --yes` in a child process, to be interrupted or killed."""
        driver = "tests.benchmarks.cloud_sweep_driver"
        command = [sys.executable, "-m", driver, str(self.config), "sweep", "run", spec,
                   "--yes", "--results", str(self.results)]  # fmt: skip
        return subprocess.Popen(
            command, env=self.env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True,
        )  # fmt: skip

    def wait_running(self, proc: subprocess.Popen[str]) -> dict[str, Any]:
        """Poll the state file until both targets are running their benchmark."""
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise AssertionError(proc.stdout.read() if proc.stdout else "exited")
            files = list(self.sweep_dir.glob("*.json"))
            if files:
                data = json.loads(files[0].read_text())  # replaced atomically: never partial
                if all(t["state"] == "running" for t in data["targets"]):
                    return dict(data)
            time.sleep(0.2)
        raise AssertionError("the targets never both reached 'running'")

    def reap(self) -> None:
        """Kill what a killed sweep left behind on "the remote": its ssh clients (in their
        own sessions) and the benchmarks they started, found by the sweep id on their
        command line, each by its process id."""
        for state in self.sweep_dir.glob("*.json"):
            marker = f"/{state.stem}/t".encode()  # in every remote folder of the sweep
            for entry in Path("/proc").iterdir():
                if not entry.name.isdigit() or int(entry.name) == os.getpid():
                    continue
                try:
                    if marker in (entry / "cmdline").read_bytes():
                        os.kill(int(entry.name), signal.SIGKILL)
                except (OSError, ProcessLookupError):
                    continue

    def live_aws(self, sweep_id: str) -> list[dict[str, Any]]:
        return [
            i
            for i in live_instances(self.moto_url, ["us-east-1"])
            if {t["Key"]: t["Value"] for t in i.get("Tags", [])}.get(SWEEP_TAG) == sweep_id
        ]

    def live_gcp(self, sweep_id: str) -> list[dict[str, Any]]:
        return [i for i in self.gce.live() if i["labels"].get(SWEEP_TAG) == sweep_id]

    def assert_nothing_left(self, state: dict[str, Any]) -> None:
        """No instance of this sweep is running in moto or the fake Compute server, and
        EC2 says each AWS target's instance is terminated."""
        assert self.live_aws(state["id"]) == []
        assert self.live_gcp(state["id"]) == []
        for target in state["targets"]:
            if target["machine"]["cloud"] == "aws":
                ids = [target["machine"]["instance_id"]]
                found = ec2(self.moto_url).describe_instances(InstanceIds=ids)["Reservations"]
                assert found[0]["Instances"][0]["State"]["Name"] == "terminated"


@pytest.fixture()
def sweep(
    tmp_path: Path, sshd: SshServer, sweep_dir: Path, moto_url: str, gce: FakeGce
) -> Iterator[Sweep]:
    sweep = Sweep(tmp_path, sshd, sweep_dir, moto_url, gce)
    yield sweep
    sweep.reap()


def test_a_gcp_sweep_collects_results_and_deletes_its_instance(sweep: Sweep) -> None:
    # (The same for AWS, with a failing run beside, is test_aws_end_to_end.py.)
    done = sweep.run(sweep.spec(SHORT_RUN, clouds="gcp"))
    assert done.exit_code == 0, done.output
    state = only_state(sweep.sweep_dir)
    [target] = state["targets"]
    assert state["status"] == "finished" and target["state"] == "done"
    assert target["terminated_at"]
    sweep.assert_nothing_left(state)
    # What Compute Engine was asked for: labels, deletion at the expiry, the dead-man switch.
    [body] = sweep.gce.inserted()
    assert body["labels"][SWEEP_TAG] == state["id"]
    assert body["scheduling"]["instanceTerminationAction"] == "DELETE"
    assert 540 <= int(body["scheduling"]["maxRunDuration"]["seconds"]) <= 600
    metadata = {i["key"]: i["value"] for i in body["metadata"]["items"]}
    assert "gcloud compute instances delete" in metadata["startup-script"]
    assert "systemd-run --on-active=10m" in metadata["startup-script"]
    [path] = (sweep.results / state["id"]).glob("*.json")
    assert read_result(path).sweep == {  # schema-valid, with where it ran
        "sweep_id": state["id"], "backend": "gcp", "cloud": "gcp", "region": "us-central1",
        "instance_type": "g2-standard-4", "spot": False,
    }  # fmt: skip


def test_failed_targets_are_terminated(sweep: Sweep) -> None:
    done = sweep.run(sweep.spec(SHORT_RUN, remote=BROKEN))
    assert done.exit_code == 1, done.output
    state = only_state(sweep.sweep_dir)
    for target in state["targets"]:
        assert target["state"] == "failed" and "/nonexistent/python3" in target["reason"]
        assert target["terminated_at"]
    assert len(sweep.gce.inserted()) == 1
    sweep.assert_nothing_left(state)


def test_sigint_tears_down_both_clouds_and_exits_130(sweep: Sweep) -> None:
    proc = sweep.start(sweep.spec(LONG_RUN))
    running = sweep.wait_running(proc)
    assert len(sweep.live_aws(running["id"])) == len(sweep.live_gcp(running["id"])) == 1
    proc.send_signal(signal.SIGINT)
    output, _ = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == 130, output
    state = only_state(sweep.sweep_dir)
    assert state["status"] == "interrupted"
    for target in state["targets"]:
        assert target["state"] == "interrupted" and target["terminated_at"]
    sweep.assert_nothing_left(state)


def test_cleanup_after_kill_9_terminates_both_clouds(sweep: Sweep) -> None:
    proc = sweep.start(sweep.spec(LONG_RUN))
    running = sweep.wait_running(proc)
    proc.kill()  # kill -9: no teardown, no last word in the state file
    proc.communicate(timeout=30)
    sweep.reap()  # its benchmarks on "the remote" (on a cloud, they end with the machine)
    state = only_state(sweep.sweep_dir)  # intact, still saying running
    assert state["status"] == "running"
    assert [t["state"] for t in state["targets"]] == ["running", "running"]
    [aws] = sweep.live_aws(state["id"])
    [gcp] = sweep.live_gcp(state["id"])

    listed = sweep.cli("cleanup", state["id"], "--dry-run")
    assert listed.exit_code == 0, listed.output
    assert aws["InstanceId"] in listed.output and gcp["name"] in listed.output
    assert len(sweep.live_aws(state["id"])) == len(sweep.live_gcp(state["id"])) == 1

    cleaned = sweep.cli("cleanup", state["id"])
    assert cleaned.exit_code == 0, cleaned.output
    assert aws["InstanceId"] in cleaned.output and gcp["name"] in cleaned.output
    sweep.assert_nothing_left(state)
    assert only_state(sweep.sweep_dir) == state  # cleanup reads the state, never breaks it
    assert running["id"] == state["id"]
