"""Timings of the throughput engine on the bundled data, as JSON (medians of repeats).

    python tools/bench_throughput.py [--repeats 7]

For three workloads over every bundled offer x GPU counts 1..512 (powers of two):
fitting the model once (spec regression + scaling laws), building the per-GPU curves,
evaluating every (offer, count) as arrays, and the full predict_throughput with its text.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.published import published_frame  # noqa: E402
from planner.throughput import (  # noqa: E402
    model_key,
    throughput_model_for_results,
    throughput_table,
)
from planner.throughput.estimate import (  # noqa: E402
    CURVE_KEY,
    evaluate_curves,
    predict_throughput,
    prepare_queries,
    throughput_curves,
)
from planner.workloads.catalog import get_workload  # noqa: E402
from pricing.catalog import load_offers  # noqa: E402

WORKLOADS = ("resnet50-imagenet-90ep", "bert-large-squad-2ep", "bert-base-squad-2ep")
COUNTS = 2.0 ** np.arange(10)


def median_seconds(step: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    offers = load_offers()
    results = published_frame()
    grid = offers.loc[offers.index.repeat(len(COUNTS)), ["gpu_name"]].reset_index(drop=True)
    grid["total_gpus"] = np.tile(COUNTS, len(offers))
    report: dict[str, object] = {"offers": len(offers), "rows_per_workload": len(grid)}
    start = time.perf_counter()
    models = {w: throughput_model_for_results(results, get_workload(w), "fp16") for w in WORKLOADS}
    report["fit_three_workloads_s"] = time.perf_counter() - start
    prepared = {}
    for name in WORKLOADS:
        workload = get_workload(name)
        queries = grid.assign(model=model_key(workload), precision="fp16")
        q = prepare_queries(models[name], queries)
        keys = q.drop_duplicates(CURVE_KEY)
        figures = throughput_table(results, workload, "fp16")
        index = pd.MultiIndex.from_frame(keys[CURVE_KEY])
        k = index.get_indexer(pd.MultiIndex.from_frame(q[CURVE_KEY]))
        prepared[name] = (queries, keys, figures, k, q["total_gpus"].to_numpy(float))

    def curves_all() -> None:
        for name, (_, keys, figures, _, _) in prepared.items():
            throughput_curves(models[name], keys, figures)

    curves = {n: throughput_curves(models[n], p[1], p[2]) for n, p in prepared.items()}

    def evaluate_all() -> None:
        for name, (_, _, _, k, n) in prepared.items():
            evaluate_curves(curves[name], k, n)

    def predict_all() -> None:
        for name, (queries, _, figures, _, _) in prepared.items():
            predict_throughput(models[name], queries, figures)

    report["curves_three_workloads_s"] = median_seconds(curves_all, args.repeats)
    report["evaluate_three_workloads_s"] = median_seconds(evaluate_all, args.repeats)
    report["predict_with_text_three_workloads_s"] = median_seconds(predict_all, args.repeats)
    print(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in report.items()}))


if __name__ == "__main__":
    main()
