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
        "planner, planner.plan, planner.cli, planner.throughput, planner.hardware, "
        "planner.spot, planner.tco",
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


def test_benchmarks_and_pricing_never_import_each_other_or_the_planner() -> None:
    """DESIGN.md's direction: app -> planner -> {pricing, benchmarks.results}; never back.

    Checked for module-level imports: the `bench` and `pricing` command groups, which
    `gpuplan` mounts, borrow planner.render's terminal tables inside their commands only."""
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parents[1]
    rules = {"benchmarks": ("planner", "pricing"), "pricing": ("planner", "benchmarks")}
    found = []
    for package, forbidden in rules.items():
        for path in sorted((root / package).rglob("*.py")):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                match = re.match(r"(?:from|import)\s+(\w+)", line)
                if match and match.group(1) in forbidden:
                    found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    assert found == []
