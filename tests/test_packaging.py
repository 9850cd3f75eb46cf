"""The package as users get it: a wheel with the app, its data and examples, and an
install outside the repository whose `gpuplan --version` and `gpuplan app` work.

The wheel is built from a copy of the sources (no build files left in the checkout),
without network (`--no-build-isolation`, the test venv's setuptools).
"""

from __future__ import annotations

import email
import filecmp
import subprocess
import time
import tomllib
import urllib.request
import zipfile
from pathlib import Path

from edge.version import VERSION
from tests.conftest import ROOT
from tests.installed import outside_env
from tests.loopback import free_port


def test_the_version_is_one_constant_setuptools_reads() -> None:
    """pyproject's version is dynamic, read from edge/version.py (the wheel's name and
    `gpuplan --version` below show that the build used it)."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in pyproject["project"] and pyproject["project"]["dynamic"] == ["version"]
    dynamic = pyproject["tool"]["setuptools"]["dynamic"]["version"]
    assert dynamic == {"attr": "edge.version.VERSION"}


def test_wheel_holds_the_app_data_examples_and_license(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {
        "edge/format.py",
        "planner/ui/app_main.py",
        "planner/ui/pages/page_plan.py",
        "planner/data/examples/onprem-dgx-h100.toml",
        "planner/data/examples/llm_queries.csv",
        "planner/data/examples/sweep-onprem.toml",
        "planner/data/gpu_specs.csv",
        *(f"planner/data/fitted/{p.name}" for p in (ROOT / "planner/data/fitted").glob("*.pkl")),
        "pricing/snapshots/MANIFEST.json",
        "benchmarks/published/lambda_pytorch_throughput.csv",
        "planner/py.typed",
        "pricing/py.typed",
        "benchmarks/py.typed",
        f"gpuplan-{VERSION}.dist-info/licenses/LICENSE",
        f"gpuplan-{VERSION}.dist-info/licenses/NOTICE",
    }
    assert expected <= names, sorted(expected - names)
    manifest = ROOT / "pricing" / "snapshots" / "MANIFEST.json"
    snapshots = {f"pricing/snapshots/{p.name}" for p in manifest.parent.glob("*.csv")}
    assert snapshots <= names
    assert not any(n.startswith(("tests/", "reference/")) for n in names)


def test_wheel_metadata_puts_the_app_in_an_extra(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        metadata = email.message_from_bytes(archive.read(f"gpuplan-{VERSION}.dist-info/METADATA"))
    requires = metadata.get_all("Requires-Dist") or []
    core = [r for r in requires if "extra ==" not in r]
    assert not [r for r in core if r.startswith(("streamlit", "plotly", "torch", "boto3"))]
    assert any(r.startswith("streamlit") and 'extra == "app"' in r for r in requires)
    assert any(r.startswith("plotly") and 'extra == "app"' in r for r in requires)
    assert "app" in (metadata.get_all("Provides-Extra") or [])
    assert metadata["License-Expression"] == "Apache-2.0"


def test_packaged_examples_are_copies_of_the_repository_examples() -> None:
    """Each example shipped in the package (the app's on-prem example at least) is the
    same file as in the repository's examples/."""
    packaged = ROOT / "planner" / "data" / "examples"
    names = sorted(p.name for p in packaged.iterdir() if p.suffix in (".toml", ".csv"))
    assert "onprem-dgx-h100.toml" in names
    assert names == sorted(p.name for p in (ROOT / "examples").iterdir())
    _, mismatch, errors = filecmp.cmpfiles(ROOT / "examples", packaged, names, shallow=False)
    assert (mismatch, errors) == ([], [])


def test_installed_package_prints_its_version_and_serves_the_app(
    installed: Path, tmp_path: Path
) -> None:
    gpuplan = str(installed / "bin" / "gpuplan")
    env = outside_env(tmp_path)
    version = subprocess.run(
        [gpuplan, "--version"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60
    )
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"gpuplan {VERSION}"
    where = subprocess.run(
        [str(installed / "bin" / "python"), "-c", "import planner; print(planner.__file__)"],
        capture_output=True, text=True, cwd=tmp_path, env=env, check=True,
    ).stdout  # fmt: skip
    assert Path(where).resolve().is_relative_to(installed.resolve()), where

    port = free_port()
    log = (tmp_path / "app.log").open("wb")
    server = subprocess.Popen(
        [gpuplan, "app", "--port", str(port), "--server.headless", "true"],
        cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        health = ""
        while time.monotonic() < deadline and server.poll() is None:
            try:
                url = f"http://127.0.0.1:{port}/_stcore/health"
                with urllib.request.urlopen(url, timeout=2) as response:
                    health = response.read().decode().strip()
                    break
            except OSError:
                time.sleep(0.3)
        assert health == "ok", (tmp_path / "app.log").read_text()
        # The server runs the installed app script, not a checkout's.
        command = Path(f"/proc/{server.pid}/cmdline").read_text().split("\0")
        script = Path(command[command.index("run") + 1])
        assert script.name == "app_main.py"
        assert script.resolve().is_relative_to(installed.resolve()), command
        assert command[command.index("--server.port") + 1] == str(port)
    finally:
        server.terminate()
        server.wait(timeout=20)
        log.close()


def test_installed_package_reads_its_shipped_fitted_models(installed: Path, tmp_path: Path) -> None:
    """The fitted models in the wheel match the installed code's keys (version, code digest),
    so a first plan after `pip install` fits nothing."""
    tool = ROOT / "tools" / "build_fitted_seed.py"  # the builder, run on the installed code
    code = (
        "import importlib.util\n"
        "from planner.throughput import disk_cache\n"
        f"spec = importlib.util.spec_from_file_location('build_fitted_seed', {str(tool)!r})\n"
        "fitted_seed = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(fitted_seed)\n"
        "print(disk_cache.SEED_DIR)\n"
        "print(len(fitted_seed.expected_files()), len(fitted_seed.missing_files()))\n"
    )
    done = subprocess.run(
        [str(installed / "bin" / "python"), "-c", code],
        capture_output=True, text=True, cwd=tmp_path, env=outside_env(tmp_path), timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    seed_dir, counts = done.stdout.split("\n")[:2]
    assert Path(seed_dir).resolve().is_relative_to(installed.resolve()), seed_dir
    expected, missing = map(int, counts.split())
    assert expected >= 4 and missing == 0


def test_installed_app_renders_the_plan_page_outside_the_repository(
    installed: Path, tmp_path: Path
) -> None:
    """The packaged app script runs its default page on the packaged data (AppTest)."""
    probe = """
from importlib.resources import files
from streamlit.testing.v1 import AppTest
at = AppTest.from_file(str(files("planner.ui") / "app_main.py"), default_timeout=240).run()
assert not at.exception, at.exception
print("ok", at.metric[0].label if at.metric else "", len(at.dataframe))
"""
    done = subprocess.run(
        [str(installed / "bin" / "python"), "-c", probe],
        capture_output=True, text=True, cwd=tmp_path, env=outside_env(tmp_path), timeout=280,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("ok Cheapest within deadline"), done.stdout
