"""Same-silicon GPUs: rows of the spec table (planner/data/gpu_specs.csv) with the same
architecture (die) and the same FP32 and FP16 tensor peaks, i.e. the same SM count at the
same clocks (the A100 SXM4 40GB and 80GB and the A100 PCIe cards; H100 SXM, H200 SXM and
H800 SXM; the V100 16GB and 32GB boards). A figure measured on one carries to the others:
planner.throughput.siblings scales throughput between them, planner.llm.matmul_rates lends
a board without its own best-GEMM figure its sibling's."""

from __future__ import annotations

import pandas as pd

from planner.machines.specs import load_specs


def silicon_key(gpu_names: pd.Series) -> pd.Series:
    """One key per die and clock (architecture, FP32 and FP16 peaks); "" without a spec."""
    specs = load_specs()
    parts = [gpu_names.map(specs[c]).astype(str) for c in ("architecture", "fp32_tflops")]
    fp16 = gpu_names.map(specs["fp16_tflops"]).astype(str)
    key = parts[0] + "|" + parts[1] + "|" + fp16
    known = gpu_names.isin(specs.index)
    return key.where(known, "")


def siblings_of(gpu_name: str) -> list[str]:
    """The other GPUs of the spec table on the same silicon (silicon_key)."""
    return [n for n in silicon_families().get(gpu_name, []) if n != gpu_name]


def silicon_families() -> dict[str, list[str]]:
    """Each GPU of the spec table with a silicon_key: every GPU on its silicon (itself
    included, in the table's order). The table is keyed once for all its GPUs."""
    names = pd.Series(load_specs().index, dtype=str)
    by_key: dict[str, list[str]] = {}
    for name, key in zip(names, silicon_key(names), strict=True):
        if key:
            by_key.setdefault(key, []).append(name)
    return {name: family for family in by_key.values() for name in family}
