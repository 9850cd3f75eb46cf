"""Launch, find and terminate the EC2 instances of a sweep (boto3, lazily imported).

Every instance is launched so that it goes away on its own if the controller dies:
`InstanceInitiatedShutdownBehavior=terminate` turns the startup script's scheduled
shutdown (the dead-man switch the sweep writes into the user data) into a termination,
and the instance and its volumes carry `gpuplan-sweep`/`gpuplan-expires` tags so that
`gpuplan sweep cleanup` finds whatever is left. Spot instances are one-time requests that
terminate on interruption.

Clients are built per region with botocore's "standard" retry mode (throttling and
transient errors retried with backoff); `endpoint_url` points them at a stand-in (moto)
in tests. Errors a user can act on (capacity, quota, missing IAM permission, unknown
image) become `ProvisionError` with what to do.
"""

from __future__ import annotations

import datetime as dt
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from benchmarks.runners.machine import (
    SWEEP_TAG,
    CloudTarget,
    Launch,
    Machine,
    ProvisionError,
    poll_until_running,
)
from edge.choices import did_you_mean

# Commercial regions as of 2026-11 (`aws ec2 describe-regions --all-regions`); opt-in
# regions (af-south-1, ap-east-1, me-*, ...) need enabling in the account first.
AWS_REGIONS: tuple[str, ...] = (
    "us-east-1", "us-east-2", "us-west-1", "us-west-2",
    "ca-central-1", "ca-west-1", "mx-central-1", "sa-east-1",
    "eu-central-1", "eu-central-2", "eu-west-1", "eu-west-2", "eu-west-3",
    "eu-north-1", "eu-south-1", "eu-south-2",
    "ap-south-1", "ap-south-2", "ap-northeast-1", "ap-northeast-2", "ap-northeast-3",
    "ap-southeast-1", "ap-southeast-2", "ap-southeast-3", "ap-southeast-4",
    "ap-southeast-5", "ap-southeast-7", "ap-east-1", "ap-east-2",
    "af-south-1", "il-central-1", "me-central-1", "me-south-1",
)  # fmt: skip

# The AWS Deep Learning Base GPU AMI (NVIDIA driver, CUDA, Docker; no framework), owned by
# Amazon; the newest available one matching this name is the default image. Its login user
# is "ubuntu". Name pattern from the DLAMI release notes (2026-11).
DLAMI_OWNERS: tuple[str, ...] = ("amazon",)
DLAMI_NAME = "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04) *"
DLAMI_USER = "ubuntu"

INSTANCE_TYPE_PATTERN = re.compile(r"^[a-z][a-z0-9-]*\.[a-z0-9-]+$")
# Families whose processors are Graviton (arm64): the default image must match.
ARM_FAMILIES = re.compile(r"^(g5g|[a-z]+\d+g[a-z]*)\.")

NOT_FOUND = "InvalidInstanceID.NotFound"  # EC2 knows no instance with that id (any more)
LIVE_STATES = ("pending", "running", "stopping", "stopped")
GONE_STATES = ("shutting-down", "terminated")

# EC2 service quotas by instance family (Service Quotas console, 2026-11):
# (family prefixes, on-demand quota name, its code, spot quota name, its code). Codes
# left empty were not checked; the message then says how to look them up.
QUOTAS: tuple[tuple[str, str, str, str, str], ...] = (
    ("p", "Running On-Demand P instances", "L-417A185B",
     "All P Spot Instance Requests", "L-7212CCBC"),
    ("g vt", "Running On-Demand G and VT instances", "L-DB2E81BA",
     "All G and VT Spot Instance Requests", "L-3819A6DF"),
    ("inf", "Running On-Demand Inf instances", "", "All Inf Spot Instance Requests", ""),
    ("trn", "Running On-Demand Trn instances", "", "All Trn Spot Instance Requests", ""),
    ("dl", "Running On-Demand DL instances", "", "All DL Spot Instance Requests", ""),
)  # fmt: skip
STANDARD_QUOTA = (
    "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances",
    "L-1216C47A",
    "All Standard (A, C, D, H, I, M, R, T, Z) Spot Instance Requests",
    "L-34B43A08",
)

# The IAM action behind each EC2 call this module makes (for "not authorized" messages).
IAM_ACTIONS = {
    "run_instances": "ec2:RunInstances and ec2:CreateTags (tags are set at launch)",
    "describe_images": "ec2:DescribeImages",
    "describe_instances": "ec2:DescribeInstances",
    "terminate_instances": "ec2:TerminateInstances",
}


# ----------------------------------------------------------------- validation


def known_regions() -> tuple[str, ...]:
    """The AWS regions a sweep target may name."""
    return AWS_REGIONS


def region_problem(region: str) -> str | None:
    """None when `region` is a known AWS region, else what is wrong and the closest one."""
    if region in AWS_REGIONS:
        return None
    hint = did_you_mean(region, AWS_REGIONS, cutoff=0.6) or f" (known: {', '.join(AWS_REGIONS)})"
    return f"unknown AWS region {region!r}{hint}"


def instance_type_problem(instance_type: str, known: set[str] | None = None) -> str | None:
    """None when `instance_type` looks like an EC2 type (and is in `known`, if given)."""
    if not INSTANCE_TYPE_PATTERN.match(instance_type):
        return f"{instance_type!r} is not an EC2 instance type (family.size, e.g. 'p4d.24xlarge')"
    if known is not None and instance_type not in known:
        hint = did_you_mean(instance_type, sorted(known), cutoff=0.6)
        return f"unknown EC2 instance type {instance_type!r}{hint}"
    return None


# ----------------------------------------------------------------- errors


def quota_for(instance_type: str, spot: bool) -> tuple[str, str]:
    """The EC2 vCPU quota (name, code) that limits how many `instance_type` can run."""
    family = instance_type.split(".")[0]
    letters = re.match(r"^[a-z]+", family)
    prefix = letters.group(0) if letters else family
    for prefixes, od_name, od_code, spot_name, spot_code in QUOTAS:
        if prefix in prefixes.split():
            return (spot_name, spot_code) if spot else (od_name, od_code)
    return (STANDARD_QUOTA[2], STANDARD_QUOTA[3]) if spot else STANDARD_QUOTA[:2]


def explain_client_error(
    code: str, message: str, call: str, region: str, target: CloudTarget | None = None
) -> str:
    """What a failed EC2 call means and what to do about it (the ProvisionError text)."""
    what = f"EC2 {call} in {region} failed ({code}: {message})"
    kind = target.instance_type if target else "the instance type"
    if code in ("InsufficientInstanceCapacity", "InsufficientHostCapacity", "InsufficientCapacity"):
        other = "on-demand" if target and target.spot else "spot"
        return (
            f"{what}: AWS has no free {kind} capacity there right now. Try another region "
            f"or availability zone (subnet_id in another AZ), try {other}, or retry later."
        )
    if code in ("InstanceLimitExceeded", "VcpuLimitExceeded", "MaxSpotInstanceCountExceeded"):
        name, quota_code = quota_for(
            target.instance_type if target else "p", bool(target and target.spot)
        )
        code_hint = (
            f"({quota_code})"
            if quota_code
            else "(its code: `aws service-quotas list-service-quotas --service-code ec2`)"
        )
        return (
            f"{what}: the account's vCPU quota for {kind} in {region} is too low. Request an "
            f"increase of '{name}' {code_hint} to at least this instance's vCPU count: "
            f"Service Quotas console, or `aws service-quotas request-service-quota-increase "
            f"--service-code ec2 --quota-code {quota_code or 'CODE'} --desired-value N "
            f"--region {region}`."
        )
    if code in ("UnauthorizedOperation", "AccessDenied", "AccessDeniedException"):
        action = IAM_ACTIONS.get(call, f"ec2:{call}")
        return (
            f"{what}: the AWS identity in use lacks the IAM permission {action}. Grant it "
            f"(see the README, 'AWS permissions'); `aws sts decode-authorization-message` "
            f"shows the full reason."
        )
    if code.startswith("InvalidAMIID"):
        image = target.image if target else "the image"
        return (
            f"{what}: image {image!r} does not exist in {region} (AMI ids are per region). "
            f"Give an AMI id from {region}, or leave `image` unset for the default Deep "
            f"Learning Base GPU AMI."
        )
    if code == "InvalidKeyPair.NotFound":
        key = target.key_name if target else "the key pair"
        return (
            f"{what}: key pair {key!r} is not in {region}. Import the public key there "
            f"(`aws ec2 import-key-pair --region {region} --key-name {key} ...`)."
        )
    if code.startswith("InvalidSubnetID") or code.startswith("InvalidGroup"):
        return f"{what}: check subnet_id / security_group_ids: they must exist in {region}."
    if code in ("OptInRequired", "AuthFailure", "UnrecognizedClientException"):
        return (
            f"{what}: the credentials are not valid for {region} (region not enabled for the "
            f"account, or expired credentials): check AWS_PROFILE / `aws sts get-caller-identity`."
        )
    if code == "Unsupported":
        return f"{what}: {kind} is not offered there; try another availability zone or region."
    return what


# ----------------------------------------------------------------- provisioner


@dataclass(kw_only=True, eq=False, repr=False)
class AwsProvisioner:
    """The `Provisioner` for EC2: one boto3 client per region.

    `endpoint_url` (tests: moto's server) and `session` (a boto3 Session; default: the
    standard credential chain) are injectable. `poll_s` is how often `wait_running`
    and `find`-style loops ask EC2 (seconds). `image_owners` are the accounts searched
    for the default AMI.
    """

    backend = "aws"

    endpoint_url: str | None = None
    session: Any = None
    poll_s: float = 5.0
    image_owners: tuple[str, ...] = DLAMI_OWNERS
    image_name: str = DLAMI_NAME
    sleep: Callable[[float], None] = time.sleep
    _clients: dict[str, Any] = field(default_factory=dict, init=False)

    # -- clients and calls

    def client(self, region: str) -> Any:
        """The EC2 client for `region` (built once; standard retry mode)."""
        if region not in self._clients:
            try:
                import boto3
                from botocore.config import Config
            except ImportError:
                raise ProvisionError(
                    "boto3 is not installed: pip install 'gpuplan[aws]' to launch AWS targets"
                ) from None
            session = self.session or boto3.session.Session()
            config = Config(
                retries={"mode": "standard", "max_attempts": 5},
                connect_timeout=10,
                read_timeout=60,
            )
            self._clients[region] = session.client(
                "ec2", region_name=region, endpoint_url=self.endpoint_url, config=config
            )
        return self._clients[region]

    def _call(
        self, region: str, call: str, target: CloudTarget | None = None, **params: Any
    ) -> Any:
        """One EC2 call; botocore errors become ProvisionError with what to do."""
        from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

        try:
            return getattr(self.client(region), call)(**params)
        except ClientError as err:
            error = err.response.get("Error", {})
            code, message = str(error.get("Code", "")), str(error.get("Message", ""))
            raise ProvisionError(explain_client_error(code, message, call, region, target)) from err
        except NoCredentialsError:
            raise ProvisionError(
                "no AWS credentials found: set AWS_PROFILE (or AWS_ACCESS_KEY_ID/"
                "AWS_SECRET_ACCESS_KEY), or run `aws configure`"
            ) from None
        except BotoCoreError as err:
            raise ProvisionError(f"EC2 {call} in {region} failed: {err}") from err

    # -- images

    def default_image(self, region: str, instance_type: str) -> str:
        """The newest Deep Learning Base GPU AMI in `region` for the instance's CPU."""
        arch = "arm64" if ARM_FAMILIES.match(instance_type) else "x86_64"
        images = self._call(
            region,
            "describe_images",
            Owners=list(self.image_owners),
            Filters=[
                {"Name": "name", "Values": [self.image_name]},
                {"Name": "state", "Values": ["available"]},
                {"Name": "architecture", "Values": [arch]},
            ],
        ).get("Images", [])
        if not images:
            raise ProvisionError(
                f"no AWS Deep Learning Base GPU AMI ({self.image_name!r}, {arch}, owners "
                f"{', '.join(self.image_owners)}) found in {region}: set `image` to an AMI id "
                f"from {region} with an NVIDIA driver."
            )
        newest = max(images, key=lambda image: str(image.get("CreationDate", "")))
        return str(newest["ImageId"])

    # -- the protocol

    def launch(self, request: Launch) -> Machine:
        """run_instances: tagged, self-terminating, spot when asked; returns at once."""
        target, name = request.target, request.name
        region = target.region
        image = target.image or self.default_image(region, target.instance_type)
        tags = [
            *({"Key": k, "Value": v} for k, v in request.tags().items()),
            {"Key": "Name", "Value": name},
        ]
        params: dict[str, Any] = {
            "ImageId": image,
            "InstanceType": target.instance_type,
            "MinCount": 1,
            "MaxCount": 1,
            "UserData": request.startup_script,
            "InstanceInitiatedShutdownBehavior": "terminate",
            "TagSpecifications": [
                {"ResourceType": "instance", "Tags": tags},
                {"ResourceType": "volume", "Tags": tags},
            ],
            # Same token on botocore's retries: a retried launch never starts a second machine.
            "ClientToken": uuid.uuid4().hex,
        }
        if target.key_name:
            params["KeyName"] = target.key_name
        if target.subnet_id:
            # A public address even in subnets that do not hand one out by default.
            params["NetworkInterfaces"] = [
                {
                    "DeviceIndex": 0,
                    "SubnetId": target.subnet_id,
                    "AssociatePublicIpAddress": True,
                    "DeleteOnTermination": True,
                    **(
                        {"Groups": list(target.security_group_ids)}
                        if target.security_group_ids
                        else {}
                    ),
                }
            ]
        elif target.security_group_ids:
            params["SecurityGroupIds"] = list(target.security_group_ids)
        if target.spot:
            params["InstanceMarketOptions"] = {
                "MarketType": "spot",
                "SpotOptions": {
                    "SpotInstanceType": "one-time",
                    "InstanceInterruptionBehavior": "terminate",
                },
            }
        instance = self._call(region, "run_instances", target, **params)["Instances"][0]
        return self._machine(instance, region, target.ssh_user or DLAMI_USER)

    def wait_running(self, machine: Machine, timeout_s: float) -> Machine:
        """Poll describe_instances until running with an address (public, else private)."""
        region, instance_id = self._where(machine)

        def probe() -> tuple[Machine | None, str | None]:
            instance = self._describe(region, instance_id)
            if instance is None:  # not visible yet (EC2 is eventually consistent)
                return None, None
            state = str(instance["State"]["Name"])
            address = instance.get("PublicIpAddress") or instance.get("PrivateIpAddress")
            if state == "running" and address:
                return self._machine(instance, region, machine.user, base=machine), state
            if state in GONE_STATES:
                reason = instance.get("StateReason", {}).get("Message", "no reason given")
                raise ProvisionError(
                    f"EC2 instance {instance_id} in {region} ended while starting "
                    f"({state}: {reason})"
                )
            return None, state

        return poll_until_running(
            probe,
            timeout_s,
            self.poll_s,
            self.sleep,
            lambda state: (
                f"EC2 instance {instance_id} in {region} was not running with an address "
                f"after {timeout_s:.0f} s (last state: {state})"
            ),
        )

    def terminate(self, machine: Machine) -> None:
        """terminate_instances; an instance that is already gone is fine."""
        region, instance_id = self._where(machine)
        try:
            self._call(region, "terminate_instances", InstanceIds=[instance_id])
        except ProvisionError as err:
            if _error_code(err) != NOT_FOUND:
                raise

    def is_terminated(self, machine: Machine) -> bool:
        """True when describe_instances says shutting-down/terminated, or knows no such id."""
        region, instance_id = self._where(machine)
        instance = self._describe(region, instance_id)
        return instance is None or instance["State"]["Name"] in GONE_STATES

    def find_launched(self, regions: list[str], sweep_id: str | None = None) -> list[Machine]:
        """Every not-terminated instance tagged `gpuplan-sweep` (= sweep_id) in `regions`."""
        tag_filter = (
            {"Name": f"tag:{SWEEP_TAG}", "Values": [sweep_id]}
            if sweep_id
            else {"Name": "tag-key", "Values": [SWEEP_TAG]}
        )
        found: list[Machine] = []
        for region in dict.fromkeys(regions):
            token: str | None = None
            while True:
                params: dict[str, Any] = {
                    "Filters": [
                        tag_filter,
                        {"Name": "instance-state-name", "Values": list(LIVE_STATES)},
                    ]
                }
                if token:
                    params["NextToken"] = token
                page = self._call(region, "describe_instances", **params)
                for reservation in page.get("Reservations", []):
                    for instance in reservation.get("Instances", []):
                        if instance["State"]["Name"] in LIVE_STATES:  # filters are advisory
                            found.append(self._machine(instance, region, DLAMI_USER))
                token = page.get("NextToken")
                if not token:
                    break
        return found

    # -- helpers

    def _describe(self, region: str, instance_id: str) -> dict[str, Any] | None:
        """The instance as describe_instances sees it, or None if EC2 knows no such id."""
        try:
            page = self._call(region, "describe_instances", InstanceIds=[instance_id])
        except ProvisionError as err:
            if _error_code(err) == NOT_FOUND:
                return None
            raise
        for reservation in page.get("Reservations", []):
            for instance in reservation.get("Instances", []):
                return dict(instance)
        return None

    @staticmethod
    def _where(machine: Machine) -> tuple[str, str]:
        if not machine.region or not machine.instance_id:
            raise ProvisionError(f"machine {machine.host!r} has no AWS region/instance id")
        return machine.region, machine.instance_id

    @staticmethod
    def _machine(
        instance: dict[str, Any], region: str, user: str | None, base: Machine | None = None
    ) -> Machine:
        tags = {t["Key"]: t["Value"] for t in instance.get("Tags", [])}
        launched = instance.get("LaunchTime")
        address = instance.get("PublicIpAddress") or instance.get("PrivateIpAddress") or ""
        fields: dict[str, Any] = {
            "backend": "aws",
            "host": address if instance["State"]["Name"] == "running" else "",
            "user": user,
            "cloud": "aws",
            "region": region,
            "zone": instance.get("Placement", {}).get("AvailabilityZone"),
            "instance_type": instance.get("InstanceType"),
            "instance_id": instance["InstanceId"],
            "spot": instance.get("InstanceLifecycle") == "spot",
            "launched_at": launched.astimezone(dt.UTC).isoformat()
            if isinstance(launched, dt.datetime)
            else None,
            "sweep_id": tags.get(SWEEP_TAG),
            "name": tags.get("Name"),
        }
        if base is not None:
            fields.update(
                port=base.port, identity_file=base.identity_file, spot=base.spot or fields["spot"]
            )
        return Machine(**fields)


def _error_code(err: ProvisionError) -> str:
    """The EC2 error code behind a ProvisionError ("" when it came from elsewhere)."""
    response = getattr(err.__cause__, "response", None) or {}
    return str(response.get("Error", {}).get("Code", ""))
