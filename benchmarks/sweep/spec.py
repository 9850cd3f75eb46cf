"""The sweep spec: a TOML file naming targets (machines) and runs (benchmarks).

Validated at the edge, before anything starts: unknown keys (with the closest valid
one), wrong types, a backend's missing keys, and run options `gpuplan bench run` would
refuse (workload, size, precision, device, world size, steps). Lists in a [[runs]]
entry expand to a grid (`expand_runs`). Instance types and regions are checked against
the price catalog by the caller (`check_cloud_targets`), since this package does not
read catalogs.

Everything is bounded before it is used: the file (a regular file of at most
MAX_SPEC_BYTES, nested at most MAX_SPEC_DEPTH deep), every string of a target (printable,
a length limit, a pattern for its kind: host, login, zone, image...), every number (finite,
within the maxima in LIMIT_MAXIMA, TARGET_MAXIMA and RUN_MAXIMA), and the grid (at most
MAX_RUNS runs, MAX_GRID_VALUES values per list, MAX_TARGETS targets).
"""

from __future__ import annotations

import itertools
import math
import re
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.models import WORKLOADS, check_size
from benchmarks.runners.gcp import MACHINE_TYPE_PATTERN, N1_WITH_GPUS, ZONE_PATTERN
from benchmarks.safe_paths import (
    MAX_SSH_PUBLIC_KEY_CHARS,
    RefusedFileError,
    json_depth,
    login_name_problem,
    read_text_bounded,
    shorten,
    ssh_public_key_problem,
)
from edge.choices import did_you_mean

BACKENDS = ("ssh", "local", "aws", "gcp", "skypilot")
CLOUD_BACKENDS = ("aws", "gcp", "skypilot")  # backends that launch (and end) machines
# The infrastructure names SkyPilot 0.14 registers (sky.utils.registry.CLOUD_REGISTRY),
# checked here without importing SkyPilot; "k8s" is SkyPilot's alias of kubernetes.
SKYPILOT_CLOUDS = (
    "aws", "gcp", "azure", "lambda", "nebius", "kubernetes", "k8s", "slurm", "ssh", "runpod",
    "fluidstack", "paperspace", "cudo", "vast", "oci", "ibm", "scp", "do", "vsphere",
    "hyperbolic", "primeintellect", "seeweb", "shadeform", "mithril", "verda", "yotta",
)  # fmt: skip
# SkyPilot clouds without a price catalog: a target there gives usd_per_hour itself.
SKYPILOT_UNPRICED = ("kubernetes", "k8s", "slurm", "ssh")
MAX_CONSTRAINTS_BYTES = 64 * 1024  # a pip constraints file a target names
NAME_PATTERN = re.compile(r"\A[a-z][a-z0-9-]{0,29}\Z")  # valid in a GCP label value and a path
REMOTE_ENV_NAME = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]{0,127}\Z")

MAX_SPEC_BYTES = 1024 * 1024  # a spec file; real ones are a few KiB
MAX_SPEC_DEPTH = 16  # nested tables/arrays/dotted keys; real specs use 4
MAX_TARGETS = 256
MAX_RUNS = 512  # grid points of all [[runs]] entries together, counted before expanding
MAX_GRID_VALUES = 64  # values in one list of a [[runs]] entry
MAX_LABEL_CHARS = 80
MAX_TEXT_CHARS = 1024  # any other string of a target, unless its kind says less
MAX_PATH_CHARS = 4096  # identity_file (PATH_MAX on Linux)
MAX_REMOTE_ENV = 64  # entries of remote_env
MAX_SECURITY_GROUPS = 16  # per network interface on EC2
INSTALL_KEYS = ("remote_venv", "torch_index_url", "pip_constraints")  # how the wheel goes in

# The largest value of each number (the smallest is in its check); far above any real use.
LIMIT_MAXIMA = {
    "max_usd": 1_000_000.0,
    "max_minutes_per_target": 10_080.0,  # 7 days
    "max_parallel": 64,
}
TARGET_MAXIMA = {"port": 65_535, "gpu_count": 1024, "usd_per_hour": 10_000.0}
RUN_MAXIMA: dict[str, float] = {
    "world_size": 1024,
    "steps": 1_000_000,
    "warmup": 100_000,
    "batch": 1_048_576,
    "max_batch": 1_048_576,
    "seed": 2**32 - 1,
    "peak_tflops": 100_000.0,
    "memory_budget_gib": 100_000.0,
}

# Patterns of a target's strings, each used with fullmatch (\A...\Z: no final newline).
HOST_PATTERN = re.compile(r"\A[A-Za-z0-9_.:][A-Za-z0-9_.:-]{0,252}\Z")
REMOTE_PATH_PATTERN = re.compile(r"\A[A-Za-z0-9_./~-]+\Z")  # as runners.ssh.check_remote_path
AWS_INSTANCE_TYPE = re.compile(r"\A[a-z][a-z0-9-]{0,31}\.[a-z0-9-]{1,31}\Z")
AWS_REGION = re.compile(r"\A[a-z]{2}(?:-[a-z]+){1,3}-[0-9]{1,2}\Z")
GCP_REGION = re.compile(r"\A[a-z]+-[a-z]+[0-9]+\Z")
AWS_IMAGE = re.compile(r"\Aami-[0-9a-z]{1,32}\Z")
GCP_IMAGE = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9/._:-]{0,1023}\Z")
AWS_KEY_NAME = re.compile(r"\A[A-Za-z0-9_][A-Za-z0-9_.+=@-]{0,254}\Z")
AWS_SUBNET = re.compile(r"\Asubnet-[0-9a-z]{1,32}\Z")
AWS_SECURITY_GROUP = re.compile(r"\Asg-[0-9a-z]{1,32}\Z")
GCP_PROJECT = re.compile(r"\A(?:[a-z][a-z0-9.-]{0,62}:)?[a-z][a-z0-9-]{4,28}[a-z0-9]\Z")
SKY_INSTANCE_TYPE = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._+-]{0,127}\Z")
SKY_PLACE = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._:@/-]{0,252}\Z")  # region, zone, k8s context
SKY_ACCELERATORS = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,63}(?::[1-9][0-9]{0,3})?\Z")
SKY_IMAGE = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9/._:@-]{0,1023}\Z")
INDEX_URL = re.compile(r"\Ahttps?://[A-Za-z0-9._~:/?#@!$&()*+,;=%-]{1,2000}\Z")

TOP_KEYS = ("name", "limits", "targets", "runs")
LIMIT_KEYS = ("max_usd", "max_minutes_per_target", "max_parallel")
TARGET_KEYS: dict[str, tuple[str, ...]] = {
    "common": ("backend", "label", "gpu_name", "gpu_count", "usd_per_hour"),
    "ssh": (
        "host", "user", "port", "identity_file", "remote_python", "remote_env", "remote_dir",
        *INSTALL_KEYS,
    ),
    "local": ("remote_python", "remote_env", "remote_dir", *INSTALL_KEYS),
    "aws": (
        "instance_type", "region", "spot", "image", "key_name", "subnet_id",
        "security_group_ids", "ssh_user", "identity_file", "remote_python", "remote_env",
        *INSTALL_KEYS,
    ),
    "gcp": (
        "instance_type", "zone", "region", "spot", "image", "project", "ssh_user",
        "identity_file", "ssh_public_key", "remote_python", "remote_env", *INSTALL_KEYS,
    ),
    "skypilot": (
        "cloud", "instance_type", "accelerators", "region", "zone", "spot", "image",
        "remote_python", "remote_env", *INSTALL_KEYS,
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
    cloud: str | None = None  # skypilot: the infrastructure SkyPilot launches on
    accelerators: str | None = None  # skypilot: e.g. "H100:8"
    remote_venv: str | None = None  # the venv the wheel goes into (created or reused)
    torch_index_url: str | None = None  # where torch comes from when the venv has none
    pip_constraints: str | None = None  # a local constraints file for the remote pip

    @property
    def is_cloud(self) -> bool:
        """Whether the sweep launches (and ends) this target's machine."""
        return self.backend in CLOUD_BACKENDS

    @property
    def provider(self) -> str:
        """The price catalog's provider of this target: its cloud (skypilot) or backend."""
        if self.backend == "skypilot" and self.cloud:
            return "kubernetes" if self.cloud == "k8s" else self.cloud
        return self.backend


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
    return did_you_mean(name, valid)


def _check_keys(path: str, where: str, table: dict[str, Any], valid: Iterable[str]) -> None:
    valid = list(valid)
    for key in table:
        if key not in valid:
            shown = key if key.isprintable() and len(key) <= 60 else _shown(key)
            raise SpecError(
                path,
                f"{where}{shown}",
                f"unknown key{_closest(key[:100], valid)} (valid here: {', '.join(valid)})",
            )


def _typed(path: str, key: str, value: Any, kind: type | tuple[type, ...], what: str) -> Any:
    if (
        isinstance(value, bool)
        and kind is not bool
        and bool not in (kind if isinstance(kind, tuple) else (kind,))
    ):
        raise SpecError(path, key, f"expected {what}, got {_shown(value)}")
    if not isinstance(value, kind):
        raise SpecError(path, key, f"expected {what}, got {_shown(value)}")
    return value


def _fmt(value: float) -> str:
    """A bound as text: 1,048,576 / 10,080 / 1e-09."""
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:g}"


def _shown(value: Any) -> str:
    """`value` as echoed back in a message, short even for a 100,000-digit integer."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"a {value.bit_length():,}-bit number"
    return shorten(repr(value), 60)


def _number(
    path: str, key: str, value: Any, minimum: float, maximum: float, integer: bool = False
) -> Any:
    """`value` when it is a finite number (a whole one if `integer`) in [minimum, maximum]."""
    what = "a whole number" if integer else "a number"
    _typed(path, key, value, int if integer else (int, float), what)
    finite = not isinstance(value, float) or math.isfinite(value)
    if not finite or not minimum <= value <= maximum:
        raise SpecError(
            path,
            key,
            f"must be {what} >= {_fmt(minimum)} and <= {_fmt(maximum)}, got {_shown(value)}",
        )
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
    top = LIMIT_MAXIMA
    max_usd = float(_number(path, "limits.max_usd", raw["max_usd"], 0, top["max_usd"]))
    minutes = float(
        _number(
            path, "limits.max_minutes_per_target", raw["max_minutes_per_target"], 1,
            top["max_minutes_per_target"],
        )
    )  # fmt: skip
    parallel = int(
        _number(
            path, "limits.max_parallel", raw.get("max_parallel", DEFAULT_MAX_PARALLEL), 1,
            top["max_parallel"], True,
        )
    )  # fmt: skip
    return max_usd, minutes, parallel


def _text(path: str, key: str, value: str, limit: int = MAX_TEXT_CHARS) -> str:
    """`value` when it is at most `limit` characters, all printable (no newline, tab or
    other control character)."""
    if len(value) > limit:
        raise SpecError(
            path, key, f"{len(value):,} characters; give at most {limit:,} ({_shown(value)})"
        )
    if not value.isprintable():
        bad = next(c for c in value if not c.isprintable())
        raise SpecError(
            path, key,
            f"{_shown(value)} contains {bad!r}: use printable characters only (no newline, "
            "tab or other control character)",
        )  # fmt: skip
    return value


def _optional_str(
    path: str, key: str, raw: dict[str, Any], name: str, limit: int = MAX_TEXT_CHARS
) -> str | None:
    if name not in raw:
        return None
    value = _typed(path, key + name, raw[name], str, "a string")
    _text(path, key + name, value, limit)
    if not value.strip():
        raise SpecError(path, key + name, "must not be empty")
    return str(value)


def _matches(pattern: re.Pattern[str]) -> Callable[[str], bool]:
    """The check that a whole string matches `pattern`."""
    return lambda value: bool(pattern.fullmatch(value))


def _hint(value: str, fits: Callable[[str], bool]) -> str:
    """'; did you mean X?' for the first simple fix of `value` that `fits`, else ''."""
    for candidate in (value.strip(), value.lower(), value.strip().lower()):
        if candidate != value and fits(candidate):
            return f"; did you mean {candidate!r}?"
    return ""


def _host_hint(host: str) -> str:
    if "@" in host:
        user, _, name = host.rpartition("@")
        return f"; put the login into its own key: host = {name!r}, user = {user!r}"
    if "://" in host:
        name = host.split("://", 1)[1].split("/")[0]
        if name.count(":") == 1 and name.split(":")[1].isdigit():
            name, port = name.split(":")
            return f"; give the name and port apart: host = {name!r}, port = {port}"
        return f"; give the name only: host = {name!r}"
    if host.startswith("[") and host.endswith("]"):
        return f"; give an IPv6 address without brackets: host = {host[1:-1]!r}"
    return _hint(host, _matches(HOST_PATTERN))


def _is_group(value: str) -> bool:
    return bool(AWS_SECURITY_GROUP.fullmatch(value))


def _gcp_machine_type(value: str) -> bool:
    return bool(MACHINE_TYPE_PATTERN.fullmatch(value) or N1_WITH_GPUS.fullmatch(value))


# key -> backend ("*": any) -> (check, what is valid)
_PATTERNS: dict[str, dict[str, tuple[Callable[[str], bool], str]]] = {
    "host": {
        "*": (
            _matches(HOST_PATTERN),
            "a DNS name, an IPv4 or IPv6 address (no brackets) or an ~/.ssh/config alias: "
            "1-253 letters, digits, '.', '-', '_' or ':', not starting with '-' (e.g. 'gpu-box-1')",
        )
    },
    "instance_type": {
        "aws": (
            _matches(AWS_INSTANCE_TYPE),
            "an EC2 instance type, family.size in lower case (e.g. 'p4d.24xlarge')",
        ),
        "gcp": (
            _gcp_machine_type,
            "a GCE machine type in lower case (e.g. 'a2-highgpu-1g', or with GPUs attached "
            "'n1-standard-8 + 1 x T4')",
        ),
        "skypilot": (
            _matches(SKY_INSTANCE_TYPE),
            "the cloud's instance type: 1-128 letters, digits and '._+-' (e.g. 'gpu_8x_h100_sxm5')",
        ),
    },
    "region": {
        "aws": (_matches(AWS_REGION), "an AWS region (e.g. 'us-east-1')"),
        "gcp": (_matches(GCP_REGION), "a GCP region (e.g. 'us-central1')"),
        "skypilot": (
            _matches(SKY_PLACE),
            "the cloud's region (Kubernetes: the context): letters, digits and '._:@/-' "
            "(e.g. 'us-east-1')",
        ),
    },
    "zone": {
        "skypilot": (
            _matches(SKY_PLACE),
            "the cloud's zone: letters, digits and '._:@/-' (e.g. 'us-east-1a')",
        ),
        "*": (
            _matches(ZONE_PATTERN),
            "a GCP zone, region-letter (e.g. 'us-central1-a')",
        ),
    },
    "image": {
        "aws": (
            _matches(AWS_IMAGE),
            "an AMI id, 'ami-' and lower-case letters or digits (e.g. 'ami-0abcdef1234567890')",
        ),
        "gcp": (
            _matches(GCP_IMAGE),
            "an image or image family path or URL: letters, digits and '/._:-' (e.g. "
            "'projects/my-project/global/images/family/my-family')",
        ),
        "skypilot": (
            _matches(SKY_IMAGE),
            "an image id as SkyPilot takes it: letters, digits and '/._:@-' "
            "(e.g. 'docker:nvcr.io/nvidia/pytorch:24.10-py3')",
        ),
    },
    "cloud": {
        "*": (
            lambda v: v in SKYPILOT_CLOUDS,
            f"one of SkyPilot's clouds ({', '.join(SKYPILOT_CLOUDS)})",
        )
    },
    "accelerators": {
        "*": (
            _matches(SKY_ACCELERATORS),
            "GPU name and count as SkyPilot writes them (e.g. 'H100:8')",
        )
    },
    "torch_index_url": {
        "*": (
            _matches(INDEX_URL),
            "a package index URL, http(s)://... without spaces or quotes "
            "(e.g. 'https://download.pytorch.org/whl/cu128')",
        )
    },
    "key_name": {
        "*": (
            _matches(AWS_KEY_NAME),
            "an EC2 key pair name: 1-255 letters, digits and '_.+=@-' (e.g. 'gpuplan-sweep')",
        )
    },
    "subnet_id": {
        "*": (
            _matches(AWS_SUBNET),
            "a subnet id, 'subnet-' and lower-case letters or digits (e.g. 'subnet-0abc1234')",
        )
    },
    "project": {
        "*": (
            _matches(GCP_PROJECT),
            "a GCP project id: 6-30 lower-case letters, digits and '-', starting with a letter "
            "(e.g. 'my-project')",
        )
    },
}
_NO_DASH = ("identity_file", "remote_python", "remote_dir", "remote_venv", "pip_constraints")


def _check_strings(path: str, where: str, backend: str, s: dict[str, str | None]) -> None:
    """Each string of a target against the rule of its kind (SpecError naming the key)."""
    for name, value in s.items():
        if value is None:
            continue
        key = where + name
        rules = _PATTERNS.get(name, {})
        rule = rules.get(backend) or rules.get("*")
        if rule is not None and not rule[0](value):
            hint = _host_hint(value) if name == "host" else _hint(value, rule[0])
            if name == "cloud" and not hint:
                hint = _closest(value[:100], SKYPILOT_CLOUDS)
            if name == "zone" and not hint and GCP_REGION.fullmatch(value):
                hint = f"; that is a region, a zone of it is e.g. '{value}-a'"
            raise SpecError(path, key, f"{_shown(value)} is not valid: give {rule[1]}{hint}")
        if name in ("user", "ssh_user"):
            problem = login_name_problem(value)
            if problem:
                raise SpecError(
                    path, key, problem + _hint(value, lambda v: not login_name_problem(v))
                )
        if name == "ssh_public_key":
            problem = ssh_public_key_problem(value.strip())
            if problem:
                raise SpecError(path, key, problem)
        if name in _NO_DASH and value.startswith("-"):
            raise SpecError(
                path, key, f"{_shown(value)} starts with '-', which ssh would read as an option"
            )
        if name in ("remote_dir", "remote_venv") and (
            not REMOTE_PATH_PATTERN.fullmatch(value) or ".." in value.split("/")
        ):
            raise SpecError(
                path, key,
                f"{_shown(value)} is not a safe remote folder: use letters, digits and '._/~-' "
                "only, with no '..' part (e.g. '~/gpuplan-sweep' or '/scratch/bench')",
            )  # fmt: skip


_STRING_LIMITS = {
    "label": MAX_LABEL_CHARS,
    "host": 253,
    "user": 32,
    "ssh_user": 32,
    "gpu_name": 64,
    "identity_file": MAX_PATH_CHARS,
    "ssh_public_key": MAX_SSH_PUBLIC_KEY_CHARS,
}
_STRING_KEYS = (
    "host", "user", "identity_file", "remote_python", "remote_dir", "instance_type",
    "region", "zone", "image", "key_name", "subnet_id", "project", "ssh_user",
    "ssh_public_key", "gpu_name", "label", "cloud", "accelerators", "remote_venv",
    "torch_index_url", "pip_constraints",
)  # fmt: skip


def _parse_target(path: str, index: int, raw: Any) -> TargetSpec:
    """One [[targets]] table as a TargetSpec; SpecError naming the first key that is wrong
    (backend, unknown keys, strings, numbers, security groups, remote_env, then what the
    backend requires)."""
    where = f"targets[{index}]."
    backend = _parse_backend(path, index, raw)
    _check_keys(path, where, raw, TARGET_KEYS["common"] + TARGET_KEYS[backend])
    s = {
        name: _optional_str(path, where, raw, name, _STRING_LIMITS.get(name, MAX_TEXT_CHARS))
        for name in _STRING_KEYS
    }
    _check_strings(path, where, backend, s)
    port, gpu_count, usd = _target_numbers(path, where, raw)
    spot = bool(_typed(path, where + "spot", raw.get("spot", False), bool, "true or false"))
    groups = _security_groups(path, where, raw.get("security_group_ids", []))
    env = _remote_env(path, where, raw.get("remote_env", {}))
    region = _required_place(path, where, backend, s)
    if s["pip_constraints"]:
        _check_constraints(path, where + "pip_constraints", s["pip_constraints"])
    if backend == "skypilot":
        what = s["instance_type"] or s["accelerators"]
        default_label = f"skypilot:{s['cloud']}:{region or '-'}:{what}{':spot' if spot else ''}"
    else:
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
        zone=s["zone"],
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
        cloud=s["cloud"],
        accelerators=s["accelerators"],
        remote_venv=s["remote_venv"],
        torch_index_url=s["torch_index_url"],
        pip_constraints=s["pip_constraints"],
    )


def _check_constraints(path: str, key: str, name: str) -> None:
    """`pip_constraints`: a readable UTF-8 file of at most MAX_CONSTRAINTS_BYTES here."""
    try:
        read_text_bounded(Path(name).expanduser(), MAX_CONSTRAINTS_BYTES)
    except RefusedFileError as exc:
        raise SpecError(
            path, key, f"{exc} (give a pip constraints file, e.g. torch==2.8.0)"
        ) from None


def _parse_backend(path: str, index: int, raw: Any) -> str:
    """The target's backend, once `raw` is known to be a table and the backend one of ours."""
    if not isinstance(raw, dict):
        raise SpecError(path, f"targets[{index}]", "expected a [[targets]] table")
    backend = raw.get("backend")
    if backend not in BACKENDS:
        hint = _closest(str(backend), BACKENDS) if isinstance(backend, str) else ""
        raise SpecError(
            path,
            f"targets[{index}].backend",
            f"{_shown(backend)} is not a backend{hint} (valid: {', '.join(BACKENDS)})",
        )
    return str(backend)


def _target_numbers(path: str, where: str, raw: dict[str, Any]) -> tuple[Any, Any, float | None]:
    """(port, gpu_count, usd_per_hour) of a target, each None when not given, each within
    TARGET_MAXIMA."""
    top = TARGET_MAXIMA
    port = raw.get("port")
    if port is not None:
        _number(path, where + "port", port, 1, top["port"], True)
    gpu_count = raw.get("gpu_count")
    if gpu_count is not None:
        _number(path, where + "gpu_count", gpu_count, 1, top["gpu_count"], True)
    usd = raw.get("usd_per_hour")
    if usd is not None:
        usd = float(_number(path, where + "usd_per_hour", usd, 0, top["usd_per_hour"]))
    return port, gpu_count, usd


def _security_groups(path: str, where: str, groups: Any) -> list[str]:
    """`security_group_ids`: a list of at most MAX_SECURITY_GROUPS AWS group ids."""
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise SpecError(path, where + "security_group_ids", "expected a list of strings")
    if len(groups) > MAX_SECURITY_GROUPS:
        raise SpecError(
            path, where + "security_group_ids",
            f"{len(groups)} groups; give at most {MAX_SECURITY_GROUPS}",
        )  # fmt: skip
    for number, group in enumerate(groups):
        if not AWS_SECURITY_GROUP.fullmatch(group):
            raise SpecError(
                path, f"{where}security_group_ids[{number}]",
                f"{_shown(group)} is not valid: give a security group id, 'sg-' and lower-case "
                f"letters or digits (e.g. 'sg-0abc1234'){_hint(group, _is_group)}",
            )  # fmt: skip
    return groups


def _remote_env(path: str, where: str, env: Any) -> dict[str, str]:
    """`remote_env`: a table of at most MAX_REMOTE_ENV NAME = "value" entries."""
    if not isinstance(env, dict):
        raise SpecError(path, where + "remote_env", 'expected a table of NAME = "value"')
    if len(env) > MAX_REMOTE_ENV:
        raise SpecError(
            path, where + "remote_env", f"{len(env)} variables; give at most {MAX_REMOTE_ENV}"
        )
    for name, value in env.items():
        if not REMOTE_ENV_NAME.fullmatch(name) or not isinstance(value, str):
            raise SpecError(
                path,
                where + f"remote_env.{name if REMOTE_ENV_NAME.fullmatch(name) else _shown(name)}",
                'expected NAME = "value" (NAME: 1-128 letters, digits, _, not starting with '
                "a digit)",
            )
        _text(path, where + f"remote_env.{name}", value)
    return env


def _required_place(path: str, where: str, backend: str, s: dict[str, str | None]) -> str | None:
    """What the backend cannot do without (ssh: host; clouds: instance_type; aws: region;
    gcp: zone), and the target's region (gcp: the zone's, unless given)."""
    if backend == "ssh" and not s["host"]:
        raise SpecError(
            path, where + "host", "required for backend 'ssh' (an address or ~/.ssh/config alias)"
        )
    if backend == "skypilot":
        if not s["cloud"]:
            raise SpecError(
                path, where + "cloud",
                "required for backend 'skypilot' (e.g. 'lambda', 'nebius', 'azure', 'kubernetes')",
            )  # fmt: skip
        if not s["instance_type"] and not s["accelerators"]:
            raise SpecError(
                path, where + "instance_type",
                "give instance_type (e.g. 'gpu_8x_h100_sxm5') or accelerators (e.g. 'H100:8')",
            )  # fmt: skip
        return s["region"]
    if backend in CLOUD_BACKENDS and not s["instance_type"]:
        raise SpecError(path, where + "instance_type", f"required for backend {backend!r}")
    region, zone = s["region"], s["zone"]
    if backend == "aws" and not region:
        raise SpecError(path, where + "region", "required for backend 'aws' (e.g. us-east-1)")
    if backend == "gcp":
        if not zone:
            raise SpecError(path, where + "zone", "required for backend 'gcp' (e.g. us-central1-a)")
        region = region or zone.rsplit("-", 1)[0]
    return region


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _check_run(path: str, where: str, o: dict[str, Any]) -> dict[str, Any]:
    """One grid point's options, checked as `gpuplan bench run` checks them."""
    workload = o.get("workload")
    if not isinstance(workload, str) or workload not in WORKLOADS:
        raise SpecError(
            path, where + "workload",
            f"{_shown(workload)} is not a benchmark{_closest(str(workload), WORKLOADS)} "
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
    top = RUN_MAXIMA
    _number(path, where + "world_size", o.setdefault("world_size", 1), 1, top["world_size"], True)
    _number(path, where + "steps", o.setdefault("steps", 50), 1, top["steps"], True)
    _number(path, where + "warmup", o.setdefault("warmup", 10), 0, top["warmup"], True)
    batch = o.get("batch")
    if batch is not None and batch != "auto":
        _number(path, where + "batch", batch, 1, top["batch"], True)
    for name in ("compile", "channels_last"):
        if name in o:
            _typed(path, where + name, o[name], bool, "true or false")
    if o.get("compile") and o["warmup"] < 1:
        raise SpecError(
            path, where + "warmup", "compile needs warmup >= 1 (the first steps compile)"
        )
    for name in ("peak_tflops", "memory_budget_gib"):
        if o.get(name) is not None:
            _number(path, where + name, o[name], 1e-9, top[name])
    for name in ("max_batch", "seed"):
        if o.get(name) is not None:
            _number(path, where + name, o[name], 0, top[name], True)
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


def grid_size(path: str, raw_runs: list[Any]) -> int:
    """How many runs the [[runs]] entries expand to (before repeats are dropped), counted
    without expanding; SpecError for a list longer than MAX_GRID_VALUES or more than
    MAX_RUNS runs in all."""
    total = 0
    for index, raw in enumerate(raw_runs):
        where = f"runs[{index}]."
        if not isinstance(raw, dict):
            raise SpecError(path, f"runs[{index}]", "expected a [[runs]] table")
        _check_keys(path, where, raw, RUN_KEYS)
        count = 1
        for key, value in raw.items():
            if not isinstance(value, list):
                continue
            if key not in GRID_KEYS:
                raise SpecError(path, where + key, f"only {', '.join(GRID_KEYS)} may be lists")
            if not value:
                raise SpecError(path, where + key, "an empty list expands to no runs")
            if len(value) > MAX_GRID_VALUES:
                raise SpecError(
                    path, where + key,
                    f"{len(value):,} values; a list holds at most {MAX_GRID_VALUES} "
                    "(split the sweep into several specs)",
                )  # fmt: skip
            count *= len(value)
        total += count
        if total > MAX_RUNS:
            raise SpecError(
                path, f"runs[{index}]",
                f"the grid reaches {total:,} runs by this entry; a sweep has at most "
                f"{MAX_RUNS} (use shorter lists or split the sweep into several specs)",
            )  # fmt: skip
    return total


def expand_runs(path: str, raw_runs: Any) -> tuple[RunItem, ...]:
    """Every [[runs]] entry's grid (lists in GRID_KEYS expand), checked, without repeats;
    the size of the grid is checked first (`grid_size`)."""
    if not isinstance(raw_runs, list) or not raw_runs:
        raise SpecError(
            path, "runs", 'add at least one [[runs]] table (workload = "resnet50", ...)'
        )
    grid_size(path, raw_runs)
    items: dict[str, RunItem] = {}
    for index, raw in enumerate(raw_runs):
        where = f"runs[{index}]."
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
    if json_depth(data) > MAX_SPEC_DEPTH:
        raise SpecError(path, "<toml>", f"nested deeper than {MAX_SPEC_DEPTH} levels")
    _check_keys(path, "", data, TOP_KEYS)
    name = data.get("name")
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        hint = _hint(name, _matches(NAME_PATTERN)) if isinstance(name, str) else ""
        raise SpecError(
            path,
            "name",
            f"{_shown(name)}: give 1-30 characters, lower-case letters, digits and '-', "
            f"starting with a letter{hint}",
        )
    max_usd, minutes, parallel = _parse_limits(path, data.get("limits"))
    raw_targets = data.get("targets")
    if not isinstance(raw_targets, list) or not raw_targets:
        raise SpecError(
            path, "targets", 'add at least one [[targets]] table (backend = "ssh", host = ...)'
        )
    if len(raw_targets) > MAX_TARGETS:
        raise SpecError(
            path, "targets",
            f"{len(raw_targets):,} targets; a sweep has at most {MAX_TARGETS} "
            "(split it into several specs)",
        )  # fmt: skip
    targets = tuple(_parse_target(path, i, t) for i, t in enumerate(raw_targets))
    labels = [t.label for t in targets]
    for target in targets:
        if labels.count(target.label) > 1:
            raise SpecError(
                path, f"targets[{target.index}].label",
                f"two targets are both {_shown(target.label)}; give each a distinct label",
            )  # fmt: skip
    runs = expand_runs(path, data.get("runs"))
    return SweepSpec(name, max_usd, minutes, parallel, targets, runs, path, data)


# What can open a nesting level in TOML text, strings and comments skipped as a whole.
_TOML_TOKEN = re.compile(
    r'"""(?:\\[\s\S]|[^\\])*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:\\.|[^"\\\n])*"|\'[^\'\n]*\''
    r"|#[^\n]*|[\[\]{}.=,\n]"
)


def toml_depth(text: str) -> int:
    """An upper bound of how deeply `text` nests: open brackets and braces plus the dots of
    the dotted key (or number) in progress, at the deepest point. Counted without parsing,
    since the parser recurses (and dotted keys cost it memory growing with depth squared)."""
    depth = dots = deepest = 0
    for match in _TOML_TOKEN.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            dots = 0
        elif token in ("]", "}"):
            depth -= 1
            dots = 0
        elif token == ".":
            dots += 1
        elif token in ("=", ",", "\n"):
            dots = 0
        else:
            continue
        deepest = max(deepest, depth + dots)
    return deepest


def load_spec(path: str | Path) -> SweepSpec:
    """Read and validate a TOML sweep spec file: a regular UTF-8 file of at most
    MAX_SPEC_BYTES, nested at most MAX_SPEC_DEPTH deep."""
    path = Path(path)
    try:
        text = read_text_bounded(path, MAX_SPEC_BYTES)
    except RefusedFileError as exc:
        fix = {
            "missing": "",
            "folder": "; give the path of a .toml file",
            "not_regular": " (a device, pipe or socket); give the path of a .toml file",
            "too_large": "; a sweep spec is a small TOML file",
            "grew": "; a sweep spec is a small TOML file",
            "not_utf8": "; save it as UTF-8 TOML",
        }.get(exc.reason, "")
        raise SpecError(path, "<file>", f"{exc}{fix}") from None
    if toml_depth(text) > MAX_SPEC_DEPTH:
        raise SpecError(
            path, "<toml>",
            f"nested deeper than {MAX_SPEC_DEPTH} levels (arrays, inline tables or dotted keys); "
            "a sweep spec needs 4",
        )  # fmt: skip
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(path, "<toml>", f"not valid TOML: {exc}") from None
    except (RecursionError, ValueError) as exc:  # ValueError: an integer of > 4,300 digits
        raise SpecError(
            path, "<toml>", f"not a usable TOML file ({shorten(str(exc), 80)})"
        ) from None
    return parse_spec(data, path)


def check_cloud_targets(spec: SweepSpec, known: Callable[[str], dict[str, set[str]]]) -> None:
    """Each cloud target's region and instance type exist for its provider.

    `known(provider)` maps region -> instance types (from the price catalog).
    """
    for target in spec.targets:
        if not target.is_cloud:
            continue
        where = f"targets[{target.index}]."
        if target.region is None or target.instance_type is None:
            continue  # skypilot picks them (a target priced by its usd_per_hour)
        catalog = known(target.provider)
        if not catalog:
            continue
        if target.region not in catalog:
            key = "zone" if target.backend == "gcp" else "region"
            raise SpecError(
                spec.path, where + key,
                f"{target.region!r} is not a region of {target.provider} in the catalog"
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
                f"{target.instance_type!r} is not an instance type of {target.provider} in "
                f"{target.region} in the catalog{hint}",
            )  # fmt: skip
