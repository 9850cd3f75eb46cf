"""The remote install script, run by a real /bin/sh with stand-ins for nvidia-smi and the
venv's python: which torch build it picks, and that an installed wheel is reused."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from benchmarks.runners.remote_install import (
    TORCH_INDEX,
    install_script,
    marker_name,
    sh_path,
    torch_choice_script,
)


def run_sh(script: str, path: Path | None = None, home: Path | None = None) -> str:
    env = {"PATH": f"{path}:/usr/bin:/bin" if path else "/usr/bin:/bin"}
    if home:
        env["HOME"] = str(home)
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, env=env, timeout=10)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def fake_nvidia_smi(folder: Path, cuda: str) -> Path:
    folder.mkdir(exist_ok=True)
    tool = folder / "nvidia-smi"
    tool.write_text(
        "#!/bin/sh\n"
        "echo '| NVIDIA-SMI 550.54.15   Driver Version: 550.54.15   "
        f"CUDA Version: {cuda}     |'\n"
    )
    tool.chmod(0o755)
    return folder


@pytest.mark.parametrize(
    ("cuda", "build"),
    [("13.0", "cu130"), ("12.9", "cu129"), ("12.7", "cu126"), ("12.4", "cu124"),
     ("12.2", "cu121"), ("11.8", "cu118"), ("11.4", "cpu")],
)  # fmt: skip
def test_a_gpu_host_gets_the_newest_cuda_build_its_driver_runs(
    tmp_path: Path, cuda: str, build: str
) -> None:
    bin_dir = fake_nvidia_smi(tmp_path / "bin", cuda)
    index = run_sh(torch_choice_script(None) + 'echo "$index"', bin_dir)
    assert index == f"{TORCH_INDEX}/{build}"


def test_a_host_without_nvidia_smi_gets_the_cpu_build_and_a_given_index_wins(
    tmp_path: Path,
) -> None:
    assert run_sh(torch_choice_script(None) + 'echo "$index"') == f"{TORCH_INDEX}/cpu"
    bin_dir = fake_nvidia_smi(tmp_path / "bin", "12.4")
    mine = "https://mirror.example/whl/cu128"
    assert run_sh(torch_choice_script(mine) + 'echo "$index"', bin_dir) == mine


def test_an_installed_wheel_is_reused_without_running_pip(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    called = tmp_path / "python-was-called"
    python = venv / "bin" / "python"
    python.write_text(f"#!/bin/sh\ntouch {called}\nexit 1\n")
    python.chmod(0o755)
    (venv / marker_name("0.2.0", "abcd")).touch()
    out = run_sh(install_script(str(venv), "/w/gpuplan.whl", "0.2.0", "abcd"))
    assert out == f"gpuplan 0.2.0 is installed in {venv} already (reused)"
    assert not called.exists()
    # Another digest (a changed wheel of the same version) is not taken for installed.
    failed = subprocess.run(
        ["sh", "-c", install_script(str(venv), "/w/gpuplan.whl", "0.2.0", "ffff")],
        capture_output=True, text=True, timeout=10, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert failed.returncode != 0 and "reusing the venv" in failed.stdout
    assert called.exists()


def test_a_home_relative_path_stays_home_relative_and_quoted(tmp_path: Path) -> None:
    assert run_sh(f"echo {sh_path('~/a dir/venv')}", home=tmp_path) == f"{tmp_path}/a dir/venv"
    assert run_sh(f"echo {sh_path('/x/$(touch no)')}") == "/x/$(touch no)"
    assert not os.path.exists("no")
