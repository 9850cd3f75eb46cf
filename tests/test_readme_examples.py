"""Every example file the README names ships in the repository, and its query files run."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_example_path_the_readme_names_exists() -> None:
    named = set(re.findall(r"examples/[\w.-]+", README))
    assert {"examples/queries.csv", "examples/llm_queries.csv"} <= named
    assert [p for p in sorted(named) if not (ROOT / p).is_file()] == []


@pytest.mark.parametrize(
    ("command", "rows"),
    [
        (["estimate-llm", "--queries", "examples/llm_queries.csv"], 4),
        (["estimate", "--reference", "reference/benchmarks/lambda_pytorch_throughput.csv",
          "--queries", "examples/queries.csv"], 4),
    ],
)  # fmt: skip
def test_the_example_queries_run(tmp_path: Path, command: list[str], rows: int) -> None:
    out = tmp_path / "out.csv"
    done = subprocess.run(
        [sys.executable, "-m", "planner.cli.main", *command, "--output", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = out.read_text(encoding="utf-8").splitlines()
    assert (len(lines) == rows + 1 and "throughput" in lines[0]) or "tokens_per_s" in lines[0]
