"""Parse the CPU-only rows of SkyPilot catalog extracts into a CPU offer table
(pricing.cpu_offers). Pure: a catalog DataFrame in, (offers, fixes) out.

CPU-only rows are those without an accelerator: AWS and Azure rows with an empty
AcceleratorName; GCP machine types that take no GPU of their own (not the a2/a3/a4/g2
hosts, whose price is only the host part of a GPU machine; n1 types are whole machines
without a GPU). Zones collapse to one offer per region and type (on-demand and spot: the
medians over the region's zones), as for GPU offers (pricing.providers.skypilot).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pricing.cpu_offers import CPU_OFFER_COLUMNS, validate_cpu_offers
from pricing.providers.common import Fix, fix, fixes_frame
from pricing.providers.composition import GCP_HOST_ACCELERATORS
from pricing.providers.skypilot import host_medians

# The architecture of a provider's CPU-only rows where the catalog has no Arch column:
# every such type in the GCP (c2, c4, n1) and Azure (Fsv2) extracts is an Intel Xeon
# (reference/pricing/README.md, filters B and C).
DEFAULT_ARCH = "x86_64"


def parse_skypilot_cpu_vms(
    provider: str, catalog: pd.DataFrame, source: str, priced_at: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """CPU offers and fixes from one provider's SkyPilot `vms.csv` extract."""
    fixes: list[Fix] = []
    frame = catalog.copy()
    frame["Region"] = frame["Region"].astype(str).str.strip()
    no_gpu = frame["AcceleratorName"].isna() | (frame["AcceleratorName"].astype(str) == "")
    typed = frame["InstanceType"].notna() & (frame["InstanceType"].astype(str) != "")
    keep = no_gpu & typed
    if provider == "gcp":
        keep &= ~frame["InstanceType"].isin(list(GCP_HOST_ACCELERATORS))
    frame = frame.loc[keep].copy()
    if frame.empty:
        return validate_cpu_offers(pd.DataFrame(columns=list(CPU_OFFER_COLUMNS))), fixes_frame([])
    if "SpotPrice" not in frame:
        frame["SpotPrice"] = np.nan
    arch = frame["Arch"] if "Arch" in frame else pd.Series(DEFAULT_ARCH, index=frame.index)
    frame["Arch"] = arch.fillna(DEFAULT_ARCH).astype(str)
    for column in ("Price", "SpotPrice"):
        values = pd.to_numeric(frame[column], errors="coerce")
        placeholder = values.notna() & (values <= 0)
        if placeholder.any():
            types = ", ".join(sorted(set(frame.loc[placeholder, "InstanceType"].astype(str))))
            why = f"placeholder {column} <= 0: not a price, never free"
            fixes.append(fix(provider, "*", types, column, "set missing", why))
        frame[column] = values.where(~placeholder)
    grouped = host_medians(frame, "instance_type", arch="Arch")
    not_cheaper = grouped["spot_usd_per_hour"] >= grouped["usd_per_hour"]
    for row in grouped.loc[not_cheaper].itertuples():
        why = "spot is not below on-demand: the catalog repeats the on-demand meter"
        fixes.append(fix(provider, row.region, row.instance_type, "SpotPrice", "set missing", why))
    grouped.loc[not_cheaper, "spot_usd_per_hour"] = np.nan
    offers = grouped.assign(
        provider=provider,
        reserved_1y_usd_per_hour=np.nan,
        reserved_3y_usd_per_hour=np.nan,
        source=source,
        priced_at=priced_at,
    )
    offers = offers.sort_values(["region", "vcpus", "instance_type"])
    return validate_cpu_offers(offers, f"<{provider} CPU catalog>"), fixes_frame(fixes)


__all__ = ["parse_skypilot_cpu_vms"]
