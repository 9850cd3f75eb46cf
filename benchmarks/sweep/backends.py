"""Which Provisioner launches a cloud backend's machines.

`provisioner_for("aws", **opts)` imports benchmarks.runners.aws (boto3) only when a sweep
has an AWS target, and likewise runners.gcp (google-cloud-compute) and runners.skypilot
(which imports SkyPilot only when it launches). Each module
provides `make_provisioner(**opts)` or its provisioner class (AwsProvisioner,
GcpProvisioner) taking the same keyword options.
`register(backend, factory)` plugs in another implementation (tests use an in-memory
one); a registered factory wins over the module.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from benchmarks.runners.machine import Provisioner, ProvisionError

MODULES = {
    "aws": "benchmarks.runners.aws",
    "gcp": "benchmarks.runners.gcp",
    "skypilot": "benchmarks.runners.skypilot",
}
EXTRAS = {
    "aws": "gpuplan[aws] (boto3)",
    "gcp": "gpuplan[gcp] (google-cloud-compute)",
    "skypilot": "gpuplan[skypilot] (skypilot)",
}
CLASSES = {"aws": "AwsProvisioner", "gcp": "GcpProvisioner", "skypilot": "SkyPilotProvisioner"}

_registered: dict[str, Callable[..., Provisioner]] = {}


def register(backend: str, factory: Callable[..., Provisioner] | None) -> None:
    """Use `factory(**opts)` for `backend` from now on (None: back to the module)."""
    if factory is None:
        _registered.pop(backend, None)
    else:
        _registered[backend] = factory


def provisioner_for(backend: str, **opts: Any) -> Provisioner:
    """The Provisioner of a cloud backend, or ProvisionError saying what to install."""
    if backend in _registered:
        return _registered[backend](**opts)
    if backend not in MODULES:
        raise ProvisionError(
            f"backend {backend!r} launches no machines (cloud backends: aws, gcp, skypilot)"
        )
    try:
        module = importlib.import_module(MODULES[backend])
    except ModuleNotFoundError as exc:
        if exc.name == MODULES[backend]:
            raise ProvisionError(
                f"this gpuplan has no {backend} provisioner ({MODULES[backend]} is missing)"
            ) from None
        raise ProvisionError(
            f"the {backend} backend needs {exc.name}: pip install '{EXTRAS[backend]}'"
        ) from None
    names = ("make_provisioner", CLASSES[backend])
    for name in names:
        factory = getattr(module, name, None)
        if callable(factory):
            return factory(**opts)
    raise ProvisionError(f"{MODULES[backend]} defines none of {', '.join(names)}")
