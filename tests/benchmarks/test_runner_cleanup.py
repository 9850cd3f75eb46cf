"""terminate_all: the same cleanup through both provisioners, against moto and the GCE stand-in."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest
from google.auth.credentials import AnonymousCredentials

from benchmarks.runners.aws import AwsProvisioner
from benchmarks.runners.cleanup import terminate_all
from benchmarks.runners.gcp import GcpProvisioner
from benchmarks.runners.machine import SWEEP_TAG, CloudTarget, Launch
from tests.benchmarks.fake_gce import FakeGce, Fault
from tests.benchmarks.moto_ec2 import any_image, live_instances, moto_server

EXPIRES = dt.datetime(2026, 12, 1, 0, 15, tzinfo=dt.UTC)
REGIONS = ["us-east-1", "us-west-2"]


@pytest.fixture(scope="module")
def moto_url() -> Iterator[str]:
    with moto_server() as url:
        yield url


def aws_launch(aws: AwsProvisioner, url: str, region: str, sweep: str, name: str) -> str:
    target = CloudTarget("aws", "g6.xlarge", region, image=any_image(url, region))
    return aws.launch(Launch(target, sweep, EXPIRES, "#!/bin/bash\n", name)).instance_id or ""


def test_aws_cleanup_of_one_sweep_across_regions(moto_url: str) -> None:
    aws = AwsProvisioner(endpoint_url=moto_url, poll_s=0.01)
    mine = {
        aws_launch(aws, moto_url, "us-east-1", "clean-1", "a"),
        aws_launch(aws, moto_url, "us-west-2", "clean-1", "b"),
    }
    other = aws_launch(aws, moto_url, "us-east-1", "clean-2", "c")

    preview = terminate_all(aws, REGIONS, "clean-1", dry_run=True)
    assert {m.instance_id for m in preview.found} == mine
    assert preview.terminated == [] and not preview.clean
    assert {i["InstanceId"] for i in live_instances(moto_url, REGIONS)} >= mine  # untouched

    report = terminate_all(aws, REGIONS, "clean-1", poll_s=0.01)
    assert {m.instance_id for m in report.terminated} == mine
    assert report.failed == [] and report.clean
    live = {i["InstanceId"] for i in live_instances(moto_url, REGIONS)}
    assert not live & mine and other in live

    everything = terminate_all(aws, REGIONS, None, poll_s=0.01)  # any sweep
    assert other in {m.instance_id for m in everything.terminated}
    assert live_instances(moto_url, REGIONS) == []
    assert terminate_all(aws, REGIONS, None).found == []  # nothing left to find


@pytest.fixture()
def gce() -> Iterator[FakeGce]:
    with FakeGce() as fake:
        yield fake


def gcp_for(gce: FakeGce) -> GcpProvisioner:
    return GcpProvisioner(
        project="gpuplan-test",
        credentials=AnonymousCredentials(),
        api_endpoint=gce.url,
        poll_s=0.01,
        now=lambda: EXPIRES - dt.timedelta(minutes=45),
    )


def test_gcp_cleanup_deletes_running_and_stopped_instances(gce: FakeGce) -> None:
    gcp = gcp_for(gce)
    for zone, name in [("us-central1-a", "a"), ("us-central1-b", "b")]:
        gcp.launch(Launch(CloudTarget("gcp", "g2-standard-8", zone), "clean-1", EXPIRES, "", name))
    gce.put("gpuplan-test", "us-central1-a", "halted", {SWEEP_TAG: "clean-1"}, "TERMINATED")
    gce.put("gpuplan-test", "us-central1-a", "other", {SWEEP_TAG: "clean-2"}, "RUNNING")

    report = terminate_all(gcp, ["us-central1-a", "us-central1-b"], "clean-1", poll_s=0.01)
    assert sorted(m.name or "" for m in report.terminated) == ["a", "b", "halted"]
    assert report.clean
    assert [i["name"] for i in gce.instances.values()] == ["other"]


def test_gcp_cleanup_reports_what_it_could_not_delete(gce: FakeGce) -> None:
    gcp = gcp_for(gce)
    gcp.launch(
        Launch(CloudTarget("gcp", "g2-standard-8", "us-central1-a"), "clean-1", EXPIRES, "", "a")
    )
    gcp.launch(
        Launch(CloudTarget("gcp", "g2-standard-8", "us-central1-a"), "clean-1", EXPIRES, "", "b")
    )
    gce.fail(
        Fault(
            "DELETE",
            "/instances/a",
            status=403,
            message="Required 'compute.instances.delete' permission for 'a'",
            reason="forbidden",
        )
    )
    report = terminate_all(gcp, ["us-central1-a"], "clean-1", poll_s=0.01)
    assert [m.name for m in report.terminated] == ["b"]
    [(machine, reason)] = report.failed
    assert machine.name == "a" and "missing compute.instances.delete" in reason
    assert not report.clean
    assert [i["name"] for i in gce.live()] == ["a"]
