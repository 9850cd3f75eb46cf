"""Benchmark results for planner tests: a ResNet-50 run with the fields a test varies."""

from __future__ import annotations

from typing import Any

from benchmarks.results import BenchmarkResult


def resnet50_run(gpu: str, count: int, throughput: float, **fields: Any) -> BenchmarkResult:
    """A ResNet-50 (full) fp16 result of `throughput` images/s on `count` x `gpu`, published
    by Lambda on 2025-12-01 unless `fields` say otherwise."""
    values: dict[str, Any] = {
        "id": f"pub-{gpu}-{count}",
        "source": "published:lambda",
        "workload": "resnet50",
        "model_size": "full",
        "precision": "fp16",
        "gpu_name": gpu,
        "world_size": count,
        "throughput": throughput,
        "throughput_unit": "images/s",
        "started_at": "2025-12-01",
        "notes": f"Lambda v2 {gpu} x{count}",
    }
    return BenchmarkResult(**(values | fields))
