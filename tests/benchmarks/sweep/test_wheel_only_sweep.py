"""A sweep from a plain install: a venv that holds only gpuplan's wheel (and its core
dependencies, installed by pip), over a real loopback sshd, to a remote venv that has
torch but not gpuplan, with the default install (no remote_python).

So the controller has no source checkout: it rebuilds gpuplan's wheel from the installed
files (runners/ship.py), copies it, and the remote installer reuses the venv and its
torch and installs 'gpuplan[bench]' there (runners/remote_install.py).
"""

from __future__ import annotations

import email
import importlib.metadata
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.results import read_result
from benchmarks.runners import ship
from benchmarks.runners.remote_install import marker_name
from tests.benchmarks.sweep.conftest import ONE_RUN, spec_text
from tests.conftest import ROOT
from tests.sshd import SshServer

CONSTRAINTS = ROOT / "constraints" / "cpu.txt"
PIP = ("-m", "pip", "install", "-q", "--no-compile", "--disable-pip-version-check")


def _site(python: Path) -> Path:
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def _closure(names: list[str], extras: tuple[str, ...] = ()) -> set[str]:
    """The installed distributions `names` need, theirs included (from this environment's
    metadata), lower-cased with '-' for '_'."""
    from packaging.requirements import Requirement

    seen: set[str] = set()
    todo = [(n, extras) for n in names]
    while todo:
        name, wanted = todo.pop()
        key = name.lower().replace("_", "-")
        if key in seen or key == "gpuplan":
            continue
        seen.add(key)
        for text in importlib.metadata.requires(name) or []:
            req = Requirement(text)
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in (*wanted, "")):
                todo.append((req.name, ()))
    return seen


def _remote_venv_with_torch(where: Path, wheel: Path) -> Path:
    """A venv as on a deep-learning image: its Python finds torch and the libraries
    gpuplan[bench] uses (this environment's, through a .pth file naming a folder of links
    to just those distributions, pip included), but no gpuplan."""
    venv = where / "remote-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    with zipfile.ZipFile(wheel) as archive:
        info = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        meta = email.message_from_bytes(archive.read(info))
    needed = [r.split(";")[0].split(">")[0].split("=")[0].split("[")[0].strip()
              for r in meta.get_all("Requires-Dist") or []]  # fmt: skip
    shelf = where / "image-site-packages"
    shelf.mkdir()
    for name in _closure([*needed, "pip"]):
        dist = importlib.metadata.distribution(name)
        for top in {Path(str(f)).parts[0] for f in dist.files or []}:
            source = Path(str(dist.locate_file(top)))
            if top != ".." and source.exists() and not (shelf / top).exists():
                (shelf / top).symlink_to(source)
    (_site(venv / "bin" / "python") / "image-libraries.pth").write_text(f"{shelf}\n")
    return venv


@pytest.fixture(scope="module")
def wheel_only(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """The built wheel, a local venv holding only it (pip install WHEEL, the default
    install, its dependencies resolved by pip), and a remote venv with torch but no
    gpuplan. Built once for the module."""
    where = tmp_path_factory.mktemp("wheel-only")
    built = ship.local_wheel(where / "build-cache")
    local = where / "local-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(local)], check=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(local / "bin" / "python"), *PIP[2:],
         "-c", str(CONSTRAINTS), str(built.path)],
        check=True, timeout=300,
    )  # fmt: skip
    remote = _remote_venv_with_torch(where, built.path)
    yield {"wheel": built.path, "local": local, "remote": remote, "where": where}


def test_the_wheel_only_venv_has_no_checkout_and_the_remote_no_gpuplan(
    wheel_only: dict[str, Path],
) -> None:
    local_python = wheel_only["local"] / "bin" / "python"
    where = subprocess.run(
        [str(local_python), "-c", "import benchmarks, sys; print(benchmarks.__file__)"],
        capture_output=True, text=True, check=True, cwd=wheel_only["where"],
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    ).stdout.strip()  # fmt: skip
    assert Path(where).is_relative_to(wheel_only["local"]), where
    probe = "import importlib.util as u; print(bool(u.find_spec('torch')), bool(u.find_spec('planner')))"  # noqa: E501
    found = subprocess.run(
        [str(wheel_only["remote"] / "bin" / "python"), "-c", probe],
        capture_output=True, text=True, check=True, cwd=wheel_only["where"],
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    ).stdout.split()  # fmt: skip
    assert found == ["True", "False"]


@pytest.mark.slow  # builds two venvs (pip, a few tens of seconds) and runs a benchmark
def test_a_sweep_from_a_wheel_only_install_installs_and_collects(
    wheel_only: dict[str, Path], sshd: SshServer, tmp_path: Path
) -> None:
    remote = wheel_only["remote"]
    target = (
        f'[[targets]]\nbackend = "ssh"\nhost = "{sshd.alias}"\n'
        f'remote_venv = "{remote}"\nremote_env = {{ OMP_NUM_THREADS = "1" }}\n'
    )
    spec = tmp_path / "plain.toml"
    spec.write_text(spec_text(target, ONE_RUN))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(
        GPUPLAN_SSH_OPTIONS=f"-F {sshd.client_config}",
        GPUPLAN_SWEEP_DIR=str(tmp_path / "sweeps"),
        GPUPLAN_SWEEP_REMOTE_DIR=str(tmp_path / "remote-home"),
        GPUPLAN_CACHE_DIR=str(tmp_path / "cache"),  # no wheel cached: it is rebuilt
    )
    gpuplan = wheel_only["local"] / "bin" / "gpuplan"
    results = tmp_path / "results"
    done = subprocess.run(
        [str(gpuplan), "sweep", "run", str(spec), "--yes", "--results", str(results)],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (sweep_results,) = [p for p in results.iterdir() if p.is_dir()]
    (path,) = sweep_results.glob("*.json")
    result = read_result(path)
    assert result.workload == "gpt" and result.device == "cpu" and result.throughput > 0
    assert result.sweep is not None and result.sweep["backend"] == "ssh"

    # The wheel it shipped was rebuilt from the installed files: the same files as the
    # wheel built from the checkout, under the same version, and installable.
    (rebuilt,) = (tmp_path / "cache" / "wheels").glob("*/gpuplan-*.whl")
    original = zipfile.ZipFile(wheel_only["wheel"])
    copy = zipfile.ZipFile(rebuilt)
    assert sorted(copy.namelist()) == sorted(original.namelist())
    info = next(n for n in original.namelist() if n.endswith(".dist-info/METADATA"))
    assert copy.read(info) == original.read(info)
    version, digest = rebuilt.parent.name.split("-", 1)
    assert rebuilt.name == f"gpuplan-{version}-py3-none-any.whl"
    # The remote venv was reused (its torch kept) and now holds that gpuplan.
    assert (remote / marker_name(version, digest)).exists()
    shown = subprocess.run(
        [str(remote / "bin" / "python"), "-c", "import planner, torch; print(planner.__file__)"],
        capture_output=True, text=True, check=True, cwd=tmp_path, env=env,
    ).stdout  # fmt: skip
    assert Path(shown.strip()).is_relative_to(remote)
