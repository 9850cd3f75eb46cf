"""Own runs beside published figures, and throughput per GPU for the Benchmarks page."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from benchmarks.results import BenchmarkResult, results_frame
from planner.throughput.benchmark_compare import (
    COMPARE_COLUMNS,
    measured_vs_published,
    model_label,
    throughput_by_gpu,
)


def result(rid: str, throughput: float, **fields: object) -> BenchmarkResult:
    base: dict[str, object] = {
        "id": rid,
        "workload": "resnet50",
        "model_size": "full",
        "precision": "fp16",
        "device": "cuda",
        "device_name": "NVIDIA H100 80GB HBM3",
        "gpu_name": "H100-SXM",
        "world_size": 1,
        "throughput": throughput,
        "throughput_unit": "images/s",
        "started_at": "2026-11-01T10:00:00",
    }
    return BenchmarkResult(**{**base, **fields})


def published(rid: str, throughput: float, started_at: str, **fields: object) -> BenchmarkResult:
    return result(
        rid,
        throughput,
        source="published:lambda",
        started_at=started_at,
        notes=f"Lambda {rid}",
        device="gpu",
        **fields,
    )


TABLE = results_frame(
    [
        result("own-1", 2400.0),
        result("own-2", 2600.0, started_at="2026-11-02T10:00:00"),
        result("own-cpu", 120.0, device="cpu", device_name="AMD EPYC", gpu_name=None),
        result("own-4", 9000.0, world_size=4),
        published("v0", 2000.0, "2022-07-01"),
        published("v1-a", 3000.0, "2025-12-01"),
        published("v1-b", 3200.0, "2025-12-01"),
        published("v1-bert", 500.0, "2025-12-01", workload="bert", model_size="large"),
    ]
)


def test_own_runs_beside_the_newest_published_figure() -> None:
    side = measured_vs_published(TABLE)
    assert list(side.columns) == list(COMPARE_COLUMNS)
    h100 = side.loc[(side["gpu_name"] == "H100-SXM") & (side["world_size"] == 1)].iloc[0]
    assert h100["measured_throughput"] == 2500.0
    assert h100["measured_runs"] == 2
    assert h100["measured_detail"] == "median of 2 own runs"
    assert h100["published_throughput"] == 3100.0  # v1 only: v0 is an older generation
    assert h100["published_detail"].startswith("median of 2 runs, Lambda v1")
    assert h100["measured_over_published"] == pytest.approx(2500 / 3100)


def test_rows_without_a_published_counterpart_stay() -> None:
    side = measured_vs_published(TABLE).set_index(["gpu_name", "world_size"])
    cpu = side.loc[("AMD EPYC", 1)]
    assert cpu["measured_detail"] == "own run own-cpu"
    assert math.isnan(cpu["published_throughput"])
    assert math.isnan(side.loc[("H100-SXM", 4), "measured_over_published"])


def test_no_own_results_is_an_empty_table() -> None:
    only_published = TABLE.loc[TABLE["source"] != "measured"]
    assert measured_vs_published(only_published).empty


def test_throughput_by_gpu_keeps_every_own_run_and_the_newest_publication() -> None:
    by_gpu = throughput_by_gpu(TABLE, "resnet50 full", "fp16").set_index(
        ["gpu_name", "world_size", "origin"]
    )
    own = by_gpu.loc[("H100-SXM", 1, "own")]
    assert (own["throughput"], own["runs"]) == (2500.0, 2)
    assert (own["throughput_low"], own["throughput_high"]) == (2400.0, 2600.0)
    pub = by_gpu.loc[("H100-SXM", 1, "published")]
    assert (pub["throughput"], pub["runs"]) == (3100.0, 2)
    assert ("AMD EPYC", 1, "own") in by_gpu.index
    assert throughput_by_gpu(TABLE, "bert large", "fp16")["throughput"].tolist() == [500.0]
    assert throughput_by_gpu(TABLE, "resnet50 full", "tf32").empty


def test_model_labels() -> None:
    labels = model_label(pd.Series(["resnet50", "ssd", "bert"]), pd.Series(["full", None, "large"]))
    assert labels.tolist() == ["resnet50 full", "ssd", "bert large"]
