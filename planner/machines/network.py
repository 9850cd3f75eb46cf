"""Network bandwidth between instances of an offer, Gb/s per instance (multi-instance plans).

Data-parallel training across instances all-reduces gradients over the instances' network,
so a plan that gangs 16 single-GPU VMs must not assume a 3,200 Gb/s cluster fabric. This
quirk table gives each instance type's published network bandwidth ("network performance"
on the providers' instance pages; InfiniBand/EFA/GPUDirect fabrics where the type has one),
recorded 2026-11; a type not listed gets its provider's default, or DEFAULT_NETWORK_GBPS,
both assumptions. Figures are peak per instance; tests/planner/machines/test_network.py has a case
per row.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np
import pandas as pd

from edge.distinct import per_distinct
from planner.codes import NetworkBasis

# (provider, instance_type regex, Gb/s per instance, what it is)
INSTANCE_NETWORK_GBPS: tuple[tuple[str, str, float, str], ...] = (
    ("aws", r"^p6-b300\.48xlarge$", 6400, "EFAv4, 8 x 800 Gb/s"),
    ("aws", r"^p6-b200\.48xlarge$", 3200, "EFAv4, 8 x 400 Gb/s"),
    ("aws", r"^p5(e|en)?\.48xlarge$", 3200, "EFA, 3,200 Gb/s"),
    ("aws", r"^p5\.4xlarge$", 100, "EFA, 100 Gb/s"),
    ("aws", r"^p4de?\.24xlarge$", 400, "EFA, 4 x 100 Gb/s"),
    ("aws", r"^p3dn\.24xlarge$", 100, "EFA, 100 Gb/s"),
    ("aws", r"^p3\.16xlarge$", 25, "25 Gb/s Ethernet"),
    ("aws", r"^p3\.8xlarge$", 10, "10 Gb/s Ethernet"),
    ("aws", r"^p3\.2xlarge$", 10, "up to 10 Gb/s"),
    ("aws", r"^g6e\.48xlarge$", 400, "EFA, 400 Gb/s"),
    ("aws", r"^g6e\.(12|24)xlarge$", 100, "EFA, 100 Gb/s"),
    ("aws", r"^g6e\.", 20, "up to 20-25 Gb/s"),
    ("aws", r"^g6\.48xlarge$", 100, "EFA, 100 Gb/s"),
    ("aws", r"^g6f?\.", 10, "up to 10-25 Gb/s"),
    ("aws", r"^g5\.48xlarge$", 100, "EFA, 100 Gb/s"),
    ("aws", r"^g5\.12xlarge$", 40, "40 Gb/s"),
    ("aws", r"^g5\.(8|16)xlarge$", 25, "25 Gb/s"),
    ("aws", r"^g5\.", 10, "up to 10 Gb/s"),
    ("aws", r"^g4dn\.12xlarge$", 50, "50 Gb/s"),
    ("aws", r"^g4dn\.", 25, "up to 25 Gb/s"),
    ("gcp", r"^a4-highgpu-8g$", 3600, "8 x 400 Gb/s RDMA + 400 Gb/s"),
    ("gcp", r"^a3-ultragpu-8g$", 3600, "8 x 400 Gb/s RDMA + 400 Gb/s"),
    ("gcp", r"^a3-megagpu-8g$", 1800, "GPUDirect-TCPXO 8 x 200 Gb/s + 200 Gb/s"),
    ("gcp", r"^a3-(high|edge)gpu-8g$", 1000, "GPUDirect-TCPX 4 x 200 Gb/s + 200 Gb/s"),
    ("gcp", r"^a3-highgpu-4g$", 100, "100 Gb/s"),
    ("gcp", r"^a3-highgpu-[12]g$", 50, "50 Gb/s"),
    ("gcp", r"^a2-(high|ultra|mega)gpu-(8|16)g$", 100, "100 Gb/s"),
    ("gcp", r"^a2-(high|ultra)gpu-4g$", 50, "50 Gb/s"),
    ("gcp", r"^a2-(high|ultra)gpu-2g$", 32, "32 Gb/s"),
    ("gcp", r"^a2-(high|ultra)gpu-1g$", 24, "24 Gb/s"),
    ("gcp", r"^g2-standard-96$", 100, "100 Gb/s"),
    ("gcp", r"^g2-standard-48$", 50, "50 Gb/s"),
    ("gcp", r"^g2-standard-(16|24|32)$", 32, "32 Gb/s"),
    ("gcp", r"^g2-standard-(8|12)$", 16, "16 Gb/s"),
    ("gcp", r"^g2-standard-4$", 10, "10 Gb/s"),
    ("gcp", r"^n1-", 32, "up to 32 Gb/s (N1 with GPUs)"),
    ("azure", r"^Standard_ND96isr_H(100|200)_v5$", 3200, "InfiniBand NDR, 8 x 400 Gb/s"),
    ("azure", r"^Standard_ND96am?sr_(A100_)?v4$", 1600, "InfiniBand HDR, 8 x 200 Gb/s"),
    ("azure", r"^Standard_ND40rs_v2$", 100, "InfiniBand EDR, 100 Gb/s"),
    ("azure", r"^Standard_NC24rs_v3$", 56, "InfiniBand FDR, 56 Gb/s"),
    ("azure", r"^Standard_NC\d+ad[i]?s_H100_v5$", 40, "40-80 Gb/s Ethernet"),
    ("azure", r"^Standard_NC96ads_A100_v4$", 80, "80 Gb/s Ethernet"),
    ("azure", r"^Standard_NC48ads_A100_v4$", 40, "40 Gb/s Ethernet"),
    ("azure", r"^Standard_NC24ads_A100_v4$", 20, "20 Gb/s Ethernet"),
    ("nebius", r"_8gpu-", 3200, "InfiniBand, 8 x 400 Gb/s"),
)

# Providers without published per-type figures: an assumption per provider (why, in
# planner.render.rows: marketplace hosts are independent machines; Lambda's on-demand
# instances have no cluster fabric between them).
PROVIDER_DEFAULT_GBPS: dict[str, float] = {"vast": 10.0, "lambda": 25.0}
# Providers whose offers are single listed hosts, not a pool of identical instances: a
# plan takes one instance of each (ganging 64 copies of one marketplace listing is not a
# capacity anyone can rent). Recorded 2026-11 from the providers' own descriptions.
SINGLE_HOST_PROVIDERS: dict[str, str] = {
    "vast": "Vast.ai marketplace: each listing is one host",
}
DEFAULT_NETWORK_GBPS = 25.0  # typical cloud VM Ethernet: an assumption, not a measurement
ONPREM_NETWORK_GBPS = 400.0  # one 400 Gb/s NDR InfiniBand port per server (DGX H100 has 8)


@lru_cache(maxsize=4096)
def network_for(provider: str, instance_type: str) -> tuple[float, NetworkBasis, str]:
    """(Gb/s per instance, what the figure is, the published fabric or "") for one provider
    and instance type."""
    for prov, pattern, value, what in INSTANCE_NETWORK_GBPS:
        if prov == provider and re.search(pattern, instance_type):
            return value, NetworkBasis.PUBLISHED, what
    if provider in PROVIDER_DEFAULT_GBPS:
        return PROVIDER_DEFAULT_GBPS[provider], NetworkBasis.PROVIDER_ASSUMED, ""
    return DEFAULT_NETWORK_GBPS, NetworkBasis.DEFAULT_ASSUMED, ""


def instance_network_gbps(offers: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Gb/s per instance, NetworkBasis codes, published fabrics or "") for each offer's
    provider and instance type."""
    found = per_distinct(
        network_for, offers["provider"].astype(str), offers["instance_type"].astype(str)
    )
    gbps = np.array([value for value, _, _ in found], dtype=float)
    bases = np.array([basis for _, basis, _ in found], dtype=object)
    fabrics = np.array([fabric for _, _, fabric in found], dtype=object)
    return gbps, bases, fabrics
