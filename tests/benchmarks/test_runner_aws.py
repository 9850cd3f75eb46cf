"""AwsProvisioner against moto's server on 127.0.0.1, and botocore's Stubber for the
errors moto cannot produce (capacity, quota, permissions)."""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import uuid
from collections.abc import Iterator

import pytest
from botocore.stub import Stubber

from benchmarks.runners.aws import (
    AwsProvisioner,
    instance_type_problem,
    quota_for,
    region_problem,
)
from benchmarks.runners.machine import (
    EXPIRES_TAG,
    SWEEP_TAG,
    CloudTarget,
    Launch,
    Machine,
    ProvisionError,
    expires_label,
)
from tests.benchmarks.moto_ec2 import any_image, ec2, moto_server, register_dl_image

SCRIPT = "#!/bin/bash\n# gpuplan dead-man switch\nshutdown -h +45\n"
EXPIRES = dt.datetime(2026, 12, 1, 0, 15, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def moto_url() -> Iterator[str]:
    with moto_server() as url:
        yield url


@pytest.fixture(scope="module")
def dl_image(moto_url: str) -> str:
    return register_dl_image(moto_url)


def provisioner(url: str) -> AwsProvisioner:
    return AwsProvisioner(endpoint_url=url, image_owners=("self",), poll_s=0.05)


def sweep_id() -> str:
    return f"sw-{uuid.uuid4().hex[:8]}"


def test_launch_records_tags_shutdown_behaviour_user_data_and_spot(
    moto_url: str, dl_image: str
) -> None:
    sweep = sweep_id()
    target = CloudTarget(backend="aws", instance_type="p4d.24xlarge", region="us-east-1", spot=True)
    machine = provisioner(moto_url).launch(Launch(target, sweep, EXPIRES, SCRIPT, "h100-vs-a100-0"))

    client = ec2(moto_url)
    instance = client.describe_instances(InstanceIds=[machine.instance_id])["Reservations"][0][
        "Instances"
    ][0]
    tags = {t["Key"]: t["Value"] for t in instance["Tags"]}
    assert tags == {SWEEP_TAG: sweep, EXPIRES_TAG: "20261201t001500z", "Name": "h100-vs-a100-0"}
    assert instance["ImageId"] == dl_image  # the default image: the Deep Learning Base AMI
    assert instance["InstanceType"] == "p4d.24xlarge"
    assert instance["InstanceLifecycle"] == "spot"
    shutdown = client.describe_instance_attribute(
        InstanceId=machine.instance_id, Attribute="instanceInitiatedShutdownBehavior"
    )
    assert shutdown["InstanceInitiatedShutdownBehavior"]["Value"] == "terminate"
    user_data = client.describe_instance_attribute(
        InstanceId=machine.instance_id, Attribute="userData"
    )["UserData"]["Value"]
    assert base64.b64decode(user_data).decode() == SCRIPT
    volumes = client.describe_volumes(Filters=[{"Name": f"tag:{SWEEP_TAG}", "Values": [sweep]}])[
        "Volumes"
    ]
    assert volumes and all(
        {t["Key"]: t["Value"] for t in v["Tags"]}[EXPIRES_TAG] == expires_label(EXPIRES)
        for v in volumes
    )
    assert (machine.backend, machine.cloud, machine.region) == ("aws", "aws", "us-east-1")
    assert machine.spot and machine.user == "ubuntu" and machine.sweep_id == sweep


def test_launch_on_demand_with_own_image_key_and_network(moto_url: str) -> None:
    client = ec2(moto_url, "us-west-2")
    client.create_key_pair(KeyName="sweep-key")
    vpc = client.create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"]
    subnet = client.create_subnet(VpcId=vpc, CidrBlock="10.9.1.0/24")["Subnet"]["SubnetId"]
    group = client.create_security_group(GroupName="ssh", Description="ssh", VpcId=vpc)["GroupId"]
    image = any_image(moto_url, "us-west-2")
    target = CloudTarget(
        backend="aws",
        instance_type="g5.xlarge",
        region="us-west-2",
        image=image,
        key_name="sweep-key",
        subnet_id=subnet,
        security_group_ids=(group,),
        ssh_user="ec2-user",
    )
    machine = provisioner(moto_url).launch(Launch(target, sweep_id(), EXPIRES, SCRIPT, "g5"))
    instance = client.describe_instances(InstanceIds=[machine.instance_id])["Reservations"][0][
        "Instances"
    ][0]
    assert instance["ImageId"] == image
    assert instance["KeyName"] == "sweep-key"
    assert instance["SubnetId"] == subnet
    interface = instance["NetworkInterfaces"][0]
    assert [g["GroupId"] for g in interface["Groups"]] == [group]
    assert "InstanceLifecycle" not in instance  # on-demand
    assert machine.user == "ec2-user" and not machine.spot


def test_launch_wait_terminate_confirm(moto_url: str, dl_image: str) -> None:
    aws = provisioner(moto_url)
    target = CloudTarget(backend="aws", instance_type="g6.xlarge", region="us-east-1")
    launched = aws.launch(Launch(target, sweep_id(), EXPIRES, SCRIPT, "g6"))
    running = aws.wait_running(launched, timeout_s=10)
    instance = ec2(moto_url).describe_instances(InstanceIds=[launched.instance_id])["Reservations"][
        0
    ]["Instances"][0]
    assert running.host == instance["PublicIpAddress"] != ""
    assert running.instance_id == launched.instance_id and running.zone
    assert not aws.is_terminated(running)
    aws.terminate(running)
    assert aws.is_terminated(running)
    aws.terminate(running)  # idempotent
    gone = dataclasses.replace(running, instance_id="i-0123456789abcdef0")
    assert aws.is_terminated(gone)  # EC2 knows no such instance
    aws.terminate(gone)


def test_wait_running_fails_when_the_instance_ends(moto_url: str, dl_image: str) -> None:
    aws = provisioner(moto_url)
    target = CloudTarget(backend="aws", instance_type="g6.xlarge", region="us-east-1")
    launched = aws.launch(Launch(target, sweep_id(), EXPIRES, SCRIPT, "g6"))
    ec2(moto_url).terminate_instances(InstanceIds=[launched.instance_id])
    with pytest.raises(ProvisionError, match=f"{launched.instance_id} in us-east-1 ended"):
        aws.wait_running(launched, timeout_s=5)


def test_find_launched_only_tagged_live_instances_of_the_sweep(
    moto_url: str, dl_image: str
) -> None:
    aws = provisioner(moto_url)
    sweep, other = sweep_id(), sweep_id()
    east = CloudTarget(backend="aws", instance_type="g6.xlarge", region="us-east-1")
    west = CloudTarget(
        backend="aws",
        instance_type="g6.xlarge",
        region="us-west-2",
        image=any_image(moto_url, "us-west-2"),
    )
    keep = [
        aws.launch(Launch(east, sweep, EXPIRES, SCRIPT, "a")),
        aws.launch(Launch(west, sweep, EXPIRES, "", "b")),
    ]
    ended = aws.launch(Launch(east, sweep, EXPIRES, SCRIPT, "c"))
    aws.terminate(ended)
    of_other = aws.launch(Launch(west, other, EXPIRES, SCRIPT, "d"))
    untagged = ec2(moto_url).run_instances(ImageId=dl_image, MinCount=1, MaxCount=1)
    untagged_id = untagged["Instances"][0]["InstanceId"]

    found = aws.find_launched(["us-east-1", "us-west-2"], sweep)
    assert sorted(m.instance_id or "" for m in found) == sorted(m.instance_id or "" for m in keep)
    assert {m.region for m in found} == {"us-east-1", "us-west-2"}
    assert all(m.sweep_id == sweep for m in found)
    every = {m.instance_id for m in aws.find_launched(["us-east-1", "us-west-2"])}
    assert of_other.instance_id in every and untagged_id not in every
    assert ended.instance_id not in every
    assert aws.find_launched(["eu-west-1"], sweep) == []


def test_no_default_image_says_what_to_set(moto_url: str) -> None:
    aws = provisioner(moto_url)
    target = CloudTarget(backend="aws", instance_type="p5.48xlarge", region="eu-west-1")
    with pytest.raises(ProvisionError, match="no AWS Deep Learning Base GPU AMI") as err:
        aws.launch(Launch(target, sweep_id(), EXPIRES, SCRIPT, "p5"))
    assert "set `image` to an AMI id from eu-west-1" in str(err.value)


# ------------------------------------------------------------- errors moto cannot produce


def stubbed(region: str) -> tuple[AwsProvisioner, Stubber]:
    aws = AwsProvisioner(endpoint_url="http://127.0.0.1:9")  # never reached: stubbed
    stub = Stubber(aws.client(region))
    stub.activate()
    return aws, stub


@pytest.mark.parametrize(
    ("code", "target", "expected"),
    [
        (
            "InsufficientInstanceCapacity",
            CloudTarget("aws", "p5.48xlarge", "us-east-2", image="ami-1"),
            ["no free p5.48xlarge capacity", "Try another region or availability zone", "spot"],
        ),
        (
            "VcpuLimitExceeded",
            CloudTarget("aws", "p4d.24xlarge", "us-east-2", image="ami-1"),
            ["Running On-Demand P instances", "L-417A185B", "request-service-quota-increase"],
        ),
        (
            "VcpuLimitExceeded",
            CloudTarget("aws", "g6e.12xlarge", "us-east-2", spot=True, image="ami-1"),
            ["All G and VT Spot Instance Requests", "L-3819A6DF"],
        ),
        (
            "InstanceLimitExceeded",
            CloudTarget("aws", "trn1.32xlarge", "us-east-2", image="ami-1"),
            ["Running On-Demand Trn instances", "list-service-quotas --service-code ec2"],
        ),
        (
            "UnauthorizedOperation",
            CloudTarget("aws", "g6.xlarge", "us-east-2", image="ami-1"),
            ["lacks the IAM permission ec2:RunInstances and ec2:CreateTags", "AWS permissions"],
        ),
        (
            "InvalidAMIID.NotFound",
            CloudTarget("aws", "g6.xlarge", "us-east-2", image="ami-0abc"),
            ["image 'ami-0abc' does not exist in us-east-2", "AMI ids are per region"],
        ),
        (
            "InvalidKeyPair.NotFound",
            CloudTarget("aws", "g6.xlarge", "us-east-2", image="ami-1", key_name="mine"),
            ["key pair 'mine' is not in us-east-2", "import-key-pair"],
        ),
    ],
)
def test_launch_errors_tell_what_to_do(code: str, target: CloudTarget, expected: list[str]) -> None:
    aws, stub = stubbed(target.region)
    stub.add_client_error("run_instances", service_error_code=code, service_message="denied")
    with pytest.raises(ProvisionError) as err:
        aws.launch(Launch(target, "sw", EXPIRES, SCRIPT, "n"))
    for text in expected:
        assert text in str(err.value)
    assert code in str(err.value)
    stub.assert_no_pending_responses()


def test_unauthorized_terminate_names_the_action() -> None:
    aws, stub = stubbed("us-east-1")
    stub.add_client_error("terminate_instances", service_error_code="UnauthorizedOperation")
    target = Machine(backend="aws", host="", region="us-east-1", instance_id="i-1", cloud="aws")
    with pytest.raises(ProvisionError, match="ec2:TerminateInstances"):
        aws.terminate(target)


def test_capacity_error_on_spot_suggests_on_demand() -> None:
    aws, stub = stubbed("us-east-1")
    stub.add_client_error("run_instances", service_error_code="InsufficientInstanceCapacity")
    target = CloudTarget("aws", "p5.48xlarge", "us-east-1", spot=True, image="ami-1")
    with pytest.raises(ProvisionError, match="try on-demand"):
        aws.launch(Launch(target, "sw", EXPIRES, SCRIPT, "n"))


# ------------------------------------------------------------- validation helpers


def test_region_and_instance_type_checks() -> None:
    assert region_problem("us-east-1") is None
    assert region_problem("us-eas-1") == "unknown AWS region 'us-eas-1'; did you mean 'us-east-1'?"
    assert instance_type_problem("p4d.24xlarge") is None
    assert "not an EC2 instance type" in (instance_type_problem("p4d24xlarge") or "")
    known = {"p4d.24xlarge", "p5.48xlarge"}
    assert instance_type_problem("p4d.24xlarge", known) is None
    assert instance_type_problem("p4de.24xlarg", known) == (
        "unknown EC2 instance type 'p4de.24xlarg'; did you mean 'p4d.24xlarge'?"
    )


def test_quota_by_family() -> None:
    assert quota_for("p5.48xlarge", spot=False) == ("Running On-Demand P instances", "L-417A185B")
    assert quota_for("g5g.xlarge", spot=True)[1] == "L-3819A6DF"
    assert quota_for("m7i.large", spot=False)[1] == "L-1216C47A"
