"""`gpuplan sweep export --skypilot DIR`: one SkyPilot task YAML per cloud target.

Each task asks SkyPilot for the same resources as the target (aws/gcp: instance type,
region or zone, spot; skypilot: every resource it pins, runners/skypilot.py), carries
this gpuplan's wheel as a file mount (runners/ship.py builds it; a copy is written next
to the tasks), installs it in its `setup` with the same script a sweep runs over SSH
(runners/remote_install.py: a venv, a torch that fits the machine, the bench extra),
and runs the spec's benchmarks with `python -m planner.cli.main bench run`, writing
results into ~/sky_workdir/results (fetch them with `sky rsync-down`). No package
index needs to carry gpuplan. A target with `remote_python` uses that interpreter and
gets no wheel.

A task is built as a dict and written with json.dumps: JSON is YAML 1.2, which
SkyPilot's loader reads, and no value (a label, a path) can add a key or a line of its
own. Each `run:` line is a shell command whose arguments are quoted with shlex.quote.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.runners.machine import CloudTarget
from benchmarks.runners.remote_install import install_script, sh_path
from benchmarks.runners.ship import Wheel
from benchmarks.runners.skypilot import resources_config
from benchmarks.sweep.spec import SweepSpec, TargetSpec

TASK_KEYS = ("name", "resources", "file_mounts", "setup", "run")  # every task's top keys
REMOTE_BASE = "~/.gpuplan-sweep"  # on the machine (SkyPilot runs tasks in ~/sky_workdir)


def _resources(target: TargetSpec) -> dict[str, Any]:
    if target.backend == "skypilot":
        cloud = CloudTarget(
            backend="skypilot", instance_type=target.instance_type or "",
            region=target.region or "", spot=target.spot, image=target.image,
            cloud=target.cloud, zone=target.zone, accelerators=target.accelerators,
        )  # fmt: skip
        return resources_config(cloud)
    resources: dict[str, Any] = {"cloud": target.backend, "instance_type": target.instance_type}
    if target.backend == "gcp" and target.zone:
        resources["zone"] = target.zone
    else:
        resources["region"] = target.region
    resources["use_spot"] = bool(target.spot)
    return resources


def remote_wheel_path(wheel: Wheel) -> str:
    """Where the file mount puts the wheel on the machine."""
    return f"{REMOTE_BASE}/wheels/{wheel.version}-{wheel.digest}/{wheel.name}"


def task(spec: SweepSpec, index: int, wheel: Wheel | None) -> dict[str, Any]:
    """The SkyPilot task of target `index` (a cloud target), as a dict; `wheel` is the
    gpuplan wheel the task installs (None only when the target has remote_python)."""
    target = spec.targets[index]
    venv = target.remote_venv or f"{REMOTE_BASE}/venv"
    python = target.remote_python or f"{venv}/bin/python"
    file_mounts: dict[str, str] = {}
    setup = ""
    if not target.remote_python:
        if wheel is None:
            raise ValueError(f"target {index} installs gpuplan: give the wheel to mount")
        file_mounts[remote_wheel_path(wheel)] = str(wheel.path)
        setup = install_script(
            venv, remote_wheel_path(wheel), wheel.version, wheel.digest, target.torch_index_url
        )
    lines = [
        f"{sh_path(python)} -m planner.cli.main bench run "
        + " ".join(shlex.quote(a) for a in run.argv())
        + " --out results"
        for run in spec.runs
    ]
    return {
        "name": f"{spec.name}-{index}",
        "resources": _resources(target),
        "file_mounts": file_mounts,
        "setup": setup,
        "run": "".join(line + "\n" for line in lines),
    }


def task_yaml(spec: SweepSpec, index: int, wheel: Wheel | None) -> str:
    """The SkyPilot task of target `index` as YAML text (JSON, which YAML 1.2 reads)."""
    return json.dumps(task(spec, index, wheel), indent=2) + "\n"


def _write(path: Path, text: bytes) -> None:
    """`text` into `path` through a temporary file in the same folder, then renamed."""
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(handle, 0o644)  # readable as any other written file
        with os.fdopen(handle, "wb") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_tasks(spec: SweepSpec, directory: Path, wheel: Wheel | None = None) -> list[Path]:
    """Write one YAML per cloud target into `directory`, and the wheel they mount beside
    them (built when not given and a target needs it); the task paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    clouds = [t for t in spec.targets if t.is_cloud]
    if wheel is None and any(not t.remote_python for t in clouds):
        from benchmarks.runners.ship import local_wheel

        wheel = local_wheel()
    if wheel is not None:
        copy = directory / wheel.name
        _write(copy, wheel.path.read_bytes())
        wheel = Wheel(copy.resolve(), wheel.version, wheel.digest)
    written = []
    for target in clouds:
        path = directory / f"{spec.name}-{target.index}.yaml"
        _write(path, task_yaml(spec, target.index, wheel).encode())
        written.append(path)
    return written
