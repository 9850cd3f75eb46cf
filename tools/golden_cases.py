"""Golden CLI outputs: the commands, how each one is run, and how its output is normalised.

Shared by tools/update_golden.py (record) and tests/golden/test_golden_cli.py (compare);
kept in tools/ so that no tool imports the tests.
Each case is one `gpuplan` command line. Its stdout is recorded under
tests/golden/data/<name>.<json|csv|txt> (by --format; txt for tables) and, when the command
writes anything there, its stderr under tests/golden/data/<name>.stderr.txt.

Every command runs as a subprocess in the repository root with an environment built from
nothing (see `command_env`), so no user state and no network is read: a fresh temporary
home per command, empty results/snapshot/sweep/cache folders, fixed terminal width, UTC.

Normalisation (`normalise`), applied to stdout and stderr before both recording and
comparing:

* the repository root is written `<REPO>` and the command's temporary home `<TMP>`;
* the age of a price, which grows by one every day, is written `<N>`:
  `"age_days": 548` becomes `"age_days": "<N>"` (regex `"age_days": \\d+`), and
  `at most 548 d` becomes `at most <N> d` (regex `\\bat(\\s+)most(\\s+)\\d+(\\s+)d\\b`,
  the white space kept, so an age split over two wrapped lines is caught too);
* a line cut at the terminal width (it ends in `…`) is cut again right after its first
  age (regex `(at most )\\d+( d)[^\\n]*…$`, multiline), because a longer age moves the
  place where the line was cut.

The comparison (test_golden_cli.py) also takes stderr's line breaks as mere white space:
the console wraps stderr at the terminal width, and an age one digit longer moves the
breaks of the paragraph it is in.

Nothing else in these outputs depends on the date: the bundled price snapshots are all
older than the 30-day staleness threshold already and every retirement date is past.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "golden" / "data"
INPUTS = DATA / "inputs"
REGENERATE = "python tools/update_golden.py"
# Each command gets this long at most (they take about a second or three each).
COMMAND_TIMEOUT_S = 120

# The examples and inputs are named relative to ROOT, where every command runs.
REFERENCE = "reference/benchmarks/lambda_pytorch_throughput.csv"
ESTIMATE_QUERIES = "tests/golden/data/inputs/estimate-queries.csv"
LLM_QUERIES = "tests/golden/data/inputs/estimate-llm-queries.csv"
ONPREM = "examples/onprem-dgx-h100.toml"
BUNDLED_RESULTS = "benchmarks/results"


@dataclass(frozen=True)
class Case:
    """One recorded command: `name` names its files, `fmt` is json | csv | txt."""

    name: str
    args: tuple[str, ...]
    fmt: str

    @property
    def stdout_file(self) -> Path:
        return DATA / f"{self.name}.{self.fmt}"

    @property
    def stderr_file(self) -> Path:
        return DATA / f"{self.name}.stderr.txt"

    @property
    def command_line(self) -> str:
        return " ".join(["gpuplan", *(_quote(a) for a in self.args)])


def _quote(arg: str) -> str:
    return arg if re.fullmatch(r"[\w./:=@,+-]+", arg) else repr(arg)


def _case(name: str, command: str) -> Case:
    """A case from a command line (after `gpuplan`); txt unless it asks for json or csv."""
    args = tuple(shlex.split(command))
    fmt = "txt"
    if "--format" in args:
        given = args[args.index("--format") + 1]
        fmt = given if given in ("json", "csv") else "txt"
    return Case(name, args, fmt)


# `plan` in every view and every format, on a slice of offers small enough to record whole.
PLAN_SLICE = "plan -w resnet50-imagenet-90ep --provider aws --gpu H100 --gpu A100 --max-gpus 64"
PLAN_VIEWS = ("rows", "picks", "frontier", "options", "constraints")
PLAN_FORMATS = ("table", "json", "csv")

CASES: tuple[Case, ...] = (
    *(
        _case(f"plan-resnet50-aws-{view}-{fmt}", f"{PLAN_SLICE} --view {view} --format {fmt}")
        for view in PLAN_VIEWS
        for fmt in PLAN_FORMATS
    ),
    # Every default provider and tier ranked; the table with every column and note.
    _case(
        "plan-resnet50-all-top10-wide-explain",
        "plan -w resnet50-imagenet-90ep --top 10 --wide --explain",
    ),
    _case(
        "plan-resnet50-onprem-h100-json",
        f"plan -w resnet50-imagenet-90ep --onprem {ONPREM} --gpu H100 --top 10 --format json",
    ),
    # BERT: spot (Monte Carlo, fixed seed) and a to-accuracy job under a deadline and budget.
    _case(
        "plan-bert-large-squad-aws-spot-csv",
        "plan -w bert-large-squad-2ep --provider aws --spot --interruption-rate aws=0.02"
        " --seed 7 --draws 2000 --format csv",
    ),
    _case(
        "plan-bert-large-pretrain-deadline-json",
        "plan -w bert-large-pretrain-phase2 --deadline-hours 24 --budget-usd 20000 --top 10"
        " --format json",
    ),
    # LLMs: a 7B pre-training preset, a LoRA fine-tune at reserved prices, a 70B picks table.
    _case(
        "plan-llm-6.7b-h100-json",
        "plan -w llm-6.7b-134b --precision bf16 --gpu H100 --max-gpus 256 --top 10 --format json",
    ),
    _case(
        "plan-llm-6.7b-lora-reserved-csv",
        "plan -w llm-6.7b-lora-1b --precision bf16 --pricing reserved-1y"
        " --reserved-discount 0.35 --top 10 --format csv",
    ),
    _case(
        "plan-llm-69b-finetune-picks",
        "plan -w llm-69b-finetune-1b --precision bf16 --gpu H100 --gpu H200"
        " --deadline-hours 48 --view picks",
    ),
    # Measured, scaled and estimated rows, some with per-row node size, network and batch.
    _case(
        "estimate-csv",
        f"estimate --reference {REFERENCE} --queries {ESTIMATE_QUERIES} --format csv",
    ),
    _case("estimate-llm-csv", f"estimate-llm --queries {LLM_QUERIES} --format csv"),
    _case(
        "estimate-llm-zero3-full-recompute-json",
        f"estimate-llm --queries {LLM_QUERIES} --zero zero3 --recompute full"
        " --no-flash-attention --format json",
    ),
    _case("tco-dgx-h100-json", f"tco --config {ONPREM} --format json"),
    _case(
        "tco-dgx-h100-compare-csv",
        f"tco --config {ONPREM} --compare aws:p5.48xlarge"
        " --compare lambda:us-west-2:gpu_8x_h100_sxm5 --compare A100-SXM-80GB --format csv",
    ),
    _case(
        "tco-dgx-h100-spot-explain",
        f"tco --config {ONPREM} --pricing spot --utilization 0.5 --wide --explain",
    ),
    _case("workloads-json", "workloads --format json"),
    _case("pricing-show-csv", "pricing show --format csv"),
    _case("pricing-show-lambda-wide", "pricing show --provider lambda --wide"),
    _case("pricing-status-json", "pricing status --format json"),
    _case("bench-list-empty-json", "bench list --format json"),
    _case("bench-list-bundled-csv", f"bench list {BUNDLED_RESULTS} --format csv"),
    _case("sweep-plan-aws", "sweep plan examples/sweep-aws.toml"),
    _case("sweep-plan-aws-json", "sweep plan examples/sweep-aws.toml --format json"),
    _case("sweep-plan-onprem-json", "sweep plan examples/sweep-onprem.toml --format json"),
)
CASES_BY_NAME = {case.name: case for case in CASES}
assert len(CASES_BY_NAME) == len(CASES), "case names must be unique"

# Addresses nothing listens on: a command that tried to fetch prices would fail at once.
_NOWHERE = "http://127.0.0.1:9"


def command_env(home: Path) -> dict[str, str]:
    """The whole environment of one command (nothing inherited but the interpreter's folder
    on PATH), every folder the CLI reads or writes pointed under `home`."""
    for sub in ("cache", "data", "config", "state", "results", "snapshots", "sweeps", "fitted"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"]),
        # This checkout's code, even where the environment's gpuplan is installed from
        # another checkout (a git worktree beside the main one).
        "PYTHONPATH": str(ROOT),
        # User folders: XDG defaults and everything under ~ (cloud SDK configs included).
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_STATE_HOME": str(home / "state"),
        # gpuplan's own folders: own benchmark results, price snapshots beyond the bundled
        # ones, sweep state, fitted-model cache (the package's shipped seed is still read).
        "GPUPLAN_RESULTS_DIR": str(home / "results"),
        "GPUPLAN_SNAPSHOT_DIR": str(home / "snapshots"),
        "GPUPLAN_SWEEP_DIR": str(home / "sweeps"),
        "GPUPLAN_CACHE_DIR": str(home / "fitted"),
        # Price sources a refresh would read: nowhere.
        "GPUPLAN_SKYPILOT_CATALOG_URL": _NOWHERE,
        "GPUPLAN_SKYPILOT_COMMITS_URL": _NOWHERE,
        "GPUPLAN_AWS_OFFERS_URL": _NOWHERE,
        # Terminal: fixed width, no colour, UTF-8, UTC.
        "COLUMNS": "200",
        "NO_COLOR": "1",
        "TERM": "dumb",
        "TZ": "UTC",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        # One BLAS/OpenMP thread: same reduction order on every machine.
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        # Cloud SDKs: no instance metadata, no credentials or config from the user.
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_CONFIG_FILE": str(home / "config" / "aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(home / "config" / "aws-credentials"),
        "NO_GCE_CHECK": "true",
        "GCE_METADATA_HOST": "127.0.0.1:9",
        "GCE_METADATA_IP": "127.0.0.1:9",
        "CLOUDSDK_CONFIG": str(home / "config" / "gcloud"),
    }


def gpuplan_executable() -> str:
    """The `gpuplan` script of the running interpreter's environment, else the one on PATH."""
    beside = Path(sys.executable).parent / "gpuplan"
    if beside.is_file():
        return str(beside)
    found = shutil.which("gpuplan")
    if found is None:
        raise RuntimeError("no gpuplan executable: install the package (pip install -e .)")
    return found


@dataclass(frozen=True)
class Output:
    """What one command printed, normalised, and how long it ran."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float


def run_case(case: Case) -> Output:
    """Run one case in a fresh temporary home; its output normalised."""
    with tempfile.TemporaryDirectory(prefix="gpuplan-golden-") as tmp:
        home = Path(tmp)
        start = time.perf_counter()
        done = subprocess.run(
            [gpuplan_executable(), *case.args],
            cwd=ROOT,
            env=command_env(home),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=COMMAND_TIMEOUT_S,
            check=False,
        )
        seconds = time.perf_counter() - start
    return Output(
        done.returncode,
        normalise(done.stdout.decode("utf-8"), home),
        normalise(done.stderr.decode("utf-8"), home),
        seconds,
    )


_CUT_AFTER_AGE = re.compile(r"(at most )\d+( d)[^\n]*…$", re.MULTILINE)
_AGE = re.compile(r"\bat(\s+)most(\s+)\d+(\s+)d\b")
_AGE_DAYS = re.compile(r'"age_days": \d+')


def normalise(text: str, home: Path) -> str:
    """Paths and price ages written as placeholders (see the module docstring)."""
    for path, placeholder in ((home, "<TMP>"), (ROOT, "<REPO>")):
        for spelling in {str(path), str(path.resolve())}:
            text = text.replace(spelling, placeholder)
    text = _CUT_AFTER_AGE.sub(r"\1<N>\2…", text)
    text = _AGE.sub(r"at\1most\2<N>\3d", text)
    return _AGE_DAYS.sub('"age_days": "<N>"', text)
