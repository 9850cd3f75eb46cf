"""moto's server on 127.0.0.1 as the EC2 stand-in, and what the sweep tests need in it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3

from benchmarks.runners.aws import DLAMI_NAME


@contextmanager
def moto_server() -> Iterator[str]:
    """A fresh moto server on a free loopback port; its endpoint URL.

    moto keeps its backends per process, not per server: the state other tests left
    behind is reset first, so each server starts empty."""
    import urllib.request

    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    urllib.request.urlopen(urllib.request.Request(f"{url}/moto-api/reset", method="POST")).close()
    try:
        yield url
    finally:
        server.stop()


def ec2(url: str, region: str = "us-east-1") -> Any:
    return boto3.client("ec2", region_name=region, endpoint_url=url)


def register_dl_image(url: str, region: str = "us-east-1") -> str:
    """A 'Deep Learning Base' AMI (x86_64) owned by the test account in `region`: made
    from an instance, since moto records no architecture for register_image."""
    client = ec2(url, region)
    base = client.describe_images(
        Owners=["amazon"], Filters=[{"Name": "architecture", "Values": ["x86_64"]}]
    )["Images"][0]["ImageId"]
    builder = client.run_instances(ImageId=base, MinCount=1, MaxCount=1)["Instances"][0]
    name = DLAMI_NAME.replace("*", "20261101")
    image = client.create_image(InstanceId=builder["InstanceId"], Name=name)["ImageId"]
    client.terminate_instances(InstanceIds=[builder["InstanceId"]])
    return str(image)


def any_image(url: str, region: str) -> str:
    """Some AMI moto knows in `region` (for targets that name their image)."""
    return str(ec2(url, region).describe_images(Owners=["amazon"])["Images"][0]["ImageId"])


def live_instances(url: str, regions: list[str]) -> list[dict[str, Any]]:
    """Every instance in `regions` that is pending, running, stopping or stopped."""
    states = ["pending", "running", "stopping", "stopped"]
    found = []
    for region in regions:
        pages = ec2(url, region).describe_instances(
            Filters=[{"Name": "instance-state-name", "Values": states}]
        )["Reservations"]
        found += [i for r in pages for i in r["Instances"]]
    return found
