"""Start-up time of the CLI, measured beside Python's own import of pandas and scipy.

    python tests/perf/bench_cli.py [--runs 7]

Alternating runs, in this order each round, every one a new process:
  import line   python -c "import pandas, scipy.optimize"  (the floor for any plan)
  cold plan     gpuplan plan --workload resnet50-imagenet-90ep, with a new, empty cache
                folder ($XDG_CACHE_HOME) each run
  --help        gpuplan --help
  --version     gpuplan --version
Prints the median wall time and the median CPU time (user + system) of each, and the ratios
of the cold plan and --help to the import line. Aims: cold plan <= 1.1x the import line,
--help <= 0.25x. The packages' bytecode is compiled first (as pip install does), so the
rounds time an installed gpuplan, not a first import that compiles its sources.
Other work shares this machine's cores: compare figures from one run, and read CPU time
when the machine is busy. Not a test: it prints.
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GPUPLAN = str(Path(sys.executable).with_name("gpuplan"))
COMMANDS: dict[str, list[str]] = {
    "import line": [sys.executable, "-c", "import pandas, scipy.optimize"],
    "cold plan": [GPUPLAN, "plan", "--workload", "resnet50-imagenet-90ep"],
    "--help": [GPUPLAN, "--help"],
    "--version": [GPUPLAN, "--version"],
}
AIMS = {"cold plan": 1.1, "--help": 0.25}  # at most this many times the import line
PACKAGES = ("edge", "planner", "pricing", "benchmarks")


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one run of `command`."""
    with tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=errors
        )
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            errors.seek(0)
            raise RuntimeError(f"{' '.join(command)} failed: {errors.read().decode()}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="rounds (medians over them)")
    args = parser.parse_args()
    if not Path(GPUPLAN).exists():
        sys.exit(f"no gpuplan console script beside {sys.executable}: pip install -e .")
    for package in PACKAGES:
        compileall.compile_dir(ROOT / package, quiet=1)
    scratch = Path(tempfile.mkdtemp(prefix="gpuplan-perf-cli-"))
    base_env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "GPUPLAN_RESULTS_DIR": str(scratch / "results"),
        "XDG_DATA_HOME": str(scratch / "data"),
        "COLUMNS": "100",
    }
    base_env.pop("GPUPLAN_SNAPSHOT_DIR", None)
    walls: dict[str, list[float]] = {name: [] for name in COMMANDS}
    cpus: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for round_ in range(args.runs):
        for name, command in COMMANDS.items():
            cache = scratch / f"cache-{round_}-{name.strip('-').replace(' ', '-')}"
            wall, cpu = timed(command, {**base_env, "XDG_CACHE_HOME": str(cache)})
            walls[name].append(wall)
            cpus[name].append(cpu)
    shutil.rmtree(scratch, ignore_errors=True)
    print(
        f"CLI start-up, {args.runs} alternating rounds, medians (min-max); "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    print(f"{'command':<12} {'wall s':>7} {'(min-max)':>13} {'CPU s':>7}  aim")
    for name in COMMANDS:
        w = walls[name]
        aim = f"<= {AIMS[name]}x import line" if name in AIMS else ""
        print(
            f"{name:<12} {statistics.median(w):7.3f} ({min(w):5.2f}-{max(w):5.2f}) "
            f"{statistics.median(cpus[name]):7.3f}  {aim}"
        )
    floor_wall = statistics.median(walls["import line"])
    floor_cpu = statistics.median(cpus["import line"])
    for name, aim in AIMS.items():
        print(
            f"{name} / import line: {statistics.median(walls[name]) / floor_wall:.2f}x wall, "
            f"{statistics.median(cpus[name]) / floor_cpu:.2f}x CPU (aim <= {aim}x)"
        )


if __name__ == "__main__":
    main()
