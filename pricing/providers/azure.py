"""Azure GPU offers from the public Retail Prices REST API (no credentials needed).

fetch_azure is the only I/O (urllib, standard library): for each region it asks
https://prices.azure.com/api/retail/prices with an OData `$filter` for N-series Virtual
Machines and follows `NextPageLink` to the last page; parse_azure keeps Linux
consumption (pay-as-you-go), spot and 1-/3-year reservation prices:

- Windows meters (productName "... Windows") and Low Priority meters are left out, as
  are DevTest prices;
- spot is a consumption meter whose meterName or skuName says "Spot";
- a reservation's retailPrice is the price of the whole term, so its effective hourly
  price is retailPrice / hours in the term (AZURE_TERM_HOURS: 8760 h per year).
The API gives no shapes: GPU count, vCPUs and memory come from
pricing.aliases.AZURE_SIZE_SHAPES, and a size not listed there is dropped on record.

Memory is bounded whatever the server sends: each page is read up to MAX_PAGE_BYTES,
a region up to MAX_PAGES pages and MAX_ITEMS items, and of each item only the fields
parse_azure reads are kept (ITEM_FIELDS, each at most MAX_FIELD_CHARS characters).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from pricing.aliases import AZURE_SIZE_SHAPES, AZURE_TERM_HOURS
from pricing.providers import http
from pricing.providers.common import (
    PRICE_KEYS,
    Fix,
    MalformedPayload,
    ParsedCatalog,
    api_catalog,
    fix,
    set_prices_missing,
    wide_prices,
)
from pricing.providers.regions import DEFAULT_DEADLINES_S
from pricing.providers.regions import DEFAULT_REGIONS as PROVIDER_DEFAULT_REGIONS
from pricing.providers.retry import (
    FetchError,
    RefreshClock,
    RetryPolicy,
    describe,
)

RETAIL_PRICES_URL = "https://prices.azure.com/api/retail/prices"
ACCEPT_JSON = {"Accept": "application/json"}
DEFAULT_REGIONS = PROVIDER_DEFAULT_REGIONS["azure"]
# N-series (GPU) virtual machine sizes in one region; everything else is filtered in parse.
REGION_FILTER = (
    "serviceName eq 'Virtual Machines' and armRegionName eq '{region}' "
    "and contains(armSkuName, 'Standard_N')"
)
MAX_PAGES = 200  # per region; the largest has a few dozen pages of 100 items
MAX_PAGE_BYTES = 4 * 1024 * 1024  # a page of 100 items is ~70 KB
MAX_ITEMS = 20_000  # per region; a real one has one or two thousand N-series meters
MAX_FIELD_CHARS = 200  # a kept text field ("Virtual Machines NCadsA100v4 Series"): < 60
# The fields of a price item parse_azure reads (reservationTerm only on reservations).
ITEM_FIELDS = (
    "armRegionName", "armSkuName", "retailPrice", "type", "productName", "skuName",
    "meterName", "unitOfMeasure", "currencyCode", "serviceName",
)  # fmt: skip
OPTIONAL_FIELDS = ("reservationTerm",)
DEFAULT_DEADLINE_S = DEFAULT_DEADLINES_S["azure"]
SOURCE = "Azure Retail Prices API (Virtual Machines, Linux)"

Progress = Callable[[str], None]


@dataclass(frozen=True)
class AzurePayload:
    """The `Items` of every page the Retail Prices API returned, as returned."""

    regions: tuple[str, ...]
    items: list[dict[str, Any]]


# ---------------------------------------------------------------------------- fetch


def fetch_azure(
    regions: Sequence[str] = DEFAULT_REGIONS,
    *,
    base_url: str = RETAIL_PRICES_URL,
    retry: RetryPolicy | None = None,
    progress: Progress | None = None,
) -> AzurePayload:
    """Every retail price item for N-series VMs in `regions`, following NextPageLink.

    Each page is retried on throttling (HTTP 429), server errors and timeouts; a page
    that is not the documented JSON fails the fetch, and so does the whole fetch past
    retry.deadline_s seconds. Raises FetchError.
    """
    retry = retry or RetryPolicy(deadline_s=DEFAULT_DEADLINE_S)
    clock = retry.refresh_clock()
    say = progress or (lambda _message: None)
    items: list[dict[str, Any]] = []
    for region in regions:
        query = urllib.parse.urlencode(
            {"$filter": REGION_FILTER.format(region=region)}, quote_via=urllib.parse.quote
        )
        url: str | None = f"{base_url}?{query}"
        pages = http.Pages(f"Azure retail prices for {region}", MAX_PAGES)
        count = 0
        while url:
            page = pages.follow(url)
            what = f"Azure retail prices ({region}, page {page})"
            page_items, next_link = _read_page(url, what, retry, clock)
            count += len(page_items)
            if count > MAX_ITEMS:
                raise FetchError(
                    f"{what}: more than {MAX_ITEMS:,} price items for {region} (a real "
                    f"region has one or two thousand): the answer of {base_url} does not "
                    "end; check the URL, or try again later"
                )
            items += page_items
            say(f"azure {region}: page {page}, {len(items)} price items")
            url = _quoted(next_link) if next_link else None
    return AzurePayload(tuple(regions), items)


def _read_page(
    url: str, what: str, retry: RetryPolicy, clock: RefreshClock
) -> tuple[list[dict[str, Any]], str | None]:
    """(the kept fields of each item, NextPageLink) of one page, at most MAX_PAGE_BYTES."""
    body = http.get_with_retries(
        url, retry=retry, clock=clock, what=what, max_bytes=MAX_PAGE_BYTES, headers=ACCEPT_JSON
    )
    try:
        data = json.loads(body)
        page_items = data["Items"]
        next_link = data.get("NextPageLink")
        if not isinstance(page_items, list):
            raise TypeError("Items is not a list")
        if next_link is not None and not isinstance(next_link, str):
            raise TypeError("NextPageLink is not a link")
        kept = [_kept_fields(item) for item in page_items]
    except (
        json.JSONDecodeError,
        KeyError,
        TypeError,
        ValueError,
        AttributeError,
        RecursionError,
    ) as exc:
        raise FetchError(
            f"{what} is not the documented JSON with Items and NextPageLink "
            f"({describe(exc)}); try again later"
        ) from None
    return kept, next_link


def _kept_fields(item: Any) -> dict[str, Any]:
    """The ITEM_FIELDS and OPTIONAL_FIELDS of one price item, checked: an object whose
    kept values are text of at most MAX_FIELD_CHARS characters, numbers or null."""
    if not isinstance(item, dict):
        raise TypeError(f"a price item is {type(item).__name__}, not an object")
    kept = {f: item[f] for f in (*ITEM_FIELDS, *OPTIONAL_FIELDS) if f in item}
    for name, value in kept.items():
        if isinstance(value, str) and len(value) > MAX_FIELD_CHARS:
            raise ValueError(
                f"{name} has {len(value):,} characters, more than the {MAX_FIELD_CHARS} "
                "of any real price item"
            )
        if not isinstance(value, str | int | float | None):
            raise TypeError(f"{name} is {type(value).__name__}, not text or a number")
    return kept


def _quoted(link: str) -> str:
    """NextPageLink with the spaces and quotes of its $filter percent-encoded."""
    return urllib.parse.quote(link, safe=":/?#[]@!$&()*+,;=%")


# ---------------------------------------------------------------------------- parse


def price_rows(
    items: Iterable[dict[str, Any]], regions: Sequence[str], fixes: list[Fix]
) -> pd.DataFrame:
    """Linux consumption, spot and reservation prices per (region, size, kind), USD/h."""
    fields = ITEM_FIELDS
    columns = ["region", "instance_type", "kind", "usd"]
    try:
        frame = pd.DataFrame(
            [{f: item.get(f) for f in (*fields, "reservationTerm")} for item in items],
            columns=[*fields, "reservationTerm"],
        )
    except AttributeError as exc:
        raise MalformedPayload(f"an Azure price item is not an object ({describe(exc)})") from None
    if frame.empty:
        return pd.DataFrame(columns=columns)
    missing = [f for f in fields if frame[f].isna().any()]
    if missing:
        raise MalformedPayload(f"Azure price items lack {missing}")
    text = frame["meterName"].astype(str) + " " + frame["skuName"].astype(str)
    exclusions = {
        "Windows meters": frame["productName"].astype(str).str.contains("Windows"),
        "Low Priority meters": text.str.contains("Low Priority"),
        "DevTest and other price types": ~frame["type"].isin(["Consumption", "Reservation"]),
        "not Virtual Machines, USD, per hour": (frame["serviceName"] != "Virtual Machines")
        | (frame["currencyCode"] != "USD")
        | (frame["unitOfMeasure"] != "1 Hour"),
        "other regions": ~frame["armRegionName"].isin(regions),
    }
    keep = pd.Series(True, index=frame.index)
    for why, mask in exclusions.items():
        if (mask & keep).any():
            fixes.append(
                fix("azure", "*", "*", "", f"left out {int((mask & keep).sum())} items", why)
            )
        keep &= ~mask
    frame = frame.loc[keep].copy()
    is_spot = text.loc[frame.index].str.contains("Spot")
    hours = frame["reservationTerm"].map(AZURE_TERM_HOURS)
    frame["kind"] = np.select(
        [
            (frame["type"] == "Consumption") & is_spot,
            frame["type"] == "Consumption",
            frame["reservationTerm"] == "1 Year",
            frame["reservationTerm"] == "3 Years",
        ],
        [
            "spot_usd_per_hour",
            "usd_per_hour",
            "reserved_1y_usd_per_hour",
            "reserved_3y_usd_per_hour",
        ],
        default="",
    )
    frame["usd"] = pd.to_numeric(frame["retailPrice"], errors="coerce") / hours.where(
        frame["type"] == "Reservation", 1.0
    )
    odd_term = frame["kind"] == ""
    for term in sorted(set(frame.loc[odd_term, "reservationTerm"].astype(str))):
        fixes.append(fix("azure", "*", "*", "", "left out", f"reservation term {term!r}"))
    frame = frame.loc[~odd_term].rename(
        columns={"armRegionName": "region", "armSkuName": "instance_type"}
    )
    frame = frame.loc[:, columns].drop_duplicates()
    bad = ~(frame["usd"] > 0) | frame.duplicated(PRICE_KEYS, keep=False)
    set_prices_missing(frame, bad, "azure", fixes, "meters")
    return frame.drop_duplicates(PRICE_KEYS).reset_index(drop=True)


def parse_azure(payload: AzurePayload, priced_at: str) -> ParsedCatalog:
    """Offers (pay-as-you-go, spot, 1y/3y reserved) and fixes from retail price items."""
    fixes: list[Fix] = []
    prices = price_rows(payload.items, payload.regions, fixes)
    wide = wide_prices(prices, ["region", "instance_type"])
    known = wide["instance_type"].isin(list(AZURE_SIZE_SHAPES))
    for size in sorted(set(wide.loc[~known, "instance_type"])):
        fixes.append(
            fix(
                "azure",
                "*",
                size,
                "gpu_count",
                "dropped",
                "size not in pricing.aliases.AZURE_SIZE_SHAPES: its GPU count is unknown",
            )
        )
    offers = wide.loc[known].copy()
    shapes = pd.DataFrame.from_dict(
        AZURE_SIZE_SHAPES,
        orient="index",
        columns=["accelerator", "gpu_count", "vcpus", "memory_gib"],
    )
    return api_catalog(offers.join(shapes, on="instance_type"), "azure", SOURCE, priced_at, fixes)
