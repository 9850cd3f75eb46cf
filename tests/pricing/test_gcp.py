"""GCP: SKU and shape pages parsed, fetched through the google-cloud clients, faults survived."""

from __future__ import annotations

import functools
import sys

import pandas as pd
import pytest
from google.auth.credentials import AnonymousCredentials

from benchmarks.published import published_frame
from planner.plan import make_plan
from planner.request import PlanRequest
from planner.workloads.catalog import get_workload
from pricing import refresh as refresh_module
from pricing.catalog import bundled_snapshot_dir, load_offers, read_snapshot, user_snapshot_dir
from pricing.providers.gcp import GcpPayload, fetch_gcp, flatten_aggregated, parse_gcp
from pricing.providers.retry import FetchError, RetryPolicy
from pricing.refresh import RefreshError, Source, refresh
from tests.pricing.conftest import Sleeps, StandIn, fast_retry, fixture_json, tree_bytes

REGIONS = ("us-central1", "us-east4", "europe-west4", "asia-east1")


def recorded_payload() -> GcpPayload:
    skus = [s for n in (1, 2) for s in fixture_json(f"gcp/skus_page{n}.json")["skus"]]
    machines = [
        m
        for n in (1, 2)
        for m in flatten_aggregated(
            fixture_json(f"gcp/machine_types_page{n}.json")["items"], "machineTypes", REGIONS
        )
    ]
    accelerators = flatten_aggregated(
        fixture_json("gcp/accelerator_types_page1.json")["items"], "acceleratorTypes", REGIONS
    )
    return GcpPayload(REGIONS, skus, machines, accelerators)


def offers_by_key() -> pd.DataFrame:
    return parse_gcp(recorded_payload(), "2026-11-30").offers.set_index(["region", "instance_type"])


def test_a_gpu_machine_is_host_vcpus_and_ram_plus_its_gpus() -> None:
    a2 = offers_by_key().loc[("us-central1", "a2-highgpu-1g")]
    host = 12 * 0.031611 + 85 * 0.004237
    assert a2["usd_per_hour"] == pytest.approx(host + 2.933908)
    assert a2["spot_usd_per_hour"] == pytest.approx(12 * 0.015806 + 85 * 0.002119 + 1.4341)
    assert a2["reserved_1y_usd_per_hour"] == pytest.approx(12 * 0.019915 + 85 * 0.002669 + 1.848362)
    assert a2["reserved_3y_usd_per_hour"] == pytest.approx(12 * 0.014225 + 85 * 0.001907 + 1.026868)
    assert (a2["gpu_name"], a2["gpu_count"], a2["vcpus"], a2["memory_gib"]) == (
        "A100-SXM-40GB",
        1,
        12,
        85,
    )
    assert pd.isna(a2["gpu_memory_gib"])  # the APIs do not say; never invented


def test_the_composition_agrees_with_the_bundled_skypilot_extract() -> None:
    bundled = read_snapshot(bundled_snapshot_dir() / "gcp-2025-01-01.csv").set_index(
        ["region", "instance_type"]
    )
    live = offers_by_key()
    key = ("us-central1", "a2-highgpu-1g")
    assert live.loc[key, "usd_per_hour"] == pytest.approx(
        bundled.loc[key, "usd_per_hour"], rel=1e-4
    )


def test_non_standard_and_placeholder_skus_do_not_price_anything() -> None:
    catalog = parse_gcp(recorded_payload(), "2026-11-30")
    offers = catalog.offers.set_index(["region", "instance_type"])
    a3 = offers.loc[("us-central1", "a3-highgpu-8g")]
    # The DWS H100 SKU (4.20/h) is ignored: only the on-demand SKU (9.79655/h) counts.
    assert a3["usd_per_hour"] == pytest.approx(208 * 0.02571 + 1872 * 0.002202 + 8 * 9.79655)
    assert pd.isna(a3["reserved_1y_usd_per_hour"])  # no committed-use SKU: missing, not 0
    assert ("us-east4", "a3-megagpu-8g") not in offers.index  # no SKU for the Mega GPU
    reasons = " | ".join(catalog.fixes["reason"])
    assert "placeholder price 0" in reasons  # the B200 SKU priced 0
    assert "priced per 'mo'" in reasons
    assert "no host or GPU SKU" in reasons


def test_n1_hosts_take_the_gpus_their_vcpus_allow_in_zones_that_have_them() -> None:
    offers = offers_by_key()
    n1 = [i for r, i in offers.index if r == "us-central1" and i.startswith("n1-")]
    assert sorted(n1) == sorted(
        f"n1-standard-{v} + {n} x nvidia-tesla-t4" for v in (8, 16) for n in (1, 2, 4)
    )  # V100s have no SKU here; T4 VWS is a licensed variant
    t4 = offers.loc[("us-central1", "n1-standard-8 + 2 x nvidia-tesla-t4")]
    assert t4["usd_per_hour"] == pytest.approx(8 * 0.031611 + 30 * 0.004237 + 2 * 0.35)
    assert t4["interconnect"] == "pcie"


def test_regions_without_a_machine_or_a_price_get_no_offer() -> None:
    offers = offers_by_key()
    regions = set(offers.index.get_level_values(0))
    assert "asia-east1" not in regions  # no machine types there
    assert "me-west1" not in regions  # not asked for
    europe = offers.loc["europe-west4"]
    assert europe.index.tolist() == ["a2-highgpu-1g"]
    assert europe.iloc[0]["usd_per_hour"] == pytest.approx(12 * 0.034802 + 85 * 0.004664 + 3.229947)
    assert pd.isna(europe.iloc[0]["spot_usd_per_hour"])


def standin_fetch(api: StandIn, attempts: int = 3, timeout_s: float = 2.0) -> Source:
    retry, _ = fast_retry(attempts, timeout_s)

    def fetch(regions: object, **kwargs: object) -> GcpPayload:
        kwargs["retry"] = kwargs.get("retry") or retry
        return fetch_gcp(
            regions,  # type: ignore[arg-type]
            project="gpuplan-test",
            credentials=AnonymousCredentials(),
            billing_endpoint=api.url,
            compute_endpoint=api.url,
            **kwargs,  # type: ignore[arg-type]
        )

    return Source(fetch, parse_gcp, REGIONS)


def test_fetch_through_the_google_clients_pages_through_every_list(
    gcp_api: StandIn, gcp_sleeps: Sleeps
) -> None:
    retry, _ = fast_retry()
    payload = standin_fetch(gcp_api).fetch(REGIONS, retry=retry)
    paths = gcp_api.requests
    assert sum("/skus" in p for p in paths) == 2
    assert sum("pageToken=CiAKGjBpNDd2" in p for p in paths) == 1
    assert sum("aggregated/machineTypes" in p for p in paths) == 2
    assert any("filter=name" in p for p in paths if "machineTypes" in p)
    assert gcp_sleeps.delays == []
    live = parse_gcp(payload, "2026-11-30").offers
    assert live.equals(parse_gcp(recorded_payload(), "2026-11-30").offers)


def test_refresh_gcp_end_to_end_is_ranked_by_the_planner(
    gcp_api: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(refresh_module.SOURCES, "gcp", standin_fetch(gcp_api))
    added = refresh("gcp")
    assert added.info.origin == "user" and added.info.rows == len(offers_by_key())
    offers = load_offers()
    plan = make_plan(
        PlanRequest(get_workload("resnet50-imagenet-90ep"), "fp16", "spot", providers=("gcp",)),
        offers,
        published_frame(),
    )
    assert len(plan.rows) > 0
    assert set(plan.rows["price_date"]) == {added.info.priced_at}
    assert plan.rows["price_source"].str.contains("Cloud Billing catalog").all()
    assert plan.rows["cost_usd"].is_monotonic_increasing
    a2 = plan.rows.loc[plan.rows["instance_type"] == "a2-highgpu-1g"]
    assert a2["usd_per_hour"].iloc[0] == pytest.approx(
        12 * 0.015806 + 85 * 0.002119 + 1.4341, rel=1e-5
    )  # snapshots keep 6 significant digits


@pytest.mark.parametrize(
    ("match", "fault", "times", "message"),
    [
        ("pageToken=CiAK", "429", 3, "still failing after 3 tries (TooManyRequests"),
        ("aggregated/machineTypes", "500", 3, "still failing after 3 tries (InternalServerError"),
        ("pageToken=CiAK", "garbage", 1, "not the JSON the API documents"),
        ("aggregated/acceleratorTypes", "hang", 2, "still failing after 2 tries"),
    ],
)
def test_a_failed_refresh_keeps_the_previous_snapshot_byte_for_byte(
    gcp_api: StandIn,
    monkeypatch: pytest.MonkeyPatch,
    match: str,
    fault: str,
    times: int,
    message: str,
) -> None:
    monkeypatch.setitem(refresh_module.SOURCES, "gcp", standin_fetch(gcp_api))
    refresh("gcp")
    before = tree_bytes(user_snapshot_dir())
    attempts, timeout_s = (2, 0.2) if fault == "hang" else (3, 2.0)
    monkeypatch.setitem(refresh_module.SOURCES, "gcp", standin_fetch(gcp_api, attempts, timeout_s))
    gcp_api.fail(match, fault, times)
    with pytest.raises(RefreshError) as info:
        refresh("gcp")
    assert message in str(info.value)
    assert "stays in use, unchanged" in str(info.value)
    assert tree_bytes(user_snapshot_dir()) == before


def test_throttling_then_success_backs_off_exponentially(
    gcp_api: StandIn, gcp_sleeps: Sleeps
) -> None:
    retry, _ = fast_retry(attempts=4)
    gcp_api.fail("/skus", "429", times=2)
    payload = standin_fetch(gcp_api).fetch(REGIONS, retry=retry)
    assert len(payload.skus) == 38
    # google-api-core's Retry tried page 1 three times (two 429s), waiting uniform(0, d)
    # with d = 0.5 then 1.0 s (base_delay_s x 2**n, its truncated exponential backoff).
    assert sum("/skus" in p for p in gcp_api.requests) == 2 + 2
    assert len(gcp_sleeps.delays) == 2
    assert 0 <= gcp_sleeps.delays[0] <= 0.5 and 0 <= gcp_sleeps.delays[1] <= 1.0


def test_missing_credentials_are_explained_before_any_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    with pytest.raises(FetchError, match="no GCP credentials found: run `gcloud auth"):
        fetch_gcp(REGIONS)
    with pytest.raises(RefreshError, match="gcp refresh failed: no GCP credentials"):
        refresh("gcp")
    assert tree_bytes(user_snapshot_dir()) == {}


def test_a_permission_error_is_not_retried_and_says_what_to_enable(
    gcp_api: StandIn, gcp_sleeps: Sleeps
) -> None:
    retry, _ = fast_retry()
    source = standin_fetch(gcp_api)
    api_403 = functools.partial(source.fetch, retry=retry)
    gcp_api.route = lambda path, query: (
        403,
        {},
        b'{"error": {"code": 403, "message": "Cloud Billing API has not been used"}}',
    )
    with pytest.raises(FetchError, match="enable the Cloud Billing and Compute Engine APIs"):
        api_403(REGIONS)
    assert len(gcp_api.requests) == 1  # not retried
    assert gcp_sleeps.delays == []


def test_without_the_google_clients_the_refresh_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import google.cloud

    monkeypatch.setitem(sys.modules, "google.cloud.billing_v1", None)
    monkeypatch.delattr(google.cloud, "billing_v1", raising=False)
    with pytest.raises(RefreshError, match=r"pip install 'gpuplan\[gcp\]'"):
        refresh("gcp")


def test_a_refresh_past_its_deadline_stops_between_pages(gcp_api: StandIn) -> None:
    """The Retry bounds each page; the refresh as a whole stops at deadline_s."""
    ticks = iter(range(0, 1000, 10))  # every look at the clock is 10 s later
    retry = RetryPolicy(attempts=2, deadline_s=15.0, clock=lambda: float(next(ticks)))
    with pytest.raises(FetchError) as info:
        standin_fetch(gcp_api).fetch(REGIONS, retry=retry)
    message = str(info.value)
    assert "Cloud Billing list_skus (Compute Engine), page 2: the refresh has run 20 s" in message
    assert "past its deadline of 15 s" in message
    assert sum("/skus" in p for p in gcp_api.requests) == 1  # page 2 never asked for
