"""`gpuplan sweep export --skypilot DIR`: one SkyPilot task YAML per cloud target.

Each task asks SkyPilot for the same instance type, region/zone and spot choice, installs
gpuplan[bench] and runs the spec's benchmarks with `gpuplan bench run`, writing results
into ~/sky_workdir/results (fetch them with `sky rsync-down`). A task is built as a dict
and written with json.dumps: JSON is YAML 1.2, which SkyPilot's loader reads, and no value
(a label, a path) can add a key or a line of its own. Each `run:` line is a shell command
whose arguments are quoted with shlex.quote.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.sweep.spec import SweepSpec

TASK_KEYS = ("name", "resources", "setup", "run")  # the top-level keys of every task


def task(spec: SweepSpec, index: int) -> dict[str, Any]:
    """The SkyPilot task of target `index` (a cloud target), as a dict."""
    target = spec.targets[index]
    resources: dict[str, Any] = {"cloud": target.backend, "instance_type": target.instance_type}
    if target.backend == "gcp" and target.zone:
        resources["zone"] = target.zone
    else:
        resources["region"] = target.region
    resources["use_spot"] = bool(target.spot)
    lines = [
        "gpuplan bench run " + " ".join(shlex.quote(a) for a in run.argv()) + " --out results"
        for run in spec.runs
    ]
    return {
        "name": f"{spec.name}-{index}",
        "resources": resources,
        "setup": "pip install 'gpuplan[bench]'\n",
        "run": "".join(line + "\n" for line in lines),
    }


def task_yaml(spec: SweepSpec, index: int) -> str:
    """The SkyPilot task of target `index` as YAML text (JSON, which YAML 1.2 reads)."""
    return json.dumps(task(spec, index), indent=2) + "\n"


def write_tasks(spec: SweepSpec, directory: Path) -> list[Path]:
    """Write one YAML per cloud target into `directory` (each through a temporary file in
    the same folder, then renamed); the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for target in spec.targets:
        if not target.is_cloud:
            continue
        path = directory / f"{spec.name}-{target.index}.yaml"
        handle, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
        try:
            os.fchmod(handle, 0o644)  # a task file, readable as any other written file
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(task_yaml(spec, target.index))
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        written.append(path)
    return written
