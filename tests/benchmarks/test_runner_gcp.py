"""GcpProvisioner through google-cloud-compute (REST transport, anonymous credentials)
against a Compute REST stand-in on 127.0.0.1."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest
from google.auth.credentials import AnonymousCredentials

from benchmarks.runners.gcp import (
    DEFAULT_IMAGE,
    GcpProvisioner,
    instance_name,
    machine_type_problem,
    split_machine_type,
    ssh_keys_entry,
    zone_problem,
)
from benchmarks.runners.machine import (
    EXPIRES_TAG,
    SWEEP_TAG,
    CloudTarget,
    Launch,
    ProvisionError,
)
from tests.benchmarks.fake_gce import FakeGce, Fault

PROJECT = "gpuplan-test"
SCRIPT = "#!/bin/bash\n# gpuplan dead-man switch\nshutdown -h +45\n"


@pytest.fixture()
def gce() -> Iterator[FakeGce]:
    with FakeGce() as fake:
        yield fake


NOW = dt.datetime(2026, 11, 30, 23, 30, tzinfo=dt.UTC)


def provisioner(gce: FakeGce) -> GcpProvisioner:
    return GcpProvisioner(
        project=PROJECT,
        credentials=AnonymousCredentials(),
        api_endpoint=gce.url,
        poll_s=0.01,
        now=lambda: NOW,
    )


def in_minutes(minutes: int) -> dt.datetime:
    return NOW + dt.timedelta(minutes=minutes)


def target(**fields: object) -> CloudTarget:
    base = {"backend": "gcp", "instance_type": "a2-highgpu-1g", "region": "us-central1-a"}
    return CloudTarget(**{**base, **fields})  # type: ignore[arg-type]


def test_insert_sends_labels_deletion_schedule_and_startup_script(gce: FakeGce) -> None:
    expires = in_minutes(45)
    machine = provisioner(gce).launch(
        Launch(
            target(ssh_public_key="ssh-ed25519 AAAAC3Nza test@host\n"),
            "h100-vs-a100-20261130",
            expires,
            SCRIPT,
            "H100_vs_A100/0",
        )
    )
    [body] = gce.inserted()
    labels = {SWEEP_TAG: "h100-vs-a100-20261130", EXPIRES_TAG: expires.strftime("%Y%m%dt%H%M%Sz")}
    assert body["labels"] == labels
    assert body["name"] == "h100-vs-a100-0" == machine.instance_id
    assert body["machineType"] == "zones/us-central1-a/machineTypes/a2-highgpu-1g"
    scheduling = body["scheduling"]
    assert scheduling["maxRunDuration"] == {"seconds": "2700"}
    assert scheduling["instanceTerminationAction"] == "DELETE"
    assert scheduling["provisioningModel"] == "STANDARD"
    assert scheduling["onHostMaintenance"] == "TERMINATE"  # GPUs cannot live-migrate
    metadata = {item["key"]: item["value"] for item in body["metadata"]["items"]}
    assert metadata["startup-script"] == SCRIPT
    assert metadata["ssh-keys"] == "gpuplan:ssh-ed25519 AAAAC3Nza test@host"
    [disk] = body["disks"]
    assert disk["autoDelete"] is True and disk["boot"] is True
    assert disk["initializeParams"]["sourceImage"] == DEFAULT_IMAGE
    assert disk["initializeParams"]["labels"] == labels
    assert body.get("guestAccelerators", []) == []  # A2 comes with its GPU
    access = body["networkInterfaces"][0]["accessConfigs"][0]
    assert access["type"] == "ONE_TO_ONE_NAT"
    assert (machine.zone, machine.region, machine.project) == (
        "us-central1-a",
        "us-central1",
        PROJECT,
    )
    # the insert operation was waited on through zoneOperations
    assert any(r.path.endswith("/wait") for r in gce.requests)


def test_spot_n1_with_gpus_and_own_image(gce: FakeGce) -> None:
    provisioner(gce).launch(
        Launch(
            target(
                instance_type="n1-highcpu-16 + 2 x V100",
                region="europe-west4-b",
                spot=True,
                image="projects/my-proj/global/images/my-cuda",
                ssh_user="bench",
            ),
            "sw",
            in_minutes(30),
            SCRIPT,
            "v100",
        )
    )
    [body] = gce.inserted()
    assert body["machineType"] == "zones/europe-west4-b/machineTypes/n1-highcpu-16"
    assert body["guestAccelerators"] == [
        {
            "acceleratorType": "zones/europe-west4-b/acceleratorTypes/nvidia-tesla-v100",
            "acceleratorCount": 2,
        }
    ]
    assert body["scheduling"]["provisioningModel"] == "SPOT"
    assert body["scheduling"]["instanceTerminationAction"] == "DELETE"
    assert body["scheduling"]["maxRunDuration"] == {"seconds": "1800"}
    assert (
        body["disks"][0]["initializeParams"]["sourceImage"]
        == "projects/my-proj/global/images/my-cuda"
    )
    metadata = {item["key"] for item in body["metadata"]["items"]}
    assert metadata == {"startup-script"}  # no key given, own image: no driver install flag


def test_launch_wait_delete_confirm(gce: FakeGce) -> None:
    gcp = provisioner(gce)
    launched = gcp.launch(Launch(target(), "sw", in_minutes(45), SCRIPT, "a2"))
    assert launched.host == ""
    running = gcp.wait_running(launched, timeout_s=5)
    assert running.host == "127.0.0.1"  # the external NAT address
    assert not gcp.is_terminated(running)
    gcp.terminate(running)
    assert gce.live() == []
    assert gcp.is_terminated(running)  # instances.get: 404
    gcp.terminate(running)  # idempotent: 404 on delete is fine
    deletes = [r for r in gce.requests if r.method == "DELETE"]
    assert len(deletes) == 2


def test_a_stopped_instance_counts_as_terminated(gce: FakeGce) -> None:
    gce.put(PROJECT, "us-central1-a", "stopped", {SWEEP_TAG: "sw"}, "TERMINATED")
    gcp = provisioner(gce)
    machine = gcp.find_launched(["us-central1-a"], "sw")[0]
    assert gcp.is_terminated(machine)
    with pytest.raises(ProvisionError, match="stopped while starting"):
        gcp.wait_running(machine, timeout_s=1)


def test_find_launched_by_label_per_zone_and_region(gce: FakeGce) -> None:
    gcp = provisioner(gce)
    mine_a = gcp.launch(Launch(target(), "sw-1", in_minutes(45), SCRIPT, "a"))
    mine_b = gcp.launch(Launch(target(region="us-central1-b"), "sw-1", in_minutes(45), SCRIPT, "b"))
    gcp.launch(Launch(target(region="europe-west4-a"), "sw-2", in_minutes(45), SCRIPT, "c"))
    gce.put(PROJECT, "us-central1-a", "not-ours", {"team": "x"}, "RUNNING")

    found = gcp.find_launched(["us-central1-a", "us-central1-b", "europe-west4-a"], "sw-1")
    assert sorted((m.zone, m.instance_id) for m in found) == [
        ("us-central1-a", mine_a.instance_id),
        ("us-central1-b", mine_b.instance_id),
    ]
    assert all(m.sweep_id == "sw-1" and m.instance_type == "a2-highgpu-1g" for m in found)
    every = gcp.find_launched(["us-central1-a", "europe-west4-a"])
    assert sorted(m.name or "" for m in every) == ["a", "c"]
    by_region = gcp.find_launched(["us-central1"], "sw-1")  # aggregated list, one region
    assert sorted(m.zone or "" for m in by_region) == ["us-central1-a", "us-central1-b"]
    other_project = target(project="team-b", region="us-central1-a")
    theirs = gcp.launch(Launch(other_project, "sw-1", in_minutes(45), SCRIPT, "d"))
    assert [m.project for m in gcp.find_launched(["projects/team-b/zones/us-central1-a"])] == [
        "team-b"
    ]
    in_b = gcp.find_launched(["projects/team-b/regions/us-central1"], "sw-1")
    assert [(m.name, m.project) for m in in_b] == [(theirs.name, "team-b")]
    filters = {r.query["filter"][0] for r in gce.requests if "filter" in r.query}
    assert filters == {'labels.gpuplan-sweep = "sw-1"', "labels.gpuplan-sweep:*"}


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        pytest.param(
            {
                "status": 403,
                "message": "Required 'compute.instances.create' permission for "
                f"'projects/{PROJECT}/zones/us-central1-a/instances/a2'",
                "reason": "forbidden",
            },
            [
                "missing compute.instances.create",
                f"roles/compute.instanceAdmin.v1 on project {PROJECT}",
            ],
            id="permission-denied-names-the-role",
        ),
        pytest.param(
            {
                "code": "ZONE_RESOURCE_POOL_EXHAUSTED",
                "message": "The zone 'projects/gpuplan-test/zones/us-central1-a' does not have "
                "enough resources available to fulfill the request.",
            },
            [
                "no free capacity for a2-highgpu-1g",
                "Try another zone (us-central1-b, us-central1-c)",
            ],
            id="zone-exhausted-suggests-other-zones",
        ),
        pytest.param(
            {
                "code": "QUOTA_EXCEEDED",
                "message": "Quota 'NVIDIA_A100_GPUS' exceeded.  Limit: 0.0 in region us-central1.",
            },
            ["Request an increase of NVIDIA_A100_GPUS for us-central1"],
            id="quota-exceeded-names-the-quota-and-region",
        ),
    ],
)
def test_a_refused_insert_says_what_to_do_and_leaves_nothing(
    gce: FakeGce, fault: dict[str, Any], expected: list[str]
) -> None:
    gce.fail(Fault("POST", "/instances", **fault))
    with pytest.raises(ProvisionError) as err:
        provisioner(gce).launch(Launch(target(), "sw", in_minutes(45), SCRIPT, "a2"))
    for text in expected:
        assert text in str(err.value)
    assert gce.live() == []


def test_an_insert_that_never_finishes_is_undone(gce: FakeGce) -> None:
    gce.fail(Fault("POST", "/instances", code="STUCK"))
    gcp = provisioner(gce)
    gcp.operation_timeout_s = 0.3
    with pytest.raises(ProvisionError, match="did not finish within 0 s"):
        gcp.launch(Launch(target(), "sw", in_minutes(45), SCRIPT, "slow"))
    assert [r.path.rsplit("/", 1)[-1] for r in gce.requests if r.method == "DELETE"] == ["slow"]
    assert gce.live() == []


def test_unknown_machine_type_in_zone(gce: FakeGce) -> None:
    gce.fail(
        Fault(
            "POST",
            "/instances",
            status=404,
            message="The resource 'projects/gpuplan-test/zones/us-central1-a/machineTypes/"
            "a3-highgpu-9g' was not found",
            reason="notFound",
        )
    )
    with pytest.raises(ProvisionError, match="machine-types list --zones us-central1-a"):
        provisioner(gce).launch(
            Launch(target(instance_type="a3-highgpu-9g"), "sw", in_minutes(45), "", "x")
        )


def test_machine_without_zone_is_refused(gce: FakeGce) -> None:
    machine = provisioner(gce).launch(Launch(target(), "sw", in_minutes(45), SCRIPT, "a2"))
    with pytest.raises(ProvisionError, match="no GCP zone"):
        provisioner(gce).terminate(dataclasses.replace(machine, zone=None))


def test_names_zones_and_machine_types() -> None:
    assert instance_name("H100_vs_A100/0") == "h100-vs-a100-0"
    assert instance_name("0-first") == "gpuplan-0-first"
    assert split_machine_type("n1-standard-8 + 1 x T4") == ("n1-standard-8", "nvidia-tesla-t4", 1)
    assert split_machine_type("g2-standard-8") == ("g2-standard-8", None, 0)
    assert zone_problem("us-central1-a") is None
    assert "is not a GCP zone" in (zone_problem("us-central1") or "")
    assert "'us-central1-a'" in (zone_problem("us-central1") or "")
    assert zone_problem("us-centrl1-a") == (
        "unknown GCP region 'us-centrl1' in zone 'us-centrl1-a'; did you mean 'us-central1-a'?"
    )
    assert machine_type_problem("n1-highcpu-16 + 2 x V100") is None
    assert "unknown GPU 'H100'" in (machine_type_problem("n1-standard-8 + 1 x H100") or "")
    assert machine_type_problem("a2-highgpu-2g", {"a2-highgpu-1g", "a2-highgpu-2g"}) is None
    assert machine_type_problem("a2-higpu-1g", {"a2-highgpu-1g"}) == (
        "unknown GCE machine type 'a2-higpu-1g'; did you mean 'a2-highgpu-1g'?"
    )


KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq0fY0x7c2ZmXcT3oQ6mS1b8zN3d2Yk0mJ2kq3xL9tP me@host"


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"ssh_public_key": KEY + "\nroot:ssh-ed25519 AAAAC3Nza attacker"}, "newline"),
        ({"ssh_public_key": KEY + "\r\nroot:x"}, "newline"),
        ({"ssh_public_key": "ssh-ed25519 AAAA\x1b[2J"}, "control character"),
        ({"ssh_public_key": "not a key"}, "not an OpenSSH public key"),
        ({"ssh_public_key": KEY, "ssh_user": "root:ssh-rsa AAAA x\nbench"}, "not a login name"),
        ({"ssh_public_key": KEY, "ssh_user": "-oProxyCommand=x"}, "not a login name"),
        ({"ssh_user": "bench\nroot"}, "not a login name"),
    ],
)
def test_a_key_or_user_that_would_add_an_ssh_keys_line_is_refused_before_insert(
    gce: FakeGce, fields: dict[str, str], words: str
) -> None:
    with pytest.raises(ProvisionError, match=words) as err:
        provisioner(gce).launch(Launch(target(**fields), "sw", in_minutes(45), SCRIPT, "a2"))
    assert "\n" not in str(err.value)  # what is echoed back is one line
    assert gce.inserted() == [] and gce.requests == []  # nothing reached Compute Engine


def test_ssh_keys_entry_is_one_line_for_a_pub_file() -> None:
    assert ssh_keys_entry("gpuplan", KEY + "\n") == f"gpuplan:{KEY}"  # a .pub file's newline
    assert ssh_keys_entry("Bench_1", KEY) == f"Bench_1:{KEY}"
    assert ssh_keys_entry("gpuplan", None) is None


def test_patterns_refuse_a_trailing_newline() -> None:
    assert "is not a GCP zone" in (zone_problem("us-central1-a\n") or "")
    assert "not a GCE machine type" in (machine_type_problem("a2-highgpu-1g\n") or "")
    assert "not a GCE machine type" in (machine_type_problem("n1-standard-8 +\n1 x T4") or "")
    assert split_machine_type("n1-standard-8 + 1 x T4\n") == ("n1-standard-8 + 1 x T4\n", None, 0)
    assert instance_name("a\nb") == "a-b"


def test_find_launched_refuses_a_resource_path_with_a_newline(gce: FakeGce) -> None:
    gcp = provisioner(gce)
    gcp.launch(Launch(target(), "sw", in_minutes(45), SCRIPT, "a2"))
    # refused, not searched as a region nobody has (which would report "nothing left")
    entry = f"projects/{PROJECT}/zones/us-central1-a\n"
    assert gcp.find_launched([f"projects/{PROJECT}/zones/us-central1-a"], "sw")
    for bad in (entry, "us-central1-a\n", "us-central1; x"):
        with pytest.raises(ProvisionError, match="is not a GCP zone"):
            gcp.find_launched([bad], "sw")
