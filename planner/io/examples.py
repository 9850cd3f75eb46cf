"""The example files that ship inside the package, by name: `example:onprem-dgx-h100`
wherever a file is asked for (on-prem configs, query files, sweep specs), so the README's
commands run from any folder after `pip install`.

planner/data/examples/ holds copies of the repository's examples/ (tools/build_bundled_data.py
writes them; tests/test_packaging.py checks they are the same files).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from edge.console import warn
from pricing.gpus import did_you_mean

PREFIX = "example:"
EXAMPLES_DIR = Path(__file__).resolve().parents[1] / "data" / "examples"
PUBLISHED_DIR = Path(__file__).resolve().parents[2] / "benchmarks" / "published"


@dataclass(frozen=True)
class Example:
    """A shipped example: its name, file, what it is (one line) and where it is used."""

    name: str
    path: Path
    about: str
    used_by: str


EXAMPLES: tuple[Example, ...] = (
    Example(
        "onprem-dgx-h100",
        EXAMPLES_DIR / "onprem-dgx-h100.toml",
        "four DGX H100 servers (32x H100 SXM) in colocation, cost lines cited",
        "plan --onprem, tco --config",
    ),
    Example(
        "queries",
        EXAMPLES_DIR / "queries.csv",
        "four throughput queries (GPU, count, model, precision)",
        "estimate --queries",
    ),
    Example(
        "llm-queries",
        EXAMPLES_DIR / "llm_queries.csv",
        "four LLM training queries (size, sequence, GPUs, framework)",
        "estimate-llm --queries",
    ),
    Example(
        "lambda-throughput",
        PUBLISHED_DIR / "lambda_pytorch_throughput.csv",
        "Lambda's published PyTorch throughput, the bundled reference rows",
        "estimate --reference",
    ),
    Example(
        "sweep-onprem",
        EXAMPLES_DIR / "sweep-onprem.toml",
        "a benchmark sweep on own servers over SSH (nothing launched or billed)",
        "sweep plan|run|export",
    ),
    Example(
        "sweep-aws",
        EXAMPLES_DIR / "sweep-aws.toml",
        "a benchmark sweep on one A100 and one H100 AWS instance",
        "sweep plan|run|export",
    ),
    Example(
        "sweep-gcp",
        EXAMPLES_DIR / "sweep-gcp.toml",
        "a benchmark sweep on a GCP A100 and a spot L4",
        "sweep plan|run|export",
    ),
    Example(
        "sweep-skypilot",
        EXAMPLES_DIR / "sweep-skypilot.toml",
        "a benchmark sweep through SkyPilot (Lambda, Nebius, Kubernetes)",
        "sweep plan|run|export",
    ),
)
BY_NAME = {e.name: e for e in EXAMPLES}
# The repository's file name of each example in examples/ (a path there falls back to it).
BY_FILE = {e.path.name: e for e in EXAMPLES if e.path.parent == EXAMPLES_DIR}


def example_path(name: str) -> Path:
    """The shipped file of example `name`; ValueError naming the closest and every name."""
    if name not in BY_NAME:
        fix = did_you_mean(name, list(BY_NAME))
        raise ValueError(
            f"unknown example {name!r}{fix} Valid: {', '.join(BY_NAME)} (`gpuplan examples`)"
        )
    return BY_NAME[name].path


def input_path(value: str) -> str:
    """The file a CLI argument names: `example:NAME` is the shipped example; a path
    `examples/FILE` that this folder lacks is the shipped copy of that file (said on stderr);
    anything else as given."""
    if value.startswith(PREFIX):
        return str(example_path(value.removeprefix(PREFIX)))
    path = Path(value)
    if path.parent.name == "examples" and len(path.parts) == 2 and not path.exists():
        shipped = BY_FILE.get(path.name)
        if shipped is not None:
            warn(f"{value} is not in this folder: using the shipped example:{shipped.name}")
            return str(shipped.path)
    return value
