"""A whole AWS sweep against moto's EC2 on 127.0.0.1, its SSH step on the loopback sshd.

The AwsProvisioner launches, tags and terminates in moto; only the address it reports is
replaced by the loopback sshd's, so the sweep's every step runs for real. A failing run
still ends with the instance terminated and confirmed.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.results import load_results
from benchmarks.sweep.backends import register
from tests.benchmarks.cloud_sweep_driver import LoopbackAws, loopback_ssh, pointer
from tests.benchmarks.moto_ec2 import ec2, live_instances, moto_server, register_dl_image
from tests.benchmarks.sweep.conftest import REMOTE, only_state, spec_text, sweep_cli
from tests.sshd import SshServer


@pytest.fixture()
def moto_url() -> Iterator[str]:
    with moto_server() as url:
        yield url


@pytest.mark.slow  # real benchmark processes over ssh
def test_aws_sweep_end_to_end_terminates_after_success_and_failure(
    moto_url: str, sshd: SshServer, sweep_dir: Path, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    image = register_dl_image(moto_url)
    point = pointer(loopback_ssh(sshd))
    register("aws", lambda **_: LoopbackAws(point, endpoint_url=moto_url, poll_s=0.05))
    known = f"-o UserKnownHostsFile={sshd.known_hosts} -o StrictHostKeyChecking=yes"
    monkeypatch.setenv("GPUPLAN_SSH_OPTIONS", known)
    target = (
        f'[[targets]]\nbackend = "aws"\ninstance_type = "g5.xlarge"\nregion = "us-east-1"\n'
        f'image = "{image}"\n{REMOTE}'
    )
    runs = """
[[runs]]
workload = "gpt"
size = "tiny"
device = ["cpu", "cuda"]
precision = "fp32"
steps = 2
warmup = 1
batch = 2
"""
    spec = tmp_path / "aws.toml"
    spec.write_text(spec_text(target, runs))
    try:
        outcome = sweep_cli("run", str(spec), "--yes", "--results", str(tmp_path / "results"))
    finally:
        register("aws", None)
    assert outcome.exit_code == 1, outcome.output  # the cuda run cannot run here
    state = only_state(sweep_dir)
    t = state["targets"][0]
    assert t["state"] == "failed" and "no CUDA GPU is visible" in t["reason"]
    assert t["terminated_at"] and t["machine"]["instance_id"].startswith("i-")
    # Nothing left running in moto, and the instance carried the tags and dead-man switch.
    assert live_instances(moto_url, ["us-east-1"]) == []
    (reservation,) = ec2(moto_url).describe_instances(
        Filters=[{"Name": "tag:gpuplan-sweep", "Values": [state["id"]]}]
    )["Reservations"]
    instance = reservation["Instances"][0]
    assert instance["State"]["Name"] in ("shutting-down", "terminated")
    tags = {tag["Key"]: tag["Value"] for tag in instance["Tags"]}
    assert tags["gpuplan-sweep"] == state["id"] and "gpuplan-expires" in tags
    user_data = ec2(moto_url).describe_instance_attribute(
        InstanceId=instance["InstanceId"], Attribute="userData"
    )["UserData"]["Value"]
    assert "shutdown -h +10" in base64.b64decode(user_data).decode()
    # The run that could run was collected, with where it ran.
    (result,), problems = load_results(tmp_path / "results")
    assert not problems and result.sweep is not None
    assert result.sweep["instance_type"] == "g5.xlarge" and result.sweep["cloud"] == "aws"
    assert result.sweep["region"] == "us-east-1"
