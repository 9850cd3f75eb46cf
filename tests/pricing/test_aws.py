"""AWS: Price List, EC2 shapes and spot history parsed, fetched through boto3, faults survived.

boto3 is exercised for real, with the clients' own retries (client_config) and
paginators: the Price List API (which moto lacks) answered at botocore's HTTP layer
(AwsWire, below the retry loop), EC2 describe_instance_types against moto's server, spot
history through botocore's Stubber (moto's spot prices are placeholders), and timeouts
against a local server that never answers.
"""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Callable
from typing import Any

import boto3
import pandas as pd
import pytest
from botocore.stub import ANY, Stubber

from benchmarks.published import published_frame
from planner.plan import make_plan
from planner.request import PlanRequest
from planner.workloads.catalog import get_workload
from pricing.catalog import load_offers, read_manifest, user_snapshot_dir
from pricing.providers.aws import (
    PRICE_FILTERS,
    AwsPayload,
    client_config,
    fetch_aws,
    parse_aws,
)
from pricing.providers.retry import FetchError, RetryPolicy
from pricing.refresh import Added, RefreshError, refresh
from tests.pricing.conftest import (
    AwsWire,
    Sleeps,
    StandIn,
    fast_retry,
    fixture_json,
    tree_bytes,
)

REGIONS = ("us-east-1", "eu-west-1")
NOW = dt.datetime(2026, 11, 30, 6, 0, tzinfo=dt.UTC)
PRICE_PAGES = {
    "us-east-1": ["get_products_us-east-1_page1", "get_products_us-east-1_page2"],
    "eu-west-1": ["get_products_eu-west-1_page1"],
}


def recorded_payload() -> AwsPayload:
    prices = [
        item
        for region in REGIONS
        for name in PRICE_PAGES[region]
        for item in fixture_json(f"aws/{name}.json")["PriceList"]
    ]
    shapes = [
        t
        for n in (1, 2)
        for t in fixture_json(f"aws/describe_instance_types_page{n}.json")["InstanceTypes"]
        if t.get("GpuInfo")
    ]
    spot = {
        r: fixture_json(f"aws/spot_price_history_{r}.json")["SpotPriceHistory"] for r in REGIONS
    }
    return AwsPayload(REGIONS, prices, {r: shapes for r in REGIONS}, spot)


def test_prices_shapes_and_spot_join_into_offers() -> None:
    catalog = parse_aws(recorded_payload(), "2026-11-30")
    offers = catalog.offers.set_index(["region", "instance_type"])
    p5 = offers.loc[("us-east-1", "p5.48xlarge")]
    assert p5["usd_per_hour"] == pytest.approx(55.04)
    # Standard, no upfront: not the convertible (x1.12) nor the all-upfront (0/h) term.
    assert p5["reserved_1y_usd_per_hour"] == pytest.approx(38.5296)
    assert p5["reserved_3y_usd_per_hour"] == pytest.approx(24.768)
    # Latest price per zone (1a: 21.112 superseded 24.901), then the median of 1a, 1b, 1d.
    assert p5["spot_usd_per_hour"] == pytest.approx(19.2531)
    assert (p5["gpu_name"], p5["gpu_count"], p5["gpu_memory_gib"]) == ("H100-SXM", 8, 80)
    assert (p5["vcpus"], p5["memory_gib"], p5["interconnect"]) == (192, 2048, "nvlink")
    assert offers.loc[("eu-west-1", "p4d.24xlarge"), "spot_usd_per_hour"] == pytest.approx(
        (9.7598 + 11.004) / 2
    )


def test_a_gpu_slice_is_a_fraction_of_a_gpu() -> None:
    g6f = (
        parse_aws(recorded_payload(), "2026-11-30")
        .offers.set_index("instance_type")
        .loc["g6f.2xlarge"]
    )
    assert g6f["gpu_name"] == "L4"
    assert g6f["gpu_count"] == 0.25
    assert g6f["gpu_count"] * g6f["gpu_memory_gib"] == pytest.approx(5722 / 1024, abs=0.01)
    assert g6f["interconnect"] == "none"


def test_awkward_products_are_fixed_or_dropped_on_record() -> None:
    catalog = parse_aws(recorded_payload(), "2026-11-30")
    offers = catalog.offers
    assert "m7i.large" not in set(offers["instance_type"])  # no GPU
    assert not (
        (offers["region"] == "eu-west-1") & (offers["instance_type"] == "p5.48xlarge")
    ).any()
    for dropped in ("p5e.48xlarge", "g5g.xlarge", "p6-b300.48xlarge", "g6.xlarge"):
        assert dropped not in set(offers["instance_type"])
    fixes = catalog.fixes.set_index("instance_type")
    assert "placeholder price 0" in fixes.loc["p5e.48xlarge", "reason"].iloc[0]
    assert "GPU 'T4g' is in no quirk table" in fixes.loc["g5g.xlarge", "reason"]
    assert "GPU count is unknown" in fixes.loc["p6-b300.48xlarge", "reason"]
    assert "more than once with different prices" in fixes.loc["g6.xlarge", "reason"].iloc[0]
    zones = catalog.details["spot-zones"]
    p5 = zones.loc[zones["instance_type"] == "p5.48xlarge"].set_index("availability_zone")
    assert p5["spot_usd_per_hour"].to_dict() == {
        "us-east-1a": 21.112,
        "us-east-1b": 19.2531,
        "us-east-1d": 17.3402,
    }
    g5 = zones.loc[(zones["instance_type"] == "g5.xlarge") & (zones["region"] == "us-east-1")]
    assert 1.21 not in set(g5["spot_usd_per_hour"])  # the Windows price


# ------------------------------------------------------------------ boto3 end to end


def session() -> boto3.session.Session:
    return boto3.session.Session(region_name="us-east-1")


# moto's first EC2 answer can take seconds: these clients wait up to 30 s per read.
CONFIG = client_config(RetryPolicy(attempts=3, timeout_s=30.0))


def stubbed_pricing(
    regions: tuple[str, ...] = REGIONS, throttled: int = 0, retry: RetryPolicy | None = None
) -> tuple[Any, AwsWire]:
    """A real boto3 pricing client, made as a refresh makes it (client_config), answering
    from the recorded pages after `throttled` ThrottlingException answers."""
    config = client_config(retry or fast_retry()[0])
    client = session().client("pricing", region_name="us-east-1", config=config)
    stub = AwsWire(client, "GetProducts")
    for _ in range(throttled):
        stub.add_client_error("ThrottlingException", "Rate exceeded", 400)
    for region in regions:
        filters = [
            {"Type": "TERM_MATCH", "Field": f, "Value": v}
            for f, v in (*PRICE_FILTERS, ("regionCode", region))
        ]
        token = ""
        for name in PRICE_PAGES[region]:
            page = fixture_json(f"aws/{name}.json")
            expected: dict[str, Any] = {
                "ServiceCode": "AmazonEC2",
                "Filters": filters,
                "FormatVersion": "aws_v1",
                "MaxResults": 100,
            }
            if token:
                expected["NextToken"] = token
            stub.add_response(page, expected)
            token = page.get("NextToken", "")
    return client, stub


def stubbed_spot(region: str) -> Any:
    client = session().client("ec2", region_name=region, config=CONFIG)
    stub = Stubber(client)
    page = fixture_json(f"aws/spot_price_history_{region}.json")
    for entry in page["SpotPriceHistory"]:
        entry["Timestamp"] = dt.datetime.fromisoformat(entry["Timestamp"])
    stub.add_response(
        "describe_spot_price_history",
        page,
        {
            "InstanceTypes": ANY,
            "ProductDescriptions": ["Linux/UNIX"],
            "StartTime": NOW,
            "EndTime": NOW,
            "MaxResults": 1000,
        },
    )
    stub.activate()
    return client


def moto_ec2_client(endpoint: str) -> Callable[[str], Any]:
    return lambda region: session().client(
        "ec2", region_name=region, endpoint_url=endpoint, config=CONFIG
    )


def test_fetch_through_boto3_pages_the_price_list_and_reads_moto_shapes(
    moto_ec2: str, sdk_sleeps: Sleeps
) -> None:
    pricing, stub = stubbed_pricing()
    retry, _ = fast_retry()
    with stub:
        payload = fetch_aws(
            REGIONS,
            pricing=pricing,
            ec2=moto_ec2_client(moto_ec2),
            spot_ec2=stubbed_spot,
            retry=retry,
            now=NOW,
        )
        stub.assert_no_pending_responses()
    assert len(payload.price_list) == len(recorded_payload().price_list)
    assert all(t.get("GpuInfo") for t in payload.instance_types["us-east-1"])
    catalog = parse_aws(payload, "2026-11-30")
    offers = catalog.offers.set_index(["region", "instance_type"])
    # Shapes from moto's EC2 (AWS's own instance data), prices from the Price List pages.
    assert offers.loc[("us-east-1", "p5.48xlarge"), "usd_per_hour"] == pytest.approx(55.04)
    assert offers.loc[("us-east-1", "p5.48xlarge"), "vcpus"] == 192
    assert offers.loc[("us-east-1", "g6f.2xlarge"), "gpu_count"] == 0.25
    # moto knows p6-b300.48xlarge, so its price is no longer dropped for want of a shape.
    assert offers.loc[("us-east-1", "p6-b300.48xlarge"), "gpu_name"] == "B300"
    assert len(stub.requests) == 3  # one try per page
    assert sdk_sleeps.delays == []


def refresh_recorded(moto_ec2: str) -> Added:
    """`refresh("aws")` of REGIONS at NOW from the recorded Price List pages, moto's EC2
    shapes and the stubbed spot history."""
    pricing, stub = stubbed_pricing()
    retry, _ = fast_retry()
    options = {
        "pricing": pricing,
        "ec2": moto_ec2_client(moto_ec2),
        "spot_ec2": stubbed_spot,
        "now": NOW,
    }
    with stub:
        return refresh("aws", REGIONS, options=options, retry=retry, now=NOW)


def test_refresh_aws_end_to_end_is_ranked_by_the_planner_at_every_pricing(
    moto_ec2: str,
) -> None:
    info = refresh_recorded(moto_ec2).info
    assert info.file == "aws-2026-11-30.csv" and info.spot_zones_file
    zones = pd.read_csv(info.path.parent / info.spot_zones_file)
    assert set(zones.columns) >= {"availability_zone", "spot_usd_per_hour", "observed_at"}
    offers = load_offers()
    workload = get_workload("resnet50-imagenet-90ep")
    for kind, column in (
        ("on-demand", "usd_per_hour"),
        ("spot", "spot_usd_per_hour"),
        ("reserved-1y", "reserved_1y_usd_per_hour"),
        ("reserved-3y", "reserved_3y_usd_per_hour"),
    ):
        plan = make_plan(
            PlanRequest(workload, "fp16", kind, providers=("aws",)), offers, published_frame()
        )
        assert len(plan.rows) > 0, kind
        assert set(plan.rows["price_date"]) == {"2026-11-30"}
        chosen = offers.set_index(["region", "instance_type"])[column]
        for row in plan.rows.itertuples():
            assert row.usd_per_hour == chosen.loc[(row.region, row.instance_type)]


def test_throttling_then_success_backs_off_exponentially(moto_ec2: str, sdk_sleeps: Sleeps) -> None:
    retry, _ = fast_retry(attempts=4)
    pricing, stub = stubbed_pricing(("us-east-1",), throttled=2, retry=retry)
    with stub:
        payload = fetch_aws(
            ("us-east-1",),
            pricing=pricing,
            ec2=moto_ec2_client(moto_ec2),
            spot_ec2=stubbed_spot,
            retry=retry,
            now=NOW,
        )
    assert len(payload.price_list) == 10
    # botocore's standard mode retried page 1 twice, waiting rand(0, 1) * 2**i s (its
    # throttling backoff, i = 0, 1) before the tries: 2 + 1 tries for page 1, 1 for page 2.
    assert len(stub.requests) == 4
    assert stub.requests[0] == stub.requests[1] == stub.requests[2]
    assert len(sdk_sleeps.delays) == 2
    assert 0 <= sdk_sleeps.delays[0] <= 1 and 0 <= sdk_sleeps.delays[1] <= 2


def test_throttling_that_outlasts_the_retries_keeps_the_previous_snapshot(
    moto_ec2: str, sdk_sleeps: Sleeps
) -> None:
    refresh_recorded(moto_ec2)
    before = tree_bytes(user_snapshot_dir())
    manifest_before = read_manifest()
    client, throttled = stubbed_pricing(throttled=3)
    with throttled, pytest.raises(RefreshError) as info:
        refresh(
            "aws",
            REGIONS,
            options={"pricing": client, "ec2": moto_ec2_client(moto_ec2)},
            retry=fast_retry()[0],
            now=NOW + dt.timedelta(days=1),
        )
    message = str(info.value)
    assert "AWS Price List get_products (us-east-1, page 1): still failing after 3 tries" in message
    assert "ThrottlingException" in message
    assert "user aws snapshot of 2026-11-30" in message and "stays in use, unchanged" in message
    assert tree_bytes(user_snapshot_dir()) == before
    assert read_manifest() == manifest_before


def test_access_denied_is_not_retried_and_names_the_permissions(moto_ec2: str) -> None:
    client = session().client("pricing", region_name="us-east-1", config=CONFIG)
    denied = AwsWire(client, "GetProducts")
    denied.add_client_error("AccessDeniedException", "not authorized", 400)
    retry, _ = fast_retry()
    with denied, pytest.raises(FetchError, match="pricing:GetProducts"):
        fetch_aws(REGIONS, pricing=client, ec2=moto_ec2_client(moto_ec2), retry=retry)
    assert len(denied.requests) == 1  # not retried


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ("hang", "still failing after 2 tries (ReadTimeoutError"),
        ("500", "still failing after 2 tries (ClientError: An error occurred (InternalError)"),
        ("garbage", "not the XML/JSON the API documents"),
    ],
)
def test_an_ec2_page_that_never_comes_or_is_broken_fails_the_fetch(
    fault: str, message: str, sdk_sleeps: Sleeps
) -> None:
    broken = StandIn(lambda path, query: (200, {}, b""))
    broken.fail("/", fault, times=2)
    pricing, stub = stubbed_pricing(("us-east-1",))
    # A short read timeout makes the hang quick; the other faults answer at once, so a
    # loaded machine must not time them out (a timeout would be retried: two requests).
    retry, _ = fast_retry(attempts=2, timeout_s=0.2 if fault == "hang" else 5.0)
    config = client_config(retry)

    def ec2(region: str) -> Any:
        return session().client("ec2", region_name=region, endpoint_url=broken.url, config=config)

    try:
        with stub, pytest.raises(FetchError) as info:
            fetch_aws(("us-east-1",), pricing=pricing, ec2=ec2, retry=retry, now=NOW)
    finally:
        broken.close()
    assert message in str(info.value)
    # botocore retried the timeout and the 500 once (two tries), not the broken page.
    assert len(broken.requests) == (1 if fault == "garbage" else 2)
    assert len(sdk_sleeps.delays) == (0 if fault == "garbage" else 1)


def test_missing_credentials_stop_the_refresh_before_any_request(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    for key in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_SECURITY_TOKEN",
        "AWS_PROFILE",
    ):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", f"{tmp_path}/no-credentials")
    monkeypatch.setenv("AWS_CONFIG_FILE", f"{tmp_path}/no-config")
    with pytest.raises(RefreshError) as info:
        refresh("aws")
    assert "no AWS credentials found" in str(info.value)
    assert "bundled aws snapshot of 2025-06-01" in str(info.value)
    assert tree_bytes(user_snapshot_dir()) == {}


def test_price_list_item_that_is_not_json_is_refused_with_its_position() -> None:
    payload = recorded_payload()
    broken = AwsPayload(payload.regions, [*payload.price_list[:2], '{"product": '], {}, {})
    with pytest.raises(ValueError, match="AWS Price List item 3 is not a product"):
        parse_aws(broken, "2026-11-30")


def test_without_boto3_the_refresh_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "boto3", None)
    with pytest.raises(RefreshError, match=r"pip install 'gpuplan\[aws\]'"):
        refresh("aws")


def test_a_misspelt_region_is_named_with_the_closest_one_before_any_request() -> None:
    with pytest.raises(
        RefreshError, match="unknown AWS region 'us-east1'; did you mean 'us-east-1'"
    ):
        refresh("aws", ["us-east1"])
    assert tree_bytes(user_snapshot_dir()) == {}


def test_a_refresh_past_its_deadline_stops_between_pages(moto_ec2: str) -> None:
    """botocore bounds each request; the refresh as a whole stops at deadline_s."""
    ticks = iter(range(0, 1000, 10))  # every look at the clock is 10 s later
    retry = RetryPolicy(attempts=2, deadline_s=15.0, clock=lambda: float(next(ticks)))
    pricing, stub = stubbed_pricing(("us-east-1",), retry=retry)
    with pytest.raises(FetchError) as info:
        fetch_aws(
            ("us-east-1",), pricing=pricing, ec2=moto_ec2_client(moto_ec2), retry=retry, now=NOW
        )
    assert "AWS Price List get_products (us-east-1, page 2): the refresh has run 20 s" in str(
        info.value
    )
    assert "past its deadline of 15 s" in str(info.value)
    assert len(stub.requests) == 1  # page 2 was never asked for
