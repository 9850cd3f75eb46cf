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
from typing import Any

import numpy as np
import pandas as pd

from pricing.aliases import AZURE_GPU_COUNT_FIX, resolve_offer_gpu, unsupported_reason
from pricing.gpus import UnknownGPUError
from pricing.providers.common import (
    Fix,
    finish_offers,
    fix,
    fixes_frame,
    interconnect_for,
    resolve_gpu,
)
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


def _clean_prices(frame: pd.DataFrame, provider: str, fixes: list[Fix]) -> None:
    """Set placeholder prices (<= 0) and spot >= on-demand to missing, recording why.

    Blank on-demand prices are recorded too (e.g. AWS p5e.48xlarge: capacity blocks only).
    """
    blank = pd.to_numeric(frame["Price"], errors="coerce").isna()
    if blank.any():
        regions, types = _where(frame, blank)
        why = "no on-demand price in the catalog"
        fixes.append(fix(provider, regions, types, "usd_per_hour", "kept missing", why))
    for column, label in (("Price", "usd_per_hour"), ("SpotPrice", "spot_usd_per_hour")):
        values = pd.to_numeric(frame[column], errors="coerce")
        for value in sorted(values.loc[values.notna() & (values <= 0)].unique()):
            mask = values == value
            regions, types = _where(frame, mask)
            why = (
                f"placeholder {column}={value:g}: not a price (missing or not offered), never free"
            )
            fixes.append(fix(provider, regions, types, label, "set missing", why))
        frame[column] = values.where(~(values <= 0))
    not_cheaper = (
        frame["SpotPrice"].notna() & frame["Price"].notna() & (frame["SpotPrice"] >= frame["Price"])
    )
    for _, row in frame.loc[not_cheaper].drop_duplicates(["Region", "InstanceType"]).iterrows():
        why = (
            f"spot {row['SpotPrice']:g} is not below on-demand {row['Price']:g}: the catalog "
            "repeats or mislabels the on-demand meter"
        )
        region, instance = row["Region"], row["InstanceType"]
        fixes.append(fix(provider, region, instance, "spot_usd_per_hour", "set missing", why))
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


def host_medians(rows: pd.DataFrame, type_column: str, **first_of: str) -> pd.DataFrame:
    """Per (region, type) of catalog rows without their own GPU: vcpus, memory_gib, each
    `first_of` column (output name = catalog column) and the on-demand and spot USD/h, the
    medians over the region's zones; the type named `type_column`."""
    first = {name: (column, "first") for name, column in first_of.items()}
    return (
        rows.groupby(["Region", "InstanceType"], sort=True)
        .agg(
            vcpus=("vCPUs", "first"),
            memory_gib=("MemoryGiB", "first"),
            **first,
            usd_per_hour=("Price", "median"),
            spot_usd_per_hour=("SpotPrice", "median"),
        )
        .reset_index()
        .rename(columns={"Region": "region", "InstanceType": type_column})
    )


def parse_skypilot_vms(
    provider: str, catalog: pd.DataFrame, source: str, priced_at: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Offers and fixes from one provider's SkyPilot `vms.csv` (not GCP: see parse_gcp)."""
    if provider == "gcp":
        return parse_gcp_skypilot_vms(catalog, source, priced_at)
    fixes: list[Fix] = []
    frame = _gpu_rows(provider, catalog, fixes)
    _clean_prices(frame, provider, fixes)
    frame = _collapse_zones(frame)
    rows = [_zone_offer(provider, row, source, priced_at, fixes) for _, row in frame.iterrows()]
    offers = [row for row in rows if row is not None]
    return finish_offers(offers, provider, fixes), fixes_frame(fixes)


def _gpu_rows(provider: str, catalog: pd.DataFrame, fixes: list[Fix]) -> pd.DataFrame:
    """The catalog's rows with an accelerator, regions trimmed and a SpotPrice column
    (USD/h, missing where the catalog has none); CPU-only instance types dropped on record."""
    frame = catalog.copy()
    if "SpotPrice" not in frame:
        frame["SpotPrice"] = np.nan
    frame["Region"] = frame["Region"].astype(str).str.strip().str.lstrip(", ").str.strip()
    has_gpu = frame["AcceleratorName"].notna() & (frame["AcceleratorName"].astype(str) != "")
    cpu_only = frame.loc[~has_gpu, "InstanceType"].nunique()
    if cpu_only:
        fixes.append(
            fix(
                provider,
                "*",
                "*",
                "",
                f"dropped {cpu_only} instance types",
                "CPU-only instance types: no GPU to plan for",
            )
        )
    return frame.loc[has_gpu].copy()


def _gpu_count(provider: str, row: pd.Series, fixes: list[Fix]) -> float:
    """GPUs per instance: the catalog's AcceleratorCount, or for an Azure size whose count
    the catalog has wrong, pricing.aliases.AZURE_GPU_COUNT_FIX's (on record)."""
    if provider != "azure" or row["InstanceType"] not in AZURE_GPU_COUNT_FIX:
        return float(row["AcceleratorCount"])
    count = float(AZURE_GPU_COUNT_FIX[row["InstanceType"]])
    fixes.append(
        fix(
            provider,
            row["Region"],
            row["InstanceType"],
            "gpu_count",
            f"corrected {row['AcceleratorCount']} -> {count:g}",
            "the catalog's GPU count is wrong for this size",
        )
    )
    return count


def _zone_offer(
    provider: str, row: pd.Series, source: str, priced_at: str, fixes: list[Fix]
) -> dict[str, object] | None:
    """The offer of one collapsed catalog row (one region and instance type), or None
    (on record) where its accelerator is not a GPU gpuplan plans for."""
    accelerator = str(row["AcceleratorName"])
    count = _gpu_count(provider, row, fixes)
    memory_gib = gpu_memory_mib(row.get("GpuInfo"), provider, count) / 1024
    gpu, reason = resolve_gpu(provider, accelerator, row["InstanceType"], memory_gib)
    if gpu is None:
        why = reason or f"accelerator {accelerator!r} unsupported"
        region, instance = row["Region"], row["InstanceType"]
        fixes.append(fix(provider, region, instance, "gpu_name", "dropped row", why))
        return None
    return _offer(
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


def _suspect_regional_prices(accel: pd.DataFrame, fixes: list[Fix]) -> pd.DataFrame:
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
                why = (
                    f"per-GPU on-demand ${price:.4g}/h is below {SUSPECT_PRICE_RATIO:g} x the "
                    f"other regions' median ${others.median():.4g}/h: likely a non-standard "
                    "(DWS/flex) SKU"
                )
                gpu = f"{name} GPU"
                fixes.append(fix("gcp", str(region), gpu, "usd_per_hour", "set missing", why))
    return accel.drop(columns="_per_gpu")


def parse_gcp_skypilot_vms(
    catalog: pd.DataFrame, source: str, priced_at: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """GCP offers: each GPU machine = host machine price + its accelerators' price.

    GCP bills accelerator-optimized (A2/A3/A4/G2) and N1 machines as the host's vCPU and
    memory plus the attached GPUs, so the catalog lists them apart (accelerator rows have
    no InstanceType). Prices and spot are composed per region from regional medians.
    """
    fixes: list[Fix] = []
    hosts, accel = _gcp_hosts_and_gpus(catalog, fixes)
    host_prices = _gcp_host_prices(hosts)
    attachments = _gcp_attachments(host_prices)
    composed = compose_gpu_machines(host_prices, attachments, _gcp_gpu_prices(accel))
    rows = [_gcp_offer(machine, source, priced_at) for machine in composed.itertuples()]
    non_gpu_hosts = sorted(set(host_prices["host_type"]) - set(attachments["host_type"]))
    if non_gpu_hosts:
        fixes.append(
            fix(
                "gcp",
                "*",
                ", ".join(non_gpu_hosts),
                "",
                f"dropped {len(non_gpu_hosts)} host types",
                "CPU-only machine types that take no GPU",
            )
        )
    return finish_offers(rows, "gcp", fixes), fixes_frame(fixes)


def _gcp_hosts_and_gpus(
    catalog: pd.DataFrame, fixes: list[Fix]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(host machine rows, accelerator rows) of the GCP catalog, prices cleaned
    (_clean_prices; per-GPU prices far below other regions', _suspect_regional_prices).

    Accelerator rows (no InstanceType) are named 'A100 x8' by label and count; TPUs are
    dropped on record.
    """
    frame = catalog.copy()
    is_host = frame["InstanceType"].notna() & (frame["InstanceType"].astype(str) != "")
    hosts = frame.loc[is_host].copy()
    accel = frame.loc[~is_host].copy()
    tpu = accel["AcceleratorName"].astype(str).str.startswith("tpu")
    if tpu.any():
        fixes.append(
            fix(
                "gcp",
                "*",
                "*",
                "gpu_name",
                f"dropped {accel.loc[tpu, 'AcceleratorName'].nunique()} TPU types",
                unsupported_reason("tpu") or "",
            )
        )
    accel = accel.loc[~tpu].copy()
    accel["InstanceType"] = (
        accel["AcceleratorName"] + " x" + accel["AcceleratorCount"].astype(int).astype(str)
    )
    _clean_prices(hosts, "gcp", fixes)
    _clean_prices(accel, "gcp", fixes)
    return hosts, _suspect_regional_prices(accel, fixes)


def _no_reserved(prices: pd.DataFrame) -> pd.DataFrame:
    """The price table with the reserved columns missing (the catalog has no reserved)."""
    return prices.assign(reserved_1y_usd_per_hour=np.nan, reserved_3y_usd_per_hour=np.nan)


def _gcp_host_prices(hosts: pd.DataFrame) -> pd.DataFrame:
    """Per (host_type, region): vcpus, memory_gib and the host's on-demand and spot USD/h,
    the medians over the region's zones (reserved missing)."""
    return _no_reserved(host_medians(hosts, "host_type"))


def _gcp_gpu_prices(accel: pd.DataFrame) -> pd.DataFrame:
    """Per (accelerator, gpu_count, region): that many GPUs' on-demand and spot USD/h,
    the medians over the region's zones, with their GpuInfo (reserved missing)."""
    prices = (
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
    prices = _no_reserved(prices)
    prices["gpu_count"] = prices["gpu_count"].astype(int)
    return prices


def _gcp_attachments(host_prices: pd.DataFrame) -> pd.DataFrame:
    """The GPUs each host type takes: host_type, accelerator, gpu_count, instance_type.

    Accelerator-optimized hosts come with theirs (GCP_HOST_ACCELERATORS); N1 hosts take
    T4, V100 or P100 in the counts their vCPUs allow (n1_gpu_counts).
    """
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
    return pd.DataFrame(combos, columns=["host_type", "accelerator", "gpu_count", "instance_type"])


def _gcp_offer(machine: Any, source: str, priced_at: str) -> dict[str, object]:
    """The offer of one composed GCP machine (compose_gpu_machines' row)."""
    gpu = resolve_offer_gpu("gcp", str(machine.accelerator), str(machine.instance_type))
    assert gpu is not None
    return _offer(
        "gcp",
        machine.region,
        machine.instance_type,
        gpu,
        float(machine.gpu_count),
        gpu_memory_mib(machine.gpu_info, "gcp", machine.gpu_count) / 1024,
        machine.vcpus,
        machine.memory_gib,
        machine.usd_per_hour,
        machine.spot_usd_per_hour,
        source,
        priced_at,
    )


__all__ = ["UnknownGPUError", "parse_gcp_skypilot_vms", "parse_skypilot_vms"]
