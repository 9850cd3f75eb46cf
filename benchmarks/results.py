"""BenchmarkResult: the versioned schema of one benchmark run, and its files.

One JSON file per run. A result is reproducible from its file alone: hardware, full
model and harness config, library versions and date are in it. This module imports no
torch, so the planner and the app can read results anywhere.

Units are in the field names. Fields a run could not measure are null, and
`energy_source` / `power_source` say why ("not measured: no NVML"). Published figures
(Lambda) load into the same schema with `source = "published:lambda"`.

Schema versions: 1 (the first); 2 adds `peak_memory_source`, `samples_per_s_per_core`
and input-pipeline results (workload "input-pipeline", precision null); 3 adds `sweep`
(where a sweep ran it: sweep_id, backend, cloud, region, instance_type, spot); 4 adds
`op_figures`, the operator benchmark's table (workload "ops", precision null: one
benchmarks.op_figures.OpFigure per operator, shape and precision). All four are read;
training and input-pipeline results are written as version 3 (nothing of version 4 is in
them, so a gpuplan that reads 3 reads them), op results as version 4.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from benchmarks.op_figures import OpFigure, OpFigures
from benchmarks.runners.remote_output import plain
from benchmarks.safe_paths import (
    MAX_RESULT_BYTES,
    UnsafeInputError,
    check_result_id,
    loads_bounded,
    path_under,
    read_text_bounded,
    walk_files,
)
from benchmarks.workload_names import (
    NON_TRAINING_WORKLOADS,
    OP_FIGURES_COLUMN,
    OP_WORKLOAD,
)
from edge.files import atomic_write_text

if TYPE_CHECKING:  # pandas is imported where a frame is built: `gpuplan --help` stays light
    import pandas as pd

SCHEMA_VERSION = 3
OP_SCHEMA_VERSION = 4  # the version op results (with op_figures) are written as
SUPPORTED_SCHEMA_VERSIONS = (1, 2, 3, 4)
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
# Fields a version-1 file may not carry (added in version 2).
V2_FIELDS = ("peak_memory_source", "samples_per_s_per_core")
# Fields a version-1 or -2 file may not carry (added in version 3).
V3_FIELDS = ("sweep",)
# Fields a version-1, -2 or -3 file may not carry (added in version 4).
V4_FIELDS = ("op_figures",)
SWEEP_KEYS = ("sweep_id", "backend", "cloud", "region", "instance_type", "spot")
MAX_OP_FIGURES = 2500  # about 560 bytes each: a full file stays under MAX_RESULT_BYTES
# Bounds no real run passes, whatever the GPU (the planner also checks a result against its
# GPU's datasheet peaks: planner.io.result_physics). The largest training clusters hold
# about 10^5 GPUs (xAI Colossus, 2024: 100,000 H100); 10^6 leaves room for growth.
MAX_WORLD_SIZE = 1_000_000  # processes (devices) of one run, and nodes
# Dense peak of the fastest accelerator at its lowest precision is about 4,500 TFLOP/s
# (NVIDIA B200 fp8, datasheet 2024); 20,000 is above any chip's, sparse peaks included.
MAX_DEVICE_TFLOPS = 20_000.0
# One device's samples or tokens per second: a tiny model on one GPU reaches ~10^6; 10^9
# would need a GPU a thousand times faster than any.
MAX_RATE_PER_DEVICE = 1e9
MAX_MFU = 1.0  # achieved / peak FLOP/s: more than the peak is not measured, it is wrong
MAX_STRING_CHARS = 10_000  # of one string read from a result (notes, env, config values)

# Columns of results_frame(): the table the planner joins with offers.
RESULT_COLUMNS: tuple[str, ...] = (
    "id", "source", "workload", "model_size", "precision", "gpu_name", "device_name",
    "device", "world_size", "batch_size_per_device", "throughput", "throughput_unit",
    "throughput_p10", "throughput_p90", "throughput_cv", "samples_per_s", "tokens_per_s",
    "mfu", "achieved_tflops", "peak_memory_gib", "mean_power_w", "energy_j",
    "interconnect", "started_at", "detail", "samples_per_s_per_core", "sweep_id",
    "sweep_provider", "sweep_region", "sweep_instance_type", "compiled",
)  # fmt: skip
# results_frame() columns filled from BenchmarkResult.sweep (NaN for results no sweep ran).
SWEEP_COLUMNS = {
    "sweep_id": "sweep_id", "sweep_provider": "cloud", "sweep_region": "region",
    "sweep_instance_type": "instance_type",
}  # fmt: skip


class ResultFileError(ValueError):
    """A result file that is not a valid BenchmarkResult: names the file and the field."""

    def __init__(self, path: str | Path, field: str, message: str) -> None:
        super().__init__(f"{path}: field {field!r}: {message}")
        self.path = str(path)
        self.field = field


class BenchmarkResult(BaseModel):
    """One benchmark run (or one published figure), frozen and validated where built."""

    # allow_inf_nan=False: every float field must be finite (1e309 or Infinity is refused).
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    schema_version: int = SCHEMA_VERSION
    id: str = Field(min_length=1, description="file name stem: benchmarks.safe_paths pattern")
    source: str = "measured"
    workload: str = Field(min_length=1, description="resnet50 | bert | gpt | published model")
    model_size: str = ""
    precision: Literal["fp32", "tf32", "fp16", "bf16"] | None = Field(
        description="null only for workloads that train nothing (input-pipeline)"
    )
    precision_label: str = ""
    device: Literal["cpu", "cuda", "gpu"] = "cuda"
    device_name: str = ""
    gpu_name: str | None = Field(default=None, description="canonical GPU name when known")
    world_size: int = Field(ge=1, le=MAX_WORLD_SIZE)
    nodes: int = Field(default=1, ge=1, le=MAX_WORLD_SIZE)
    interconnect: str = ""
    batch_size_per_device: float | None = Field(default=None, gt=0, le=1e9)
    throughput: float = Field(gt=0, description="global throughput in throughput_unit")
    throughput_unit: str = "samples/s"
    throughput_p10: float | None = None
    throughput_p90: float | None = None
    throughput_cv: float | None = Field(default=None, ge=0)
    samples_per_s: float | None = Field(default=None, gt=0)
    samples_per_s_per_core: float | None = Field(default=None, gt=0)
    tokens_per_s: float | None = Field(default=None, gt=0)
    step_time_s_p10: float | None = Field(default=None, gt=0)
    step_time_s_p50: float | None = Field(default=None, gt=0)
    step_time_s_p90: float | None = Field(default=None, gt=0)
    step_times_s: list[float] = Field(default_factory=list)
    flops_per_sample: float | None = Field(default=None, gt=0)
    achieved_tflops: float | None = Field(
        default=None,
        ge=0,
        le=MAX_DEVICE_TFLOPS,
        description="model TFLOP/s per device (flops_per_sample based)",
    )
    peak_tflops: float | None = Field(
        default=None, gt=0, le=MAX_DEVICE_TFLOPS, description="per-device peak"
    )
    mfu: float | None = Field(default=None, ge=0, le=MAX_MFU)
    peak_memory_gib: float | None = Field(
        default=None, ge=0, description="largest over devices (processes on CPU)"
    )
    peak_memory_source: str = ""
    mean_power_w: float | None = Field(default=None, ge=0, description="sum over devices")
    power_source: str = "not measured"
    energy_j: float | None = Field(default=None, ge=0, description="sum over devices")
    energy_source: str = "not measured"
    mean_sm_clock_mhz: float | None = None
    env: dict[str, Any] = Field(default_factory=dict)
    config: dict[str, Any] = Field(default_factory=dict)
    started_at: str
    runs_averaged: int | None = Field(default=None, ge=1, le=1_000_000)
    notes: str = ""
    sweep: dict[str, Any] | None = Field(
        default=None, description="set when a sweep ran it: " + ", ".join(SWEEP_KEYS)
    )
    op_figures: list[OpFigure] | None = Field(
        default=None,
        max_length=MAX_OP_FIGURES,
        validate_default=True,
        description="workload ops only: one figure per operator, shape and precision",
    )

    @field_validator("op_figures")
    @classmethod
    def _op_figures_for_ops(
        cls, value: list[OpFigure] | None, info: ValidationInfo
    ) -> list[OpFigure] | None:
        """Op figures come with an op result, and an op result with its figures."""
        workload = info.data.get("workload")
        if workload == OP_WORKLOAD and not value:
            raise ValueError(
                "an ops result needs its op_figures (the measured table); restore them or "
                "re-run `gpuplan bench run --workload ops`"
            )
        if value is not None and workload != OP_WORKLOAD:
            raise ValueError(
                f"op_figures belong to workload {OP_WORKLOAD!r} results only "
                f"(this one is {workload!r}); remove the field"
            )
        return value

    @field_validator("sweep")
    @classmethod
    def _sweep_keys(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is None:
            return value
        unknown = sorted(set(value) - set(SWEEP_KEYS))
        if unknown or not isinstance(value.get("sweep_id"), str):
            raise ValueError(
                f"needs sweep_id and only {', '.join(SWEEP_KEYS)} (got {', '.join(sorted(value))})"
            )
        if not isinstance(value.get("spot", False), bool):
            raise ValueError("spot must be true or false")
        for key in SWEEP_KEYS[:-1]:
            text = value.get(key)
            if text is not None and (not isinstance(text, str) or len(text) > 100):
                raise ValueError(f"{key} must be text of at most 100 characters or null")
        return value

    @field_validator("id")
    @classmethod
    def _safe_id(cls, value: str) -> str:
        try:
            return check_result_id(value)
        except UnsafeInputError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("started_at")
    @classmethod
    def _iso_date(cls, value: str) -> str:
        try:
            dt.datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"{value!r} is not an ISO 8601 date or timestamp") from None
        return value

    @field_validator(
        "throughput",
        "samples_per_s",
        "tokens_per_s",
        "throughput_p10",
        "throughput_p90",
        "achieved_tflops",
        "mfu",
    )
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value

    @field_validator("throughput", "samples_per_s", "tokens_per_s")
    @classmethod
    def _a_rate_a_device_can_reach(cls, value: float | None, info: ValidationInfo) -> float | None:
        """Samples or tokens per second per device below MAX_RATE_PER_DEVICE."""
        devices = info.data.get("world_size") or 1
        if value is not None and value / devices > MAX_RATE_PER_DEVICE:
            raise ValueError(
                f"{value:.4g} is {value / devices:.4g} per device; no device reaches "
                f"{MAX_RATE_PER_DEVICE:.0e} per second: restore the measured figure"
            )
        return value

    @field_validator("precision")
    @classmethod
    def _precision_needed(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None and info.data.get("workload") not in NON_TRAINING_WORKLOADS:
            raise ValueError(
                f"required for a training workload ({', '.join(PRECISIONS)}); "
                f"only {', '.join(NON_TRAINING_WORKLOADS)} results may leave it null"
            )
        return value

    def to_json(self) -> str:
        """The file text of this result: stable key order, 2-space indent (no op_figures
        key unless it has some: a version-3 file stays what a version-3 reader reads)."""
        unset = {"op_figures"} if self.op_figures is None else None
        return self.model_dump_json(indent=2, exclude=unset) + "\n"


def parse_result(data: Any, path: str | Path = "<result>") -> BenchmarkResult:
    """Validate a decoded JSON object as a BenchmarkResult, naming the first bad field."""
    if not isinstance(data, dict):
        raise ResultFileError(path, "<root>", "expected a JSON object")
    version = data.get("schema_version", SCHEMA_VERSION)
    if type(version) is not int or version not in SUPPORTED_SCHEMA_VERSIONS:
        readable = ", ".join(str(v) for v in SUPPORTED_SCHEMA_VERSIONS)
        raise ResultFileError(
            path,
            "schema_version",
            f"version {version!r} is not supported (this gpuplan reads {readable}); "
            "upgrade gpuplan or re-run the benchmark",
        )
    added = (
        {name: 2 for name in V2_FIELDS}
        | {name: 3 for name in V3_FIELDS}
        | {name: 4 for name in V4_FIELDS}
    )
    for name, since in added.items():
        if version < since and data.get(name) is not None:
            raise ResultFileError(
                path, name, f"added in schema version {since}; set schema_version to {since}"
            )
    try:
        # the id is checked as given: its pattern refuses control characters outright
        raw_id = {"id": data["id"]} if "id" in data else {}
        return BenchmarkResult.model_validate(plain_strings(data) | raw_id)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "<root>"
        message = first["msg"].removeprefix("Value error, ")
        raise ResultFileError(path, field, message) from None


def plain_strings(data: Any) -> Any:
    """`data` (decoded JSON) with every string, keys too, made plain text: terminal escape
    sequences and control characters removed (benchmarks.runners.remote_output.plain, the
    cleaning of what a remote prints), cut at MAX_STRING_CHARS. A result's strings are
    shown in tables and the app; a device name must not retitle or clear a terminal."""
    if isinstance(data, str):
        return plain(data, MAX_STRING_CHARS)
    if isinstance(data, dict):
        return {plain_strings(k): plain_strings(v) for k, v in data.items()}
    if isinstance(data, list):
        return [plain_strings(v) for v in data]
    return data


def read_result(path: str | Path) -> BenchmarkResult:
    """Read and validate one result file (a regular UTF-8 file of at most MAX_RESULT_BYTES,
    JSON nested at most MAX_JSON_DEPTH deep, finite numbers)."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        raise FileNotFoundError(str(path))
    try:
        data = loads_bounded(read_text_bounded(path, MAX_RESULT_BYTES))
    except json.JSONDecodeError as exc:
        raise ResultFileError(
            path, "<json>", f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except UnsafeInputError as exc:
        raise ResultFileError(path, "<file>", str(exc)) from None
    return parse_result(data, path)


def result_path(result: BenchmarkResult, directory: str | Path) -> Path:
    """Where write_result puts a result: DIR/<id>.json (UnsafeInputError when that would
    resolve outside DIR, e.g. through a symlink)."""
    return path_under(directory, f"{check_result_id(result.id)}.json")


def write_result(result: BenchmarkResult, directory: str | Path) -> Path:
    """Write a result atomically (temp file + rename) inside `directory`; returns the path.

    UnsafeInputError when the target would land outside `directory`."""
    Path(directory).mkdir(parents=True, exist_ok=True)
    path = result_path(result, directory)
    atomic_write_text(path, result.to_json())
    return path


def load_results(directory: str | Path) -> tuple[list[BenchmarkResult], list[str]]:
    """Every valid result in a folder (sub-folders too), and one message per skipped entry.

    Nothing in the folder stops the others from loading: an invalid file, a folder named
    *.json, a dangling link, a file too large or nested too deep, a folder too deep is
    named in a message (the caller shows them) and left out.
    """
    directory = Path(directory)
    results: list[BenchmarkResult] = []
    problems: list[str] = []
    try:
        if not directory.exists():
            return results, problems
        if not directory.is_dir():
            return results, [str(ResultFileError(directory, "<folder>", "not a folder"))]
    except OSError as exc:
        return results, [str(ResultFileError(directory, "<folder>", f"unusable ({exc})"))]
    paths, skipped = walk_files(directory, ".json")
    problems.extend(str(ResultFileError(path, "<file>", why)) for path, why in skipped)
    for path in paths:
        try:
            results.append(read_result(path))
        except ResultFileError as exc:
            problems.append(str(exc))
        except (OSError, ValueError, RecursionError) as exc:  # never let one entry stop all
            problems.append(str(ResultFileError(path, "<file>", f"cannot be read ({exc})")))
    return results, problems


def results_frame(results: Iterable[BenchmarkResult]) -> pd.DataFrame:
    """Results as a table with RESULT_COLUMNS (`detail` says where each figure came from;
    the sweep_* columns say which sweep ran it on which cloud instance type, if one did;
    `compiled`: whether it ran under torch.compile, None where the result does not say).

    Op results (workload ops) measure operators, not a model's training: their row has
    no throughput (NaN, so no throughput table or fit takes them for a model's figure;
    `achieved_tflops` is their best GEMM rate) and their table is in OP_FIGURES_COLUMN,
    added when any result is one (planner.llm.op_efficiency reads it).
    """
    import pandas as pd

    results = list(results)
    rows = []
    for r in results:
        row = {c: getattr(r, c, None) for c in RESULT_COLUMNS if c != "detail"}
        row["detail"] = r.notes or r.device_name
        row["compiled"] = r.config.get("compile")  # torch.compile; None: not said (published)
        for column, key in SWEEP_COLUMNS.items():
            row[column] = (r.sweep or {}).get(key)
        if r.op_figures is not None:
            row.update(throughput=None, throughput_p10=None, throughput_p90=None)
        rows.append(row)
    frame = pd.DataFrame(rows, columns=list(RESULT_COLUMNS))
    if any(r.op_figures is not None for r in results):
        frame[OP_FIGURES_COLUMN] = pd.Series(
            [None if r.op_figures is None else OpFigures(r.op_figures) for r in results],
            index=frame.index,
            dtype=object,
        )
    for column in (
        "throughput",
        "throughput_p10",
        "throughput_p90",
        "throughput_cv",
        "samples_per_s",
        "tokens_per_s",
        "mfu",
        "achieved_tflops",
        "batch_size_per_device",
        "peak_memory_gib",
        "mean_power_w",
        "energy_j",
    ):
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(float)
    frame["world_size"] = frame["world_size"].astype(int)
    return frame
