"""AWS GPU offers from AWS's own APIs: Price List (on-demand, reserved), EC2 (shapes, spot).

fetch_aws is the only I/O (boto3; credentials from boto3's usual chain, checked before
any request) and returns the APIs' records as they come (AwsPayload); parse_aws turns
them into offers without touching the network:

- on-demand and reserved 1-/3-year standard No Upfront prices: Price List query API,
  `get_products` (service AmazonEC2) with TERM_MATCH filters for Linux, shared tenancy,
  no pre-installed software and used capacity, per region (`regionCode`);
- GPU shapes (GPU model and count, GPU memory, vCPUs, memory): EC2
  `describe_instance_types`, instance types with GpuInfo; GPU slices as fractions;
- spot: EC2 `describe_spot_price_history` (Linux/UNIX) as of now, the latest price per
  availability zone, kept as a detail table, and their median per region as the offer's
  spot_usd_per_hour.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from pricing.aliases import AWS_FRACTIONAL_FIELDS, AWS_GPU_TYPE_PATTERNS
from pricing.gpus import did_you_mean
from pricing.providers import http
from pricing.providers.common import (
    Fix,
    MalformedPayload,
    ParsedCatalog,
    api_offers,
    finish_offers,
    fix,
    fixes_frame,
)
from pricing.providers.regions import DEFAULT_DEADLINES_S
from pricing.providers.regions import DEFAULT_REGIONS as PROVIDER_DEFAULT_REGIONS
from pricing.providers.retry import FetchError, RefreshClock, RetryPolicy, describe

DEFAULT_REGIONS = PROVIDER_DEFAULT_REGIONS["aws"]
# The Price List query API answers in us-east-1 (also eu-central-1, ap-south-1).
PRICING_REGION = "us-east-1"
PRICE_FILTERS: tuple[tuple[str, str], ...] = (
    ("productFamily", "Compute Instance"),
    ("operatingSystem", "Linux"),
    ("tenancy", "Shared"),
    ("preInstalledSw", "NA"),
    ("capacitystatus", "Used"),
)
SPOT_PRODUCT = "Linux/UNIX"
# Page budget per paginated call; a NextToken seen before also ends it (a loop).
MAX_PAGES = 500
# Reserved terms kept: standard class, no upfront payment (the hourly rate is the price).
RESERVED_TERMS = {"1yr": "reserved_1y_usd_per_hour", "3yr": "reserved_3y_usd_per_hour"}
THROTTLING_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottled",
        "RequestThrottledException",
        "RequestLimitExceeded",
        "TooManyRequestsException",
        "SlowDown",
        "ServiceUnavailable",
        "InternalError",
        "InternalFailure",
    }
)
SOURCE = (
    "AWS Price List query API (AmazonEC2: Linux, shared tenancy) + EC2 "
    "DescribeInstanceTypes and DescribeSpotPriceHistory"
)
SPOT_ZONE_COLUMNS = (
    "region",
    "availability_zone",
    "instance_type",
    "spot_usd_per_hour",
    "observed_at",
)

Client = Any
Progress = Callable[[str], None]


@dataclass(frozen=True)
class AwsPayload:
    """What the AWS APIs returned, as returned (boto3's parsed responses)."""

    regions: tuple[str, ...]
    price_list: list[str]
    instance_types: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    spot_history: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


# ---------------------------------------------------------------------------- fetch


def fetch_aws(
    regions: Sequence[str] = DEFAULT_REGIONS,
    *,
    pricing: Client | None = None,
    ec2: Callable[[str], Client] | None = None,
    spot_ec2: Callable[[str], Client] | None = None,
    retry: RetryPolicy | None = None,
    progress: Progress | None = None,
    now: dt.datetime | None = None,
) -> AwsPayload:
    """Read prices, GPU shapes and spot history for `regions` from AWS.

    `pricing` (a boto3 "pricing" client) and `ec2` / `spot_ec2` (region -> boto3 "ec2"
    client) default to clients of a boto3 Session, whose credentials must exist, made
    with client_config(retry). Pages come from boto3's paginators; botocore retries each
    request; the whole fetch stops after retry.deadline_s seconds (checked between pages).
    Raises FetchError with what failed and what to do.
    """
    retry = retry or RetryPolicy(deadline_s=DEFAULT_DEADLINES_S["aws"])
    say = progress or (lambda _message: None)
    now = now or dt.datetime.now(dt.UTC)
    _check_regions(regions)
    if pricing is None or ec2 is None:
        default_pricing, default_ec2 = _default_clients(retry)
        pricing = pricing or default_pricing
        ec2 = ec2 or default_ec2
    spot_ec2 = spot_ec2 or ec2
    clock = retry.refresh_clock()
    try:
        price_list: list[str] = []
        shapes: dict[str, list[dict[str, Any]]] = {}
        spot: dict[str, list[dict[str, Any]]] = {}
        for region in regions:
            price_list += fetch_price_list(pricing, region, retry, clock, say)
            shapes[region] = fetch_gpu_shapes(ec2(region), region, retry, clock, say)
            types = sorted({t["InstanceType"] for t in shapes[region]})
            spot[region] = fetch_spot_history(
                spot_ec2(region), region, types, now, retry, clock, say
            )
    except FetchError:
        raise
    except Exception as exc:
        raise FetchError(_explain(exc)) from exc
    return AwsPayload(tuple(regions), price_list, shapes, spot)


def _check_regions(regions: Sequence[str]) -> None:
    """FetchError naming the closest known region for a region EC2 does not have.

    The known regions are botocore's bundled endpoint data (no request is made).
    """
    try:
        import boto3
    except ImportError:
        return
    known = boto3.session.Session().get_available_regions("ec2")
    for region in regions:
        if known and region not in known:
            fix = did_you_mean(region, known)
            raise FetchError(f"unknown AWS region {region!r}{fix} Known: {', '.join(known)}")


def _default_clients(retry: RetryPolicy) -> tuple[Client, Callable[[str], Client]]:
    """A pricing client and an EC2 client factory from boto3's default session."""
    try:
        import boto3
    except ImportError:
        raise FetchError(
            "boto3 is not installed: pip install 'gpuplan[aws]' to refresh AWS prices"
        ) from None

    session = boto3.session.Session()
    if session.get_credentials() is None:
        raise FetchError(
            "no AWS credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
            "run `aws configure` or `aws sso login`, or set AWS_PROFILE; the IAM principal "
            "needs pricing:GetProducts, ec2:DescribeInstanceTypes and "
            "ec2:DescribeSpotPriceHistory"
        )
    config = client_config(retry)
    pricing = session.client("pricing", region_name=PRICING_REGION, config=config)
    return pricing, lambda region: session.client("ec2", region_name=region, config=config)


def client_config(retry: RetryPolicy) -> Any:
    """The botocore Config of every client a refresh makes.

    botocore's retry mode retry.sdk_mode ("standard": exponential backoff with jitter,
    throttling-aware, a retry quota; "adaptive": also client-side rate limiting), at most
    retry.attempts tries per request (total_max_attempts), retry.timeout_s to connect and
    for each read (a page that never comes fails after it, and is retried).
    """
    from botocore.config import Config

    return Config(
        retries={"mode": retry.sdk_mode, "total_max_attempts": retry.attempts},
        connect_timeout=retry.timeout_s,
        read_timeout=retry.timeout_s,
        user_agent_extra="gpuplan",
    )


def _retryable(exc: BaseException) -> bool:
    """Throttling, 5xx and timeouts: errors botocore retries, so still failing after its
    tries; other errors are not retried."""
    from botocore.exceptions import (
        ClientError,
        ConnectionClosedError,
        ConnectTimeoutError,
        EndpointConnectionError,
        ReadTimeoutError,
    )

    if isinstance(exc, ClientError):
        code = exc.response.get("Error", {}).get("Code", "")
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        return code in THROTTLING_CODES or status == 429 or status >= 500
    return isinstance(
        exc,
        ReadTimeoutError | ConnectTimeoutError | EndpointConnectionError | ConnectionClosedError,
    )


def _explain(exc: BaseException) -> str:
    """A FetchError message for a boto3 error that is not worth retrying."""
    from botocore.exceptions import ClientError, NoCredentialsError, PartialCredentialsError
    from botocore.parsers import ResponseParserError

    if isinstance(exc, ResponseParserError):
        return f"an AWS API page is not the XML/JSON the API documents ({describe(exc)})"
    if isinstance(exc, NoCredentialsError | PartialCredentialsError):
        return f"AWS credentials are missing or incomplete ({exc}); run `aws configure`"
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        return (
            f"AWS refused {exc.operation_name}: {error.get('Code')}: {error.get('Message')}; "
            "check the credentials and that the IAM principal may call "
            "pricing:GetProducts, ec2:DescribeInstanceTypes and ec2:DescribeSpotPriceHistory"
        )
    return f"AWS request failed: {describe(exc)}"


def _tries(exc: BaseException, default: int) -> int:
    """How many tries botocore made before `exc` (its RetryAttempts + 1, when known)."""
    response = getattr(exc, "response", None) or {}
    retried = response.get("ResponseMetadata", {}).get("RetryAttempts")
    return int(retried) + 1 if retried is not None else default


def _pages(
    client: Client,
    operation: str,
    request: dict[str, Any],
    clock: RefreshClock,
    what: Callable[[int], str],
    attempts: int,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(page number, response) for every page of `operation`, from boto3's paginator.

    botocore retries each page (client_config); at most MAX_PAGES pages, a NextToken
    seen before ends the fetch (a loop), and so does the refresh's deadline.
    """
    budget = http.Pages(what(1).rsplit(" (", 1)[0], MAX_PAGES)
    responses = iter(client.get_paginator(operation).paginate(**request))
    token = "<first page>"
    while True:
        page = budget.follow(token)
        clock.check(what(page))
        try:
            response = next(responses)
        except StopIteration:
            return
        except Exception as exc:
            if not _retryable(exc):
                raise
            raise FetchError(
                f"{what(page)}: still failing after {_tries(exc, attempts)} tries "
                f"({describe(exc)}); try again later"
            ) from exc
        yield page, response
        token = response.get("NextToken") or ""
        if not token:
            return


def fetch_price_list(
    pricing: Client, region: str, retry: RetryPolicy, clock: RefreshClock, say: Progress
) -> list[str]:
    """Every Price List item (JSON text) for Linux shared-tenancy instances in `region`."""
    filters = [
        {"Type": "TERM_MATCH", "Field": name, "Value": value}
        for name, value in (*PRICE_FILTERS, ("regionCode", region))
    ]
    request: dict[str, Any] = {
        "ServiceCode": "AmazonEC2",
        "Filters": filters,
        "FormatVersion": "aws_v1",
        "MaxResults": 100,
    }
    items: list[str] = []

    def what(page: int) -> str:
        return f"AWS Price List get_products ({region}, page {page})"

    for page, response in _pages(pricing, "get_products", request, clock, what, retry.attempts):
        items += response.get("PriceList", [])
        say(f"aws {region}: price list page {page}, {len(items)} products")
    return items


def fetch_gpu_shapes(
    ec2: Client, region: str, retry: RetryPolicy, clock: RefreshClock, say: Progress
) -> list[dict]:
    """EC2 InstanceTypes entries that have GPUs, for `region` (P and G families asked for)."""
    request: dict[str, Any] = {
        "Filters": [{"Name": "instance-type", "Values": list(AWS_GPU_TYPE_PATTERNS)}],
        "MaxResults": 100,
    }
    shapes: list[dict[str, Any]] = []

    def what(page: int) -> str:
        return f"EC2 describe_instance_types ({region}, page {page})"

    for _, response in _pages(ec2, "describe_instance_types", request, clock, what, retry.attempts):
        shapes += [t for t in response.get("InstanceTypes", []) if t.get("GpuInfo", {}).get("Gpus")]
    say(f"aws {region}: {len(shapes)} GPU instance types")
    return shapes


def fetch_spot_history(
    ec2: Client,
    region: str,
    instance_types: Sequence[str],
    now: dt.datetime,
    retry: RetryPolicy,
    clock: RefreshClock,
    say: Progress,
) -> list[dict[str, Any]]:
    """Spot prices in effect at `now` for `instance_types`, every zone of `region`.

    With StartTime = EndTime = now the API returns, per zone and type, the last price
    change before now: the price in effect (EC2 API reference, DescribeSpotPriceHistory).
    """
    history: list[dict[str, Any]] = []

    def what(_page: int) -> str:
        return f"EC2 describe_spot_price_history ({region})"

    for start in range(0, len(instance_types), 100):
        request: dict[str, Any] = {
            "InstanceTypes": list(instance_types[start : start + 100]),
            "ProductDescriptions": [SPOT_PRODUCT],
            "StartTime": now,
            "EndTime": now,
            "MaxResults": 1000,
        }
        pages = _pages(ec2, "describe_spot_price_history", request, clock, what, retry.attempts)
        for _, response in pages:
            history += response.get("SpotPriceHistory", [])
    say(f"aws {region}: {len(history)} spot prices")
    return history


# ---------------------------------------------------------------------------- parse


def parse_aws(payload: AwsPayload, priced_at: str) -> ParsedCatalog:
    """Offers (with spot and reserved prices), fixes and per-zone spot prices."""
    fixes: list[Fix] = []
    prices = price_rows(payload.price_list, payload.regions, fixes)
    shapes = shape_rows(
        [shape for region in payload.regions for shape in payload.instance_types.get(region, [])],
        fixes,
    )
    zones = spot_zone_rows(payload.spot_history, fixes)
    spot = zones.groupby(["region", "instance_type"], as_index=False)["spot_usd_per_hour"].median()
    priced = prices.merge(spot, on=["region", "instance_type"], how="outer")
    no_shape = ~priced["instance_type"].isin(shapes["instance_type"])
    gpu_attr = pd.to_numeric(priced["gpu_attr"], errors="coerce").fillna(0) > 0
    for instance in sorted(set(priced.loc[no_shape & gpu_attr, "instance_type"])):
        fixes.append(
            fix(
                "aws",
                "*",
                instance,
                "gpu_count",
                "dropped",
                "the Price List says it has GPUs but describe_instance_types gave no "
                "GpuInfo in these regions: its GPU count is unknown",
            )
        )
    cpu_only = priced.loc[no_shape & ~gpu_attr, "instance_type"].nunique()
    if cpu_only:
        fixes.append(fix("aws", "*", "*", "", f"dropped {cpu_only} instance types", "no GPUs"))
    offers = priced.merge(shapes, on="instance_type", how="inner")
    offers = api_offers(offers, "aws", SOURCE, priced_at, fixes, "gpu_memory_gib")
    zones = zones.loc[zones["instance_type"].isin(offers["instance_type"])]
    return ParsedCatalog(
        finish_offers(offers, "aws", fixes),
        fixes_frame(fixes),
        SOURCE,
        {"spot-zones": zones.reset_index(drop=True)},
    )


def _hourly_usd(term: dict[str, Any]) -> float:
    """The USD per hour of a Price List term (its "Hrs" price dimension), NaN if none."""
    for dimension in term.get("priceDimensions", {}).values():
        if dimension.get("unit") == "Hrs" and "USD" in dimension.get("pricePerUnit", {}):
            return float(dimension["pricePerUnit"]["USD"])
    return float("nan")


def price_rows(
    items: Iterable[str | dict], regions: Sequence[str], fixes: list[Fix]
) -> pd.DataFrame:
    """One row per Price List product: region, instance_type, on-demand and reserved USD/h.

    Zero prices are placeholders (not offered), set missing on record; a product listed
    twice with different prices is set missing on record rather than picked.
    """
    rows = []
    for n, item in enumerate(items, start=1):
        try:
            record = json.loads(item) if isinstance(item, str) else item
            attributes = record["product"]["attributes"]
            terms = record.get("terms", {})
            row: dict[str, object] = {
                "region": attributes["regionCode"],
                "instance_type": attributes["instanceType"],
                "gpu_attr": attributes.get("gpu", ""),
                "usd_per_hour": next(
                    (_hourly_usd(t) for t in terms.get("OnDemand", {}).values()), np.nan
                ),
            }
            for length, column in RESERVED_TERMS.items():
                row[column] = next(
                    (
                        _hourly_usd(t)
                        for t in terms.get("Reserved", {}).values()
                        if t.get("termAttributes", {}).get("LeaseContractLength") == length
                        and t.get("termAttributes", {}).get("PurchaseOption") == "No Upfront"
                        and t.get("termAttributes", {}).get("OfferingClass") == "standard"
                    ),
                    np.nan,
                )
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError, ValueError) as exc:
            raise MalformedPayload(
                f"AWS Price List item {n} is not a product with attributes and terms "
                f"({describe(exc)})"
            ) from None
        rows.append(row)
    columns = ["region", "instance_type", "gpu_attr", "usd_per_hour", *RESERVED_TERMS.values()]
    frame = pd.DataFrame(rows, columns=columns)
    frame = frame.loc[frame["region"].isin(regions)].copy()
    for column in ("usd_per_hour", *RESERVED_TERMS.values()):
        zero = frame[column] <= 0
        for placeholder in frame.loc[zero].itertuples():
            fixes.append(
                fix(
                    "aws",
                    str(placeholder.region),
                    str(placeholder.instance_type),
                    column,
                    "set missing",
                    "placeholder price 0 in the Price List: not offered, never free",
                )
            )
        frame.loc[zero, column] = np.nan
        conflict = frame.groupby(["region", "instance_type"])[column].transform("nunique") > 1
        for region, instance in sorted(
            set(
                zip(
                    frame.loc[conflict, "region"], frame.loc[conflict, "instance_type"], strict=True
                )
            )
        ):
            fixes.append(
                fix(
                    "aws",
                    region,
                    instance,
                    column,
                    "set missing",
                    "listed more than once with different prices",
                )
            )
        frame.loc[conflict, column] = np.nan
    return frame.drop_duplicates(["region", "instance_type"]).reset_index(drop=True)


def shape_rows(instance_types: Iterable[dict[str, Any]], fixes: list[Fix]) -> pd.DataFrame:
    """One row per GPU instance type: accelerator, gpu_count, gpu_memory_gib, vcpus, memory.

    GPU slices count as the fraction LogicalGpuCount x GpuPartitionSize (g6f.2xlarge:
    0.25); gpu_memory_gib is the instance's GPU memory over its GPU count, i.e. one whole
    GPU's memory for slices too.
    """
    rows = []
    for entry in instance_types:
        name = str(entry.get("InstanceType", ""))
        try:
            info = entry["GpuInfo"]
            gpu = info["Gpus"][0]
            logical, partition = (gpu.get(f) for f in AWS_FRACTIONAL_FIELDS)
            if logical is not None and partition is not None and 0 < partition < 1:
                count = float(logical) * float(partition)
            else:
                count = float(gpu.get("Count") or 0)
            total_mib = info.get("TotalGpuMemoryInMiB") or (
                gpu.get("MemoryInfo", {}).get("SizeInMiB", 0) * max(count, 1)
            )
            rows.append(
                {
                    "instance_type": name,
                    "accelerator": str(gpu["Name"]),
                    "gpu_count": count,
                    "gpu_memory_gib": round(total_mib / count / 1024, 2)
                    if count and total_mib
                    else np.nan,
                    "vcpus": float(entry["VCpuInfo"]["DefaultVCpus"]),
                    "memory_gib": float(entry["MemoryInfo"]["SizeInMiB"]) / 1024,
                }
            )
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise MalformedPayload(
                f"EC2 instance type {name or '?'} has no usable GpuInfo/VCpuInfo/MemoryInfo "
                f"({describe(exc)})"
            ) from None
    columns = ["instance_type", "accelerator", "gpu_count", "gpu_memory_gib", "vcpus", "memory_gib"]
    frame = pd.DataFrame(rows, columns=columns).drop_duplicates("instance_type")
    no_count = ~(frame["gpu_count"] > 0)
    for instance in frame.loc[no_count, "instance_type"]:
        fixes.append(
            fix("aws", "*", instance, "gpu_count", "dropped", "GpuInfo gives no GPU count")
        )
    return frame.loc[~no_count].reset_index(drop=True)


def spot_zone_rows(history: dict[str, list[dict[str, Any]]], fixes: list[Fix]) -> pd.DataFrame:
    """The latest Linux/UNIX spot price per (zone, instance type): SPOT_ZONE_COLUMNS."""
    rows = []
    for region, entries in history.items():
        for entry in entries:
            try:
                if entry.get("ProductDescription", SPOT_PRODUCT) != SPOT_PRODUCT:
                    continue
                rows.append(
                    {
                        "region": region,
                        "availability_zone": str(entry["AvailabilityZone"]),
                        "instance_type": str(entry["InstanceType"]),
                        "spot_usd_per_hour": float(entry["SpotPrice"]),
                        "observed_at": pd.Timestamp(entry["Timestamp"]),
                    }
                )
            except (KeyError, TypeError, ValueError) as exc:
                raise MalformedPayload(
                    f"EC2 spot price history entry in {region} is malformed ({describe(exc)})"
                ) from None
    frame = pd.DataFrame(rows, columns=list(SPOT_ZONE_COLUMNS))
    if frame.empty:
        return frame
    frame["observed_at"] = pd.to_datetime(frame["observed_at"], utc=True)
    frame = frame.sort_values("observed_at").drop_duplicates(
        ["availability_zone", "instance_type"], keep="last"
    )
    bad = ~(frame["spot_usd_per_hour"] > 0)
    for row in frame.loc[bad].itertuples():
        fixes.append(
            fix(
                "aws",
                f"{row.region} ({row.availability_zone})",
                str(row.instance_type),
                "spot_usd_per_hour",
                "dropped zone",
                f"spot price {row.spot_usd_per_hour:g} is not a price",
            )
        )
    frame = frame.loc[~bad].copy()
    frame["observed_at"] = frame["observed_at"].dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    return frame.sort_values(["region", "instance_type", "availability_zone"]).reset_index(
        drop=True
    )
