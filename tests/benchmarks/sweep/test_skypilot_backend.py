"""The `skypilot` sweep backend: spec, preview and cap, the task it hands SkyPilot, the
provisioner's calls, a whole sweep whose cluster is the loopback sshd, and SkyPilot's own
dry run (the real package, in a subprocess with its HOME in a temporary folder) on
catalog files built from gpuplan's price snapshots."""

from __future__ import annotations

import csv
import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.results import load_results
from benchmarks.runners.machine import CloudTarget, Launch, ProvisionError
from benchmarks.runners.skypilot import IDLE_MINUTES, SkyPilotProvisioner, task_config
from benchmarks.sweep import state as st
from benchmarks.sweep.backends import provisioner_for, register
from benchmarks.sweep.preview import preview_sweep
from benchmarks.sweep.spec import SpecError, load_spec
from planner.sweep_preview import CatalogSweepData
from tests.benchmarks.sweep.conftest import ONE_RUN, REMOTE, only_state, spec_text, sweep_cli
from tests.conftest import ROOT
from tests.sshd import SshServer

HERE = Path(__file__).resolve().parent
SNAPSHOT = ROOT / "pricing" / "snapshots" / "lambda-2025-01-01.csv"
LAMBDA = 'cloud = "lambda"\nregion = "us-east-1"\ninstance_type = "gpu_8x_a100_80gb_sxm4"\n'
NEBIUS_SNAPSHOT = ROOT / "pricing" / "snapshots" / "nebius-2025-01-01.csv"
NEBIUS_TYPE = "gpu-h100-sxm_8gpu-128vcpu-1600gb"
NEBIUS = f'cloud = "nebius"\nregion = "eu-north1"\ninstance_type = "{NEBIUS_TYPE}"\n'


def sky_target(body: str = LAMBDA, extra: str = "") -> str:
    return f'[[targets]]\nbackend = "skypilot"\n{body}{extra}\n'


def write_spec(tmp_path: Path, targets: str, runs: str = ONE_RUN, max_usd: float = 50) -> Path:
    path = tmp_path / "sky.toml"
    path.write_text(spec_text(targets, runs, max_usd=max_usd))
    return path


# -- spec and preview --------------------------------------------------------------------


def test_a_skypilot_target_names_its_cloud_and_what_to_launch(tmp_path: Path) -> None:
    k8s = 'cloud = "kubernetes"\naccelerators = "H100:8"\nusd_per_hour = 20.0\n'
    spec = load_spec(write_spec(tmp_path, sky_target() + sky_target(k8s)))
    lam, kube = spec.targets
    assert (lam.backend, lam.cloud, lam.region, lam.instance_type) == (
        "skypilot", "lambda", "us-east-1", "gpu_8x_a100_80gb_sxm4",
    )  # fmt: skip
    assert lam.is_cloud and lam.provider == "lambda"
    assert lam.label == "skypilot:lambda:us-east-1:gpu_8x_a100_80gb_sxm4"
    assert (kube.accelerators, kube.region, kube.usd_per_hour) == ("H100:8", None, 20.0)


@pytest.mark.parametrize(
    ("body", "key", "words"),
    [
        ('instance_type = "gpu_1x_a10"\n', "cloud", "required for backend 'skypilot'"),
        ('cloud = "lamda"\ninstance_type = "x"\n', "cloud", "did you mean 'lambda'"),
        ('cloud = "lambda"\n', "instance_type", "or accelerators (e.g. 'H100:8')"),
        ('cloud = "lambda"\naccelerators = "H100 x8"\n', "accelerators", "e.g. 'H100:8'"),
        (LAMBDA + 'key_name = "k"\n', "key_name", "unknown key"),
        (LAMBDA + 'pip_constraints = "/no/such/file.txt"\n', "pip_constraints", "constraints"),
    ],
)
def test_a_bad_skypilot_target_is_refused_naming_the_key(
    tmp_path: Path, body: str, key: str, words: str
) -> None:
    with pytest.raises(SpecError) as info:
        load_spec(write_spec(tmp_path, sky_target(body)))
    assert info.value.key == f"targets[0].{key}"
    assert words in str(info.value)


def lambda_price(instance_type: str, region: str) -> float:
    with SNAPSHOT.open() as handle:
        for row in csv.DictReader(handle):
            if (row["instance_type"], row["region"]) == (instance_type, region):
                return float(row["usd_per_hour"])
    raise AssertionError("not in the snapshot")


def test_the_preview_prices_a_skypilot_target_from_the_catalog_and_caps_it(
    tmp_path: Path,
) -> None:
    k8s = 'cloud = "kubernetes"\naccelerators = "H100:8"\nusd_per_hour = 20.0\n'
    spec = load_spec(write_spec(tmp_path, sky_target() + sky_target(k8s)))
    preview = preview_sweep(spec, CatalogSweepData())
    lam, kube = preview.targets
    assert lam.usd_per_hour == lambda_price("gpu_8x_a100_80gb_sxm4", "us-east-1")
    assert lam.priced_at == "2025-01-01" and "lambda/vms.csv" in lam.price_source
    assert lam.gpu_name == "A100-SXM-80GB" and lam.gpu_count == 8
    assert lam.worst_usd == pytest.approx(lam.usd_per_hour * 10 / 60)
    assert (kube.usd_per_hour, kube.price_source) == (20.0, "usd_per_hour in the spec")
    assert preview.within_cap and not preview.problems


def test_an_unpriced_skypilot_target_is_refused_before_anything_starts(
    tmp_path: Path, sweep_dir: Path
) -> None:
    spec_path = write_spec(tmp_path, sky_target('cloud = "kubernetes"\naccelerators = "L4:1"\n'))
    outcome = sweep_cli("run", str(spec_path), "--yes")
    assert outcome.exit_code == 2
    assert "give instance_type and region of a priced cloud, or usd_per_hour" in outcome.output
    assert not sweep_dir.exists()  # no sweep was started


def test_sweep_plan_of_the_skypilot_example_prices_each_target() -> None:
    outcome = sweep_cli("plan", str(ROOT / "examples" / "sweep-skypilot.toml"), "--format", "json")
    assert outcome.exit_code == 0, outcome.output
    shown = json.loads(outcome.output)
    backends = {t["backend"] for t in shown["targets"]}
    assert backends == {"skypilot"}
    assert all(t["usd_per_hour"] and t["worst_usd"] for t in shown["targets"])
    assert shown["within_cap"] is True


# -- the task and the provisioner ----------------------------------------------------------


def lambda_cloud_target(**extra: Any) -> CloudTarget:
    fields: dict[str, Any] = {"backend": "skypilot", "instance_type": "gpu_8x_a100_80gb_sxm4",
                              "region": "us-east-1", "cloud": "lambda"}  # fmt: skip
    return CloudTarget(**{**fields, **extra})


def test_the_task_pins_every_resource_given_and_ends_at_the_deadline() -> None:
    expires = dt.datetime(2026, 12, 1, 12, 30, tzinfo=dt.UTC)
    mounts = (("~/.gpuplan-sweep/w/gpuplan.whl", "/tmp/gpuplan.whl"),)
    config = task_config(lambda_cloud_target(file_mounts=mounts), "gpuplan-s-0", expires, "s")
    assert config["resources"] == {
        "cloud": "lambda", "region": "us-east-1", "instance_type": "gpu_8x_a100_80gb_sxm4",
        "use_spot": False,
    }  # fmt: skip
    assert config["file_mounts"] == {"~/.gpuplan-sweep/w/gpuplan.whl": "/tmp/gpuplan.whl"}
    # The run job sleeps until the deadline: run it with the deadline just past.
    just_past = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=5)
    past = task_config(lambda_cloud_target(), "n", just_past, "s")["run"]
    done = subprocess.run(["sh", "-c", past], capture_output=True, text=True, timeout=10)
    assert done.returncode == 0 and "max_minutes_per_target reached" in done.stdout
    assert str(int(expires.timestamp())) in config["run"]


class StandInSky:
    """SkyPilot's SDK as the provisioner uses it: requests answered at once, one table of
    clusters; every call recorded."""

    def __init__(self, fail_launch: Exception | None = None) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.clusters: dict[str, str] = {}
        self.fail_launch = fail_launch
        self.Task = self
        self.wait_for_jobs = "jobs"  # what SkyPilot's AutostopWaitFor.JOBS stands for

    def from_yaml_config(self, config: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(("task", config))
        return config

    def launch(self, task: Any, **kwargs: Any) -> str:
        self.calls.append(("launch", kwargs))
        if self.fail_launch:
            raise self.fail_launch
        self.clusters[kwargs["cluster_name"]] = "UP"
        return "launch"

    def down(self, name: str) -> str:
        self.calls.append(("down", {"cluster_name": name}))
        self.clusters.pop(name, None)
        return "down"

    def status(self, cluster_names: list[str] | None = None) -> str:
        self.calls.append(("status", {"cluster_names": cluster_names}))
        return json.dumps(cluster_names)

    def get(self, request: str) -> Any:
        if request in ("launch", "down"):
            return None
        names = json.loads(request)
        return [{"name": n, "status": s} for n, s in self.clusters.items()
                if names is None or n in names]  # fmt: skip


def test_the_provisioner_launches_with_down_and_autostop_and_confirms_the_teardown() -> None:
    sky = StandInSky()
    sky.clusters["someone-else"] = "UP"
    provisioner = SkyPilotProvisioner(sdk=sky, poll_s=0)
    expires = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=30)
    machine = provisioner.launch(Launch(lambda_cloud_target(), "s1", expires, "", "gpuplan-s1-0"))
    launch = next(kwargs for call, kwargs in sky.calls if call == "launch")
    assert launch["cluster_name"] == "gpuplan-s1-0" and launch["down"] is True
    assert launch["idle_minutes_to_autostop"] == IDLE_MINUTES and not launch["retry_until_up"]
    assert getattr(launch["wait_for"], "value", None) in ("jobs", None)
    running = provisioner.wait_running(machine, 10)
    assert running.host == "gpuplan-s1-0" and running.cloud == "skypilot"
    assert [m.name for m in provisioner.find_launched([], "s1")] == ["gpuplan-s1-0"]
    assert not provisioner.is_terminated(running)
    provisioner.terminate(running)
    assert provisioner.is_terminated(running)
    assert sky.clusters == {"someone-else": "UP"}  # only its own cluster went down
    downs = [kwargs for call, kwargs in sky.calls if call == "down"]
    provisioner.terminate(running)  # again: nothing listed, nothing asked
    assert [kwargs for call, kwargs in sky.calls if call == "down"] == downs


def test_a_launch_skypilot_refuses_is_one_line_naming_the_cluster() -> None:
    error = RuntimeError("Failed to provision all possible launchable resources.\n  lots more")
    provisioner = SkyPilotProvisioner(sdk=StandInSky(fail_launch=error))
    expires = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=5)
    with pytest.raises(ProvisionError) as info:
        provisioner.launch(Launch(lambda_cloud_target(), "s1", expires, "", "gpuplan-s1-0"))
    assert str(info.value) == (
        "SkyPilot launch of gpuplan-s1-0: RuntimeError: Failed to provision all possible "
        "launchable resources."
    )


def test_the_backend_names_the_extra_when_skypilot_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    register("skypilot", None)
    provisioner = provisioner_for("skypilot")
    assert isinstance(provisioner, SkyPilotProvisioner)
    monkeypatch.setitem(sys.modules, "sky", None)  # `import sky` fails as if not installed
    with pytest.raises(ProvisionError) as info:
        provisioner.launch(Launch(lambda_cloud_target(), "s", dt.datetime.now(dt.UTC), "", "n"))
    assert "pip install 'gpuplan[skypilot]'" in str(info.value)


@pytest.mark.slow  # a real benchmark over ssh
def test_a_skypilot_sweep_runs_on_its_cluster_tags_results_and_downs_it(
    sshd: SshServer, sweep_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SkyPilot names the cluster's SSH entry after the cluster: the same entry here
    # (Host gpuplan-*) points at the loopback sshd.
    config = tmp_path / "ssh_config"
    config.write_text(
        f"Host gpuplan-*\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {sshd.user}\n"
        f"  IdentityFile {sshd.identity_file}\n  UserKnownHostsFile {sshd.known_hosts}\n"
        "  StrictHostKeyChecking no\n"
    )
    monkeypatch.setenv("GPUPLAN_SSH_OPTIONS", f"-F {config}")
    sky = StandInSky()
    register("skypilot", lambda **_: SkyPilotProvisioner(sdk=sky, poll_s=0))
    try:
        spec_path = write_spec(tmp_path, sky_target(LAMBDA + REMOTE))
        outcome = sweep_cli("run", str(spec_path), "--yes", "--results", str(tmp_path / "r"))
    finally:
        register("skypilot", None)
    assert outcome.exit_code == 0, outcome.output
    state = only_state(sweep_dir)
    target = state["targets"][0]
    assert target["state"] == "done" and target["terminated_at"]
    assert st.machine_cloud(target["machine"]) == "skypilot"
    (result,), problems = load_results(tmp_path / "r")
    assert not problems
    assert result.sweep["backend"] == "skypilot" and result.sweep["cloud"] == "lambda"
    assert result.sweep["instance_type"] == "gpu_8x_a100_80gb_sxm4"
    name = f"gpuplan-{state['id']}-0"
    assert [c for c, k in sky.calls if c in ("launch", "down")] == ["launch", "down"]
    assert sky.clusters == {}
    assert target["machine"]["name"] == name
    launched = next(config for call, config in sky.calls if call == "task")
    assert launched["name"] == name and "file_mounts" not in launched  # remote_python given


# -- SkyPilot itself, offline ----------------------------------------------------------------


def test_skypilots_own_dry_run_picks_the_instance_region_and_price_of_the_preview(
    tmp_path: Path,
) -> None:
    """SkyPilot's optimizer, on vms.csv files built from gpuplan's Lambda and Nebius
    snapshots, launches
    exactly what the preview priced; an instance type the region lacks is refused (never
    swapped for another region or type); and every SDK call the provisioner makes binds
    to the real SDK's signature."""
    pytest.importorskip("sky")
    targets = (
        sky_target()
        + sky_target('cloud = "lambda"\nregion = "us-west-3"\ninstance_type = "gpu_1x_a10"\n')
        + sky_target(NEBIUS)
    )
    spec = load_spec(write_spec(tmp_path, targets, max_usd=100))
    preview = preview_sweep(spec, CatalogSweepData())
    expires = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=10)
    wheel = tmp_path / "gpuplan-0.0.0-py3-none-any.whl"
    wheel.write_bytes(b"not read by a dry run")
    mounts = (("~/.gpuplan-sweep/wheels/gpuplan-0.0.0-py3-none-any.whl", str(wheel)),)
    tasks = [
        task_config(lambda_cloud_target(file_mounts=mounts), "gpuplan-t-0", expires, "t"),
        task_config(
            lambda_cloud_target(region="us-west-3", instance_type="gpu_1x_a10"),
            "gpuplan-t-1",
            expires,
            "t",
        ),
        task_config(
            lambda_cloud_target(cloud="nebius", region="eu-north1", instance_type=NEBIUS_TYPE),
            "gpuplan-t-2",
            expires,
            "t",
        ),
        task_config(lambda_cloud_target(instance_type="gpu_1x_a10"), "x", expires, "t"),
    ]
    catalogs = {}
    for cloud, path in (("lambda", SNAPSHOT), ("nebius", NEBIUS_SNAPSHOT)):
        with path.open() as handle:
            catalogs[cloud] = list(csv.DictReader(handle))
    request = {
        "catalogs": catalogs, "enabled": ["Lambda", "Nebius"], "tasks": tasks,
        "provisioner": {"target": {**lambda_cloud_target().__dict__, "file_mounts": mounts},
                        "name": "gpuplan-t-0", "sweep_id": "t"},
    }  # fmt: skip
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(ROOT),
           "SKYPILOT_DISABLE_USAGE_COLLECTION": "1"}  # fmt: skip
    env.pop("SKY_RUNTIME_DIR", None)
    done = subprocess.run(
        [sys.executable, str(HERE / "sky_offline.py")], input=json.dumps(request),
        capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert Path(answer["sky_home"]) == home
    for picked, target in zip(answer["picked"][:3], preview.targets, strict=True):
        assert picked["cloud"] == target.label.split(":")[1]
        assert (picked["region"], picked["instance_type"]) == (target.region,
                                                               target.instance_type)  # fmt: skip
        assert picked["usd_per_hour"] == pytest.approx(target.usd_per_hour)
        assert picked["use_spot"] is False
    assert answer["picked"][0]["file_mounts"] == dict(mounts)
    # gpu_1x_a10 is offered in us-west-3 only: pinned to us-east-1, SkyPilot refuses.
    refused = answer["picked"][3]
    assert refused["error"] in ("ResourcesUnavailableError", "ValueError"), refused
    assert "instance_type" not in refused
    flow = answer["flow"]
    calls = {c["call"]: c["kwargs"] for c in flow["calls"]}
    assert calls["launch"]["down"] is True and calls["launch"]["wait_for"] == "jobs"
    assert calls["launch"]["idle_minutes_to_autostop"] == IDLE_MINUTES
    assert flow["host"] == "gpuplan-t-0" and flow["found"] == ["gpuplan-t-0"]
    assert flow["terminated"] is True


# -- an API server that stops answering, or errors ----------------------------------------


class SilentSky(StandInSky):
    """An API server that answered its health check and then stops answering: every call
    blocks until `release` is set (the test's end), as a request to a hung server does."""

    def __init__(self) -> None:
        super().__init__()
        import threading

        self.release = threading.Event()

    def _hang(self) -> None:
        self.release.wait(600)

    def launch(self, task: Any, **kwargs: Any) -> str:
        self._hang()
        return super().launch(task, **kwargs)

    def status(self, cluster_names: list[str] | None = None) -> str:
        self._hang()
        return super().status(cluster_names)

    def down(self, name: str) -> str:
        self._hang()
        return super().down(name)


def sky_cli(sky: StandInSky, *args: str) -> Any:
    register("skypilot", lambda **opts: SkyPilotProvisioner(sdk=sky, poll_s=0, **opts))
    try:
        return sweep_cli(*args)
    finally:
        register("skypilot", None)


@pytest.mark.timeout(120)
def test_a_sweep_whose_skypilot_api_server_stops_answering_ends_within_its_limit(
    sweep_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """max_minutes_per_target = 1: the launch call and the teardown's search are each
    abandoned at a quarter of it, the sweep ends inside the minute, the state keeps the
    cluster as what may still run, and `sweep cleanup` returns saying it could not check
    it, how to, and exits 1. Before, only sky.get was bounded: `sweep run` was still
    running at 420 s and `sweep cleanup --dry-run` hung too."""
    import time

    from benchmarks.sweep import orchestrate

    sky = SilentSky()
    spec_path = tmp_path / "sky.toml"
    spec_path.write_text(
        spec_text(sky_target(LAMBDA + REMOTE), ONE_RUN, max_usd=50).replace(
            "max_minutes_per_target = 10", "max_minutes_per_target = 1"
        )
    )
    try:
        started = time.monotonic()
        outcome = sky_cli(sky, "run", str(spec_path), "--yes", "--results", str(tmp_path / "r"))
        elapsed = time.monotonic() - started
        assert outcome.exit_code == 1, outcome.output
        assert 15 <= elapsed < 60, elapsed  # two calls abandoned at 15 s each
        state = only_state(sweep_dir)
        name = f"gpuplan-{state['id']}-0"
        target = state["targets"][0]
        assert target["state"] == "failed" and "gave no answer within 15 s" in target["reason"]
        assert f"sky status {name}" in target["reason"]
        assert not target["terminated_at"]  # not confirmed: it may still run
        assert "may still be running" in outcome.output and name in outcome.output

        monkeypatch.setattr(orchestrate, "CLEANUP_CALL_S", 2.0)
        for dry in (["--dry-run"], []):
            started = time.monotonic()
            cleaned = sky_cli(sky, "cleanup", state["id"], *dry)
            assert time.monotonic() - started < 15
            assert cleaned.exit_code == 1, cleaned.output
            text = " ".join(cleaned.output.split())
            assert f"skypilot us-east-1 {name}: could not check" in text, text
            assert "gave no answer within 2 s" in text and f"`sky status {name}`" in text
            assert "1 could not check" in text
    finally:
        sky.release.set()


def test_a_launch_the_api_server_refuses_is_not_charged_and_cleanup_confirms_nothing_runs(
    sweep_dir: Path, tmp_path: Path
) -> None:
    """HTTP 500 from the API server: the target fails with the error, no cluster exists,
    so no dollars are recorded (before: $0.01 per failed launch) and cleanup exits 0."""
    sky = StandInSky(fail_launch=RuntimeError("500 Server Error: Internal Server Error"))
    spec_path = write_spec(tmp_path, sky_target(LAMBDA + REMOTE))
    outcome = sky_cli(sky, "run", str(spec_path), "--yes", "--results", str(tmp_path / "r"))
    assert outcome.exit_code == 1, outcome.output
    state = only_state(sweep_dir)
    target = state["targets"][0]
    assert target["state"] == "failed" and "500 Server Error" in target["reason"]
    assert target["launched_at"] is None and target["terminated_at"]
    assert st.spend_usd(target) == 0.0
    assert "may still be running" not in outcome.output
    cleaned = sky_cli(sky, "cleanup", state["id"], "--dry-run")
    assert cleaned.exit_code == 0, cleaned.output
    assert "no gpuplan machines running" in cleaned.output
