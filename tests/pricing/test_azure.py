"""Azure: retail price pages parsed, fetched through a local Retail Prices API, faults survived."""

from __future__ import annotations

import functools
import urllib.parse

import pandas as pd
import pytest

from benchmarks.published import published_frame
from planner.plan import make_plan
from planner.request import PlanRequest
from planner.workloads.catalog import get_workload
from pricing import refresh as refresh_module
from pricing.catalog import load_offers, read_manifest, user_snapshot_dir
from pricing.providers.azure import AzurePayload, fetch_azure, parse_azure
from pricing.providers.retry import FetchError
from pricing.refresh import RefreshError, Source, refresh
from tests.pricing.conftest import StandIn, fast_retry, fixture_json, tree_bytes

REGIONS = ("eastus", "westeurope")


def recorded_items() -> list[dict[str, object]]:
    return [
        item
        for name in ("eastus_page1", "eastus_page2", "westeurope_page1")
        for item in fixture_json(f"azure/{name}.json")["Items"]
    ]


def parsed() -> pd.DataFrame:
    return parse_azure(AzurePayload(REGIONS, recorded_items()), "2026-11-30").offers.set_index(
        ["region", "instance_type"]
    )


def test_consumption_spot_and_reservations_become_hourly_prices() -> None:
    a100 = parsed().loc[("eastus", "Standard_NC24ads_A100_v4")]
    assert a100["usd_per_hour"] == pytest.approx(3.673)  # not the Windows or DevTest meter
    assert a100["spot_usd_per_hour"] == pytest.approx(0.7346)  # the Spot meter
    assert a100["reserved_1y_usd_per_hour"] == pytest.approx(20093.0 / 8760)
    assert a100["reserved_3y_usd_per_hour"] == pytest.approx(38614.0 / 26280)
    assert a100["gpu_name"] == "A100-PCIe-80GB"
    assert (a100["gpu_count"], a100["vcpus"], a100["memory_gib"]) == (1, 24, 220)


def test_fractional_gpus_stay_fractions_and_unknown_memory_stays_missing() -> None:
    nv6 = parsed().loc[("eastus", "Standard_NV6ads_A10_v5")]
    assert nv6["gpu_count"] == pytest.approx(1 / 6)
    assert nv6["gpu_name"] == "A10"
    assert pd.isna(nv6["gpu_memory_gib"])


def test_awkward_rows_are_fixed_or_dropped_on_record() -> None:
    catalog = parse_azure(AzurePayload(REGIONS, recorded_items()), "2026-11-30")
    offers = catalog.offers.set_index(["region", "instance_type"])
    h100 = offers.loc[("eastus", "Standard_ND96isr_H100_v5")]
    assert pd.isna(h100["spot_usd_per_hour"])  # the spot meter repeated pay-as-you-go
    assert h100["gpu_count"] == 8
    assert pd.isna(offers.loc[("eastus", "Standard_NC4as_T4_v3"), "spot_usd_per_hour"])  # 0.0
    assert "Standard_NV12s_v3" not in offers.index.get_level_values(1)  # M60
    assert "Standard_NP10s" not in offers.index.get_level_values(1)  # FPGA, no shape
    # westeurope lists only the A100 size: no other size appears there.
    assert offers.loc["westeurope"].index.tolist() == ["Standard_NC24ads_A100_v4"]
    reasons = " | ".join(catalog.fixes["reason"])
    for expected in (
        "Windows meters",
        "Low Priority meters",
        "DevTest",
        "Tesla M60",
        "AZURE_SIZE_SHAPES",
        "not below on-demand",
        "placeholder",
    ):
        assert expected in reasons
    assert (catalog.offers.loc[:, "usd_per_hour"].dropna() > 0).all()


def test_fetch_follows_next_page_link_with_a_region_filter(azure_api: StandIn) -> None:
    retry, sleeps = fast_retry()
    payload = fetch_azure(REGIONS, base_url=f"{azure_api.url}/api/retail/prices", retry=retry)
    assert len(payload.items) == len(recorded_items())
    assert len(azure_api.requests) == 3  # eastus pages 1 and 2, westeurope page 1
    assert "$skip=100" in azure_api.requests[1]
    first = urllib.parse.unquote(azure_api.requests[0])
    assert "serviceName eq 'Virtual Machines' and armRegionName eq 'eastus'" in first
    assert sleeps.delays == []
    offers = parse_azure(payload, "2026-11-30").offers
    assert offers.equals(parse_azure(AzurePayload(REGIONS, recorded_items()), "2026-11-30").offers)


def azure_source(api: StandIn, attempts: int = 3, timeout_s: float = 2.0) -> Source:
    retry, _ = fast_retry(attempts, timeout_s)
    fetch = functools.partial(fetch_azure, base_url=f"{api.url}/api/retail/prices")

    def fetch_with_policy(regions: object, **kwargs: object) -> AzurePayload:
        kwargs["retry"] = kwargs.get("retry") or retry
        return fetch(regions, **kwargs)  # type: ignore[arg-type]

    return Source(fetch_with_policy, parse_azure, REGIONS)


def test_refresh_azure_end_to_end_is_ranked_by_the_planner(
    azure_api: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(refresh_module.SOURCES, "azure", azure_source(azure_api))
    added = refresh("azure")
    assert added.previous is not None and added.previous.origin == "bundled"
    info = next(i for i in read_manifest() if i.provider == "azure")
    assert info.origin == "user" and info.path.parent == user_snapshot_dir()
    assert info.fixes_file and (info.path.parent / info.fixes_file).exists()
    offers = load_offers()
    azure = offers.loc[offers["provider"] == "azure"]
    assert set(azure["region"]) == set(REGIONS)
    assert (azure["priced_at"] == info.priced_at).all()
    assert (offers["provider"] == "aws").any()  # other providers still from the bundle
    plan = make_plan(
        PlanRequest(get_workload("resnet50-imagenet-90ep"), "fp16", "reserved-1y"),
        offers,
        published_frame(),
    )
    rows = plan.rows.loc[plan.rows["provider"] == "azure"]
    a100 = rows.loc[rows["instance_type"] == "Standard_NC24ads_A100_v4"]
    assert sorted(a100["usd_per_hour"]) == pytest.approx([20093.0 / 8760, 22151.0 / 8760], rel=1e-5)
    assert (rows["price_date"] == info.priced_at).all()
    assert rows["cost_usd"].is_monotonic_increasing


@pytest.mark.parametrize(
    ("fault", "times", "message"),
    [
        ("429", 3, "still failing after 3 tries (HttpStatusError: HTTP 429"),
        ("500", 3, "still failing after 3 tries (HttpStatusError: HTTP 500"),
        ("garbage", 1, "is not the documented JSON"),
        ("hang", 2, "still failing after 2 tries"),
    ],
)
def test_a_failed_refresh_keeps_the_previous_snapshot_byte_for_byte(
    azure_api: StandIn,
    monkeypatch: pytest.MonkeyPatch,
    fault: str,
    times: int,
    message: str,
) -> None:
    monkeypatch.setitem(refresh_module.SOURCES, "azure", azure_source(azure_api, 3, 2.0))
    refresh("azure")
    before = tree_bytes(user_snapshot_dir())
    offers_before = load_offers()
    attempts, timeout_s = (2, 0.2) if fault == "hang" else (3, 2.0)
    monkeypatch.setitem(
        refresh_module.SOURCES, "azure", azure_source(azure_api, attempts, timeout_s)
    )
    azure_api.fail("$skip=100", fault, times)  # page 2 of eastus misbehaves
    with pytest.raises(RefreshError) as info:
        refresh("azure")
    text = str(info.value)
    assert message in text
    assert "stays in use, unchanged" in text
    assert tree_bytes(user_snapshot_dir()) == before
    assert load_offers().equals(offers_before)


def test_throttling_then_success_waits_with_backoff_and_honours_retry_after(
    azure_api: StandIn,
) -> None:
    retry, sleeps = fast_retry(attempts=4)
    azure_api.fail("eastus", "429", times=2)
    payload = fetch_azure(REGIONS, base_url=f"{azure_api.url}/api/retail/prices", retry=retry)
    assert len(payload.items) == len(recorded_items())
    # Backoff 0.5 s then 1 s, each raised to the server's Retry-After of 3 s.
    assert sleeps.delays == [3.0, 3.0]
    assert retry.delay_s(1) == 0.5 and retry.delay_s(2) == 1.0 and retry.delay_s(9) == 8.0


def test_an_http_error_that_is_not_transient_is_not_retried(azure_api: StandIn) -> None:
    retry, sleeps = fast_retry()
    with pytest.raises(Exception, match="HTTP 404"):
        fetch_azure(REGIONS, base_url=f"{azure_api.url}/no/such/api", retry=retry)
    assert sleeps.delays == []


def test_nothing_is_written_when_no_offers_come_back(
    azure_api: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(refresh_module.SOURCES, "azure", azure_source(azure_api))
    with pytest.raises(RefreshError, match="found no GPU offers in northpole1"):
        refresh("azure", ["northpole1"])
    assert tree_bytes(user_snapshot_dir()) == {}


def test_fetch_error_names_the_region_and_page(azure_api: StandIn) -> None:
    retry, _ = fast_retry(attempts=1)
    azure_api.fail("westeurope", "garbage")
    with pytest.raises(FetchError, match=r"westeurope, page 1"):
        fetch_azure(REGIONS, base_url=f"{azure_api.url}/api/retail/prices", retry=retry)
