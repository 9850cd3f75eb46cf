"""Sweeps over a real loopback sshd: tiny CPU benchmarks run on "the remote" (this machine).

Covers the whole SSH path (wait for ssh, install check, bench run, fetch, validate,
record where it ran), its faults (sshd gone mid-run, wrong key, a failing benchmark),
and resume after a crash.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from benchmarks.results import load_results, read_result
from benchmarks.sweep import state as st
from benchmarks.sweep.orchestrate import SweepRun
from benchmarks.sweep.preview import NoData, preview_sweep
from benchmarks.sweep.spec import load_spec
from tests.benchmarks.sweep.conftest import (
    ONE_RUN,
    ROOT,
    only_state,
    spec_text,
    ssh_target,
    sweep_cli,
)
from tests.sshd import SshServer


def start_sweep(spec_path: Path, results: Path, ssh_options: list[str]) -> SweepRun:
    """A SweepRun with a fresh state, as `gpuplan sweep run --yes` makes it."""
    spec = load_spec(spec_path)
    preview = preview_sweep(spec, NoData())
    state = st.StateFile(st.new_state(
        st.new_sweep_id(spec.name), str(spec_path), spec.raw, str(results),
        [t.label for t in spec.targets], [r.key for r in spec.runs],
        [t.usd_per_hour for t in preview.targets],
    ))  # fmt: skip
    state.save()
    return SweepRun(spec, state, preview, results, ssh_options=ssh_options, ssh_wait_s=5)


@pytest.mark.slow  # real benchmark processes over ssh
def test_ssh_sweep_collects_every_result_and_resumes_only_unfinished_runs(
    sshd: SshServer, sweep_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUPLAN_SSH_OPTIONS", f"-F {sshd.client_config}")
    spec = tmp_path / "loop.toml"
    spec.write_text(spec_text(ssh_target(sshd.alias)))  # the ~/.ssh/config-style alias
    results = tmp_path / "results"
    outcome = sweep_cli("run", str(spec), "--yes", "--results", str(results))
    assert outcome.exit_code == 0, outcome.output
    state = only_state(sweep_dir)
    assert state["status"] == "finished"
    target = state["targets"][0]
    assert target["state"] == "done" and target["reason"] is None
    files = sorted((results / state["id"]).glob("*.json"))
    assert len(files) == 2
    batches = set()
    for path in files:
        result = read_result(path)  # schema-valid
        assert result.schema_version == 3
        assert result.sweep == {
            "sweep_id": state["id"], "backend": "ssh", "cloud": None, "region": None,
            "instance_type": None, "spot": False,
        }  # fmt: skip
        assert result.workload == "gpt" and result.device == "cpu" and result.throughput > 0
        batches.add(result.batch_size_per_device)
    assert batches == {2, 4}
    ids = {i for r in target["runs"].values() for i in r["result_ids"]}
    assert ids == {p.stem for p in files}
    listed = sweep_cli("list")
    assert state["id"] in listed.output and "2/2" not in listed.output  # 1 target, 2 results
    shown = sweep_cli("status", state["id"])
    assert "done" in shown.output and "2/2" in shown.output

    # Then the controller "crashes" during the second run: that run is still pending,
    # its file never arrived, the target and the sweep still say running. A resume
    # runs that one run only and keeps the first result as it was.
    path = st.state_path(state["id"])
    data = json.loads(path.read_text())
    target = data["targets"][0]
    first_key, second_key = target["runs"]
    lost = target["runs"][second_key]["result_ids"][0]
    (results / state["id"] / f"{lost}.json").unlink()
    target["runs"][second_key] = {"status": "running", "result_ids": [], "error": None}
    target.update(state="running", detail=f"run 2 of 2: {second_key}", terminated_at=None)
    data["status"] = "running"
    path.write_text(json.dumps(data))
    kept = results / state["id"] / f"{target['runs'][first_key]['result_ids'][0]}.json"
    kept_text = kept.read_text()

    outcome = sweep_cli("resume", state["id"], "--yes")
    assert outcome.exit_code == 0, outcome.output
    assert f"run 1 of 1: {second_key}" in outcome.output  # only the unfinished run
    assert "run 1 of 2" not in outcome.output
    state = only_state(sweep_dir)
    runs = state["targets"][0]["runs"]
    assert state["status"] == "finished"
    assert runs[first_key]["result_ids"] == [kept.stem]
    assert runs[second_key]["status"] == "done" and runs[second_key]["result_ids"] != [lost]
    assert kept.read_text() == kept_text
    assert len(list((results / state["id"]).glob("*.json"))) == 2


@pytest.mark.slow  # real benchmark processes over ssh
def test_sshd_stopped_mid_run_fails_that_target_only(
    sshd_factory: Any, sweep_dir: Path, tmp_path: Path
) -> None:
    first, second = sshd_factory("box-a"), sshd_factory("box-b")
    spec_path = tmp_path / "two.toml"
    targets = ssh_target("box-a") + ssh_target("box-b")
    spec_path.write_text(spec_text(targets))
    known = tmp_path / "known_hosts"
    known.write_text(first.known_hosts.read_text() + second.known_hosts.read_text())
    options = ["-F", str(tmp_path / "ssh_config")]
    (tmp_path / "ssh_config").write_text(
        first.client_config.read_text().split("Host *")[0]
        + second.client_config.read_text().split("Host *")[0]
        + f"Host *\n  UserKnownHostsFile {known}\n  StrictHostKeyChecking yes\n"
    )
    sweep = start_sweep(spec_path, tmp_path / "results", options)

    def on_event(index: int, text: str) -> None:
        if index == 0 and text.startswith("collected"):
            first.stop()  # box-a goes away after its first run

    sweep.on_event = on_event
    assert sweep.run() == 1
    state = only_state(sweep_dir)
    a, b = state["targets"]
    assert a["state"] == "failed"
    assert "connection refused" in a["reason"] and "box-a" in a["reason"]
    assert [r["status"] for r in a["runs"].values()] == ["done", "pending"]
    assert b["state"] == "done"
    assert all(r["status"] == "done" for r in b["runs"].values())
    results, problems = load_results(tmp_path / "results")
    assert len(results) == 3 and not problems


def test_wrong_key_is_a_clear_error(sshd: SshServer, sweep_dir: Path, tmp_path: Path) -> None:
    extra = (
        f'port = {sshd.port}\nuser = "{sshd.user}"\nidentity_file = "{sshd.wrong_identity_file}"\n'
    )
    spec_path = tmp_path / "key.toml"
    spec_path.write_text(spec_text(ssh_target("127.0.0.1", extra)))
    options = ["-o", f"UserKnownHostsFile={sshd.known_hosts}", "-o", "StrictHostKeyChecking=yes"]
    sweep = start_sweep(spec_path, tmp_path / "results", options)
    assert sweep.run() == 1
    target = only_state(sweep_dir)["targets"][0]
    assert target["state"] == "failed"
    assert "Permission denied" in target["reason"]
    assert "check identity_file and user" in target["reason"]
    assert not (tmp_path / "results").exists()


def test_a_failing_remote_benchmark_shows_its_stderr_tail(
    sshd: SshServer, sweep_dir: Path, tmp_path: Path
) -> None:
    runs = """
[[runs]]
workload = "gpt"
size = "tiny"
device = "cuda"
steps = 2
warmup = 1
"""
    spec_path = tmp_path / "fail.toml"
    spec_path.write_text(spec_text(ssh_target(sshd.alias), runs))
    sweep = start_sweep(spec_path, tmp_path / "results", sshd.ssh_options)
    assert sweep.run() == 1
    target = only_state(sweep_dir)["targets"][0]
    (cuda,) = target["runs"].values()
    assert cuda["status"] == "failed" and cuda["result_ids"] == []
    # The remote `bench run` refused: its own message comes back in the reason.
    assert "no CUDA GPU is visible to torch" in cuda["error"]
    assert "no CUDA GPU is visible to torch" in target["reason"]


@pytest.mark.slow  # real benchmark processes over ssh
def test_two_targets_on_one_host_keep_their_own_remote_folders(
    sshd: SshServer, sweep_dir: Path, tmp_path: Path
) -> None:
    # Same host, same user, same remote_dir, running at once: each target gets its own
    # folder, so neither fetches, deletes or overwrites the other's result files.
    remote = tmp_path / "remote"
    shared = f'remote_dir = "{remote}"\n'
    targets = ssh_target(sshd.alias, f'label = "a"\n{shared}') + ssh_target(
        sshd.alias, f'label = "b"\n{shared}'
    )
    spec_path = tmp_path / "same-host.toml"
    spec_path.write_text(spec_text(targets, parallel=2))
    sweep = start_sweep(spec_path, tmp_path / "results", sshd.ssh_options)
    assert sweep.run() == 0
    state = only_state(sweep_dir)
    ids = []
    for target in state["targets"]:
        assert target["state"] == "done", target["reason"]
        for run in target["runs"].values():
            assert run["status"] == "done" and len(run["result_ids"]) == 1
            ids += run["result_ids"]
    assert len(set(ids)) == 4
    assert {p.stem for p in (tmp_path / "results" / state["id"]).glob("*.json")} == set(ids)
    folders = sorted(p.name for p in (remote / state["id"]).iterdir())
    assert folders == ["t0-a", "t1-b"]
    for folder in folders:
        assert len(list((remote / state["id"] / folder / "runs").glob("*/*.json"))) == 2


def processes_naming(text: str) -> dict[int, list[str]]:
    """pid -> argv of every process (but this one) with `text` in its command line."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if any(text in arg for arg in argv):
            found[int(entry.name)] = argv
    return found


@pytest.mark.slow  # a real benchmark process over ssh
def test_kill_9_of_the_sweep_ends_its_remote_benchmark(
    sshd: SshServer, sweep_dir: Path, tmp_path: Path, remote_dir_in_tmp: Path
) -> None:
    spec_path = tmp_path / "long.toml"
    spec_path.write_text(
        spec_text(ssh_target(sshd.alias), ONE_RUN.replace("steps = 2", "steps = 1000000"))
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GPUPLAN_SSH_OPTIONS": f"-F {sshd.client_config}"}
    argv = [sys.executable, "-m", "planner.cli.main", "sweep", "run", str(spec_path), "--yes",
            "--results", str(tmp_path / "results")]  # fmt: skip
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    marker = str(remote_dir_in_tmp)  # on every command line of this sweep's remote runs
    try:
        deadline = time.monotonic() + 60
        while not [a for a in processes_naming(marker).values() if "planner.cli.main" in a]:
            assert proc.poll() is None and time.monotonic() < deadline, "no remote benchmark"
            time.sleep(0.2)
        proc.kill()  # kill -9: no Ctrl-C handling, no teardown
        proc.wait()
        deadline = time.monotonic() + 10
        while processes_naming(marker) and time.monotonic() < deadline:
            time.sleep(0.2)
        # The benchmark, its remote shell and the ssh client (its own session) all ended.
        assert processes_naming(marker) == {}
    finally:
        proc.kill()
        for pid in processes_naming(marker):  # only what this test started, by its id
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
