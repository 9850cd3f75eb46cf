"""The perf script's code path on a small input: it plans, and reports what it timed."""

from __future__ import annotations

from benchmarks.published import published_frame
from pricing.catalog import load_offers
from tests.perf.bench_planner import WORKLOADS, measure


def test_bench_planner_reports_plans_and_timings() -> None:
    offers = load_offers()
    some = offers.loc[offers["provider"].isin(["aws", "lambda"])].head(40)
    report = measure(some, published_frame(), repeats=2, draws=300, max_gpus=64)
    assert report["offers"] == 40 and report["draws"] == 300
    for pricing in ("on-demand", "spot"):
        section = report[pricing]
        for name, _ in WORKLOADS:
            entry = section[name]
            assert entry["rows"] > 0 and entry["options"] >= entry["rows"]
            assert 0 < entry["min_s"] <= entry["median_s"] <= entry["max_s"]
        assert section["three_workloads"]["median_s"] > 0
    # Spot rows on the frontier are simulated; on-demand rows need no simulation.
    assert report["spot"]["resnet50-imagenet-90ep"]["simulated_rows"] > 0
    assert report["on-demand"]["resnet50-imagenet-90ep"]["simulated_rows"] == 0
    assert report["worst_plan_median_s"] >= report["spot"]["resnet50-imagenet-90ep"]["median_s"]
