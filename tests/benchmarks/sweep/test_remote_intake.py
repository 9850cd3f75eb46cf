"""Result files fetched from a machine pass the same checks as an upload (benchmarks.intake).

The "remote" is this machine (backend local) with a stand-in interpreter whose `bench run`
writes a prepared file instead of benchmarking: a good result, a different result under
the same id, a hostile id, a 10 MB file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from benchmarks.results import read_result
from tests.benchmarks.sweep.conftest import ROOT, TINY_RUNS, only_state, spec_text
from tests.benchmarks.sweep.test_ssh_sweep import start_sweep

SAMPLE = ROOT / "benchmarks/results/gpt-tiny-fp32-cpux1-20261130T055325Z-616968.json"
FAKE_PYTHON = """#!{python}
import os, shutil, sys
args = sys.argv[1:]
if args[:2] == ["-m", "planner.cli.main"]:  # bench run: hand back the prepared file
    out = args[args.index("--out") + 1]
    os.makedirs(out, exist_ok=True)
    batch = args[args.index("--batch") + 1]
    shutil.copy(os.path.join({payloads!r}, batch + ".json"), os.path.join(out, "r.json"))
    sys.exit(0)
os.execv(sys.executable, [sys.executable, *args])
"""
RUNS = TINY_RUNS.replace("warmup = 1\nbatch = [2, 4]", "batch = [2, 4, 8, 16]")


def test_hostile_remote_results_are_refused_and_nothing_lands_outside(
    sweep_dir: Path, tmp_path: Path
) -> None:
    payloads = tmp_path / "payloads"
    payloads.mkdir()
    sample = json.loads(SAMPLE.read_text())

    def payload(batch: int, **fields: object) -> None:
        data = dict(sample, batch_size_per_device=float(batch), **fields)
        (payloads / f"{batch}.json").write_text(json.dumps(data))

    payload(2, id="same-id")  # good
    payload(4, id="same-id")  # a different result under an id already saved
    payload(8, id="../../evil")  # would land outside the results folder
    (payloads / "16.json").write_text(json.dumps(dict(sample, id="big")) + " " * 10_000_000)
    fake = tmp_path / "fake-python"
    fake.write_text(FAKE_PYTHON.format(python=sys.executable, payloads=str(payloads)))
    fake.chmod(0o755)
    target = (
        f'[[targets]]\nbackend = "local"\nremote_python = "{fake}"\n'
        f'remote_dir = "{tmp_path}/remote"\nremote_env = {{ PYTHONPATH = "{ROOT}" }}\n'
    )
    spec_path = tmp_path / "hostile.toml"
    spec_path.write_text(spec_text(target, RUNS))
    results = tmp_path / "deep" / "er" / "results"
    sweep = start_sweep(spec_path, results, [])
    assert sweep.run() == 1

    state = only_state(sweep_dir)
    (t,) = state["targets"]
    assert t["state"] == "failed"
    assert t["reason"].startswith("3 of 4 run(s) failed") and "refused" in t["reason"]
    good, same, evil, big = t["runs"].values()
    assert good["status"] == "done" and good["result_ids"] == ["same-id"]
    assert same["status"] == "failed" and "a different result with id 'same-id'" in same["error"]
    assert evil["status"] == "failed" and "not a valid result id" in evil["error"]
    assert big["status"] == "failed" and "the limit is" in big["error"]
    # Only the good result was written, as it was first saved (batch 2), and nothing else
    # anywhere: no file named after the hostile id, no temporary file.
    saved = list(results.rglob("*"))
    assert saved == [results / state["id"], results / state["id"] / "same-id.json"]
    assert read_result(saved[1]).batch_size_per_device == 2
    assert not [p for p in tmp_path.rglob("*evil*")]
