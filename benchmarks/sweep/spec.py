"""The sweep spec: a TOML file naming targets (machines) and runs (benchmarks).

Validated at the edge, before anything starts: unknown keys (with the closest valid
one), wrong types, a backend's missing keys, and run options `gpuplan bench run` would
refuse (workload, size, precision, device, world size, steps). Lists in a [[runs]]
entry expand to a grid (`expand_runs`). Instance types and regions are checked against
the price catalog by the caller (`check_cloud_targets`), since this package does not
read catalogs.
"""

from __future__ import annotations

import difflib
import itertools
import re
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.models import WORKLOADS, check_size

BACKENDS = ("ssh", "local", "aws", "gcp")
CLOUD_BACKENDS = ("aws", "gcp")
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9-]{0,29}$")  # valid in a GCP label value and a path
REMOTE_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

TOP_KEYS = ("name", "limits", "targets", "runs")
LIMIT_KEYS = ("max_usd", "max_minutes_per_target", "max_parallel")
TARGET_KEYS: dict[str, tuple[str, ...]] = {
    "common": ("backend", "label", "gpu_name", "gpu_count", "usd_per_hour"),
    "ssh": ("host", "user", "port", "identity_file", "remote_python", "remote_env", "remote_dir"),
    "local": ("remote_python", "remote_env", "remote_dir"),
    "aws": (
        "instance_type", "region", "spot", "image", "key_name", "subnet_id",
        "security_group_ids", "ssh_user", "identity_file", "remote_python", "remote_env",
    ),
    "gcp": (
        "instance_type", "zone", "region", "spot", "image", "project", "ssh_user",
        "identity_file", "ssh_public_key", "remote_python", "remote_env",
    ),
}  # fmt: skip
RUN_KEYS = (
    "workload", "size", "precision", "device", "world_size", "batch", "steps", "warmup",
    "compile", "channels_last", "peak_tflops", "max_batch", "memory_budget_gib", "seed",
)  # fmt: skip
GRID_KEYS = ("size", "precision", "world_size", "batch", "device", "compile")
DEVICES = ("cpu", "cuda", "auto")
DEFAULT_MAX_PARALLEL = 2


class SpecError(ValueError):
    """A sweep spec that cannot run: names the file, the key and the fix."""

    def __init__(self, path: str | Path, key: str, message: str) -> None:
        super().__init__(f"{path}: {key}: {message}")
        self.path = str(path)
        self.key = key


@dataclass(frozen=True)
class TargetSpec:
    """One [[targets]] entry. `region` is the AWS region or the GCP zone's region."""

    index: int
    backend: str
    label: str
    host: str | None = None
    user: str | None = None
    port: int | None = None
    identity_file: str | None = None
    remote_python: str | None = None
    remote_env: tuple[tuple[str, str], ...] = ()
    remote_dir: str | None = None
    instance_type: str | None = None
    region: str | None = None
    zone: str | None = None
    spot: bool = False
    image: str | None = None
    key_name: str | None = None
    subnet_id: str | None = None
    security_group_ids: tuple[str, ...] = ()
    project: str | None = None
    ssh_user: str | None = None
    ssh_public_key: str | None = None
    gpu_name: str | None = None
    gpu_count: int | None = None
    usd_per_hour: float | None = None  # on-prem: what an hour of this server costs (else 0)

    @property
    def is_cloud(self) -> bool:
        return self.backend in CLOUD_BACKENDS


@dataclass(frozen=True)
class RunItem:
    """One benchmark of the grid: the `gpuplan bench run` options, one world size."""

    key: str  # stable across resumes: workload-size-precision-device-xN-bB-...
    options: dict[str, Any]

    def argv(self) -> list[str]:
        """The `bench run` arguments of this run (without --out)."""
        o = self.options
        args = ["--workload", o["workload"], "--world-size", str(o["world_size"])]
        for name in ("size", "precision", "device", "batch", "steps", "warmup", "max_batch"):
            if o.get(name) is not None:
                args += [f"--{name.replace('_', '-')}", str(o[name])]
        for name in ("peak_tflops", "memory_budget_gib", "seed"):
            if o.get(name) is not None:
                args += [f"--{name.replace('_', '-')}", str(o[name])]
        if o.get("compile"):
            args.append("--compile")
        if o.get("channels_last") is False:
            args.append("--no-channels-last")
        return args


@dataclass(frozen=True)
class SweepSpec:
    name: str
    max_usd: float
    max_minutes_per_target: float
    max_parallel: int
    targets: tuple[TargetSpec, ...]
    runs: tuple[RunItem, ...]
    path: str = "<spec>"
    raw: dict[str, Any] = field(default_factory=dict, compare=False)


def _closest(name: str, valid: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(valid), n=1, cutoff=0.5)
    return f"; did you mean {close[0]!r}?" if close else ""


def _check_keys(path: str, where: str, table: dict[str, Any], valid: Iterable[str]) -> None:
    valid = list(valid)
    for key in table:
        if key not in valid:
            raise SpecError(
                path,
                f"{where}{key}",
                f"unknown key{_closest(key, valid)} (valid here: {', '.join(valid)})",
            )


def _typed(path: str, key: str, value: Any, kind: type | tuple[type, ...], what: str) -> Any:
    if (
        isinstance(value, bool)
        and kind is not bool
        and bool not in (kind if isinstance(kind, tuple) else (kind,))
    ):
        raise SpecError(path, key, f"expected {what}, got {value!r}")
    if not isinstance(value, kind):
        raise SpecError(path, key, f"expected {what}, got {value!r}")
    return value


def _number(path: str, key: str, value: Any, minimum: float, integer: bool = False) -> Any:
    what = "a whole number" if integer else "a number"
    _typed(path, key, value, int if integer else (int, float), what)
    if not value >= minimum or value != value or value in (float("inf"),):
        raise SpecError(path, key, f"must be {what} >= {minimum:g}, got {value!r}")
    return value


def _parse_limits(path: str, raw: Any) -> tuple[float, float, int]:
    if not isinstance(raw, dict):
        raise SpecError(
            path, "limits", "add a [limits] table with max_usd and max_minutes_per_target"
        )
    _check_keys(path, "limits.", raw, LIMIT_KEYS)
    for key in ("max_usd", "max_minutes_per_target"):
        if key not in raw:
            raise SpecError(
                path, f"limits.{key}", "required (a hard cap; the sweep never passes it)"
            )
    max_usd = float(_number(path, "limits.max_usd", raw["max_usd"], 0))
    minutes = float(
        _number(path, "limits.max_minutes_per_target", raw["max_minutes_per_target"], 1)
    )
    parallel = int(
        _number(path, "limits.max_parallel", raw.get("max_parallel", DEFAULT_MAX_PARALLEL), 1, True)
    )
    return max_usd, minutes, parallel


def _optional_str(path: str, key: str, raw: dict[str, Any], name: str) -> str | None:
    if name not in raw:
        return None
    value = _typed(path, key + name, raw[name], str, "a string")
    if not value.strip():
        raise SpecError(path, key + name, "must not be empty")
    return str(value)


def _parse_target(path: str, index: int, raw: Any) -> TargetSpec:
    where = f"targets[{index}]."
    if not isinstance(raw, dict):
        raise SpecError(path, f"targets[{index}]", "expected a [[targets]] table")
    backend = raw.get("backend")
    if backend not in BACKENDS:
        hint = _closest(str(backend), BACKENDS) if backend is not None else ""
        raise SpecError(
            path,
            where + "backend",
            f"{backend!r} is not a backend{hint} (valid: {', '.join(BACKENDS)})",
        )
    _check_keys(path, where, raw, TARGET_KEYS["common"] + TARGET_KEYS[backend])
    s = {name: _optional_str(path, where, raw, name) for name in (
        "host", "user", "identity_file", "remote_python", "remote_dir", "instance_type",
        "region", "zone", "image", "key_name", "subnet_id", "project", "ssh_user",
        "ssh_public_key", "gpu_name", "label",
    )}  # fmt: skip
    port = raw.get("port")
    if port is not None:
        _number(path, where + "port", port, 1, True)
        if port > 65535:
            raise SpecError(path, where + "port", f"{port} is not a TCP port (1-65535)")
    gpu_count = raw.get("gpu_count")
    if gpu_count is not None:
        _number(path, where + "gpu_count", gpu_count, 1, True)
    usd = raw.get("usd_per_hour")
    if usd is not None:
        usd = float(_number(path, where + "usd_per_hour", usd, 0))
    spot = bool(_typed(path, where + "spot", raw.get("spot", False), bool, "true or false"))
    groups = raw.get("security_group_ids", [])
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise SpecError(path, where + "security_group_ids", "expected a list of strings")
    env = raw.get("remote_env", {})
    if not isinstance(env, dict):
        raise SpecError(path, where + "remote_env", 'expected a table of NAME = "value"')
    for name, value in env.items():
        if not REMOTE_ENV_NAME.match(name) or not isinstance(value, str):
            raise SpecError(
                path,
                where + f"remote_env.{name}",
                'expected NAME = "value" (NAME: letters, digits, _)',
            )
    if backend == "ssh" and not s["host"]:
        raise SpecError(
            path, where + "host", "required for backend 'ssh' (an address or ~/.ssh/config alias)"
        )
    if backend in CLOUD_BACKENDS and not s["instance_type"]:
        raise SpecError(path, where + "instance_type", f"required for backend {backend!r}")
    region, zone = s["region"], s["zone"]
    if backend == "aws" and not region:
        raise SpecError(path, where + "region", "required for backend 'aws' (e.g. us-east-1)")
    if backend == "gcp":
        if not zone:
            raise SpecError(path, where + "zone", "required for backend 'gcp' (e.g. us-central1-a)")
        region = region or zone.rsplit("-", 1)[0]
    default_label = {
        "ssh": s["host"],
        "local": "local",
    }.get(backend) or f"{backend}:{region}:{s['instance_type']}{':spot' if spot else ''}"
    return TargetSpec(
        index=index,
        backend=backend,
        label=s["label"] or str(default_label),
        host=s["host"],
        user=s["user"],
        port=port,
        identity_file=s["identity_file"],
        remote_python=s["remote_python"],
        remote_env=tuple(sorted(env.items())),
        remote_dir=s["remote_dir"],
        instance_type=s["instance_type"],
        region=region,
        zone=zone,
        spot=spot,
        image=s["image"],
        key_name=s["key_name"],
        subnet_id=s["subnet_id"],
        security_group_ids=tuple(groups),
        project=s["project"],
        ssh_user=s["ssh_user"],
        ssh_public_key=s["ssh_public_key"],
        gpu_name=s["gpu_name"],
        gpu_count=gpu_count,
        usd_per_hour=usd,
    )


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _check_run(path: str, where: str, o: dict[str, Any]) -> dict[str, Any]:
    """One grid point's options, checked as `gpuplan bench run` checks them."""
    workload = o.get("workload")
    if not isinstance(workload, str) or workload not in WORKLOADS:
        raise SpecError(
            path, where + "workload",
            f"{workload!r} is not a benchmark{_closest(str(workload), WORKLOADS)} "
            f"(valid: {', '.join(WORKLOADS)})",
        )  # fmt: skip
    try:
        o["size"] = check_size(workload, o.get("size"))
    except ValueError as exc:
        raise SpecError(path, where + "size", str(exc)) from None
    device = o.get("device", "auto")
    if device not in DEVICES:
        raise SpecError(
            path,
            where + "device",
            f"{device!r}{_closest(str(device), DEVICES)} (valid: {', '.join(DEVICES)})",
        )
    o["device"] = device
    # Imported here: the results schema (pydantic models) is not needed for `gpuplan --help`.
    from benchmarks.results import PRECISIONS

    precision = o.get("precision")
    if precision is not None and precision not in PRECISIONS:
        raise SpecError(
            path, where + "precision",
            f"{precision!r} is not a precision{_closest(str(precision), PRECISIONS)} "
            f"(valid: {', '.join(PRECISIONS)})",
        )  # fmt: skip
    if device == "cpu" and precision == "tf32":
        raise SpecError(
            path, where + "precision", "tf32 is a CUDA tensor-core mode; on CPU use fp32"
        )
    _number(path, where + "world_size", o.setdefault("world_size", 1), 1, True)
    _number(path, where + "steps", o.setdefault("steps", 50), 1, True)
    _number(path, where + "warmup", o.setdefault("warmup", 10), 0, True)
    batch = o.get("batch")
    if batch is not None and batch != "auto":
        _number(path, where + "batch", batch, 1, True)
    for name in ("compile", "channels_last"):
        if name in o:
            _typed(path, where + name, o[name], bool, "true or false")
    if o.get("compile") and o["warmup"] < 1:
        raise SpecError(
            path, where + "warmup", "compile needs warmup >= 1 (the first steps compile)"
        )
    for name in ("peak_tflops", "memory_budget_gib"):
        if o.get(name) is not None:
            _number(path, where + name, o[name], 1e-9)
    for name in ("max_batch", "seed"):
        if o.get(name) is not None:
            _number(path, where + name, o[name], 0, True)
    return o


def run_key(o: dict[str, Any]) -> str:
    """A stable name of one grid point (used in the state file and remote folders)."""
    parts = [
        o["workload"],
        o["size"],
        o.get("precision") or "default",
        o["device"],
        f"x{o['world_size']}",
    ]
    if o.get("batch") is not None:
        parts.append(f"b{o['batch']}")
    if o.get("compile"):
        parts.append("compile")
    parts.append(f"s{o['steps']}")
    return "-".join(str(p) for p in parts)


def expand_runs(path: str, raw_runs: Any) -> tuple[RunItem, ...]:
    """Every [[runs]] entry's grid (lists in GRID_KEYS expand), checked, without repeats."""
    if not isinstance(raw_runs, list) or not raw_runs:
        raise SpecError(
            path, "runs", 'add at least one [[runs]] table (workload = "resnet50", ...)'
        )
    items: dict[str, RunItem] = {}
    for index, raw in enumerate(raw_runs):
        where = f"runs[{index}]."
        if not isinstance(raw, dict):
            raise SpecError(path, f"runs[{index}]", "expected a [[runs]] table")
        _check_keys(path, where, raw, RUN_KEYS)
        for key, value in raw.items():
            if isinstance(value, list) and key not in GRID_KEYS:
                raise SpecError(path, where + key, f"only {', '.join(GRID_KEYS)} may be lists")
            if isinstance(value, list) and not value:
                raise SpecError(path, where + key, "an empty list expands to no runs")
        grid = [_as_list(raw.get(k)) if k in raw else [None] for k in GRID_KEYS]
        for values in itertools.product(*grid):
            options = {k: v for k, v in raw.items() if k not in GRID_KEYS}
            options.update({k: v for k, v in zip(GRID_KEYS, values, strict=True) if v is not None})
            options = _check_run(path, where, options)
            key = run_key(options)
            items.setdefault(key, RunItem(key, options))
    return tuple(items.values())


def parse_spec(data: dict[str, Any], path: str | Path = "<spec>") -> SweepSpec:
    """A decoded TOML document as a SweepSpec, or SpecError naming the key and the fix."""
    path = str(path)
    _check_keys(path, "", data, TOP_KEYS)
    name = data.get("name")
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise SpecError(
            path,
            "name",
            f"{name!r}: give 1-30 characters, lower-case letters, digits and '-', "
            "starting with a letter",
        )
    max_usd, minutes, parallel = _parse_limits(path, data.get("limits"))
    raw_targets = data.get("targets")
    if not isinstance(raw_targets, list) or not raw_targets:
        raise SpecError(
            path, "targets", 'add at least one [[targets]] table (backend = "ssh", host = ...)'
        )
    targets = tuple(_parse_target(path, i, t) for i, t in enumerate(raw_targets))
    labels = [t.label for t in targets]
    for target in targets:
        if labels.count(target.label) > 1:
            raise SpecError(
                path, f"targets[{target.index}].label",
                f"two targets are both {target.label!r}; give each a distinct label",
            )  # fmt: skip
    runs = expand_runs(path, data.get("runs"))
    return SweepSpec(name, max_usd, minutes, parallel, targets, runs, path, data)


def load_spec(path: str | Path) -> SweepSpec:
    """Read and validate a TOML sweep spec file."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise SpecError(path, "<file>", "no such file") from None
    except (UnicodeDecodeError, IsADirectoryError):
        raise SpecError(path, "<file>", "not a TOML text file") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(path, "<toml>", f"not valid TOML: {exc}") from None
    return parse_spec(data, path)


def check_cloud_targets(spec: SweepSpec, known: Callable[[str], dict[str, set[str]]]) -> None:
    """Each cloud target's region and instance type exist for its provider.

    `known(provider)` maps region -> instance types (from the price catalog).
    """
    for target in spec.targets:
        if not target.is_cloud:
            continue
        where = f"targets[{target.index}]."
        catalog = known(target.backend)
        if not catalog:
            continue
        assert target.region is not None and target.instance_type is not None
        if target.region not in catalog:
            key = "zone" if target.backend == "gcp" else "region"
            raise SpecError(
                spec.path, where + key,
                f"{target.region!r} is not a region of {target.backend} in the catalog"
                f"{_closest(target.region, catalog)}",
            )  # fmt: skip
        types = catalog[target.region]
        if target.instance_type not in types:
            everywhere = sorted(set().union(*catalog.values()))
            elsewhere = [r for r, t in catalog.items() if target.instance_type in t]
            hint = (
                f"; it is offered in {', '.join(sorted(elsewhere)[:5])}"
                if elsewhere
                else _closest(target.instance_type, everywhere)
            )
            raise SpecError(
                spec.path, where + "instance_type",
                f"{target.instance_type!r} is not an instance type of {target.backend} in "
                f"{target.region} in the catalog{hint}",
            )  # fmt: skip
