"""Importing planner or pricing loads no torch, boto3, google.cloud or streamlit."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("torch", "boto3", "botocore", "google.cloud", "streamlit")


@pytest.mark.parametrize(
    "modules",
    [
        "planner, planner.plan, planner.cli.main, planner.throughput, planner.machines.specs, "
        "planner.costs.spot, planner.onprem.tco",
        "planner.throughput.scaling_report, planner.throughput.benchmark_compare",
        "pricing, pricing.catalog, pricing.cli, pricing.providers.skypilot, pricing.refs, "
        "pricing.status",
        "pricing.refresh, pricing.store, pricing.diff, pricing.providers.aws, "
        "pricing.providers.gcp, pricing.providers.azure, pricing.providers.custom",
        "benchmarks.results, benchmarks.published, benchmarks.cli",
        "benchmarks.models, benchmarks.summary, benchmarks.env, benchmarks.power, "
        "benchmarks.progress, benchmarks.runners.local, benchmarks.pipeline",
        "benchmarks.runners.machine, benchmarks.runners.aws, benchmarks.runners.gcp, "
        "benchmarks.runners.cleanup",
    ],
)
def test_light_imports(modules: str) -> None:
    code = (
        f"import json, sys\nimport {modules}\n"
        f"print(json.dumps([m for m in sys.modules if m.split('.')[0] in "
        f"{[h.split('.')[0] for h in HEAVY]!r} or m.startswith('google.cloud')]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []


def test_the_check_would_see_a_heavy_import() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json, sys, streamlit\nprint(json.dumps('streamlit' in sys.modules))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout) is True


# DESIGN.md's direction: app -> planner -> {pricing, benchmarks} -> edge; never back.
FORBIDDEN = {
    "edge": ("planner", "pricing", "benchmarks", "app", "tests"),
    "pricing": ("planner", "benchmarks", "app", "tests"),
    "benchmarks": ("planner", "pricing", "app", "tests"),
    "planner": ("app", "tests"),
    "tools": ("tests",),  # what tools and tests share lives in tools/ (golden_cases)
}


def imported_packages(source: str) -> list[tuple[int, str]]:
    """(line, top-level package) of every import in `source`, at any indentation: inside
    functions, branches and TYPE_CHECKING blocks too."""
    import ast

    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module.split(".")[0]))
    return found


def test_the_boundary_check_sees_imports_at_any_indentation() -> None:
    source = "import os\ndef f():\n    if True:\n        from planner.render import x\n"
    assert imported_packages(source) == [(1, "os"), (4, "planner")]


def test_no_package_imports_against_the_dependency_direction() -> None:
    """edge imports nothing of ours; pricing and benchmarks import neither the planner nor
    each other, not even lazily (each owns its CLI tables); nothing imports the app or the
    tests."""
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[1]
    found = []
    for package, forbidden in FORBIDDEN.items():
        for path in sorted((root / package).rglob("*.py")):
            for line, name in imported_packages(path.read_text()):
                if name in forbidden:
                    found.append(f"{path.relative_to(root)}:{line}: imports {name}")
    assert found == []
