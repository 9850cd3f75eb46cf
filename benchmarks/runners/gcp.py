"""Create, find and delete the Compute Engine instances of a sweep (google-cloud-compute, lazily).

Every instance removes itself even if the controller is gone: `scheduling.maxRunDuration`
(the time left until the sweep's `gpuplan-expires`) with `instanceTerminationAction =
DELETE` makes Compute Engine delete it, boot disk included (auto-delete). The startup
script (metadata `startup-script`) carries the sweep's own dead-man switch as well. The
instance and its boot disk carry the `gpuplan-sweep`/`gpuplan-expires` labels, so `gpuplan
sweep cleanup` finds what is left. Spot instances use provisioning model SPOT.

A target's `region` is a zone (us-central1-a). A2/A3/A4/G2 machine types come with their
GPUs; N1 types get theirs as guest accelerators, written as in the price catalog:
"n1-standard-8 + 1 x T4". Clients use the REST transport; `api_endpoint` and
`credentials` are injectable (tests: a local Compute REST stand-in, anonymous).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import os
import re
import time
from collections.abc import Callable
from typing import Any

from benchmarks.runners.machine import (
    SWEEP_TAG,
    CloudTarget,
    Launch,
    Machine,
    ProvisionError,
    poll_until_running,
)
from benchmarks.safe_paths import login_name_problem, ssh_public_key_problem
from edge.choices import closest_match, did_you_mean

# Compute Engine regions as of 2026-11 (`gcloud compute regions list`).
GCP_REGIONS: tuple[str, ...] = (
    "us-central1", "us-east1", "us-east4", "us-east5", "us-south1",
    "us-west1", "us-west2", "us-west3", "us-west4",
    "northamerica-northeast1", "northamerica-northeast2", "northamerica-south1",
    "southamerica-east1", "southamerica-west1",
    "europe-central2", "europe-north1", "europe-north2", "europe-southwest1",
    "europe-west1", "europe-west2", "europe-west3", "europe-west4", "europe-west6",
    "europe-west8", "europe-west9", "europe-west10", "europe-west12",
    "asia-east1", "asia-east2", "asia-northeast1", "asia-northeast2", "asia-northeast3",
    "asia-south1", "asia-south2", "asia-southeast1", "asia-southeast2",
    "australia-southeast1", "australia-southeast2",
    "me-central1", "me-central2", "me-west1", "africa-south1",
)  # fmt: skip

# Deep Learning VM image (Google's deeplearning-platform-release project): CUDA 12.9 and
# the NVIDIA 580 driver preinstalled on Ubuntu 24.04 (family name as of 2026-11).
DEFAULT_IMAGE = (
    "projects/deeplearning-platform-release/global/images/family/"
    "common-cu129-ubuntu-2404-nvidia-580"
)
DEFAULT_USER = "gpuplan"  # created from the `ssh-keys` metadata entry
BOOT_DISK_GB = 100  # DL VM images need at least 50 GB; room for a venv and results

# Validating patterns: used with fullmatch, \A...\Z (a `$` would accept a final newline).
ZONE_PATTERN = re.compile(r"\A([a-z]+-[a-z]+[0-9]+)-([a-z])\Z")
REGION_PATTERN = re.compile(r"\A[a-z]+-[a-z]+[0-9]+\Z")
RESOURCE_PATH = re.compile(r"\Aprojects/([a-z0-9.:-]+)/(?:zones|regions)/([a-z0-9-]+)\Z")
MACHINE_TYPE_PATTERN = re.compile(r"\A[a-z][a-z0-9]*-[a-z0-9-]+\Z")
# "n1-standard-8 + 1 x T4" (the price catalog's spelling of an N1 type with GPUs attached)
N1_WITH_GPUS = re.compile(r"\A(n1-[a-z0-9-]+) *\+ *([0-9]{1,2}) *x *([A-Za-z0-9-]+)\Z")
ACCELERATORS = {  # catalog GPU name -> Compute Engine accelerator type (N1 only)
    "T4": "nvidia-tesla-t4",
    "P4": "nvidia-tesla-p4",
    "P100": "nvidia-tesla-p100",
    "V100": "nvidia-tesla-v100",
}
GPU_FAMILIES = ("a2-", "a3-", "a4-", "a4x-", "g2-", "g4-")  # GPUs built in

GONE_STATUSES = ("STOPPING", "TERMINATED")  # no longer running (deletion or guest shutdown)
NAME_PATTERN = re.compile(r"[^a-z0-9-]+")


# ----------------------------------------------------------------- validation


def known_regions() -> tuple[str, ...]:
    """The Compute Engine regions a sweep target's zone may be in."""
    return GCP_REGIONS


def zone_problem(zone: str) -> str | None:
    """None when `zone` looks like a zone of a known region (us-central1-a), else why not."""
    match = ZONE_PATTERN.fullmatch(zone)
    if not match:
        region_hint = f"; a zone of it is e.g. '{zone}-a'" if zone in GCP_REGIONS else ""
        return f"{zone!r} is not a GCP zone (region-letter, e.g. 'us-central1-a'){region_hint}"
    region = match.group(1)
    if region not in GCP_REGIONS:
        close = closest_match(region, GCP_REGIONS, cutoff=0.6)
        hint = f"; did you mean '{close}-{match.group(2)}'?" if close else ""
        return f"unknown GCP region {region!r} in zone {zone!r}{hint}"
    return None


def machine_type_problem(machine_type: str, known: set[str] | None = None) -> str | None:
    """None when `machine_type` is a GCE machine type (N1: with '+ N x GPU' if any) that is
    in `known` (if given), else what is wrong."""
    n1 = N1_WITH_GPUS.fullmatch(machine_type)
    if n1 and n1.group(3) not in ACCELERATORS and not n1.group(3).startswith("nvidia-"):
        return (
            f"unknown GPU {n1.group(3)!r} in {machine_type!r} (N1 takes {', '.join(ACCELERATORS)})"
        )
    if not n1 and not MACHINE_TYPE_PATTERN.fullmatch(machine_type):
        return f"{machine_type!r} is not a GCE machine type (e.g. 'a2-highgpu-1g')"
    if known is not None and machine_type not in known:
        hint = did_you_mean(machine_type, sorted(known), cutoff=0.6)
        return f"unknown GCE machine type {machine_type!r}{hint}"
    return None


def ssh_keys_entry(user: str, public_key: str | None) -> str | None:
    """The `ssh-keys` metadata value "USER:KEY" (one line; Compute Engine reads one key per
    line; None without a key), or ProvisionError when the user is not a login name or the
    key is not one OpenSSH public key line (a newline in either would add a key for
    another user)."""
    problem = login_name_problem(user)
    if problem:
        raise ProvisionError(f"GCP ssh_user: {problem}")
    if not public_key:
        return None
    problem = ssh_public_key_problem(public_key.strip())
    if problem:
        raise ProvisionError(
            f"GCP ssh public key (ssh_public_key, or identity_file + '.pub'): {problem}"
        )
    return f"{user}:{public_key.strip()}"


def region_of(zone: str) -> str:
    """us-central1-a -> us-central1."""
    return zone.rsplit("-", 1)[0]


def label_value(text: str) -> str:
    """`text` as a GCP label value / instance name part: lower case, [a-z0-9-], <= 63."""
    return NAME_PATTERN.sub("-", text.lower()).strip("-")[:63]


def instance_name(name: str) -> str:
    """A valid GCE instance name from `name` (starts with a letter, [a-z0-9-], <= 63)."""
    cleaned = label_value(name)
    if not cleaned or not cleaned[0].isalpha():
        cleaned = f"gpuplan-{cleaned}"
    return cleaned[:63].rstrip("-")


def split_machine_type(machine_type: str) -> tuple[str, str | None, int]:
    """("n1-standard-8", "nvidia-tesla-t4", 1) for "n1-standard-8 + 1 x T4";
    without GPUs: (machine_type, None, 0)."""
    match = N1_WITH_GPUS.fullmatch(machine_type)
    if not match:
        return machine_type, None, 0
    gpu = match.group(3)
    return match.group(1), ACCELERATORS.get(gpu, gpu), int(match.group(2))


# ----------------------------------------------------------------- errors

GRANT = (
    "grant the account roles/compute.instanceAdmin.v1 on project {project} "
    "(and roles/iam.serviceAccountUser if instances run as a service account); "
    "see the README, 'GCP roles'"
)


def explain_error(code: str, message: str, call: str, zone: str, project: str, what: str) -> str:
    """What a failed Compute call or operation error means and what to do about it."""
    head = f"GCE {call} of {what} in {zone} failed ({code}: {message})"
    region = region_of(zone) if ZONE_PATTERN.fullmatch(zone) else zone
    quota = re.search(r"Quota '([A-Z0-9_]+)' exceeded", message)
    if quota or "QUOTA" in code.upper() or "quota" in message.lower():
        metric = quota.group(1) if quota else "the GPU quota"
        return (
            f"{head}: project {project} has too little {metric} quota in {region}. Request "
            f"an increase of {metric} for {region} (console: IAM & Admin > Quotas; spot uses "
            f"the PREEMPTIBLE_ quotas) or choose another region."
        )
    if "RESOURCE_POOL_EXHAUSTED" in code or "does not have enough resources" in message:
        zones = ", ".join(f"{region}-{letter}" for letter in "abc" if f"{region}-{letter}" != zone)
        return (
            f"{head}: Compute Engine has no free capacity for {what} in {zone} right now. "
            f"Try another zone ({zones}) or region, spot instead of on-demand (or the other "
            f"way round), or retry later."
        )
    if code in ("403", "PERMISSION_DENIED", "Forbidden"):
        permission = re.search(r"'(compute\.[a-zA-Z.]+|iam\.[a-zA-Z.]+)' permission", message)
        missing = f" (missing {permission.group(1)})" if permission else ""
        return f"{head}: not allowed{missing}: " + GRANT.format(project=project)
    if code in ("404", "NOT_FOUND", "RESOURCE_NOT_FOUND"):
        return (
            f"{head}: something named in the request does not exist: the machine type (is it "
            f"offered in {zone}? `gcloud compute machine-types list --zones {zone}`), the "
            f"image, the subnetwork, or project {project}."
        )
    if code in ("409", "ALREADY_EXISTS"):
        return f"{head}: an instance with that name already exists in {zone}."
    return head


# ----------------------------------------------------------------- provisioner


def _status(value: Any) -> str:
    """An enum or string status as its name ("RUNNING")."""
    return str(getattr(value, "name", value) or "")


@dataclasses.dataclass(kw_only=True, eq=False, repr=False)
class GcpProvisioner:
    """The `Provisioner` for Compute Engine: instances and zone operations over REST.

    `project` defaults to the target's, then $GOOGLE_CLOUD_PROJECT, then the credentials'.
    `credentials` default to Application Default Credentials; `api_endpoint` to Google's.
    `now` is the clock that turns `expires_at` into `maxRunDuration` (UTC).
    """

    backend = "gcp"

    project: str | None = None
    credentials: Any = None
    api_endpoint: str | None = None
    poll_s: float = 5.0
    operation_timeout_s: float = 300.0
    sleep: Callable[[float], None] = time.sleep
    now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC)
    _instances: Any = dataclasses.field(default=None, init=False)
    _operations: Any = dataclasses.field(default=None, init=False)

    # -- clients

    def _compute(self) -> Any:
        try:
            from google.cloud import compute_v1
        except ImportError:
            raise ProvisionError(
                "google-cloud-compute is not installed: pip install 'gpuplan[gcp]' to launch "
                "GCP targets"
            ) from None
        return compute_v1

    def _credentials_and_project(self) -> tuple[Any, str | None]:
        if self.credentials is not None:
            return self.credentials, self.project
        import google.auth
        from google.auth.exceptions import DefaultCredentialsError

        try:
            credentials, project = google.auth.default(
                scopes=["https://www.googleapis.com/auth/cloud-platform"]
            )
        except DefaultCredentialsError:
            raise ProvisionError(
                "no Google Cloud credentials found: run `gcloud auth application-default "
                "login` or set GOOGLE_APPLICATION_CREDENTIALS to a service account key file"
            ) from None
        self.credentials = credentials
        self.project = self.project or project
        return credentials, self.project

    def clients(self) -> tuple[Any, Any]:
        """(InstancesClient, ZoneOperationsClient), built once."""
        if self._instances is None:
            compute_v1 = self._compute()
            credentials, _ = self._credentials_and_project()
            options = {"api_endpoint": self.api_endpoint} if self.api_endpoint else None
            self._instances = compute_v1.InstancesClient(
                credentials=credentials, transport="rest", client_options=options
            )
            self._operations = compute_v1.ZoneOperationsClient(
                credentials=credentials, transport="rest", client_options=options
            )
        return self._instances, self._operations

    def project_for(self, explicit: str | None = None) -> str:
        """The project to use: `explicit`, this provisioner's, $GOOGLE_CLOUD_PROJECT, ADC's."""
        project = explicit or self.project or os.environ.get("GOOGLE_CLOUD_PROJECT")
        if not project and self.credentials is None:
            project = self._credentials_and_project()[1]
        if not project:
            raise ProvisionError(
                "no GCP project: set `project` in the target, or GOOGLE_CLOUD_PROJECT, or "
                "`gcloud config set project ID`"
            )
        return project

    def _call(
        self, call: str, zone: str, project: str, what: str, fn: Callable[..., Any], /, **kw: Any
    ) -> Any:
        """fn(**kw), one Compute call; API errors become ProvisionError with what to do."""
        from google.api_core import exceptions as api

        try:
            return fn(**kw)
        except api.GoogleAPICallError as err:
            code = str(getattr(err.code, "value", err.code) or "")
            reasons = " ".join(str(e.get("reason", "")) for e in err.errors if isinstance(e, dict))
            message = f"{err.message} {reasons}".strip()
            raise ProvisionError(explain_error(code, message, call, zone, project, what)) from err
        except api.RetryError as err:
            raise ProvisionError(f"GCE {call} of {what} in {zone} timed out: {err}") from err

    def _wait(self, operation: Any, zone: str, project: str, call: str, what: str) -> None:
        """Wait on a zone operation until DONE; its errors become ProvisionError."""
        _, operations = self.clients()
        deadline = time.monotonic() + self.operation_timeout_s
        while _status(operation.status) != "DONE":
            if time.monotonic() >= deadline:
                raise ProvisionError(
                    f"GCE {call} of {what} in {zone} did not finish within "
                    f"{self.operation_timeout_s:.0f} s (operation {operation.name})"
                )
            name = str(operation.name)
            operation = self._call(
                call,
                zone,
                project,
                what,
                operations.wait,
                project=project,
                zone=zone,
                operation=name,
                timeout=60,
            )
        errors = list(operation.error.errors) if operation.error else []
        if errors:
            first = errors[0]
            message = "; ".join(str(e.message) for e in errors)
            raise ProvisionError(explain_error(str(first.code), message, call, zone, project, what))

    # -- the protocol

    def launch(self, request: Launch) -> Machine:
        """instances.insert (labelled, deleted by Compute Engine at `expires_at`); waits for
        the insert operation, not for the instance to run."""
        target = request.target
        user = target.ssh_user or DEFAULT_USER
        ssh_keys = ssh_keys_entry(user, target.ssh_public_key)  # before any call
        compute_v1 = self._compute()
        zone, project = target.region, self.project_for(target.project)
        vm_name = instance_name(request.name)
        labels = request.tags(label_value(request.sweep_id))
        # maxRunDuration counts from the start of the VM, so it ends at expires_at or a
        # little after (by the provisioning time); the startup script's switch ends it earlier.
        run_s = max(60, round((request.expires_at - self.now()).total_seconds()))
        metadata = _metadata_items(target, request.startup_script, ssh_keys)
        instance = _instance_resource(compute_v1, target, vm_name, labels, run_s, metadata)
        self._insert(instance, zone, project, f"{target.instance_type} instance {vm_name}")
        return Machine(
            backend="gcp",
            host="",
            user=user,
            cloud="gcp",
            region=region_of(zone),
            zone=zone,
            instance_type=target.instance_type,
            instance_id=vm_name,
            spot=target.spot,
            launched_at=self.now().isoformat(),
            sweep_id=labels[SWEEP_TAG],
            name=vm_name,
            project=project,
        )

    def _insert(self, instance: Any, zone: str, project: str, what: str) -> None:
        """instances.insert and wait for its operation; an insert that fails on the way
        is deleted (the caller never learns the name, so nothing would)."""
        instances, _ = self.clients()
        operation = self._call(
            "instances.insert",
            zone,
            project,
            what,
            lambda: instances.insert_unary(
                project=project, zone=zone, instance_resource=instance, timeout=60
            ),
        )
        try:
            self._wait(operation, zone, project, "instances.insert", what)
        except ProvisionError:
            with contextlib.suppress(Exception):
                instances.delete_unary(
                    project=project, zone=zone, instance=instance.name, timeout=60
                )
            raise

    def wait_running(self, machine: Machine, timeout_s: float) -> Machine:
        """Poll instances.get until RUNNING with an external (else internal) address."""
        zone, project, name = self._where(machine)

        def probe() -> tuple[Machine | None, str | None]:
            instance = self._get(zone, project, name)
            if instance is None:
                raise ProvisionError(f"GCE instance {name} in {zone} disappeared while starting")
            status = _status(instance.status)
            address = _address(instance)
            if status == "RUNNING" and address:
                return dataclasses.replace(machine, host=address), status
            if status in GONE_STATUSES:
                reason = instance.status_message or "no reason given"
                raise ProvisionError(
                    f"GCE instance {name} in {zone} stopped while starting ({status}: {reason})"
                )
            return None, status

        return poll_until_running(
            probe,
            timeout_s,
            self.poll_s,
            self.sleep,
            lambda status: (
                f"GCE instance {name} in {zone} was not running with an address after "
                f"{timeout_s:.0f} s (last status: {status})"
            ),
        )

    def terminate(self, machine: Machine) -> None:
        """instances.delete and wait for it; an instance that is already gone is fine."""
        zone, project, name = self._where(machine)
        instances, _ = self.clients()
        try:
            operation = self._call(
                "instances.delete",
                zone,
                project,
                f"instance {name}",
                lambda: instances.delete_unary(
                    project=project, zone=zone, instance=name, timeout=60
                ),
            )
        except ProvisionError as err:
            if isinstance(err.__cause__, _not_found()):
                return
            raise
        self._wait(operation, zone, project, "instances.delete", f"instance {name}")

    def is_terminated(self, machine: Machine) -> bool:
        """True when instances.get answers 404, or the instance is STOPPING/TERMINATED."""
        zone, project, name = self._where(machine)
        instance = self._get(zone, project, name)
        return instance is None or _status(instance.status) in GONE_STATUSES

    def find_launched(self, regions: list[str], sweep_id: str | None = None) -> list[Machine]:
        """Every existing instance labelled `gpuplan-sweep` (= sweep_id) in these zones.

        An entry is a zone (us-central1-a) or a region (all its zones), in this
        provisioner's project, or a resource path naming the project too
        (projects/P/zones/Z, projects/P/regions/R). A TERMINATED (stopped) instance still
        bills its disk, so it is listed too.
        """
        instances, _ = self.clients()
        label = f"labels.{SWEEP_TAG}"
        flt = f'{label} = "{label_value(sweep_id)}"' if sweep_id else f"{label}:*"
        found: list[Machine] = []

        def in_zone(project: str, zone: str) -> list[Any]:  # every page read inside _call
            request = {"project": project, "zone": zone, "filter": flt}
            return list(instances.list(request=request, timeout=60))

        def in_all_zones(project: str) -> list[Any]:
            request = {"project": project, "filter": flt}
            return list(instances.aggregated_list(request=request, timeout=60))

        for entry in dict.fromkeys(regions):
            path = RESOURCE_PATH.fullmatch(entry)
            project = self.project_for(path.group(1) if path else None)
            where = path.group(2) if path else entry
            if not ZONE_PATTERN.fullmatch(where) and not REGION_PATTERN.fullmatch(where):
                raise ProvisionError(
                    f"{entry!r} is not a GCP zone (us-central1-a), region (us-central1) or "
                    "resource path (projects/P/zones/Z, projects/P/regions/R)"
                )
            if ZONE_PATTERN.fullmatch(where):
                listed = self._call(
                    "instances.list", where, project, "instances", in_zone,
                    project=project, zone=where,
                )  # fmt: skip
                found += [self._machine(i, where, project) for i in listed]
                continue
            scopes = self._call(
                "instances.aggregatedList", where, project, "instances", in_all_zones,
                project=project,
            )  # fmt: skip
            for scope, scoped in scopes:
                zone = scope.rsplit("/", 1)[-1]
                if region_of(zone) == where:
                    found += [self._machine(i, zone, project) for i in scoped.instances]
        return found

    # -- helpers

    def _get(self, zone: str, project: str, name: str) -> Any:
        """The instance, or None when instances.get answers 404."""
        instances, _ = self.clients()
        try:
            return self._call(
                "instances.get",
                zone,
                project,
                f"instance {name}",
                instances.get,
                project=project,
                zone=zone,
                instance=name,
                timeout=60,
            )
        except ProvisionError as err:
            if isinstance(err.__cause__, _not_found()):
                return None
            raise

    def _where(self, machine: Machine) -> tuple[str, str, str]:
        if not machine.zone or not machine.instance_id:
            raise ProvisionError(f"machine {machine.host!r} has no GCP zone/instance name")
        return machine.zone, self.project_for(machine.project), machine.instance_id

    @staticmethod
    def _machine(instance: Any, zone: str, project: str) -> Machine:
        labels = dict(instance.labels)
        machine_type = str(instance.machine_type).rsplit("/", 1)[-1]
        running = _status(instance.status) == "RUNNING"
        return Machine(
            backend="gcp",
            host=_address(instance) if running else "",
            user=DEFAULT_USER,
            cloud="gcp",
            region=region_of(zone),
            zone=zone,
            instance_type=machine_type,
            instance_id=instance.name,
            spot=_status(instance.scheduling.provisioning_model) == "SPOT",
            launched_at=instance.creation_timestamp or None,
            sweep_id=labels.get(SWEEP_TAG),
            name=instance.name,
            project=project,
        )


def _instance_resource(
    compute_v1: Any,
    target: CloudTarget,
    vm_name: str,
    labels: dict[str, str],
    run_s: int,
    metadata: list[tuple[str, str]],
) -> Any:
    """The compute_v1.Instance to insert: machine type and GPUs, labelled boot disk,
    external address, and a schedule that deletes it after `run_s` seconds."""
    zone = target.region
    machine_type, accelerator, gpus = split_machine_type(target.instance_type)
    has_gpus = bool(gpus) or machine_type.startswith(GPU_FAMILIES)
    interface = compute_v1.NetworkInterface(
        access_configs=[compute_v1.AccessConfig(name="External NAT", type_="ONE_TO_ONE_NAT")]
    )
    if target.subnet_id:
        interface.subnetwork = target.subnet_id
    else:
        interface.network = "global/networks/default"
    return compute_v1.Instance(
        name=vm_name,
        machine_type=f"zones/{zone}/machineTypes/{machine_type}",
        labels=labels,
        metadata=compute_v1.Metadata(
            items=[compute_v1.Items(key=key, value=value) for key, value in metadata]
        ),
        disks=[
            compute_v1.AttachedDisk(
                boot=True,
                auto_delete=True,
                initialize_params=compute_v1.AttachedDiskInitializeParams(
                    source_image=target.image or DEFAULT_IMAGE,
                    disk_size_gb=BOOT_DISK_GB,
                    labels=labels,
                ),
            )
        ],
        network_interfaces=[interface],
        scheduling=compute_v1.Scheduling(
            max_run_duration=compute_v1.Duration(seconds=run_s),
            instance_termination_action="DELETE",
            provisioning_model="SPOT" if target.spot else "STANDARD",
            automatic_restart=False,
            **({"on_host_maintenance": "TERMINATE"} if has_gpus or target.spot else {}),
        ),
        guest_accelerators=[
            compute_v1.AcceleratorConfig(
                accelerator_type=f"zones/{zone}/acceleratorTypes/{accelerator}",
                accelerator_count=gpus,
            )
        ]
        if accelerator
        else [],
    )


def _metadata_items(
    target: CloudTarget, startup_script: str, ssh_keys: str | None
) -> list[tuple[str, str]]:
    """The instance metadata as (key, value): the startup script, the `ssh-keys` entry if
    any, and the NVIDIA driver install on the default image."""
    items = [("startup-script", startup_script)]
    if ssh_keys is not None:
        items.append(("ssh-keys", ssh_keys))
    if target.image is None:
        items.append(("install-nvidia-driver", "True"))
    return items


def _address(instance: Any) -> str:
    """The external NAT address of the first interface, else its internal address."""
    for interface in instance.network_interfaces:
        for access in interface.access_configs:
            if access.nat_i_p:
                return str(access.nat_i_p)
        if interface.network_i_p:
            return str(interface.network_i_p)
    return ""


def _not_found() -> type[BaseException]:
    from google.api_core.exceptions import NotFound

    return NotFound
