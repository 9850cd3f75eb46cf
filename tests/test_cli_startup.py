"""`gpuplan --help` and `--version` start fast: no pandas, numpy or scipy is imported.

Each command runs in a fresh interpreter (as the console script does) that reports which
heavy modules ended up in sys.modules. Commands import the engine when they run.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from tests.conftest import ROOT

HEAVY = ("pandas", "numpy", "scipy", "pyarrow", "streamlit", "plotly", "torch")
PROBE = """
import json, sys
sys.argv = ["gpuplan", *json.loads(sys.argv[1])]
from planner.cli.main import main
try:
    main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
loaded = [m for m in {heavy} if m in sys.modules]
sys.stderr.write("\\nPROBE " + json.dumps({{"code": code, "loaded": loaded}}) + "\\n")
"""


def loaded_by(*args: str, watched: tuple[str, ...] = HEAVY) -> tuple[int, list[str], str]:
    """Exit code, `watched` modules imported and stdout of `gpuplan ARGS` in a new
    interpreter."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=list(watched)), json.dumps(list(args))],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=60,
    )
    report = json.loads(done.stderr.rsplit("PROBE ", 1)[1])
    return report["code"], report["loaded"], done.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["--version"],
        ["plan", "--help"],
        ["tco", "--help"],
        ["app", "--help"],
        ["pricing", "--help"],
        ["pricing", "refresh", "--help"],
        ["bench", "--help"],
        ["sweep", "--help"],
        ["estimate-llm", "--help"],
        ["workloads", "--help"],
    ],
    ids=" ".join,
)
def test_help_and_version_import_no_heavy_module(args: list[str]) -> None:
    code, loaded, stdout = loaded_by(*args)
    assert code == 0, stdout
    assert loaded == [], f"gpuplan {' '.join(args)} imported {loaded}"
    assert stdout.strip()


def test_the_probe_sees_a_command_that_loads_pandas() -> None:
    """The probe itself works: a command that plans imports pandas."""
    code, loaded, _ = loaded_by("workloads", "--format", "json")
    assert code == 0
    assert "pandas" in loaded


def test_a_plan_imports_no_other_command() -> None:
    """A plan loads the engine, not the bench, sweep or app commands' modules."""
    others = ("benchmarks.cli", "benchmarks.sweep.cli", "planner.cli.app", "streamlit")
    code, loaded, stdout = loaded_by(
        "plan", "--workload", "resnet50-imagenet-90ep", "--format", "json", watched=others
    )
    assert code == 0 and stdout.lstrip().startswith(("{", "["))
    assert loaded == [], f"gpuplan plan imported {loaded}"


def test_a_plan_loads_the_result_schema_and_on_prem_model_only_when_it_uses_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pydantic (the result schema, the on-prem config) is most of a cold plan's own
    imports: a plan with no results of its own and no --onprem loads none of it."""
    monkeypatch.setenv("GPUPLAN_RESULTS_DIR", str(tmp_path / "results"))
    watched = ("pydantic", "benchmarks.results", "planner.onprem.tco")
    plan = ("plan", "--workload", "resnet50-imagenet-90ep", "--format", "json")
    code, loaded, stdout = loaded_by(*plan, watched=watched)
    assert code == 0 and stdout.lstrip().startswith(("{", "["))
    assert loaded == [], f"gpuplan plan imported {loaded}"
    code, loaded, _ = loaded_by(*plan, "--onprem", "example:onprem-dgx-h100", watched=watched)
    assert code == 0 and {"pydantic", "planner.onprem.tco"} <= set(loaded)


def test_version_prints_the_installed_version() -> None:
    done = CliRunner().invoke(app, ["--version"])
    assert done.exit_code == 0
    assert done.stdout.strip() == f"gpuplan {importlib.metadata.version('gpuplan')}"


def test_refresh_help_lists_every_source_default_regions() -> None:
    """The light region table behind `pricing refresh --help` is the one the fetchers use."""
    from pricing.providers.regions import DEFAULT_REGIONS
    from pricing.refresh import SOURCES

    assert {p: s.default_regions for p, s in SOURCES.items()} == DEFAULT_REGIONS
    done = CliRunner().invoke(app, ["pricing", "refresh", "--help"], env={"COLUMNS": "200"})
    assert "us-east-1" in done.stdout and "europe-west4" in done.stdout


def test_app_without_the_extra_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real_find_spec = importlib.util.find_spec

    def without_streamlit(name: str, *args: object) -> object:
        return None if name == "streamlit" else real_find_spec(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib.util, "find_spec", without_streamlit)
    done = CliRunner().invoke(app, ["app", "--port", "8599"])
    assert done.exit_code == 1
    assert "streamlit" in done.output
    assert "pip install 'gpuplan[app]'" in done.output
    assert "Traceback" not in done.output


def test_app_rejects_a_port_out_of_range() -> None:
    done = CliRunner().invoke(app, ["app", "--port", "70000"])
    assert done.exit_code == 2
    assert "--port 70000" in done.output


def test_help_prints_extras_in_brackets_as_written() -> None:
    """Help is rich markup: an unescaped '[app]' would vanish from the install hint."""
    done = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert done.exit_code == 0
    assert "pip install 'gpuplan[app]'" in done.stdout
