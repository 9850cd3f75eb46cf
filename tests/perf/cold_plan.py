"""Cold `gpuplan plan` wall time beside `python -c "import pandas, scipy.optimize"`.

    python tests/perf/cold_plan.py [--workload resnet50-imagenet-90ep] [--repeats 3]

Prints, each the median of --repeats fresh processes measured in the same run: the import
line, `gpuplan plan --workload W` (its table, piped) with an empty user cache (the first
run after install: the package's fitted models are read, planner/data/fitted) and with
the cache filled (every later run), and the ratio to the import line (aim: <= 1.5x for
both). The cache is a temporary folder.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def wall_s(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workload", default="resnet50-imagenet-90ep")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    plan = [sys.executable, "-m", "planner.cli.main", "plan", "--workload", args.workload]
    imports = [sys.executable, "-c", "import pandas, scipy.optimize"]
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "GPUPLAN_CACHE_DIR": folder}
        empty, filled, baseline = [], [], []
        for i in range(args.repeats):
            baseline.append(wall_s(imports, env))
            cold_env = {**env, "GPUPLAN_CACHE_DIR": os.path.join(folder, f"empty-{i}")}
            empty.append(wall_s(plan, cold_env))
            filled.append(wall_s(plan, env))
        base = statistics.median(baseline)
        print(f"import pandas, scipy.optimize  {base:6.2f} s")
        for label, times in (("plan, empty model cache", empty), ("plan, filled cache", filled)):
            t = statistics.median(times)
            print(f"{label:<30}{t:6.2f} s  {t / base:5.2f}x the import line (aim <= 1.5x)")


if __name__ == "__main__":
    main()
