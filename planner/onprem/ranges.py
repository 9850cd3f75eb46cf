"""The cited default range (low / typical / high) of every on-prem cost line.

Each range carries its unit, source, date and confidence (H primary, M reputable secondary,
L blog/vendor or an assumption said as such). The typical value is the default a config
takes when it leaves the line out; low and high bound the Monte Carlo draws
(planner.onprem.montecarlo) and the tornado chart (planner.onprem.sensitivity).
reference/onprem/default-ranges.csv holds the same rows (a test checks they agree) and
reference/onprem-tco.md the sources in full.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class LineRange:
    """One cost input's low, typical and high value, with unit, source, date, confidence."""

    field: str
    key: str  # the GPU or fabric it applies to; "" for every config
    low: float
    typical: float
    high: float
    unit: str
    source: str
    date: str
    confidence: str

    def __post_init__(self) -> None:
        if not self.low <= self.typical <= self.high:
            raise ValueError(f"{self.field}[{self.key}]: low <= typical <= high is broken")


_EPOCH = (
    "method of Epoch AI training-cost-trends (parameters.py; Cottier et al. 2024, "
    "arXiv 2405.21015): 8 x GPU price x server overhead 1.3-2.1 (DGX H100 about 1.4, "
    "SemiAnalysis 2023)"
)

# Server purchase price per 8-GPU server, by GPU (USD).
CAPEX_BY_GPU: dict[str, LineRange] = {
    r.key: r
    for r in (
        LineRange(
            "capex_usd_per_server", "H100-SXM", 199_000, 270_000, 317_000, "USD",
            "low: DGX H100 list ~$199k (supercluster.blog, L); typical: SemiAnalysis sale-price "
            "estimate as used in Epoch AI training-cost-trends (M); high: Thinkmate 8x H100 "
            "quotation incl. 8x400G InfiniBand cards (web.archive.org, L-M)",
            "2023-05 / 2024-08", "M",
        ),
        LineRange(
            "capex_usd_per_server", "H200-SXM", 312_000, 358_000, 476_000, "USD",
            f"{_EPOCH}; H200 $30k-35k ($32k MSRP, huggingface.co/hardware/h200, L)",
            "2024", "L",
        ),
        LineRange(
            "capex_usd_per_server", "B200", 312_000, 392_000, 544_000, "USD",
            f"{_EPOCH}; B200 $30k-40k (Jensen Huang to CNBC, 2024-03-19, M)",
            "2024-03", "L",
        ),
        LineRange(
            "capex_usd_per_server", "B300", 374_000, 470_000, 653_000, "USD",
            "no published B300 server price found: the B200 range raised 20% "
            "(assumption; DGX B300 ships from 2026-01, aiwiki.ai)",
            "2026-01", "L",
        ),
        LineRange(
            "capex_usd_per_server", "A100-SXM-80GB", 150_000, 199_000, 250_000, "USD",
            "DGX A100 launch price $199,000 (NVIDIA, 2020-05); low/high +/-25% for "
            "discounts and later street prices (assumption)",
            "2020-05", "M",
        ),
    )
}  # fmt: skip

# Network fabric per server: switches, optics, cables and their share of the spine (USD).
FABRICS: tuple[str, ...] = ("infiniband", "roce", "ethernet", "none")
NETWORK_BY_FABRIC: dict[str, LineRange] = {
    r.key: r
    for r in (
        LineRange(
            "network_usd_per_server", "infiniband", 19_000, 40_000, 86_000, "USD",
            "Epoch AI training-cost-trends: cluster interconnect 1.07-1.32x server cost "
            "(central 1.15), applied to a $270k DGX H100; Cottier et al. 2024: interconnect "
            "9-13% of cluster cost; 64-port 400G IB switch ~$36k (FS.com, 2024-08, L)",
            "2024", "M",
        ),
        LineRange(
            "network_usd_per_server", "roce", 14_000, 30_000, 65_000, "USD",
            "InfiniBand's range x 0.75: Ethernet (RoCE) back-end fabrics cost a few to ~25% "
            "less (ucsguru.com 2026-02, L; assumption)",
            "2026-02", "L",
        ),
        LineRange(
            "network_usd_per_server", "ethernet", 3_000, 8_000, 15_000, "USD",
            "plain 100-200G Ethernet, no RDMA back-end: top-of-rack ports and optics "
            "(assumption; traditional networking ~10% of infrastructure, jobandnetwork.com, L)",
            "2025", "L",
        ),
        LineRange(
            "network_usd_per_server", "none", 0, 0, 0, "USD",
            "no fabric between servers (single server)", "", "",
        ),
    )
}  # fmt: skip

# Lines that do not depend on the GPU or the fabric.
LINES: dict[str, LineRange] = {
    r.field: r
    for r in (
        LineRange(
            "storage_usd_per_server", "", 5_000, 15_000, 40_000, "USD",
            "shared training storage per node (assumption: 20-100 TB of NVMe/parallel file "
            "system share at $150-400/TB; no published per-node figure found)",
            "2025", "L",
        ),
        LineRange(
            "installation_usd_per_server", "", 2_000, 5_000, 15_000, "USD",
            "racking, PDUs, cabling labour and burn-in per node (assumption; SemiAnalysis "
            "counts setup and debugging in the 5-15% beyond $/GPU-h, 2026-04, L)",
            "2026-04", "L",
        ),
        LineRange(
            "spares_fraction", "", 0.0, 0.03, 0.08, "fraction of server capex",
            "hot spares and spare parts (assumption; SemiAnalysis: reliability, failures and "
            "hot spares move TCO by 5-15%, 2026-04, L)",
            "2026-04", "L",
        ),
        LineRange(
            "failure_downtime_fraction", "", 0.01, 0.03, 0.10, "fraction of GPU-hours",
            "hours lost to failures and repairs; Llama 3 (Meta, arXiv 2407.21783): 419 "
            "unexpected interruptions in 54 days on 16,384 H100, >90% effective training "
            "time (high end); small clusters lose less (assumption)",
            "2024-07", "M",
        ),
        LineRange(
            "lifetime_years", "", 3.0, 4.0, 6.0, "years",
            "Epoch AI default 3 years; hyperscalers book 5-6 years (Microsoft, Alphabet 6; "
            "Amazon 5 for some servers from 2025-01-01; 10-K/10-Q via shaulkoral.com, M)",
            "2022-2025", "M",
        ),
        LineRange(
            "resale_fraction", "", 0.0, 0.10, 0.30, "fraction of server capex",
            "used H100 $15k-28k vs $25k-30k new, depreciation sharp after ~2 years (Silicon "
            "Data via computeforecast.com, 2026, L); after 3-6 years little of that is left",
            "2026", "L",
        ),
        LineRange(
            "cost_of_capital_rate", "", 0.05, 0.08, 0.12, "per year",
            "corporate cost of capital (assumption: US weighted average cost of capital "
            "of technology firms typically 6-10%); 0 = straight-line, no financing",
            "2024", "L",
        ),
        LineRange(
            "maintenance_fraction_per_year", "", 0.05, 0.10, 0.20, "fraction of server capex",
            "high: DGX H100 1-year support ~$39,800 = 20% of $199k (supercluster.blog, L); "
            "low/typical: OEM multi-year warranties bundled (assumption)",
            "2024", "L",
        ),
        LineRange(
            "power_kw_per_server", "", 6.5, 7.5, 10.2, "kW",
            "DGX H100 typical 6.5-8.5 kW (supercluster.blog, L); 10.2 kW max (NVIDIA user "
            "guide via unanswered.io, M); typical: TDP-derived 8 x 700 W x 1.34",
            "2024", "M",
        ),
        LineRange(
            "idle_power_fraction", "", 0.25, 0.35, 0.50, "fraction of busy draw",
            "an idle H100 draws ~60-100 W of 700 W and the host 1-2 kW of ~2 kW "
            "(assumption from public nvidia-smi readings)",
            "2024", "L",
        ),
        LineRange(
            "pue", "", 1.10, 1.58, 1.80, "ratio",
            "Uptime Institute 2023 average 1.58 (UII Update 221, 2023-11-23, H); Google fleet "
            "1.10 (2021, M); high: older halls above the average (assumption)",
            "2023-11-23", "H",
        ),
        LineRange(
            "usd_per_kwh", "", 0.0779, 0.1194, 0.2008, "USD/kWh",
            "EIA: median state all sectors 11.94 c (Sept 2024, H); Pennsylvania industrial "
            "7.79 c, New England commercial 20.08 c (Table 5.6.B, Jul 2024 YTD, H)",
            "2024-09", "H",
        ),
        LineRange(
            "colocation_usd_per_kw_month", "", 120.0, 184.06, 230.0, "USD per kW-month",
            "CBRE North America H2 2024 wholesale $184.06 (2025-02-26, H); 2018 $120-140 "
            "(CBRE, H); high: smaller retail deployments +25% (assumption)",
            "2025-02-26", "H",
        ),
        LineRange(
            "staff_usd_per_fte_year", "", 130_000, 180_000, 250_000, "USD per FTE-year",
            "loaded cost of an infrastructure engineer (assumption: BLS May 2023 median "
            "systems administrator $95,360 x 1.4 overhead at the low end)",
            "2023-05", "L",
        ),
        LineRange(
            "servers_per_fte", "", 20.0, 50.0, 150.0, "servers per FTE",
            "GPU servers one engineer keeps running (assumption; wide range)", "2025", "L",
        ),
        LineRange(
            "utilization_factor", "", 0.80, 1.0, 1.10, "x planned utilization",
            "planned use is more often over- than under-estimated (assumption)", "", "L",
        ),
    )
}  # fmt: skip


def capex_range(gpu_name: str) -> LineRange | None:
    """The server capex range of a GPU, None where none is published here."""
    return CAPEX_BY_GPU.get(gpu_name)


def network_range(fabric: str) -> LineRange:
    """The network fabric range per server of a fabric (FABRICS)."""
    return NETWORK_BY_FABRIC[fabric]


def all_ranges() -> list[LineRange]:
    """Every range: capex by GPU, network by fabric, then the other lines."""
    return [*CAPEX_BY_GPU.values(), *NETWORK_BY_FABRIC.values(), *LINES.values()]


def ranges_frame() -> pd.DataFrame:
    """Every range as a table (the columns of reference/onprem/default-ranges.csv)."""
    return pd.DataFrame([r.__dict__ for r in all_ranges()])
