"""Published PyTorch training throughput (Lambda's deeplearning-benchmark), as results.

The bundled CSV is built from reference/benchmarks/lambda_pytorch_throughput.csv by
tools/build_bundled_data.py: rows Lambda's data marks suspect (`flag`) and laptop GPUs
(no spec row) are excluded; `gpu_name` is the canonical GPU name. See README.md here.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:  # the result schema (pydantic) loads where results are built
    from benchmarks.results import BenchmarkResult

PUBLISHED_CSV = "lambda_pytorch_throughput.csv"
SOURCE = "published:lambda"

# Lambda model names -> (gpuplan workload, model size).
MODEL_MAP: dict[str, tuple[str, str]] = {
    "resnet50": ("resnet50", "full"),
    "bert_large_squad": ("bert", "large"),
    "bert_base_squad": ("bert", "base"),
}
# Lambda precision labels -> gpuplan precision (fp16_amp is mixed precision, AMP).
PRECISION_MAP: dict[str, str] = {"fp16_amp": "fp16", "tf32": "tf32", "fp32": "fp32"}
SAMPLE_UNITS = {"images/s", "sequences/s", "samples/s"}
# Rows kept aside to evaluate gpuplan against, never bundled or fitted to: Lambda's 8-GPU
# runs and its A100 80GB (PCIe and SXM4) and RTX 4090 rows.
HELD_OUT_GPU_PATTERN = r"A100.*80\s*GB|RTX\s*4090"
HELD_OUT_MIN_GPUS = 8


def held_out(table: pd.DataFrame) -> pd.Series:
    """True for rows of `table` (Lambda's columns gpu_model, num_gpus) kept for evaluation."""
    gpu = table["gpu_model"].astype(str).str.contains(HELD_OUT_GPU_PATTERN, regex=True)
    return gpu | (pd.to_numeric(table["num_gpus"], errors="coerce") >= HELD_OUT_MIN_GPUS)


# When each benchmark generation was published (commit dates in Lambda's repository).
PUBLISHED_ON: dict[str, str] = {"v0": "2022-07-01", "v1": "2025-12-01", "v2": "2025-12-01"}


def published_csv_path() -> Path:
    """The bundled published-throughput CSV."""
    return Path(str(resources.files("benchmarks.published") / PUBLISHED_CSV))


def read_published_table(path: Path | None = None) -> pd.DataFrame:
    """The published rows as Lambda's columns (gpu_model, num_gpus, model, precision, ...)."""
    return pd.read_csv(path or published_csv_path())


def _to_result(row: pd.Series) -> BenchmarkResult:
    from benchmarks.results import BenchmarkResult

    workload, size = MODEL_MAP.get(row["model"], (row["model"], ""))
    unit = row["unit"]
    throughput = float(row["throughput"])
    per_gpu_batch = row.get("batch_size_per_gpu")
    return BenchmarkResult(
        id=row["id"],
        source=SOURCE,
        workload=workload,
        model_size=size,
        precision=PRECISION_MAP[row["precision"]],
        precision_label=row["precision"],
        device="gpu",
        device_name=str(row["lambda_config"]),
        gpu_name=row["gpu_name"],
        world_size=int(row["num_gpus"]),
        interconnect=str(row.get("interconnect_note") or ""),
        batch_size_per_device=float(per_gpu_batch) if pd.notna(per_gpu_batch) else None,
        throughput=throughput,
        throughput_unit=unit,
        samples_per_s=throughput if unit in SAMPLE_UNITS else None,
        tokens_per_s=throughput if unit == "tokens/s" else None,
        env={
            "container": row["container"],
            "host_or_vendor": row["host_or_vendor"],
            "benchmark_version": row["benchmark_version"],
        },
        config={
            "model": row["model"],
            "global_batch_size": row["batch_size"],
            "lambda_gpu_model": row["gpu_model"],
        },
        started_at=PUBLISHED_ON[row["benchmark_version"]],
        runs_averaged=int(row["runs_averaged"]) if pd.notna(row.get("runs_averaged")) else None,
        notes=f"Lambda {row['benchmark_version']} {row['lambda_config']} ({row['source']})",
    )


def published_frame() -> pd.DataFrame:
    """The published results as a results_frame() table, built column-wise (no row loop)."""
    from benchmarks.results import results_frame

    table = read_published_table()
    models = table["model"].map(lambda m: MODEL_MAP.get(m, (m, "")))
    sample_unit = table["unit"].isin(SAMPLE_UNITS)
    frame = pd.DataFrame(
        {
            "id": table["id"],
            "source": SOURCE,
            "workload": models.str[0],
            "model_size": models.str[1],
            "precision": table["precision"].map(PRECISION_MAP),
            "gpu_name": table["gpu_name"],
            "device_name": table["lambda_config"].astype(str),
            "device": "gpu",
            "world_size": table["num_gpus"].astype(int),
            "batch_size_per_device": table["batch_size_per_gpu"].astype(float),
            "throughput": table["throughput"].astype(float),
            "throughput_unit": table["unit"],
            "samples_per_s": table["throughput"].where(sample_unit).astype(float),
            "tokens_per_s": table["throughput"].where(table["unit"] == "tokens/s").astype(float),
            "interconnect": table["interconnect_note"].fillna("").astype(str),
            "started_at": table["benchmark_version"].map(PUBLISHED_ON),
            "detail": "Lambda "
            + table["benchmark_version"]
            + " "
            + table["lambda_config"].astype(str),
        }
    )
    return frame.reindex(columns=list(results_frame([]).columns))
