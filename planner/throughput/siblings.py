"""Same-silicon GPUs: a GPU with no figure takes its sibling's, scaled by what differs.

Siblings are rows of the spec table (planner/data/gpu_specs.csv) with the same architecture
(die) and the same FP32 and FP16 tensor peaks (the same SM count at the same clocks): the
A100 SXM4 40GB and 80GB and the A100 PCIe cards; H100 SXM and H200 SXM; the V100 16GB and
32GB boards. They differ in memory size, bandwidth and power limit, so a figure measured on
one carries to the other through a roofline mix (Williams et al. 2009):

    X_g = X_s t(s) / t(g),    t(g) / t(s) = f P_s / P_g + (1 - f) B_s / B_g

with f the compute-bound share of the step, fitted on pairs of siblings both measured in the
same benchmark generation (per model and precision, else pooled over every model: H100 SXM
against H200 SXM, the same compute at 3.35 and 4.8 TB/s), B the memory bandwidth and P the
sustained compute rate: the same listed peak, scaled by (TDP_g / TDP_s)^(1/3) where the power
limits differ (dynamic power ~ C V^2 f with voltage ~ frequency, so a power cap moves the
sustained clock as its cube root: e.g. Rabaey et al., "Digital Integrated Circuits", 2003,
ch. 5). Memory size is not a speed: it binds only when a batch does not fit, which the step
model decides. A figure on more than one GPU carries only between siblings with the same
interconnect at the same link bandwidth (NVLink boards against NVLink boards).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from planner.codes import ThroughputSource
from planner.machines.silicon import silicon_families, silicon_key
from planner.machines.specs import load_specs
from planner.throughput.scaling import interconnect_class

SIBLING_SOURCE = ThroughputSource.SIBLING.value
# The sustained clock follows the power limit as its cube root (see the module docstring).
TDP_CLOCK_EXPONENT = 1.0 / 3.0
# The compute share used when no pair of siblings was measured in one generation.
DEFAULT_COMPUTE_SHARE = 0.5
SHARE_GRID = np.linspace(0.0, 1.0, 101)


def sibling_ratio(gpu: str, sibling: str, compute_share: float) -> float:
    """X_gpu / X_sibling: the roofline mix of sustained compute (TDP) and bandwidth."""
    return _roofline_mix(*_compute_and_bandwidth_ratios(gpu, sibling), compute_share)


def _compute_and_bandwidth_ratios(gpu: str, sibling: str) -> tuple[float, float]:
    """P_gpu / P_sibling (the TDP ratio to TDP_CLOCK_EXPONENT) and B_gpu / B_sibling."""
    specs = load_specs()
    tdp = float(specs.at[gpu, "tdp_w"]) / float(specs.at[sibling, "tdp_w"])
    bandwidth = float(specs.at[gpu, "memory_bw_gbs"]) / float(specs.at[sibling, "memory_bw_gbs"])
    compute = tdp**TDP_CLOCK_EXPONENT if np.isfinite(tdp) and tdp > 0 else 1.0
    return compute, bandwidth


def _roofline_mix(compute: float, bandwidth: float, compute_share: float) -> float:
    f = float(np.clip(compute_share, 0.0, 1.0))
    return 1.0 / (f / compute + (1.0 - f) / bandwidth)


def compute_share(figures: pd.DataFrame, model: str, precision: str) -> float:
    """f for (model, precision) from `figures` (aggregate_figures' columns: every model,
    generations kept): the grid value with the least squared log error of sibling_ratio
    over the pairs of siblings with 1-GPU figures of one generation; that model's pairs,
    else every model's, else DEFAULT_COMPUTE_SHARE."""
    ones = figures.loc[figures["total_gpus"] == 1]
    ones = ones.assign(_key=silicon_key(ones["gpu_name"].astype(str)))
    ones = ones.loc[ones["_key"] != ""]
    pairs = ones.merge(ones, on=["_key", "model", "precision", "generation"])
    pairs = pairs.loc[pairs["gpu_name_x"] < pairs["gpu_name_y"]]
    own = pairs.loc[(pairs["model"] == model) & (pairs["precision"] == precision)]
    for chosen in (own, pairs):
        if len(chosen):
            observed = np.log(chosen["throughput_x"].to_numpy(float)) - np.log(
                chosen["throughput_y"].to_numpy(float)
            )
            ratios = [
                _compute_and_bandwidth_ratios(g, s)
                for g, s in zip(chosen["gpu_name_x"], chosen["gpu_name_y"], strict=True)
            ]
            errors = [
                sum(
                    (o - np.log(_roofline_mix(c, b, float(f)))) ** 2
                    for o, (c, b) in zip(observed, ratios, strict=True)
                )
                for f in SHARE_GRID
            ]
            return float(SHARE_GRID[int(np.argmin(errors))])
    return DEFAULT_COMPUTE_SHARE


def fabric_keys(gpu_names: list[str]) -> list[str]:
    """Interconnect class and link bandwidth per GPU: a figure on more than one GPU carries
    only between siblings alike in both (the H800 SXM's NVLink is 400 GB/s to the H100
    SXM's 900)."""
    names = pd.Series(gpu_names)
    links = names.map(load_specs()["nvlink_gbs"]).astype(float).fillna(0.0)
    return [f"{c}:{b:g}" for c, b in zip(interconnect_class(names), links, strict=True)]


def with_sibling_figures(figures: pd.DataFrame, share: float) -> pd.DataFrame:
    """`figures` (one model and precision: best_figures' columns) plus, for each GPU of the
    spec table with no figure but a sibling with some, the sibling's figures scaled by
    sibling_ratio at compute share `share` (compute_share), source "sibling" and a detail
    naming the sibling and the ratio. The sibling on the same interconnect comes first,
    then the one least different."""
    if figures.empty:
        return figures
    have = set(figures["gpu_name"].astype(str))
    families = silicon_families()
    added = []
    for gpu in load_specs().index.astype(str):
        if gpu in have:
            continue
        donors = [s for s in families.get(gpu, []) if s in have and s != gpu]
        if not donors:
            continue
        fabric = fabric_keys([gpu, *donors])
        donor = min(
            donors,
            key=lambda s: (
                fabric[1 + donors.index(s)] != fabric[0],
                abs(np.log(sibling_ratio(gpu, s, share))),
            ),
        )
        rows = figures.loc[figures["gpu_name"] == donor].copy()
        same_fabric = fabric[1 + donors.index(donor)] == fabric[0]
        if not same_fabric:
            rows = rows.loc[rows["total_gpus"] == 1]
        if rows.empty:
            continue
        ratio = sibling_ratio(gpu, donor, share)
        for column in ("throughput", "throughput_low", "throughput_high"):
            if column in rows.columns:
                rows[column] = rows[column].astype(float) * ratio
        rows["gpu_name"] = gpu
        rows["source"] = SIBLING_SOURCE
        rows["detail"] = (
            f"{donor} figure x {ratio:.3f} (same silicon; bandwidth and power limit, "
            f"compute share {share:.2f}): " + rows["detail"].astype(str)
        )
        if "interconnect" in rows.columns:
            rows["interconnect"] = interconnect_class(pd.Series([gpu])).iloc[0]
        added.append(rows)
    if not added:
        return figures
    return pd.concat([figures, *added], ignore_index=True)
