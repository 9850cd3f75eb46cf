"""Network between instances: the quirk table per instance type, and what it does to plans."""

from __future__ import annotations

import pandas as pd
import pytest

from planner.codes import NetworkBasis
from planner.machines.network import (
    DEFAULT_NETWORK_GBPS,
    INSTANCE_NETWORK_GBPS,
    instance_network_gbps,
    network_for,
)
from planner.render.rows import network_basis_text
from planner.settings import CommModel
from planner.throughput.scaling import bus_bandwidth_gbs

CASES = [
    ("aws", "p5.48xlarge", 3200), ("aws", "p5en.48xlarge", 3200),
    ("aws", "p5.4xlarge", 100), ("aws", "p4d.24xlarge", 400), ("aws", "p4de.24xlarge", 400),
    ("aws", "p6-b200.48xlarge", 3200), ("aws", "p6-b300.48xlarge", 6400),
    ("aws", "p3dn.24xlarge", 100), ("aws", "p3.16xlarge", 25), ("aws", "p3.8xlarge", 10),
    ("aws", "p3.2xlarge", 10), ("aws", "g6e.48xlarge", 400), ("aws", "g6e.12xlarge", 100),
    ("aws", "g6e.xlarge", 20), ("aws", "g6.48xlarge", 100), ("aws", "g6f.2xlarge", 10),
    ("aws", "g5.48xlarge", 100), ("aws", "g5.12xlarge", 40), ("aws", "g5.8xlarge", 25),
    ("aws", "g5.xlarge", 10), ("aws", "g4dn.12xlarge", 50), ("aws", "g4dn.xlarge", 25),
    ("gcp", "a4-highgpu-8g", 3600), ("gcp", "a3-ultragpu-8g", 3600),
    ("gcp", "a3-megagpu-8g", 1800), ("gcp", "a3-highgpu-8g", 1000),
    ("gcp", "a3-edgegpu-8g", 1000), ("gcp", "a3-highgpu-4g", 100), ("gcp", "a3-highgpu-1g", 50),
    ("gcp", "a2-highgpu-8g", 100), ("gcp", "a2-megagpu-16g", 100),
    ("gcp", "a2-ultragpu-4g", 50),
    ("gcp", "a2-highgpu-2g", 32), ("gcp", "a2-ultragpu-1g", 24), ("gcp", "g2-standard-96", 100),
    ("gcp", "g2-standard-48", 50), ("gcp", "g2-standard-32", 32), ("gcp", "g2-standard-8", 16),
    ("gcp", "g2-standard-4", 10), ("gcp", "n1-highcpu-16 + 4 x T4", 32),
    ("azure", "Standard_ND96isr_H100_v5", 3200), ("azure", "Standard_ND96isr_H200_v5", 3200),
    ("azure", "Standard_ND96asr_v4", 1600), ("azure", "Standard_ND96amsr_A100_v4", 1600),
    ("azure", "Standard_ND40rs_v2", 100), ("azure", "Standard_NC24rs_v3", 56),
    ("azure", "Standard_NC80adis_H100_v5", 40), ("azure", "Standard_NC96ads_A100_v4", 80),
    ("azure", "Standard_NC48ads_A100_v4", 40), ("azure", "Standard_NC24ads_A100_v4", 20),
    ("nebius", "gpu-h100-sxm_8gpu-128vcpu-1600gb", 3200),
]  # fmt: skip


@pytest.mark.parametrize(("provider", "instance", "gbps"), CASES)
def test_instance_types(provider: str, instance: str, gbps: float) -> None:
    assert network_for(provider, instance)[0] == gbps


def test_every_table_row_has_a_case() -> None:
    import re

    for provider, pattern, value, _ in INSTANCE_NETWORK_GBPS:
        cases = [c for c in CASES if c[0] == provider and re.search(pattern, c[1])]
        assert any(c[2] == value for c in cases), (provider, pattern)


def test_defaults_are_labelled_assumptions() -> None:
    assert network_for("vast", "8x-H100_SXM-32-65536") == (
        10.0, NetworkBasis.PROVIDER_ASSUMED, ""
    )  # fmt: skip
    assert network_for("lambda", "gpu_8x_h100_sxm5")[1] == NetworkBasis.PROVIDER_ASSUMED
    value, basis, fabric = network_for("nebius", "gpu-h100-sxm_1gpu-16vcpu-200gb")
    assert (value, basis, fabric) == (DEFAULT_NETWORK_GBPS, NetworkBasis.DEFAULT_ASSUMED, "")
    offers = pd.DataFrame({"provider": ["aws", "acme"], "instance_type": ["p5.48xlarge", "x"]})
    gbps, bases, fabrics = instance_network_gbps(offers)
    assert gbps.tolist() == [3200, DEFAULT_NETWORK_GBPS]
    assert bases.tolist() == [NetworkBasis.PUBLISHED, NetworkBasis.DEFAULT_ASSUMED]
    assert "EFA" in fabrics[0] and fabrics[1] == ""


def test_network_basis_is_worded_from_its_code() -> None:
    def words(provider: str, basis: str, gbps: float, fabric: str = "") -> str:
        return network_basis_text(
            {"provider": provider, "network_basis": basis, "network_gbps": gbps,
             "network_fabric": fabric}
        )  # fmt: skip

    assert words("aws", NetworkBasis.PUBLISHED, 3200, "EFA, 3,200 Gb/s") == "EFA, 3,200 Gb/s"
    assert words("vast", NetworkBasis.PROVIDER_ASSUMED, 10) == (
        "marketplace hosts: 10 Gb/s assumed between independent machines"
    )
    assert words("lambda", NetworkBasis.PROVIDER_ASSUMED, 25) == (
        "on-demand instances: no cluster fabric between them; 25 Gb/s assumed"
    )
    assert words("acme", NetworkBasis.DEFAULT_ASSUMED, 25) == "not published here: 25 Gb/s assumed"
    assert words("on-prem", NetworkBasis.ONPREM_ASSUMED, 400) == (
        "on-prem: one 400 Gb/s InfiniBand NDR port per server assumed"
    )
    # The code decides, not the fabric text: a fabric left on an assumed row is not shown.
    assert "assumed" in words("acme", NetworkBasis.DEFAULT_ASSUMED, 25, "EFA, 100 Gb/s")


def test_bus_bandwidth_across_nodes_follows_each_rows_network() -> None:
    gpus = pd.Series(["H100-SXM", "H100-SXM"])
    comm = CommModel(achievable_fraction=1.0)
    bus = bus_bandwidth_gbs(gpus, [16, 16], comm, gpus_per_node=[8, 8], network_gbps=[3200, 25])
    assert bus.tolist() == pytest.approx([400.0, 25 / 8])
    within = bus_bandwidth_gbs(gpus, [8, 8], comm, gpus_per_node=[8, 8], network_gbps=[3200, 25])
    assert within[0] == within[1]  # inside one node the network does not matter


def h100x8_offers(*offers: tuple[str, str, float]) -> pd.DataFrame:
    """Offers of 8 x H100-SXM: (provider, instance type, USD per hour) each."""
    from pricing.catalog import validate_offers

    rows = [
        {"provider": provider, "region": "r", "instance_type": instance_type,
         "gpu_name": "H100-SXM", "gpu_count": 8, "usd_per_hour": usd}
        for provider, instance_type, usd in offers
    ]  # fmt: skip
    return validate_offers(pd.DataFrame(rows).assign(source="test", priced_at="2026-11-01"))


def test_a_plan_scales_worse_over_a_slow_network() -> None:
    from planner.plan import make_plan
    from planner.request import PlanRequest
    from planner.throughput import own_and_published_results
    from planner.workloads.catalog import get_workload

    offers = h100x8_offers(("aws", "p5.48xlarge", 55.0), ("acme", "h100x8", 55.0))
    results, _ = own_and_published_results([])
    plan = make_plan(PlanRequest(get_workload("llm-7b-140b"), "bf16", max_gpus=64), offers, results)
    options = plan.options
    at64 = options.loc[options["total_gpus"] == 64].set_index("provider")
    assert at64.loc["aws", "throughput"] > 1.2 * at64.loc["acme", "throughput"]
    at8 = options.loc[options["total_gpus"] == 8].set_index("provider")
    assert at8.loc["aws", "throughput"] == pytest.approx(at8.loc["acme", "throughput"])


def test_a_marketplace_listing_is_one_host() -> None:
    from planner.choose.options import cloud_options

    offers = h100x8_offers(("vast", "8x-H100_SXM-32-65536", 16.0), ("aws", "p5.48xlarge", 55.0))
    options, _ = cloud_options(offers, "on-demand", 64)
    counts = options.groupby("provider")["instances"].apply(sorted).to_dict()
    assert counts == {"aws": [1, 2, 4, 8], "vast": [1]}
