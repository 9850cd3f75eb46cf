"""`gpuplan sweep export --skypilot DIR`: one SkyPilot task YAML per cloud target.

Each task asks SkyPilot for the same instance type, region/zone and spot choice, installs
gpuplan[bench] and runs the spec's benchmarks with `gpuplan bench run`, writing results
into ~/sky_workdir/results (fetch them with `sky rsync-down`). Written as plain YAML text
(no yaml dependency); values are quoted as JSON strings, which YAML reads as such.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from benchmarks.sweep.spec import SweepSpec


def task_yaml(spec: SweepSpec, index: int) -> str:
    """The SkyPilot task of target `index` (a cloud target)."""
    target = spec.targets[index]
    lines = [
        f"# gpuplan sweep {spec.name}: target {target.label}",
        f"name: {json.dumps(f'{spec.name}-{index}')}",
    ]
    lines += [
        "resources:",
        f"  cloud: {target.backend}",
        f"  instance_type: {json.dumps(target.instance_type)}",
    ]
    if target.backend == "gcp" and target.zone:
        lines.append(f"  zone: {json.dumps(target.zone)}")
    else:
        lines.append(f"  region: {json.dumps(target.region)}")
    lines.append(f"  use_spot: {'true' if target.spot else 'false'}")
    lines += ["setup: |", "  pip install 'gpuplan[bench]'", "run: |"]
    for run in spec.runs:
        args = " ".join(shlex.quote(a) for a in run.argv())
        lines.append(f"  gpuplan bench run {args} --out results")
    return "\n".join(lines) + "\n"


def write_tasks(spec: SweepSpec, directory: Path) -> list[Path]:
    """Write one YAML per cloud target into `directory`; the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for target in spec.targets:
        if not target.is_cloud:
            continue
        path = directory / f"{spec.name}-{target.index}.yaml"
        tmp = path.with_suffix(".yaml.tmp")
        tmp.write_text(task_yaml(spec, target.index))
        tmp.replace(path)
        written.append(path)
    return written
