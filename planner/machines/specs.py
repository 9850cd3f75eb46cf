"""GPU spec table (planner/data/gpu_specs.csv): peak FLOPS by precision, memory, power.

Built from reference/gpu_specs.csv (vendor datasheets cross-checked against Epoch AI;
sources in planner/data/gpu_specs_SOURCES.md). Tensor throughput is always **dense**
(no 2:4 sparsity). Columns, one row per canonical GPU name:

gpu_name, spec_model, vendor, architecture, form_factor, release_year,
memory_gb (GB), memory_bw_gbs (GB/s), fp32_tflops, tf32_tflops, fp16_tflops,
bf16_tflops (blank before Ampere), fp8_tflops, tdp_w (W), nvlink_gbs (GB/s bidirectional
per GPU), pcie_gen, interconnect_note, confidence, source_ids, notes.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from pathlib import Path

import pandas as pd

from pricing.gpus import CANONICAL_GPUS, USER_ALIASES, UnknownGPUError, canonical_gpu, did_you_mean

PEAK_COLUMN_BY_PRECISION: dict[str, str] = {
    "fp32": "fp32_tflops",
    "tf32": "tf32_tflops",
    "fp16": "fp16_tflops",
    "bf16": "bf16_tflops",
}


def specs_path() -> Path:
    """The bundled spec CSV."""
    return Path(str(resources.files("planner") / "data" / "gpu_specs.csv"))


@lru_cache(maxsize=1)
def load_specs() -> pd.DataFrame:
    """The spec table indexed by canonical gpu_name (read once, then cached)."""
    return pd.read_csv(specs_path()).set_index("gpu_name", drop=False)


def spec_for(gpu: str) -> pd.Series:
    """The spec row of a GPU (any alias); UnknownGPUError names the closest match."""
    name = canonical_gpu(gpu)
    specs = load_specs()
    if name not in specs.index:
        raise UnknownGPUError(gpu, "no row in planner/data/gpu_specs.csv")
    return specs.loc[name]


def gpu_name_hint(label: str, also: Iterable[str] = ()) -> str:
    """'; did you mean 'X'?' (or '') for an unknown GPU `label`, among the canonical names,
    the user's aliases and `also`."""
    return did_you_mean(label, [*CANONICAL_GPUS, *USER_ALIASES, *also])


def peak_tflops(gpu: str, precision: str) -> float:
    """Dense peak TFLOP/s of a GPU at a precision; NaN when the chip lacks it.

    fp32 is the non-tensor (CUDA-core) peak; tf32/fp16/bf16 are dense tensor-core peaks
    with FP32 accumulate, which is what PyTorch autocast uses (see gpu_specs_SOURCES.md).
    """
    if precision not in PEAK_COLUMN_BY_PRECISION:
        raise ValueError(
            f"unknown precision {precision!r}; valid: {', '.join(PEAK_COLUMN_BY_PRECISION)}"
        )
    return float(spec_for(gpu)[PEAK_COLUMN_BY_PRECISION[precision]])
