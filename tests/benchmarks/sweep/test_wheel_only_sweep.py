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
import time
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


def _without_pythonpath() -> dict[str, str]:
    """This process's environment less PYTHONPATH: a program imports only what its venv holds."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


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


def _remote_venv_with_torch(
    where: Path, wheel: Path, name: str = "remote-venv", without: tuple[str, ...] = ()
) -> Path:
    """A venv as on a deep-learning image: its Python finds torch and the libraries
    gpuplan[bench] uses (this environment's, through a .pth file naming a folder of links
    to just those distributions, pip included), but no gpuplan, nor the distributions
    named in `without`."""
    venv = where / name
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    with zipfile.ZipFile(wheel) as archive:
        info = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        meta = email.message_from_bytes(archive.read(info))
    from packaging.requirements import Requirement

    needed = [Requirement(r).name for r in meta.get_all("Requires-Dist") or []]
    shelf = where / f"{name}-site-packages"
    shelf.mkdir()
    for name in _closure([*needed, "pip"]) - set(without):
        dist = importlib.metadata.distribution(name)
        for top in {Path(str(f)).parts[0] for f in dist.files or []}:
            source = Path(str(dist.locate_file(top)))
            if top != ".." and source.exists() and not (shelf / top).exists():
                (shelf / top).symlink_to(source)
    (_site(venv / "bin" / "python") / "image-libraries.pth").write_text(f"{shelf}\n")
    return venv


def _pip_from_the_index(command: list[str], attempts: int = 3) -> None:
    """Run a pip install that resolves dependencies from the package index (the one
    network step of the suite): a failed attempt is retried after a pause (an index that
    drops a connection for longer than pip's own retries), and the last failure shows
    pip's own words instead of only its exit status."""
    for attempt in range(1, attempts + 1):
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        if done.returncode == 0:
            return
        if attempt < attempts:
            time.sleep(15 * attempt)
    pytest.fail(
        f"pip install failed {attempts} times (exit {done.returncode}): "
        f"{' '.join(command)}\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    )


@pytest.fixture(scope="module")
def wheel_only(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """The built wheel, a local venv holding only it (pip install WHEEL, the default
    install, its dependencies resolved by pip), and a remote venv with torch but no
    gpuplan. Built once for the module."""
    where = tmp_path_factory.mktemp("wheel-only")
    built = ship.local_wheel(where / "build-cache")
    local = where / "local-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(local)], check=True)
    _pip_from_the_index(
        [sys.executable, "-m", "pip", "--python", str(local / "bin" / "python"), *PIP[2:],
         "-c", str(CONSTRAINTS), str(built.path)]
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
        env=_without_pythonpath(),
    ).stdout.strip()  # fmt: skip
    assert Path(where).is_relative_to(wheel_only["local"]), where
    probe = "import importlib.util as u; print(bool(u.find_spec('torch')), bool(u.find_spec('planner')))"  # noqa: E501
    found = subprocess.run(
        [str(wheel_only["remote"] / "bin" / "python"), "-c", probe],
        capture_output=True, text=True, check=True, cwd=wheel_only["where"],
        env=_without_pythonpath(),
    ).stdout.split()  # fmt: skip
    assert found == ["True", "False"]


def _sweep_from_the_install(
    wheel_only: dict[str, Path],
    sshd: SshServer,
    tmp_path: Path,
    target: str,
    max_usd: float,
    timeout_s: float,
) -> Path:
    """`gpuplan sweep run --yes` of ONE_RUN on `target` with the wheel-only install's gpuplan
    (no PYTHONPATH; sweeps, remote folders and an empty wheel cache under `tmp_path`, so the
    wheel is rebuilt); it must succeed. The one result file it collected."""
    spec = tmp_path / "plain.toml"
    spec.write_text(spec_text(target, ONE_RUN, max_usd=max_usd))
    env = _without_pythonpath()
    env.update(
        GPUPLAN_SSH_OPTIONS=f"-F {sshd.client_config}",
        GPUPLAN_SWEEP_DIR=str(tmp_path / "sweeps"),
        GPUPLAN_SWEEP_REMOTE_DIR=str(tmp_path / "remote-home"),
        GPUPLAN_CACHE_DIR=str(tmp_path / "cache"),
    )
    gpuplan = wheel_only["local"] / "bin" / "gpuplan"
    results = tmp_path / "results"
    done = subprocess.run(
        [str(gpuplan), "sweep", "run", str(spec), "--yes", "--results", str(results)],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=timeout_s,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (sweep_results,) = [p for p in results.iterdir() if p.is_dir()]
    (path,) = sweep_results.glob("*.json")
    return path


@pytest.mark.slow  # builds two venvs (pip, a few tens of seconds) and runs a benchmark
def test_a_sweep_from_a_wheel_only_install_installs_and_collects(
    wheel_only: dict[str, Path], sshd: SshServer, tmp_path: Path
) -> None:
    remote = wheel_only["remote"]
    target = (
        f'[[targets]]\nbackend = "ssh"\nhost = "{sshd.alias}"\n'
        f'remote_venv = "{remote}"\nremote_env = {{ OMP_NUM_THREADS = "1" }}\n'
    )
    path = _sweep_from_the_install(wheel_only, sshd, tmp_path, target, max_usd=5, timeout_s=600)
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
        capture_output=True, text=True, check=True, cwd=tmp_path, env=_without_pythonpath(),
    ).stdout  # fmt: skip
    assert Path(shown.strip()).is_relative_to(remote)


# -- the default install, on a host that reaches only the package index --------------------


def _index_with(where: Path, wheels: list[Path]) -> str:
    """A PEP 503 simple index in `where` serving `wheels` (file://, as pip reads an index
    on disk); its URL."""
    for wheel in wheels:
        project = where / "simple" / wheel.name.split("-")[0].lower().replace("_", "-")
        project.mkdir(parents=True, exist_ok=True)
        (project / "index.html").write_text(
            f'<!DOCTYPE html><html><body><a href="{wheel.as_uri()}">{wheel.name}</a></body></html>'
        )
    (where / "simple").mkdir(parents=True, exist_ok=True)
    return (where / "simple").as_uri()


@pytest.fixture(scope="module")
def torch_cpu_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CPU torch wheel as an index serves it: this environment's torch (a CPU build),
    its metadata as it is (version, requirements), its files reached through a .pth
    file, since unpacking 700 MB of torch would take the test minutes."""
    dist = importlib.metadata.distribution("torch")
    if "+cpu" not in dist.version:
        pytest.skip(f"this environment's torch {dist.version} is not a CPU build")
    where = tmp_path_factory.mktemp("torch-wheel")
    shelf = where / "torch-files"
    shelf.mkdir()
    for top in {Path(str(f)).parts[0] for f in dist.files or []}:
        if top != ".." and not top.endswith(".dist-info"):
            (shelf / top).symlink_to(Path(str(dist.locate_file(top))))
    info = f"torch-{dist.version}.dist-info"
    files = {
        "torch-files.pth": f"{shelf}\n",
        f"{info}/METADATA": dist.read_text("METADATA") or "",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    files[f"{info}/RECORD"] = "".join(f"{name},,\n" for name in [*files, f"{info}/RECORD"])
    wheel = where / f"torch-{dist.version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return wheel


def _only_index_env(index_url: str) -> dict[str, str]:
    """remote_env of a host whose pip knows one index and nothing else (no pip.conf, no
    find-links); no bytecode compiled at install, to keep the test's install short."""
    return {"PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": index_url, "PIP_NO_COMPILE": "1",
            "OMP_NUM_THREADS": "1"}  # fmt: skip


@pytest.mark.slow  # installs torch (a local wheel) into a venv and runs a benchmark
@pytest.mark.timeout(900)
def test_the_default_install_gets_a_cpu_torch_from_the_only_index_the_host_reaches(
    wheel_only: dict[str, Path], torch_cpu_wheel: Path, sshd: SshServer, tmp_path: Path
) -> None:
    """A wheel-only SSH sweep to a host whose pip reaches only its package index (here a
    local one serving a CPU torch wheel), with a remote venv that has gpuplan's
    libraries but no torch: the default install takes the CPU build from that index and
    never asks PyTorch's own site. Before, it tried only download.pytorch.org."""
    remote = _remote_venv_with_torch(tmp_path, wheel_only["wheel"], "bare-venv", without=("torch",))
    index = _index_with(tmp_path / "index", [torch_cpu_wheel])
    env_lines = ", ".join(f'{k} = "{v}"' for k, v in _only_index_env(index).items())
    target = (
        f'[[targets]]\nbackend = "ssh"\nhost = "{sshd.alias}"\n'
        f'remote_venv = "{remote}"\nremote_env = {{ {env_lines} }}\n'
    )
    path = _sweep_from_the_install(wheel_only, sshd, tmp_path, target, max_usd=0, timeout_s=900)
    assert read_result(path).device == "cpu"
    # torch is now in the venv itself (not the image's libraries), the CPU build.
    (installed,) = _site(remote / "bin" / "python").glob("torch-*.dist-info")
    assert installed.name.endswith("+cpu.dist-info"), installed.name


def test_when_no_index_gives_torch_the_failure_names_every_index_tried(
    wheel_only: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The install script itself, run by /bin/sh on a venv without torch, on a CPU host
    whose index has no torch and whose PyTorch site (a folder here) has none either."""
    from benchmarks.runners import remote_install

    remote = _remote_venv_with_torch(tmp_path, wheel_only["wheel"], "bare-venv", without=("torch",))
    index = _index_with(tmp_path / "index", [])
    monkeypatch.setattr(remote_install, "TORCH_INDEX", (tmp_path / "pytorch-whl").as_uri())
    script = remote_install.install_script(str(remote), str(wheel_only["wheel"]), "0", "x")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **_only_index_env(index)}
    done = subprocess.run(
        ["sh", "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode != 0, done.stdout
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("torch could not be")]
    configured = f"pip's configured index ({index})"
    assert line == (
        f"torch could not be installed; tried: {configured} (for a CPU build); "
        f"{(tmp_path / 'pytorch-whl').as_uri()}/cpu; {configured}"
    )
