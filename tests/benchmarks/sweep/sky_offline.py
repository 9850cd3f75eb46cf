"""Run inside a subprocess whose HOME is a temporary folder: SkyPilot's own dry run of
gpuplan's tasks on local catalog files, and its SDK's signatures checked against the
calls the skypilot provisioner makes.

stdin: {"catalogs": {cloud: [rows of gpuplan's snapshot]}, "tasks": [task configs],
"provisioner": {"target": CloudTarget fields, "name": ..., "sweep_id": ...}}.
stdout (last line): {"picked": [...], "calls": [...], "flow": {...}}.

SkyPilot computes its catalog folder when it is imported (~/.sky/catalogs/<schema>), so
the catalogs are written before `import sky`. A cloud counts as enabled for the optimizer
once SkyPilot's own state (global_user_state) says so; nothing reaches a cloud.
"""

from __future__ import annotations

import csv
import datetime as dt
import inspect
import json
import os
import sys
from pathlib import Path
from typing import Any

# SkyPilot's vms.csv columns for Lambda Cloud and Nebius (sky/catalog/data_fetchers/).
LAMBDA_COLUMNS = ["InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB",
                  "Price", "Region", "GpuInfo", "SpotPrice"]  # fmt: skip


def accelerator(cloud: str, row: dict[str, str]) -> str:
    """SkyPilot's accelerator name of a snapshot row: Lambda's from the instance type (its
    own fetcher's rule), else gpuplan's GPU name without its form factor (H100-SXM: H100)."""
    if cloud == "lambda":
        from sky.catalog.data_fetchers.fetch_lambda_cloud import name_to_gpu

        return str(name_to_gpu(row["instance_type"]))
    return row["gpu_name"].split("-")[0]


def write_catalogs(catalogs: dict[str, list[dict[str, str]]], schema: str) -> None:
    """gpuplan's snapshot rows as SkyPilot's vms.csv of each cloud (the layout SkyPilot's
    Lambda and Nebius fetchers write: fetch_lambda_cloud.py, fetch_nebius.py)."""

    for cloud, rows in catalogs.items():
        folder = Path.home() / ".sky" / "catalogs" / schema / cloud
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / "vms.csv").open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(LAMBDA_COLUMNS)
            for r in rows:
                writer.writerow([
                    r["instance_type"], accelerator(cloud, r), float(r["gpu_count"]),
                    float(r["vcpus"]), float(r["memory_gib"]), r["usd_per_hour"], r["region"],
                    "", r.get("spot_usd_per_hour") or "",
                ])  # fmt: skip


def enable(clouds: list[str]) -> None:
    """Mark these clouds enabled in SkyPilot's state, as `sky check` would on success."""
    from sky import check, global_user_state, skypilot_config
    from sky.clouds import cloud as sky_cloud

    workspace = skypilot_config.get_active_workspace()
    global_user_state.set_allowed_clouds(check._get_workspace_allowed_clouds(workspace), workspace)
    global_user_state.set_enabled_clouds(clouds, sky_cloud.CloudCapability.COMPUTE, workspace)


def dry_run(config: dict[str, Any]) -> dict[str, Any]:
    """SkyPilot's optimizer on one task: what it would launch, or why not."""
    import sky
    from sky import exceptions

    try:
        task = sky.Task.from_yaml_config(config)
        dag = sky.Dag()
        dag.add(task)
        sky.Optimizer.optimize(dag, quiet=True)
    except (exceptions.ResourcesUnavailableError, ValueError) as exc:
        return {"error": type(exc).__name__, "message": str(exc).strip().splitlines()[0]}
    best = task.best_resources
    return {
        "cloud": str(best.cloud).lower(), "region": best.region, "zone": best.zone,
        "instance_type": best.instance_type, "use_spot": best.use_spot,
        "usd_per_hour": best.get_cost(3600), "accelerators": best.accelerators,
        "file_mounts": task.file_mounts, "run": task.run,
    }  # fmt: skip


class CheckedSdk:
    """The real SkyPilot module, but every call the provisioner makes is first bound to
    the real function's signature (a wrong keyword fails here) and then recorded; the
    calls that would reach the API server answer as it would for one UP cluster."""

    def __init__(self) -> None:
        import sky
        from sky.skylet.autostop_lib import AutostopWaitFor

        self.sky = sky
        self.Task = sky.Task
        self.wait_for_jobs = AutostopWaitFor.JOBS
        self.calls: list[dict[str, Any]] = []
        self.clusters: list[dict[str, Any]] = []

    def _check(self, name: str, *args: Any, **kwargs: Any) -> None:
        inspect.signature(getattr(self.sky, name)).bind(*args, **kwargs)
        shown = {k: (v.value if hasattr(v, "value") else v) for k, v in kwargs.items()}
        self.calls.append({"call": name, "kwargs": json.loads(json.dumps(shown, default=str))})

    def launch(self, task: Any, **kwargs: Any) -> str:
        self._check("launch", task, **kwargs)
        self.clusters = [{"name": kwargs["cluster_name"], "status": "UP"}]
        return "request-launch"

    def down(self, cluster_name: str, **kwargs: Any) -> str:
        self._check("down", cluster_name, **kwargs)
        self.clusters = []
        return "request-down"

    def status(self, **kwargs: Any) -> str:
        self._check("status", **kwargs)
        return "request-status"

    def get(self, request: str) -> Any:
        self._check("get", request)
        return list(self.clusters) if request == "request-status" else (1, None)


def provisioner_flow(spec: dict[str, Any]) -> dict[str, Any]:
    from benchmarks.runners.machine import CloudTarget, Launch
    from benchmarks.runners.skypilot import SkyPilotProvisioner

    sdk = CheckedSdk()
    target = CloudTarget(**{**spec["target"], "file_mounts": tuple(
        tuple(pair) for pair in spec["target"]["file_mounts"])})  # fmt: skip
    provisioner = SkyPilotProvisioner(sdk=sdk, poll_s=0)
    expires = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=30)
    machine = provisioner.launch(Launch(target, spec["sweep_id"], expires, "", spec["name"]))
    running = provisioner.wait_running(machine, 30)
    found = [m.name for m in provisioner.find_launched([], spec["sweep_id"])]
    provisioner.terminate(running)
    return {
        "calls": sdk.calls, "host": running.host, "found": found,
        "terminated": provisioner.is_terminated(running),
    }  # fmt: skip


def main() -> None:
    request = json.loads(sys.stdin.read())
    assert Path.home() != Path("/root"), "run with HOME set to a temporary folder"
    from sky.skylet import constants

    write_catalogs(request["catalogs"], constants.CATALOG_SCHEMA_VERSION)
    enable(request["enabled"])
    picked = [dry_run(config) for config in request["tasks"]]
    flow = provisioner_flow(request["provisioner"])
    print(json.dumps({"picked": picked, "flow": flow, "sky_home": os.environ["HOME"]}))


if __name__ == "__main__":
    main()
