"""Test-wide guards: no test reaches a cloud or the metadata address.

Fake credentials and the SDKs' metadata switches are set before anything imports boto3
or google-auth, and every socket connect outside loopback raises, so a code path that
tries to leave the machine fails loudly instead of quietly reaching 169.254.169.254.
"""

from __future__ import annotations

import functools
import ipaddress
import os
import socket
import sys
import tempfile
from pathlib import Path

import pytest

FAKE_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SECURITY_TOKEN": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
    "NO_GCE_CHECK": "true",
    "GCE_METADATA_HOST": "127.0.0.1:9",
    "GCE_METADATA_IP": "127.0.0.1:9",
    "GOOGLE_CLOUD_PROJECT": "gpuplan-test",
    "AZURE_CLIENT_ID": "",
}
for _key, _value in FAKE_ENV.items():
    os.environ[_key] = _value
os.environ.pop("GOOGLE_APPLICATION_CREDENTIALS", None)
os.environ.pop("GPUPLAN_SNAPSHOT_DIR", None)
# Output widths follow $COLUMNS where set (edge.tables, edge.console): a developer's shell or
# a test runner's workers (pytest-xdist sets 80) must not change what the tests read, which
# is what a pipe gets. Tests that want a width pass COLUMNS themselves.
os.environ.pop("COLUMNS", None)
os.environ.pop("LINES", None)
# No test reads or writes the real user's data or cloud SDK configuration: the user
# snapshot folder ($XDG_DATA_HOME/gpuplan/snapshots) and gcloud's folder are temporary.
_SESSION_HOME = tempfile.mkdtemp(prefix="gpuplan-tests-")
os.environ["XDG_DATA_HOME"] = os.path.join(_SESSION_HOME, "xdg-data")
os.environ["CLOUDSDK_CONFIG"] = os.path.join(_SESSION_HOME, "gcloud")
# Fitted models are cached on disk (planner.throughput.disk_cache): one temporary folder per
# session, shared by its tests, never the user's ~/.cache.
os.environ["GPUPLAN_CACHE_DIR"] = os.path.join(_SESSION_HOME, "cache")
os.environ["XDG_CACHE_HOME"] = os.path.join(_SESSION_HOME, "xdg-cache")

ROOT = Path(__file__).resolve().parents[1]
# A valid own result (benchmarks.results schema), the base the upload and hostile-input tests
# change one field of.
GOOD_RESULT: dict[str, object] = {
    "id": "my-h100-run",
    "workload": "resnet50",
    "model_size": "full",
    "precision": "fp16",
    "device": "cuda",
    "device_name": "NVIDIA H100 80GB HBM3",
    "world_size": 1,
    "throughput": 2500.0,
    "throughput_unit": "images/s",
    "started_at": "2026-11-01T10:00:00",
}


class OutboundConnectionBlocked(RuntimeError):
    """Raised when a test tries to connect anywhere but loopback."""


_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _check_address(address: object) -> None:
    if isinstance(address, tuple) and address:
        host = str(address[0])
        try:
            ip = ipaddress.ip_address(host)
        except ValueError:
            if host == "localhost":
                return
            raise OutboundConnectionBlocked(f"tests may not resolve or reach {host!r}") from None
        if not ip.is_loopback:
            raise OutboundConnectionBlocked(f"tests may not connect to {host} (only 127.0.0.1)")


def _guarded_connect(self: socket.socket, address: object) -> None:
    _check_address(address)
    return _real_connect(self, address)  # type: ignore[arg-type]


def _guarded_connect_ex(self: socket.socket, address: object) -> int:
    _check_address(address)
    return _real_connect_ex(self, address)  # type: ignore[arg-type]


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _empty_user_data(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test starts with an empty user snapshot folder (the bundled snapshots only)."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg-data")))
    monkeypatch.delenv("GPUPLAN_SNAPSHOT_DIR", raising=False)


@pytest.fixture(autouse=True)
def _streamlit_components_scanned_once() -> None:
    """Streamlit's AppTest scans every installed distribution's metadata for custom
    components on each new AppTest (some 3 s on a busy 2-core machine, ten times the run
    of a page); the installed distributions do not change during a session, so the first
    scan's answer serves every later AppTest."""
    scanner = sys.modules.get("streamlit.components.v2.manifest_scanner")
    if scanner is not None and not hasattr(scanner.scan_component_manifests, "cache_info"):
        scanner.scan_component_manifests = functools.cache(scanner.scan_component_manifests)


@pytest.fixture()
def results_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty results folder, set as $GPUPLAN_RESULTS_DIR."""
    directory = tmp_path / "results"
    directory.mkdir()
    monkeypatch.setenv("GPUPLAN_RESULTS_DIR", str(directory))
    return directory


# A real loopback sshd (tests/sshd.py) for the sweep and cloud end-to-end tests.
# The wheel and its install outside the repository, built once per session (tests/installed.py).
from tests.installed import installed, wheel  # noqa: E402, F401
from tests.sshd import sshd, sshd_factory  # noqa: E402, F401
