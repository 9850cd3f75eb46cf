"""SkyPilot as a sweep provisioner: every cloud, Kubernetes cluster, Slurm cluster and SSH
node pool that SkyPilot reaches, through its Python SDK (`pip install 'gpuplan[skypilot]'`).

One SkyPilot cluster per target, named as the sweep names its machines
(gpuplan-<sweep id>-<index>), with the target's resources pinned: cloud, region/zone,
instance type or accelerators, spot, image. Pinning is what lets gpuplan's preview and
dollar cap hold: SkyPilot launches that instance in that region or fails, it never picks
another one (its optimizer only fills in what is left open).

The dead-man switch: the launched task's `run` is one job that sleeps until the target's
`gpuplan-expires` time, and the cluster is launched with `down=True` and autostop
(`idle_minutes_to_autostop=1`, waiting for jobs only). SkyPilot's own agent on the
cluster tears it down one idle minute after that job ends, whether or not this
controller is still there. The sweep itself ends it sooner with `sky.down`, confirmed
when `sky.status` no longer lists the cluster. The gpuplan wheel travels as a file mount
(and the SSH installer finds it there); benchmarks then run over SSH as on any machine:
SkyPilot writes an SSH config entry named after the cluster (~/.sky/generated/ssh/,
included from ~/.ssh/config), so the machine's `host` is the cluster name.

Every SDK call is bounded: the SDK has no timeouts of its own, and an API server that
answers its health check may then stop answering. Each call runs in a daemon thread the
caller abandons at its limit (`call_timeout_s` for launch, status and down; the caller's
wait for `sky.get`), raising ProvisionError that names the call, the cluster and how to
check it. A cluster is recorded in the sweep's state before its launch call is made, so
an abandoned call still leaves it findable.

SkyPilot is imported only when a skypilot target is launched (never by `import planner`).
`sdk` may be given (tests: a stand-in whose calls are checked against the real SDK; it
names AutostopWaitFor.JOBS as `wait_for_jobs`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import importlib
import math
import threading
import time
from collections.abc import Callable
from typing import Any

from benchmarks.runners.machine import CloudTarget, Launch, Machine, ProvisionError

IDLE_MINUTES = 1  # autostop: minutes idle (no job) before SkyPilot tears the cluster down
DOWN_WAIT_S = 900.0  # for sky.down to finish
CALL_TIMEOUT_S = 120.0  # for the API server to answer one call (launch, status, down)
POLL_S = 5.0
CLUSTER_PREFIX = "gpuplan-"


def deadline_script(expires_at: dt.datetime) -> str:
    """The task's run command: sleep until `expires_at` (UTC), then end (the job that holds
    the cluster until the target's time is up; see the module docstring)."""
    epoch = math.ceil(expires_at.timestamp())
    return (
        f"left=$(( {epoch} - $(date +%s) )); "
        'if [ "$left" -gt 0 ]; then sleep "$left"; fi; '
        f"echo 'gpuplan: max_minutes_per_target reached ({expires_at:%Y-%m-%d %H:%M} UTC)'"
    )


def resources_config(target: CloudTarget) -> dict[str, Any]:
    """The task's `resources` (SkyPilot's YAML keys) for a target: every given key pinned."""
    cloud = "kubernetes" if target.cloud == "k8s" else target.cloud  # SkyPilot's own name
    resources: dict[str, Any] = {"cloud": cloud}
    for key, value in (
        ("region", target.region or None), ("zone", target.zone),
        ("instance_type", target.instance_type or None), ("accelerators", target.accelerators),
        ("image_id", target.image),
    ):  # fmt: skip
        if value:
            resources[key] = value
    resources["use_spot"] = bool(target.spot)
    return resources


def task_config(
    target: CloudTarget, name: str, expires_at: dt.datetime, sweep_id: str
) -> dict[str, Any]:
    """The SkyPilot task (as YAML would give it) that holds a target's cluster."""
    config: dict[str, Any] = {
        "name": name,
        "resources": resources_config(target),
        "envs": {"GPUPLAN_SWEEP": sweep_id},
        "run": deadline_script(expires_at),
    }
    if target.file_mounts:
        config["file_mounts"] = dict(target.file_mounts)
    return config


def _import_sky() -> Any:
    try:
        return importlib.import_module("sky")
    except ModuleNotFoundError:
        raise ProvisionError(
            "the skypilot backend needs SkyPilot: pip install 'gpuplan[skypilot]'"
        ) from None


def one_line(exc: BaseException, limit: int = 300) -> str:
    """A SkyPilot error as one plain line (its first line, without colour codes)."""
    from benchmarks.runners.remote_output import plain

    text = str(exc).strip().splitlines()
    first = plain(text[0], limit) if text else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


class SkyPilotProvisioner:
    """A Provisioner (runners.machine) over SkyPilot's SDK: launch, wait, down, confirm."""

    backend = "skypilot"

    def __init__(
        self, sdk: Any = None, down_wait_s: float = DOWN_WAIT_S, poll_s: float = POLL_S,
        sleep: Callable[[float], None] = time.sleep, call_timeout_s: float = CALL_TIMEOUT_S,
    ) -> None:  # fmt: skip
        self._sdk = sdk
        self.call_timeout_s = call_timeout_s
        self.down_wait_s = down_wait_s
        self.poll_s = poll_s
        self.sleep = sleep
        self._requests: dict[str, Any] = {}  # cluster name -> its launch request id

    @property
    def sdk(self) -> Any:
        if self._sdk is None:
            self._sdk = _import_sky()
        return self._sdk

    def task(self, target: CloudTarget, name: str, expires_at: dt.datetime, sweep_id: str) -> Any:
        """The sky.Task of a target, validated by SkyPilot (unknown keys, bad values)."""
        try:
            return self.sdk.Task.from_yaml_config(task_config(target, name, expires_at, sweep_id))
        except (ValueError, TypeError, KeyError) as exc:
            raise ProvisionError(f"SkyPilot refused the task of {name}: {one_line(exc)}") from None

    def launch(self, request: Launch) -> Machine:
        """Ask SkyPilot to launch the cluster (down=True, autostop); returns once the request
        is accepted. The startup script is not used: the deadline job is the switch here."""
        sky = self.sdk
        target, name, sweep_id = request.target, request.name, request.sweep_id
        task = self.task(target, name, request.expires_at, sweep_id)
        wait_for = _wait_for_jobs() if _is_sky(sky) else getattr(sky, "wait_for_jobs", None)
        self._requests[name] = self._call(
            f"SkyPilot launch of {name}", name, self.call_timeout_s, sky.launch, task,
            cluster_name=name, retry_until_up=False, idle_minutes_to_autostop=IDLE_MINUTES,
            wait_for=wait_for, down=True,
        )  # fmt: skip
        return Machine(
            backend="skypilot", host="", cloud="skypilot", region=target.region or None,
            zone=target.zone, instance_type=target.instance_type or target.accelerators,
            instance_id=name, spot=target.spot, launched_at=dt.datetime.now(dt.UTC).isoformat(),
            sweep_id=sweep_id, name=name,
        )  # fmt: skip

    def wait_running(self, machine: Machine, timeout_s: float) -> Machine:
        """Wait for the launch request (provisioning and SkyPilot's runtime set-up); the
        machine with `host` = the cluster name (SkyPilot's SSH config entry)."""
        name = str(machine.name)
        request = self._requests.get(name)
        if request is not None:
            self._get(request, timeout_s, f"the launch of {name}", name)
        records = self._status([name])
        if not records or _status_name(records[0]) != "UP":
            seen = _status_name(records[0]) if records else "not listed"
            raise ProvisionError(f"SkyPilot cluster {name} is not up after its launch ({seen})")
        return dataclasses.replace(machine, host=name)

    def terminate(self, machine: Machine) -> None:
        """sky.down of the cluster, waited for (up to down_wait_s); idempotent."""
        name = str(machine.instance_id or machine.name)
        if not self._status([name]):
            return
        try:
            request = self._call(f"SkyPilot down of {name}", name, self.call_timeout_s,
                                 self.sdk.down, name)  # fmt: skip
        except ProvisionError as exc:
            if _is_missing(exc.__cause__ or exc):
                return
            raise
        try:
            self._get(request, self.down_wait_s, f"sky down of {name}", name)
        except ProvisionError as exc:
            if "does not exist" not in str(exc) and "ClusterDoesNotExist" not in str(exc):
                raise

    def is_terminated(self, machine: Machine) -> bool:
        """Whether `sky.status` no longer lists the cluster."""
        return not self._status([str(machine.instance_id or machine.name)])

    def find_launched(self, regions: list[str], sweep_id: str | None = None) -> list[Machine]:
        """Every SkyPilot cluster named for this sweep (or for any gpuplan sweep); SkyPilot's
        status covers every cloud at once, so `regions` is not needed."""
        prefix = f"{CLUSTER_PREFIX}{sweep_id}-" if sweep_id else CLUSTER_PREFIX
        found = []
        for record in self._status(None):
            name = _field(record, "name")
            if isinstance(name, str) and name.startswith(prefix):
                found.append(Machine(backend="skypilot", host=name, cloud="skypilot",
                                     instance_id=name, name=name, sweep_id=sweep_id,
                                     region="any"))  # fmt: skip
        return found

    # -- SDK calls ---------------------------------------------------------------------

    def _status(self, names: list[str] | None) -> list[Any]:
        what = "SkyPilot status" + (f" of {', '.join(names)}" if names else "")
        cluster = names[0] if names and len(names) == 1 else None
        request = self._call(what, cluster, self.call_timeout_s, self.sdk.status,
                             cluster_names=names)  # fmt: skip
        return list(self._get(request, self.call_timeout_s, what, cluster) or [])

    def _get(self, request: Any, timeout_s: float, what: str, cluster: str | None = None) -> Any:
        """sky.get(request) within `timeout_s` seconds (sky.get has no timeout)."""
        return self._call(what, cluster, timeout_s, self.sdk.get, request)

    def _call(
        self, what: str, cluster: str | None, timeout_s: float, call: Callable[..., Any],
        *args: Any, **kwargs: Any,
    ) -> Any:  # fmt: skip
        """`call(*args, **kwargs)` in a daemon thread, abandoned after `timeout_s` seconds
        (the SDK's calls have no timeout); ProvisionError for an error or no answer."""
        box: dict[str, Any] = {}

        def wait() -> None:
            try:
                box["value"] = call(*args, **kwargs)
            except BaseException as exc:  # handed to the caller below
                box["error"] = exc

        thread = threading.Thread(target=wait, daemon=True, name=f"sky-{what}")
        thread.start()
        thread.join(timeout=max(0.1, timeout_s))
        if thread.is_alive():
            check = f"; check it with `sky status {cluster}`" if cluster else ""
            raise ProvisionError(
                f"{what}: the SkyPilot API server gave no answer within {timeout_s:.0f} s "
                f"(see `sky api status`){check}"
            )
        if "error" in box:
            raise ProvisionError(f"{what}: {one_line(box['error'])}") from box["error"]
        return box.get("value")


def _is_sky(sdk: Any) -> bool:
    return getattr(sdk, "__name__", None) == "sky"


def _wait_for_jobs() -> Any:
    """SkyPilot's AutostopWaitFor.JOBS: idle means no job, whatever SSH sessions are open."""
    try:
        return importlib.import_module("sky.skylet.autostop_lib").AutostopWaitFor.JOBS
    except (ModuleNotFoundError, AttributeError):
        return None


def _field(record: Any, name: str) -> Any:
    return record.get(name) if isinstance(record, dict) else getattr(record, name, None)


def _status_name(record: Any) -> str:
    status = _field(record, "status")
    return str(getattr(status, "value", status))


def _is_missing(exc: BaseException) -> bool:
    return "ClusterDoesNotExist" in type(exc).__name__ or "does not exist" in str(exc)


def make_provisioner(**opts: Any) -> SkyPilotProvisioner:
    """The provisioner backends.provisioner_for("skypilot") returns."""
    return SkyPilotProvisioner(**opts)
