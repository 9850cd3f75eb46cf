"""How long each app page takes to render and to rerun after an input changes (AppTest).

    python tests/perf/bench_app.py [--runs 10]

On the bundled data only (an empty results folder and user snapshot folder). Per page:
  cold     first render with every cache empty (data loaded, models fitted)
  first    first render of a new session once the caches are warm (median of runs)
  rerun    rerun after the page's main input changes (median, min and max of runs)
The Plan page is timed twice: alternating two precisions (after the first two runs its
cached plans are reused), and with a new deadline on every rerun (a new plan each time:
planner.plan.make_plan runs, the fitted models are reused).
The script body runs in-process (no browser, no network): what the server spends on a
rerun before the browser draws it. The goal is a rerun under 0.5 s. Not a test: it prints.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# (page, widget kind, key, two values the rerun alternates between)
CHANGES = {
    "plan": ("radio", "plan.precision", "fp16", "tf32"),
    "scaling": ("selectbox", "scaling.gpu", "H100-SXM", "A100-SXM-40GB"),
    "onprem": ("number_input", "onprem.utilization", 0.7, 0.9),
    "benchmarks": ("selectbox", "benchmarks.model", "resnet50 full", "bert large"),
    "prices": ("multiselect", "prices.providers", ["aws"], ["aws", "gcp", "lambda"]),
}


def clear_caches() -> None:
    """Empty Streamlit's caches (from inside a script run, where they live) and the
    planner's fitted-model cache."""
    from streamlit.testing.v1 import AppTest

    from planner.machines.specs import load_specs
    from planner.throughput import offers as throughput

    AppTest.from_string(
        "import streamlit as st\nst.cache_data.clear()\nst.cache_resource.clear()"
    ).run()
    throughput.clear_caches()
    load_specs.cache_clear()


def timed_run(at) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - start
    if at.exception:
        raise RuntimeError(f"page raised: {at.exception}")
    return elapsed


# (page, widget kind, key, the value of rerun i): every rerun asks for something new.
FRESH = {"plan": ("number_input", "plan.deadline_hours", lambda i: 3.0 + 0.05 * i)}


def measure_fresh(page: str, runs: int) -> dict[str, float]:
    """Reruns that each change the input to a value not seen before (no cached result)."""
    from streamlit.testing.v1 import AppTest

    script = str(ROOT / "planner" / "ui" / "pages" / f"page_{page}.py")
    kind, key, value = FRESH[page]
    at = AppTest.from_file(script, default_timeout=300)
    at.run()
    reruns = []
    for i in range(runs):
        getattr(at, kind)(key=key).set_value(value(i))
        reruns.append(timed_run(at))
    return {
        "rerun": statistics.median(reruns),
        "rerun_min": min(reruns),
        "rerun_max": max(reruns),
    }


def measure(page: str, runs: int) -> dict[str, float]:
    from streamlit.testing.v1 import AppTest

    script = str(ROOT / "planner" / "ui" / "pages" / f"page_{page}.py")
    clear_caches()
    cold = timed_run(AppTest.from_file(script, default_timeout=300))
    firsts = [timed_run(AppTest.from_file(script, default_timeout=300)) for _ in range(runs)]
    kind, key, a, b = CHANGES[page]
    at = AppTest.from_file(script, default_timeout=300)
    at.run()
    reruns = []
    for i in range(runs):
        getattr(at, kind)(key=key).set_value(b if i % 2 == 0 else a)
        reruns.append(timed_run(at))
    return {
        "cold": cold,
        "first": statistics.median(firsts),
        "rerun": statistics.median(reruns),
        "rerun_min": min(reruns),
        "rerun_max": max(reruns),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="runs per median")
    parser.add_argument("--pages", nargs="*", default=list(CHANGES), choices=list(CHANGES))
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="gpuplan-perf-")
    os.environ["GPUPLAN_RESULTS_DIR"] = os.path.join(scratch, "results")
    os.environ["XDG_DATA_HOME"] = os.path.join(scratch, "xdg")
    os.environ.pop("GPUPLAN_SNAPSHOT_DIR", None)
    sys.path.insert(0, str(ROOT))
    import logging

    logging.getLogger("streamlit").setLevel(logging.ERROR)
    print(f"AppTest timings, {args.runs} runs per median, bundled data")
    print(f"{'page':<11} {'cold s':>7} {'first s':>8} {'rerun s':>8} {'min':>6} {'max':>6}  change")
    for page in args.pages:
        m = measure(page, args.runs)
        _, key, a, b = CHANGES[page]
        print(
            f"{page:<11} {m['cold']:7.2f} {m['first']:8.3f} {m['rerun']:8.3f} "
            f"{m['rerun_min']:6.3f} {m['rerun_max']:6.3f}  {key}: {a} <-> {b}"
        )
        if page in FRESH:
            f = measure_fresh(page, args.runs)
            _, key, value = FRESH[page]
            print(
                f"{page:<11} {'':>7} {'':>8} {f['rerun']:8.3f} {f['rerun_min']:6.3f} "
                f"{f['rerun_max']:6.3f}  {key}: a new value each rerun "
                f"({value(0):g}, {value(1):g}, ...)"
            )


if __name__ == "__main__":
    main()
