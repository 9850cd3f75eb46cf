"""Parse SkyPilot catalog extracts (reference/pricing/*_vms.csv) into Offer tables.

Pure functions: a catalog DataFrame in, (offers, fixes) out. `fixes` records every row
dropped or value set missing, with the reason, so that nothing is silently discarded
(`reference/pricing/README.md` lists the defects these fixes answer).

Zone rows are collapsed to one offer per region and instance type: the on-demand price
is the same in every zone; spot is the median over the region's zones.
"""

from __future__ import annotations

import ast
import re

import numpy as np
import pandas as pd

from pricing.aliases import AZURE_GPU_COUNT_FIX, resolve_offer_gpu, unsupported_reason
from pricing.catalog import OFFER_COLUMNS, validate_offers
from pricing.gpus import UnknownGPUError
from pricing.providers.common import FIX_COLUMNS, drop_out_of_range, interconnect_for
from pricing.providers.composition import (
    GCP_HOST_ACCELERATORS,
    compose_gpu_machines,
    n1_gpu_counts,
    n1_instance_name,
)

# Providers whose GpuInfo MemoryInfo.SizeInMiB is the instance total, not per GPU.
# Checked 2026-11 on the vast v8 catalog (2x H200 lists 287542 MiB).
GPUINFO_MEMORY_IS_TOTAL = frozenset({"vast"})

# A regional per-GPU price below this fraction of the other regions' median is treated
# as a non-standard SKU (e.g. GCP's first "H100 80GB GPU" SKU may be a DWS/flex price;
# see reference/pricing/README.md) and set missing.
SUSPECT_PRICE_RATIO = 0.6


def _fixes(rows: list[dict[str, str]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(FIX_COLUMNS))


def gpu_memory_mib(gpu_info: object, provider: str, count: float) -> float:
    """Memory of one whole GPU in MiB from a SkyPilot GpuInfo string, NaN when absent.

    A GPU slice (AWS g6f: 0.25 L4 with 5722 MiB) reports the slice's memory; it is
    scaled to the whole GPU, so that gpu_count x gpu_memory_gib is the instance's GPU
    memory for slices and whole GPUs alike.
    """
    if not isinstance(gpu_info, str) or "SizeInMiB" not in gpu_info:
        return float("nan")
    try:
        info = ast.literal_eval(gpu_info)
        size = float(info["Gpus"][0]["MemoryInfo"]["SizeInMiB"])
    except (ValueError, SyntaxError, KeyError, IndexError, TypeError):
        match = re.search(r"'SizeInMiB':\s*([\d.]+)", gpu_info)
        if not match:
            return float("nan")
        size = float(match.group(1))
    if (provider in GPUINFO_MEMORY_IS_TOTAL and count > 0) or 0 < count < 1:
        size /= count
    return size


def _where(frame: pd.DataFrame, mask: pd.Series) -> tuple[str, str]:
    """(regions, instance types) of the masked rows, compact when there are many."""

    def compact(values: pd.Series, noun: str) -> str:
        unique = sorted(set(values.astype(str)))
        return "; ".join(unique) if len(unique) <= 4 else f"{len(unique)} {noun}"

    return compact(frame.loc[mask, "Region"], "regions"), compact(
        frame.loc[mask, "InstanceType"], "instance types"
    )


def _clean_prices(frame: pd.DataFrame, provider: str, fixes: list[dict[str, str]]) -> None:
    """Set placeholder prices (<= 0) and spot >= on-demand to missing, recording why.

    Blank on-demand prices are recorded too (e.g. AWS p5e.48xlarge: capacity blocks only).
    """
    blank = pd.to_numeric(frame["Price"], errors="coerce").isna()
    if blank.any():
        regions, types = _where(frame, blank)
        fixes.append(
            {
                "provider": provider,
                "region": regions,
                "instance_type": types,
                "field": "usd_per_hour",
                "action": "kept missing",
                "reason": "no on-demand price in the catalog",
            }
        )
    for column, label in (("Price", "usd_per_hour"), ("SpotPrice", "spot_usd_per_hour")):
        values = pd.to_numeric(frame[column], errors="coerce")
        for value in sorted(values.loc[values.notna() & (values <= 0)].unique()):
            mask = values == value
            regions, types = _where(frame, mask)
            fixes.append(
                {
                    "provider": provider,
                    "region": regions,
                    "instance_type": types,
                    "field": label,
                    "action": "set missing",
                    "reason": f"placeholder {column}={value:g}: not a price "
                    "(missing or not offered), never free",
                }
            )
        frame[column] = values.where(~(values <= 0))
    not_cheaper = (
        frame["SpotPrice"].notna() & frame["Price"].notna() & (frame["SpotPrice"] >= frame["Price"])
    )
    for _, row in frame.loc[not_cheaper].drop_duplicates(["Region", "InstanceType"]).iterrows():
        fixes.append(
            {
                "provider": provider,
                "region": row["Region"],
                "instance_type": row["InstanceType"],
                "field": "spot_usd_per_hour",
                "action": "set missing",
                "reason": f"spot {row['SpotPrice']:g} is not below on-demand "
                f"{row['Price']:g}: the catalog repeats or mislabels the "
                "on-demand meter",
            }
        )
    frame.loc[not_cheaper, "SpotPrice"] = np.nan


def _collapse_zones(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (Region, InstanceType): on-demand median, spot regional median."""
    first = {
        c: "first"
        for c in frame.columns
        if c not in ("Price", "SpotPrice", "Region", "InstanceType")
    }
    return (
        frame.groupby(["Region", "InstanceType"], sort=True, dropna=False)
        .agg({**first, "Price": "median", "SpotPrice": "median"})
        .reset_index()
    )


def parse_skypilot_vms(
    provider: str, catalog: pd.DataFrame, source: str, priced_at: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Offers and fixes from one provider's SkyPilot `vms.csv` (not GCP: see parse_gcp)."""
    if provider == "gcp":
        return parse_gcp_skypilot_vms(catalog, source, priced_at)
    fixes: list[dict[str, str]] = []
    frame = catalog.copy()
    if "SpotPrice" not in frame:
        frame["SpotPrice"] = np.nan
    frame["Region"] = frame["Region"].astype(str).str.strip().str.lstrip(", ").str.strip()
    has_gpu = frame["AcceleratorName"].notna() & (frame["AcceleratorName"].astype(str) != "")
    cpu_only = frame.loc[~has_gpu, "InstanceType"].nunique()
    if cpu_only:
        fixes.append(
            {
                "provider": provider,
                "region": "*",
                "instance_type": "*",
                "field": "",
                "action": f"dropped {cpu_only} instance types",
                "reason": "CPU-only instance types: no GPU to plan for",
            }
        )
    frame = frame.loc[has_gpu].copy()
    _clean_prices(frame, provider, fixes)
    frame = _collapse_zones(frame)
    rows = []
    for _, row in frame.iterrows():
        accelerator = str(row["AcceleratorName"])
        count = float(
            AZURE_GPU_COUNT_FIX.get(row["InstanceType"], row["AcceleratorCount"])
            if provider == "azure"
            else row["AcceleratorCount"]
        )
        if provider == "azure" and row["InstanceType"] in AZURE_GPU_COUNT_FIX:
            fixes.append(
                {
                    "provider": provider,
                    "region": row["Region"],
                    "instance_type": row["InstanceType"],
                    "field": "gpu_count",
                    "action": f"corrected {row['AcceleratorCount']} -> {count:g}",
                    "reason": "the catalog's GPU count is wrong for this size",
                }
            )
        reason = unsupported_reason(accelerator)
        memory_gib = gpu_memory_mib(row.get("GpuInfo"), provider, count) / 1024
        gpu = None
        if reason is None:
            try:
                gpu = resolve_offer_gpu(provider, accelerator, row["InstanceType"], memory_gib)
            except UnknownGPUError as exc:
                closest = f" (closest known name: {exc.suggestion!r})" if exc.suggestion else ""
                reason = (
                    f"GPU {accelerator!r} is in no quirk table of pricing/aliases.py{closest}; "
                    "add it there to plan for it"
                )
        if gpu is None:
            fixes.append(
                {
                    "provider": provider,
                    "region": row["Region"],
                    "instance_type": row["InstanceType"],
                    "field": "gpu_name",
                    "action": "dropped row",
                    "reason": reason or f"accelerator {accelerator!r} unsupported",
                }
            )
            continue
        rows.append(
            _offer(
                provider,
                row["Region"],
                row["InstanceType"],
                gpu,
                count,
                memory_gib,
                row.get("vCPUs"),
                row.get("MemoryGiB"),
                row["Price"],
                row["SpotPrice"],
                source,
                priced_at,
            )
        )
    return _finish(rows, provider, fixes), _fixes(fixes)


def _offer(
    provider: str,
    region: str,
    instance_type: str,
    gpu: str,
    count: float,
    memory_gib: float,
    vcpus: object,
    memory: object,
    price: float,
    spot: float,
    source: str,
    priced_at: str,
) -> dict[str, object]:
    return {
        "provider": provider,
        "region": region,
        "instance_type": instance_type,
        "gpu_name": gpu,
        "gpu_count": count,
        "gpu_memory_gib": round(memory_gib, 2),
        "vcpus": pd.to_numeric(vcpus, errors="coerce"),
        "memory_gib": pd.to_numeric(memory, errors="coerce"),
        "usd_per_hour": price,
        "spot_usd_per_hour": spot,
        "reserved_1y_usd_per_hour": np.nan,
        "reserved_3y_usd_per_hour": np.nan,
        "interconnect": interconnect_for(gpu, count),
        "source": source,
        "priced_at": priced_at,
    }


def _finish(
    rows: list[dict[str, object]], provider: str, fixes: list[dict[str, str]]
) -> pd.DataFrame:
    offers = drop_out_of_range(pd.DataFrame(rows, columns=list(OFFER_COLUMNS)), provider, fixes)
    offers = offers.sort_values(["region", "gpu_name", "gpu_count", "instance_type"])
    return validate_offers(offers, f"<{provider} catalog>")


def _suspect_regional_prices(accel: pd.DataFrame, fixes: list[dict[str, str]]) -> pd.DataFrame:
    """Set per-GPU prices far below the other regions' median to missing (GCP SKU mix-up)."""
    accel = accel.copy()
    per_gpu = accel["Price"] / accel["AcceleratorCount"]
    accel["_per_gpu"] = per_gpu
    for name, group in accel.groupby("AcceleratorName"):
        by_region = group.groupby("Region")["_per_gpu"].median()
        for region, price in by_region.items():
            others = by_region.drop(region)
            if len(others) and price < SUSPECT_PRICE_RATIO * others.median():
                mask = (accel["AcceleratorName"] == name) & (accel["Region"] == region)
                accel.loc[mask, "Price"] = np.nan
                fixes.append(
                    {
                        "provider": "gcp",
                        "region": str(region),
                        "instance_type": f"{name} GPU",
                        "field": "usd_per_hour",
                        "action": "set missing",
                        "reason": f"per-GPU on-demand ${price:.4g}/h is below "
                        f"{SUSPECT_PRICE_RATIO:g} x the other regions' median "
                        f"${others.median():.4g}/h: likely a non-standard (DWS/flex) SKU",
                    }
                )
    return accel.drop(columns="_per_gpu")


def parse_gcp_skypilot_vms(
    catalog: pd.DataFrame, source: str, priced_at: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """GCP offers: each GPU machine = host machine price + its accelerators' price.

    GCP bills accelerator-optimized (A2/A3/A4/G2) and N1 machines as the host's vCPU and
    memory plus the attached GPUs, so the catalog lists them apart (accelerator rows have
    no InstanceType). Prices and spot are composed per region from regional medians.
    """
    fixes: list[dict[str, str]] = []
    frame = catalog.copy()
    is_host = frame["InstanceType"].notna() & (frame["InstanceType"].astype(str) != "")
    hosts = frame.loc[is_host].copy()
    accel = frame.loc[~is_host].copy()
    tpu = accel["AcceleratorName"].astype(str).str.startswith("tpu")
    if tpu.any():
        fixes.append(
            {
                "provider": "gcp",
                "region": "*",
                "instance_type": "*",
                "field": "gpu_name",
                "action": f"dropped {accel.loc[tpu, 'AcceleratorName'].nunique()} TPU types",
                "reason": unsupported_reason("tpu") or "",
            }
        )
    accel = accel.loc[~tpu].copy()
    accel["InstanceType"] = (
        accel["AcceleratorName"] + " x" + accel["AcceleratorCount"].astype(int).astype(str)
    )
    _clean_prices(hosts, "gcp", fixes)
    _clean_prices(accel, "gcp", fixes)
    accel = _suspect_regional_prices(accel, fixes)
    host_prices = (
        hosts.groupby(["InstanceType", "Region"])
        .agg(
            vcpus=("vCPUs", "first"),
            memory_gib=("MemoryGiB", "first"),
            usd_per_hour=("Price", "median"),
            spot_usd_per_hour=("SpotPrice", "median"),
        )
        .reset_index()
        .rename(columns={"InstanceType": "host_type", "Region": "region"})
    )
    gpu_prices = (
        accel.groupby(["AcceleratorName", "AcceleratorCount", "Region"])
        .agg(
            usd_per_hour=("Price", "median"),
            spot_usd_per_hour=("SpotPrice", "median"),
            gpu_info=("GpuInfo", "first"),
        )
        .reset_index()
        .rename(
            columns={
                "AcceleratorName": "accelerator",
                "AcceleratorCount": "gpu_count",
                "Region": "region",
            }
        )
    )
    for prices in (host_prices, gpu_prices):
        prices["reserved_1y_usd_per_hour"] = np.nan
        prices["reserved_3y_usd_per_hour"] = np.nan
    gpu_prices["gpu_count"] = gpu_prices["gpu_count"].astype(int)
    combos: list[tuple[str, str, int, str]] = []
    for host, vcpus in host_prices.groupby("host_type")["vcpus"].first().items():
        host = str(host)
        if host in GCP_HOST_ACCELERATORS:
            name, count = GCP_HOST_ACCELERATORS[host]
            combos.append((host, name, count, host))
        elif host.startswith("n1-"):
            for name in ("T4", "V100", "P100"):
                combos += [
                    (host, name, n, n1_instance_name(host, n, name))
                    for n in n1_gpu_counts(resolve_offer_gpu("gcp", name, host) or "", float(vcpus))
                ]
    attachments = pd.DataFrame(
        combos, columns=["host_type", "accelerator", "gpu_count", "instance_type"]
    )
    composed = compose_gpu_machines(host_prices, attachments, gpu_prices)
    rows = []
    for m in composed.itertuples():
        machine_gpu = resolve_offer_gpu("gcp", str(m.accelerator), str(m.instance_type))
        assert machine_gpu is not None
        rows.append(
            _offer(
                "gcp",
                m.region,
                m.instance_type,
                machine_gpu,
                float(m.gpu_count),
                gpu_memory_mib(m.gpu_info, "gcp", m.gpu_count) / 1024,
                m.vcpus,
                m.memory_gib,
                m.usd_per_hour,
                m.spot_usd_per_hour,
                source,
                priced_at,
            )
        )
    non_gpu_hosts = sorted(set(host_prices["host_type"]) - {c[0] for c in combos})
    if non_gpu_hosts:
        fixes.append(
            {
                "provider": "gcp",
                "region": "*",
                "instance_type": ", ".join(non_gpu_hosts),
                "field": "",
                "action": f"dropped {len(non_gpu_hosts)} host types",
                "reason": "CPU-only machine types that take no GPU",
            }
        )
    return _finish(rows, "gcp", fixes), _fixes(fixes)


__all__ = ["UnknownGPUError", "parse_gcp_skypilot_vms", "parse_skypilot_vms"]
