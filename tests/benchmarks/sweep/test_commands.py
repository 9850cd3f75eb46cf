"""The ssh/scp command lines a sweep runs, the local backend, and the SkyPilot export."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from benchmarks.runners import ssh
from benchmarks.runners.machine import Machine
from benchmarks.runners.ship import Wheel
from benchmarks.sweep.skypilot import task_yaml, write_tasks
from benchmarks.sweep.spec import parse_spec
from tests.benchmarks.sweep.conftest import ONE_RUN, only_state, spec_text
from tests.benchmarks.sweep.test_ssh_sweep import start_sweep


def test_ssh_command_uses_the_machine_as_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        ssh.SSH_OPTIONS_ENV, "-o UserKnownHostsFile=/tmp/kh -o 'StrictHostKeyChecking=yes'"
    )
    machine = Machine("aws", "10.0.0.5", user="ubuntu", port=2222, identity_file="~/.ssh/k.pem")
    argv = ssh.ssh_command(machine, "echo hi")
    assert argv[0] == "ssh" and argv[-3:] == ["--", "10.0.0.5", "echo hi"]
    assert argv[1:3] == ["-o", "BatchMode=yes"]
    assert "ConnectTimeout=10" in argv and "User=ubuntu" in argv
    assert argv[argv.index("-p") + 1] == "2222"
    assert argv[argv.index("-i") + 1] == str(Path("~/.ssh/k.pem").expanduser())
    assert "UserKnownHostsFile=/tmp/kh" in argv and "StrictHostKeyChecking=yes" in argv
    alias = ssh.ssh_command(Machine("ssh", "gpu-box-1"), "true", extra=[])
    assert alias == ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-o",
                     "ServerAliveInterval=15", "-o", "ServerAliveCountMax=4", "--", "gpu-box-1",
                     "true"]  # fmt: skip
    scp = ssh.scp_command(machine, [":runs/*.json"], "/tmp/x", extra=[])
    assert scp[scp.index("-P") + 1] == "2222"
    assert scp[-2:] == ["10.0.0.5:runs/*.json", "/tmp/x"]


@pytest.mark.parametrize(
    ("stderr", "words"),
    [
        ("user@h: Permission denied (publickey).", "check identity_file and user"),
        ("ssh: connect to host h port 22: Connection refused", "connection refused"),
        ("ssh: connect to host h port 22: Connection timed out", "timed out"),
        ("ssh: Could not resolve hostname nohost: Name or service not known", "unknown host"),
    ],
)
def test_ssh_failures_are_said_plainly(stderr: str, words: str) -> None:
    assert words in ssh.describe_ssh_failure(Machine("ssh", "h"), [stderr])


def test_remote_paths_and_env_are_safe_on_a_command_line() -> None:
    assert ssh.check_remote_path(".gpuplan-sweep/a-1/runs/x") == ".gpuplan-sweep/a-1/runs/x"
    for bad in ("a; rm -rf ~", "../etc", "$(id)", "a b"):
        with pytest.raises(ValueError):
            ssh.check_remote_path(bad)
    assert ssh.env_prefix([("A", "x y"), ("B", "$(id)")]) == "env A='x y' B='$(id)' "


@pytest.mark.slow  # real benchmark processes over ssh
def test_local_backend_runs_on_this_machine(sweep_dir: Path, tmp_path: Path) -> None:
    import sys

    from tests.benchmarks.sweep.conftest import ROOT

    target = (
        f'[[targets]]\nbackend = "local"\nremote_python = "{sys.executable}"\n'
        f'remote_dir = "{tmp_path}/remote"\n'
        f'remote_env = {{ PYTHONPATH = "{ROOT}", OMP_NUM_THREADS = "1" }}\n'
    )
    spec_path = tmp_path / "local.toml"
    spec_path.write_text(spec_text(target, ONE_RUN))
    sweep = start_sweep(spec_path, tmp_path / "results", [])
    assert sweep.run() == 0
    (run,) = only_state(sweep_dir)["targets"][0]["runs"].values()
    assert run["status"] == "done"
    assert (tmp_path / "results" / sweep.sweep_id / f"{run['result_ids'][0]}.json").exists()


def test_skypilot_export_writes_one_task_per_cloud_target(tmp_path: Path) -> None:
    text = spec_text(
        '[[targets]]\nbackend = "ssh"\nhost = "box"\n'
        '[[targets]]\nbackend = "aws"\ninstance_type = "p5.48xlarge"\nregion = "us-east-2"\n'
        "spot = true\n"
        '[[targets]]\nbackend = "gcp"\ninstance_type = "a2-highgpu-1g"\nzone = "us-central1-a"\n',
        ONE_RUN,
    )
    spec = parse_spec(tomllib.loads(text), "s.toml")
    built = tmp_path / "gpuplan-0.2.0-py3-none-any.whl"
    built.write_bytes(b"a wheel")
    wheel = Wheel(built, "0.2.0", "abcd")
    paths = write_tasks(spec, tmp_path / "sky", wheel)
    assert [p.name for p in paths] == ["loopback-1.yaml", "loopback-2.yaml"]
    # The wheel goes beside the tasks, and each task mounts that copy.
    copy = tmp_path / "sky" / built.name
    assert copy.read_bytes() == b"a wheel"
    aws = json.loads(paths[0].read_text())  # JSON: valid YAML, written by a serializer
    assert aws["resources"] == {
        "cloud": "aws", "instance_type": "p5.48xlarge", "region": "us-east-2", "use_spot": True,
    }  # fmt: skip
    remote = "~/.gpuplan-sweep/wheels/0.2.0-abcd/gpuplan-0.2.0-py3-none-any.whl"
    assert aws["file_mounts"] == {remote: str(copy.resolve())}
    # setup installs that wheel (no package index needs to carry gpuplan); run uses its venv.
    assert "pip install 'gpuplan[bench]'" not in aws["setup"]
    assert '"$wheel[bench]"' in aws["setup"] and 'wheel="$HOME"/' in aws["setup"]
    assert aws["run"].startswith(
        '"$HOME"/.gpuplan-sweep/venv/bin/python -m planner.cli.main bench run --workload gpt '
        "--world-size 1 --size tiny"
    )
    assert json.loads(task_yaml(spec, 2, wheel))["resources"]["zone"] == "us-central1-a"


def test_skypilot_export_of_a_skypilot_target_pins_its_resources(tmp_path: Path) -> None:
    text = spec_text(
        '[[targets]]\nbackend = "skypilot"\ncloud = "nebius"\nregion = "eu-north1"\n'
        'instance_type = "gpu-h100-sxm_1gpu-16vcpu-200gb"\nremote_python = "/opt/py/bin/python"\n',
        ONE_RUN,
    )
    spec = parse_spec(tomllib.loads(text), "s.toml")
    (path,) = write_tasks(spec, tmp_path / "sky")  # remote_python: no wheel is built
    task = json.loads(path.read_text())
    assert task["resources"] == {
        "cloud": "nebius", "region": "eu-north1",
        "instance_type": "gpu-h100-sxm_1gpu-16vcpu-200gb", "use_spot": False,
    }  # fmt: skip
    assert task["file_mounts"] == {} and task["setup"] == ""
    assert task["run"].startswith("/opt/py/bin/python -m planner.cli.main bench run")
    assert [p.name for p in (tmp_path / "sky").iterdir()] == [path.name]


def test_remote_folder_is_per_target_under_the_configured_base(
    sweep_dir: Path, tmp_path: Path, remote_dir_in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    targets = (
        '[[targets]]\nbackend = "ssh"\nhost = "box"\nlabel = "gpu box/1"\n'
        '[[targets]]\nbackend = "ssh"\nhost = "box"\nlabel = "b"\nremote_dir = "work"\n'
    )
    spec_path = tmp_path / "two.toml"
    spec_path.write_text(spec_text(targets, ONE_RUN))
    sweep = start_sweep(spec_path, tmp_path / "results", [])
    first, second = sweep.spec.targets
    sid = sweep.sweep_id
    assert sweep.remote_root(first) == f"{remote_dir_in_tmp}/{sid}/t0-gpu-box-1"
    assert sweep.remote_root(second) == f"work/{sid}/t1-b"  # remote_dir comes first
    monkeypatch.delenv("GPUPLAN_SWEEP_REMOTE_DIR")
    assert sweep.remote_root(first) == f".gpuplan-sweep/{sid}/t0-gpu-box-1"
    assert ssh.check_remote_path(sweep.remote_root(first))
