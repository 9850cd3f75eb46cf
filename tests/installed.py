"""gpuplan as users get it, built once per test session: its wheel (from a copy of the
sources, without network) and a venv outside the repository with the wheel installed, its
dependencies taken from this test environment through a .pth file.

tests/conftest.py registers the fixtures, so every test file shares one build.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT

SOURCES = (
    "pyproject.toml",
    "README.md",
    "LICENSE",
    "NOTICE",
    "edge",
    "planner",
    "pricing",
    "benchmarks",
)
PURELIB = "import sysconfig; print(sysconfig.get_paths()['purelib'])"


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """gpuplan's wheel, built by pip from a copy of the sources."""
    source = tmp_path_factory.mktemp("source")
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(path, source / name)
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--no-index", "--quiet", str(source), "-w", str(out)],
        check=True, timeout=300, cwd=source,
    )  # fmt: skip
    (built,) = out.glob("gpuplan-*.whl")
    return built


@pytest.fixture(scope="session")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh venv outside the repository with the wheel installed (no network)."""
    venv = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = Path(
        subprocess.run(
            [str(venv / "bin" / "python"), "-c", PURELIB],
            check=True, capture_output=True, text=True,
        ).stdout.strip()
    )  # fmt: skip
    (site / "test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
         "--no-deps", "--no-index", "--quiet", str(wheel)],
        check=True, timeout=300,
    )  # fmt: skip
    yield venv


def outside_env(tmp: Path) -> dict[str, str]:
    """The environment for a command of the installed package: this one without
    PYTHONPATH (which would import the checkout), own results in `tmp`/results."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["GPUPLAN_RESULTS_DIR"] = str(tmp / "results")
    return env
