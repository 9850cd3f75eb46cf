"""Cloud targets through a Provisioner (an in-memory fake whose machines are the loopback
sshd): launch arguments, the dead-man switch, teardown after success, failure and
Ctrl-C, the dollar cap, and cleanup of what a dead controller left running."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.results import load_results
from benchmarks.sweep import state as st
from benchmarks.sweep.backends import provisioner_for, register
from benchmarks.sweep.spec import load_spec
from benchmarks.sweep.startup import dead_man_script, gcp_self_delete_script
from tests.benchmarks.sweep.conftest import ONE_RUN, REMOTE, only_state, spec_text, sweep_cli
from tests.benchmarks.sweep.fakes import FakeProvisioner, log_events
from tests.sshd import SshServer

HERE = Path(__file__).resolve().parent


def aws_target(instance_type: str = "g5.xlarge", region: str = "us-east-1", extra: str = "") -> str:
    return (
        f'[[targets]]\nbackend = "aws"\ninstance_type = "{instance_type}"\n'
        f'region = "{region}"\n{REMOTE}{extra}\n'
    )


@pytest.fixture()
def fake(sshd: SshServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The aws backend is a FakeProvisioner whose machines are the loopback sshd."""
    provisioner = FakeProvisioner(
        port=sshd.port, user=sshd.user, identity_file=str(sshd.identity_file),
        log_path=str(tmp_path / "fake.log"),
    )  # fmt: skip
    register("aws", lambda **_: provisioner)
    known = f"-o UserKnownHostsFile={sshd.known_hosts} -o StrictHostKeyChecking=yes"
    monkeypatch.setenv("GPUPLAN_SSH_OPTIONS", known)
    yield provisioner
    register("aws", None)


def test_registry_imports_the_cloud_module_only_when_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import types

    from benchmarks.runners.machine import ProvisionError
    from benchmarks.sweep import backends

    register("aws", None)
    module = types.ModuleType("benchmarks.runners.aws")
    module.make_provisioner = lambda **opts: ("made", opts)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "benchmarks.runners.aws", module)
    assert provisioner_for("aws", profile="x") == ("made", {"profile": "x"})
    monkeypatch.setitem(backends.MODULES, "gcp", "benchmarks.runners.no_such_cloud")
    with pytest.raises(ProvisionError, match="has no gcp provisioner"):
        provisioner_for("gcp")
    with pytest.raises(ProvisionError, match="launches no machines"):
        provisioner_for("ssh")
    fake = FakeProvisioner()
    register("aws", lambda **_: fake)
    assert provisioner_for("aws") is fake  # a registered factory wins over the module
    register("aws", None)


def test_dead_man_script_powers_off_on_its_own() -> None:
    script = dead_man_script(44.2, "demo-1")
    assert script.startswith("#!/bin/sh")
    assert "shutdown -h +45 " in script
    assert "systemd-run --on-active=45m" in script
    assert "sleep 2700; poweroff" in script
    result = subprocess.run(["sh", "-n", "-c", script], capture_output=True, check=False)
    assert result.returncode == 0, result.stderr


TIMER = "systemd-run --on-active=45m --unit=gpuplan-dead-man"


@pytest.mark.parametrize(
    ("working", "expected"),
    [
        ({"systemd-run", "shutdown"}, [TIMER]),
        ({"shutdown"}, [TIMER, "shutdown -h +45"]),
        (set(), [TIMER, "shutdown -h +45", "sleep 2700", "poweroff"]),
    ],
    ids=["systemd", "no-systemd", "neither"],
)
def test_dead_man_script_prefers_a_timer_that_keeps_logins_open(
    tmp_path: Path, working: set[str], expected: list[str]
) -> None:
    """`shutdown -h +N` refuses non-root logins (/run/nologin) for its last five minutes, so
    the transient systemd timer is tried first; the others only where it fails."""
    fakes, log = tmp_path / "bin", tmp_path / "calls.log"
    fakes.mkdir()
    for name in ("systemd-run", "shutdown", "sleep", "poweroff"):
        rc = 0 if name in working or name in ("sleep", "poweroff") else 1
        words = "$1 $2" if name != "poweroff" else ""
        (fakes / name).write_text(f'#!/bin/sh\necho "{name} {words}" >> {log}\nexit {rc}\n')
        (fakes / name).chmod(0o755)
    script = dead_man_script(44.2, "demo-1").replace("/sbin/poweroff", "poweroff")
    env = {"PATH": f"{fakes}:/usr/bin:/bin", **dead_man_sandbox(tmp_path)}
    subprocess.run(["sh", "-c", script], env=env, check=True, timeout=30)
    for _ in range(100):  # the last resort runs in the background
        calls = [c.strip() for c in log.read_text().splitlines()] if log.exists() else []
        if len(calls) >= len(expected):
            break
        time.sleep(0.05)
    assert calls == expected


def dead_man_sandbox(tmp_path: Path) -> dict[str, str]:
    """The dead-man script's files go into `tmp_path`, and systemctl and crontab are fakes
    that log their arguments: a test never arms anything on this machine."""
    fakes = tmp_path / "bin"
    fakes.mkdir(exist_ok=True)
    for name in ("systemctl", "crontab"):
        (fakes / name).write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / name}.log\n')
        (fakes / name).chmod(0o755)
    (tmp_path / "units").mkdir(exist_ok=True)
    return {
        "GPUPLAN_DEAD_MAN_DIR": str(tmp_path / "dead-man"),
        "GPUPLAN_DEAD_MAN_UNITS": str(tmp_path / "units"),
    }


def run_rearm(tmp_path: Path, seconds_left: int) -> list[str]:
    """Run the re-arm script as a later boot would, `seconds_left` before the deadline;
    the calls it made (through fakes that log them)."""
    log = tmp_path / "rearm.log"
    log.unlink(missing_ok=True)
    fakes = tmp_path / "rearm-bin"
    fakes.mkdir(exist_ok=True)
    for name in ("systemd-run", "shutdown", "poweroff"):
        (fakes / name).write_text(f'#!/bin/sh\necho "{name} $*" >> {log}\n')
        (fakes / name).chmod(0o755)
    (tmp_path / "dead-man" / "deadline").write_text(f"{int(time.time()) + seconds_left}\n")
    env = {"PATH": f"{fakes}:/usr/bin:/bin"}
    script = tmp_path / "dead-man" / "rearm"
    subprocess.run(["sh", str(script)], env=env, check=True, timeout=30)
    return log.read_text().splitlines() if log.exists() else []


def test_the_aws_dead_man_switch_is_armed_again_after_a_reboot(tmp_path: Path) -> None:
    """A transient timer does not survive a reboot: the first boot writes the deadline and
    a re-arm script run at every boot (systemd unit), which arms the switch for the time
    left, or powers off at once when the deadline has passed."""
    env = {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", **dead_man_sandbox(tmp_path)}
    for name in ("systemd-run", "shutdown", "sleep", "poweroff"):
        (tmp_path / "bin" / name).write_text("#!/bin/sh\n")
        (tmp_path / "bin" / name).chmod(0o755)
    before = int(time.time())
    subprocess.run(["sh", "-c", dead_man_script(44.2, "demo-1")], env=env, check=True, timeout=30)
    deadline = int((tmp_path / "dead-man" / "deadline").read_text())
    assert before + 2700 <= deadline <= int(time.time()) + 2700
    unit = (tmp_path / "units" / "gpuplan-dead-man-rearm.service").read_text()
    assert f"ExecStart={tmp_path / 'dead-man'}/rearm" in unit and "WantedBy=multi-user" in unit
    assert (tmp_path / "systemctl.log").read_text().split() == [
        "enable", "gpuplan-dead-man-rearm.service",
    ]  # fmt: skip
    # A second run (cloud-init runs user data once; a re-run must not move the deadline).
    subprocess.run(["sh", "-c", dead_man_script(44.2, "demo-1")], env=env, check=True, timeout=30)
    assert int((tmp_path / "dead-man" / "deadline").read_text()) == deadline
    (call,) = run_rearm(tmp_path, 600)
    left = int(call.split("--on-active=")[1].split("s ")[0])
    assert 590 <= left <= 600 and call.endswith("--unit=gpuplan-dead-man /sbin/poweroff")
    assert run_rearm(tmp_path, -5) == ["poweroff "]


def test_without_systemd_the_dead_man_switch_is_rearmed_by_cron(tmp_path: Path) -> None:
    env = {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", **dead_man_sandbox(tmp_path)}
    (tmp_path / "bin" / "systemctl").unlink()
    (tmp_path / "units").rmdir()
    for name in ("systemd-run", "shutdown", "sleep", "poweroff"):
        (tmp_path / "bin" / name).write_text("#!/bin/sh\n")
        (tmp_path / "bin" / name).chmod(0o755)
    crontab = tmp_path / "bin" / "crontab"  # `crontab -` reads the new table from stdin
    crontab.write_text(f'#!/bin/sh\n[ "$1" = - ] && cat >> {tmp_path}/crontab.txt\nexit 0\n')
    subprocess.run(["sh", "-c", dead_man_script(10, "demo-1")], env=env, check=True, timeout=30)
    line = (tmp_path / "crontab.txt").read_text().strip()
    assert line == f"@reboot PATH=/usr/sbin:/sbin:/usr/bin:/bin {tmp_path / 'dead-man'}/rearm"


def test_gcp_dead_man_script_deletes_the_instance_and_falls_back_to_power_off() -> None:
    script = dead_man_script(44.2, "demo-1", "gcp")
    action = gcp_self_delete_script("demo-1")
    assert f"<<'GPUPLAN_EOF'\n{action}GPUPLAN_EOF\n" in script  # written as is, unexpanded
    assert "systemd-run --on-active=45m --unit=gpuplan-dead-man /run/gpuplan-dead-man" in script
    assert "sleep 2700; /run/gpuplan-dead-man" in script
    assert "shutdown -h +48 " in script  # power-off if gcloud hangs
    assert "gcloud" not in dead_man_script(44.2, "demo-1", "aws")
    result = subprocess.run(["sh", "-n", "-c", script], capture_output=True, check=False)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("metadata_ok", "gcloud_rc", "expected"),
    [
        (
            True,
            0,
            ["gcloud compute instances delete vm-1 --zone us-central1-a --quiet", "poweroff"],
        ),
        (
            True,
            1,
            ["gcloud compute instances delete vm-1 --zone us-central1-a --quiet", "poweroff"],
        ),
        (False, 0, ["poweroff"]),  # no metadata server: no name to delete, power off
    ],
)
def test_gcp_self_delete_runs_gcloud_with_the_metadata_zone_else_powers_off(
    tmp_path: Path, metadata_ok: bool, gcloud_rc: int, expected: list[str]
) -> None:
    fakes, log = tmp_path / "bin", tmp_path / "calls.log"
    fakes.mkdir()
    curl = (
        'case "$*" in *instance/name) echo vm-1;; *instance/zone) '
        "echo projects/123/zones/us-central1-a;; esac"
        if metadata_ok
        else "exit 7"
    )
    for name, body in {
        "curl": curl,
        "gcloud": f'echo "gcloud $*" >> {log}; exit {gcloud_rc}',
        "poweroff": f"echo poweroff >> {log}",
    }.items():
        (fakes / name).write_text(f"#!/bin/sh\n{body}\n")
        (fakes / name).chmod(0o755)
    action = tmp_path / "action.sh"
    action.write_text(gcp_self_delete_script("demo-1"))
    # PATH without /sbin and /usr/sbin: only the fake poweroff can be found.
    env = {"PATH": f"{fakes}:/usr/bin:/bin"}
    subprocess.run(["sh", str(action)], env=env, check=True, timeout=30)
    assert log.read_text().splitlines() == expected


def test_worst_case_over_the_cap_is_refused_with_the_figures(
    fake: FakeProvisioner, sweep_dir: Path, tmp_path: Path
) -> None:
    spec = tmp_path / "big.toml"
    spec.write_text(spec_text(aws_target("p4d.24xlarge"), max_usd=1))
    outcome = sweep_cli("run", str(spec), "--yes", "--results", str(tmp_path / "r"))
    assert outcome.exit_code == 2
    # p4d.24xlarge in us-east-1: $21.9576/h x 10 min = $3.66 worst case
    assert "worst case $3.66" in outcome.output
    assert (
        "exceeds limits.max_usd $1.00" in outcome.output and "nothing was started" in outcome.output
    )
    assert "≥ 2025-06-01" in outcome.output  # the price's date: a lower bound
    assert not sweep_dir.exists() or not list(sweep_dir.iterdir())
    assert log_events(tmp_path / "fake.log") == []


@pytest.mark.slow  # real benchmark processes over ssh
def test_cloud_target_is_launched_tagged_measured_and_terminated(
    fake: FakeProvisioner, sweep_dir: Path, tmp_path: Path
) -> None:
    spec = tmp_path / "cloud.toml"
    capacity = aws_target("p4d.24xlarge", extra='label = "no-capacity"')
    spec.write_text(spec_text(aws_target() + capacity, ONE_RUN, max_usd=5, parallel=1))
    real_launch = fake.launch

    def launch(request: Any) -> Any:
        if request.target.instance_type == "p4d.24xlarge":
            from benchmarks.runners.machine import ProvisionError

            raise ProvisionError("InsufficientInstanceCapacity: no p4d.24xlarge in us-east-1a")
        return real_launch(request)

    fake.launch = launch  # type: ignore[method-assign]
    before = dt.datetime.now(dt.UTC)
    outcome = sweep_cli("run", str(spec), "--yes", "--results", str(tmp_path / "results"))
    assert outcome.exit_code == 1, outcome.output
    state = only_state(sweep_dir)
    ok, failed = state["targets"]
    assert ok["state"] == "done" and ok["terminated_at"] and ok["launched_at"]
    assert failed["state"] == "failed" and "InsufficientInstanceCapacity" in failed["reason"]
    (launch_event,) = [e for e in log_events(tmp_path / "fake.log") if e["event"] == "launch"]
    assert launch_event["sweep_id"] == state["id"]
    expires = dt.datetime.fromisoformat(launch_event["expires_at"])
    assert before + dt.timedelta(minutes=9) < expires < before + dt.timedelta(minutes=12)
    assert "shutdown -h +10" in launch_event["startup_script"]
    assert fake.is_terminated(st.machine_from_dict(ok["machine"]))  # type: ignore[arg-type]
    assert fake.find_launched(["us-east-1"]) == []
    (result,), problems = load_results(tmp_path / "results")
    assert not problems
    assert result.sweep == {
        "sweep_id": state["id"], "backend": "aws", "cloud": "aws", "region": "us-east-1",
        "instance_type": "g5.xlarge", "spot": False,
    }  # fmt: skip
    # g5.xlarge is priced, so the spend is the price times the time it was up.
    assert ok["usd_per_hour"] == pytest.approx(1.006)
    assert st.spend_usd(ok) < 1.006 * 10 / 60


def _one_run_spec(tmp_path: Path, name: str, max_usd: float) -> Path:
    """A spec of one AWS target and ONE_RUN, one target at a time, saved as tmp_path/name."""
    spec_path = tmp_path / name
    spec_path.write_text(spec_text(aws_target(), ONE_RUN, max_usd=max_usd, parallel=1))
    return spec_path


def _saved_state(spec_path: Path, tmp_path: Path, prices: list[float | None]) -> st.StateFile:
    spec = load_spec(spec_path)
    data = st.new_state(
        "cap-20261130t000000-ab12", str(spec_path), spec.raw, str(tmp_path / "r"),
        [t.label for t in spec.targets], [r.key for r in spec.runs], prices,
    )  # fmt: skip
    state_file = st.StateFile(data)
    state_file.save()
    return state_file


def test_resume_refuses_when_spent_plus_the_worst_case_left_would_pass_the_cap(
    fake: FakeProvisioner, sweep_dir: Path, tmp_path: Path
) -> None:
    spec_path = _one_run_spec(tmp_path, "cap.toml", max_usd=0.2)
    state_file = _saved_state(spec_path, tmp_path, [1.006])
    # An earlier attempt of this target already cost $0.10; its worst case is $0.17.
    state_file.update_target(0, state="failed", spent_before_usd=0.10)
    outcome = sweep_cli("resume", state_file.data["id"], "--yes")
    assert outcome.exit_code == 2
    assert "$0.10 already spent + worst case $0.17" in outcome.output
    assert "exceeds limits.max_usd $0.20; nothing was started" in outcome.output
    assert log_events(tmp_path / "fake.log") == []  # nothing launched
    assert only_state(sweep_dir)["targets"][0]["state"] == "failed"  # the state is untouched


def test_resume_refuses_a_target_whose_price_is_no_longer_known(
    fake: FakeProvisioner, sweep_dir: Path, tmp_path: Path
) -> None:
    """Before, an unpriced instance type was launched on resume: its worst case counted $0."""
    spec_path = _one_run_spec(tmp_path, "gone.toml", max_usd=60)
    state_file = _saved_state(spec_path, tmp_path, [1.006])
    state_file.update_target(0, state="failed")
    # The saved spec names an instance type the catalog no longer prices.
    state_file.data["spec"]["targets"][0]["instance_type"] = "g5.nosuchsize"
    state_file.save()
    outcome = sweep_cli("resume", state_file.data["id"], "--yes")
    assert outcome.exit_code == 2
    assert "not resumed" in outcome.output and "g5.nosuchsize" in outcome.output
    assert log_events(tmp_path / "fake.log") == []


def test_an_unknown_worst_case_is_a_refusal_not_zero_dollars(
    fake: FakeProvisioner, sweep_dir: Path, tmp_path: Path
) -> None:
    """The orchestrator's own admission check, whatever the CLI checked before it."""
    import dataclasses

    from benchmarks.sweep.orchestrate import SweepRun
    from benchmarks.sweep.preview import NoData, preview_sweep

    spec_path = _one_run_spec(tmp_path, "unpriced.toml", max_usd=60)
    spec = load_spec(spec_path)
    preview = preview_sweep(spec, NoData())
    assert preview.targets[0].worst_usd is None  # nothing prices it
    state_file = _saved_state(spec_path, tmp_path, [None])
    run = SweepRun(spec, state_file, dataclasses.replace(preview), tmp_path / "r")
    assert run.run() == 1
    target = state_file.target(0)
    assert target["state"] == "skipped" and "price is unknown" in target["reason"]
    assert log_events(tmp_path / "fake.log") == []


def test_cleanup_terminates_what_a_dead_controller_left_running(
    fake: FakeProvisioner, sweep_dir: Path, tmp_path: Path
) -> None:
    from benchmarks.runners.machine import CloudTarget, Launch

    sweep_id = "crashed-20261130t000000-ab12"
    left = fake.launch(Launch(CloudTarget("aws", "g5.xlarge", "us-east-1"), sweep_id,
                       dt.datetime.now(dt.UTC), "#!/bin/sh", "x"))  # fmt: skip
    data = st.new_state(sweep_id, "s.toml", {"name": "crashed"}, str(tmp_path), ["t"], ["r"], [1.0])
    data["targets"][0].update(machine=st.machine_to_dict(left), launched_at=st.iso(st.utc_now()))
    st.StateFile(data).save()
    dry = sweep_cli("cleanup", sweep_id, "--dry-run")
    assert dry.exit_code == 0 and f"{left.instance_id}: still up (would terminate)" in dry.output
    assert not fake.is_terminated(left)
    done = sweep_cli("cleanup")
    assert done.exit_code == 0
    assert f"{left.instance_id}: confirmed down (terminated now)" in done.output
    assert fake.is_terminated(left) and fake.find_launched(["us-east-1"]) == []
    assert "no gpuplan machines running" in sweep_cli("cleanup", sweep_id).output


def test_ctrl_c_tears_down_every_launched_machine_and_exits_130(
    sshd: SshServer, tmp_path: Path
) -> None:
    spec = tmp_path / "int.toml"
    spec.write_text(spec_text(aws_target() + aws_target(region="us-east-2"), ONE_RUN, parallel=2))
    log = tmp_path / "fake.log"
    sweeps = tmp_path / "sweeps"
    env = {
        **os.environ, "FAKE_LOG": str(log), "FAKE_HANG_S": "30", "FAKE_SSH_PORT": str(sshd.port),
        "GPUPLAN_SWEEP_DIR": str(sweeps), "PYTHONUNBUFFERED": "1",
    }  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "sweep_with_fake.py"), "sweep", "run", str(spec), "--yes",
         "--results", str(tmp_path / "results")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while len([e for e in log_events(log) if e["event"] == "launch"]) < 2:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[0]
        time.sleep(0.1)
    time.sleep(0.3)  # both launches recorded in the state file
    proc.send_signal(signal.SIGINT)
    output, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, output
    events = log_events(log)
    launched = {e["id"] for e in events if e["event"] == "launch"}
    terminated = {e["id"] for e in events if e["event"] == "terminate"}
    assert len(launched) == 2 and launched <= terminated
    ids = ", ".join(sorted(launched))
    assert f"interrupted: 2 machine(s) confirmed terminated ({ids})" in output
    assert "may still be running" not in output
    state = json.loads(next(sweeps.glob("*.json")).read_text())  # intact JSON
    assert state["status"] == "interrupted"
    for target in state["targets"]:
        assert target["state"] == "interrupted" and target["terminated_at"]


def test_registry_finds_the_aws_and_gcp_runners() -> None:
    register("aws", None)
    register("gcp", None)
    aws = provisioner_for("aws", poll_s=1.0)
    gcp = provisioner_for("gcp", project="gpuplan-test")
    assert type(aws).__name__ == "AwsProvisioner" and aws.backend == "aws"
    assert type(gcp).__name__ == "GcpProvisioner" and gcp.backend == "gcp"
