"""GCP GPU machines: host price plus attached GPUs' price, one rule for every GCP source.

GCP bills an accelerator machine as its host (vCPUs and memory) and, in addition, each
attached GPU (cloud.google.com/compute/gpus-pricing: "GPUs are billed in addition to the
machine type"), so both the SkyPilot catalog extract (pricing.providers.skypilot) and the
live Cloud Billing catalog (pricing.providers.gcp) list the two apart. Both compose
offers here: price = host price + the attached GPUs' price, per pricing kind, and missing
when either part is missing (a half price is not a price).
"""

from __future__ import annotations

import pandas as pd

from pricing.catalog import PRICE_COLUMNS

# GCP machine type -> (accelerator label, count) that GCP bills beside the host, for
# sources that do not say (the SkyPilot catalog; the Compute API lists `accelerators`).
# Checked 2026-11 against cloud.google.com/compute/docs/accelerator-optimized-machines.
GCP_HOST_ACCELERATORS: dict[str, tuple[str, int]] = {
    **{f"a2-highgpu-{n}g": ("A100", n) for n in (1, 2, 4, 8)},
    "a2-megagpu-16g": ("A100", 16),
    **{f"a2-ultragpu-{n}g": ("A100-80GB", n) for n in (1, 2, 4, 8)},
    **{f"a3-highgpu-{n}g": ("H100", n) for n in (1, 2, 4, 8)},
    "a3-edgegpu-8g": ("H100", 8),
    "a3-megagpu-8g": ("H100-MEGA", 8),
    "a3-ultragpu-8g": ("H200", 8),
    "a4-highgpu-8g": ("B200", 8),
    **{f"g2-standard-{n}": ("L4", 1) for n in (4, 8, 12, 16, 32)},
    "g2-standard-24": ("L4", 2),
    "g2-standard-48": ("L4", 4),
    "g2-standard-96": ("L4", 8),
}

# N1 hosts take T4, V100 and P100 in fixed counts, each count with a vCPU ceiling;
# keyed by canonical GPU name. Checked 2026-11 against cloud.google.com/compute/docs/gpus
# (N1 + GPU vCPU limits).
GCP_N1_MAX_VCPUS: dict[str, dict[int, int]] = {
    "T4": {1: 48, 2: 48, 4: 96},
    "V100-SXM2-16GB": {1: 12, 2: 24, 4: 48, 8: 96},
    "P100-PCIe": {1: 16, 2: 32, 4: 64},
}


def n1_gpu_counts(gpu_name: str, vcpus: float, max_cards: float | None = None) -> list[int]:
    """GPU counts an N1 host with `vcpus` takes of a GPU (canonical name); [] if none."""
    limits = GCP_N1_MAX_VCPUS.get(gpu_name, {})
    return [
        n for n, cap in limits.items() if vcpus <= cap and (max_cards is None or n <= max_cards)
    ]


def n1_instance_name(host_type: str, count: int, accelerator: str) -> str:
    """The offer name of an N1 host with GPUs attached: 'n1-standard-8 + 1 x T4'."""
    return f"{host_type} + {count} x {accelerator}"


def compose_gpu_machines(
    hosts: pd.DataFrame, attachments: pd.DataFrame, gpus: pd.DataFrame
) -> pd.DataFrame:
    """Offers priced as host + attached GPUs, for every region that prices both.

    hosts:       host_type, region, vcpus, memory_gib and PRICE_COLUMNS (host only)
    attachments: host_type, accelerator, gpu_count, instance_type (the offer's name)
    gpus:        accelerator, gpu_count, region and PRICE_COLUMNS (for that many GPUs),
                 plus any other columns, which are carried through
    Returns one row per (region, instance_type) with PRICE_COLUMNS summed; a (host,
    region) whose region has no price for the GPU gets no row.
    """
    merged = hosts.merge(attachments, on="host_type").merge(
        gpus, on=["accelerator", "gpu_count", "region"], suffixes=("_host", "_gpu")
    )
    for column in PRICE_COLUMNS:
        merged[column] = merged[f"{column}_host"] + merged[f"{column}_gpu"]
    parts = [f"{c}_{s}" for c in PRICE_COLUMNS for s in ("host", "gpu")]
    return merged.drop(columns=parts)
