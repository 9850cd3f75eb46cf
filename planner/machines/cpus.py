"""The CPU spec table: which CPU a CPU-only instance type runs on, its physical cores and
its per-core peak FP32 rate (planner/data/cpu_specs.csv; sources in cpu_specs_SOURCES.md).

Physical cores = vCPUs / threads_per_core (2 on the Intel x86 families, whose vCPUs are
Hyper-Threading siblings; 1 on Graviton, whose vCPU is a core). Per-core peak FP32 GFLOP/s
= fp32_flops_per_cycle x all_core_ghz (the vendor's FMA width and the provider's stated
all-core clock): a datasheet peak, not a training rate (planner.throughput.cpu).
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

import numpy as np
import pandas as pd

CPU_SPEC_COLUMNS: tuple[str, ...] = (
    "family", "provider", "instance_pattern", "cpu_name", "arch", "threads_per_core",
    "fp32_flops_per_cycle", "all_core_ghz", "source_ids",
)  # fmt: skip
# Per instance (cpu_family's columns): the family, its CPU and what a core can do.
CPU_FAMILY_COLUMNS: tuple[str, ...] = (
    "cpu_family", "cpu_name", "cpu_arch", "physical_cores", "peak_gflops_per_core",
)  # fmt: skip


@lru_cache(maxsize=1)
def load_cpu_specs() -> pd.DataFrame:
    """The bundled CPU spec table (CPU_SPEC_COLUMNS), one row per instance family."""
    path = resources.files("planner") / "data" / "cpu_specs.csv"
    with resources.as_file(path) as file:
        table = pd.read_csv(file, dtype={"instance_pattern": str})
    missing = [c for c in CPU_SPEC_COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"planner/data/cpu_specs.csv lacks columns {missing}")
    return table.loc[:, list(CPU_SPEC_COLUMNS)]


def peak_gflops_per_core(specs: pd.DataFrame) -> pd.Series:
    """Datasheet FP32 peak of one core, GFLOP/s: FLOPs per cycle x all-core GHz."""
    return specs["fp32_flops_per_cycle"].astype(float) * specs["all_core_ghz"].astype(float)


def cpu_family(offers: pd.DataFrame, specs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per CPU offer (provider, instance_type, vcpus), aligned to its index: CPU_FAMILY_COLUMNS.

    The family is the first spec row of the offer's provider whose instance_pattern (a
    regular expression) matches the instance type; offers of no family get "" and NaN
    (planner.cpu_baseline leaves them out, noted). physical_cores = vcpus /
    threads_per_core, at least 1.
    """
    specs = load_cpu_specs() if specs is None else specs
    peaks = peak_gflops_per_core(specs)
    rules = [
        (str(spec["provider"]), re.compile(str(spec["instance_pattern"])), spec, float(peak))
        for (_, spec), peak in zip(specs.iterrows(), peaks, strict=True)
    ]
    rows = []
    for provider, instance_type, vcpus in zip(
        offers["provider"].astype(str),
        offers["instance_type"].astype(str),
        offers["vcpus"].astype(float),
        strict=True,
    ):
        found = next(
            (r for r in rules if r[0] == provider and r[1].search(str(instance_type))), None
        )
        if found is None or pd.isna(instance_type):
            rows.append(("", "", "", np.nan, np.nan))
            continue
        _, _, spec, peak = found
        cores = max(vcpus / float(spec["threads_per_core"]), 1.0)
        rows.append((spec["family"], spec["cpu_name"], spec["arch"], cores, peak))
    return pd.DataFrame(rows, columns=list(CPU_FAMILY_COLUMNS), index=offers.index)
