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
"""

from __future__ import annotations

import functools
import json
import urllib.error
import urllib.parse
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from pricing.aliases import AZURE_SIZE_SHAPES, AZURE_TERM_HOURS
from pricing.catalog import PRICE_COLUMNS
from pricing.providers import http
from pricing.providers.common import (
    Fix,
    MalformedPayload,
    ParsedCatalog,
    drop_spot_not_below_on_demand,
    drop_unpriced,
    finish_offers,
    fix,
    fixes_frame,
    interconnects,
    resolve_gpus,
)
from pricing.providers.http import HttpStatusError
from pricing.providers.regions import DEFAULT_REGIONS as PROVIDER_DEFAULT_REGIONS
from pricing.providers.retry import FetchError, RetryPolicy, call_with_retries, describe

RETAIL_PRICES_URL = "https://prices.azure.com/api/retail/prices"
DEFAULT_REGIONS = PROVIDER_DEFAULT_REGIONS["azure"]
# N-series (GPU) virtual machine sizes in one region; everything else is filtered in parse.
REGION_FILTER = (
    "serviceName eq 'Virtual Machines' and armRegionName eq '{region}' "
    "and contains(armSkuName, 'Standard_N')"
)
MAX_PAGES = 200  # the largest region has a few dozen pages of 100 items
MAX_PAGE_BYTES = 8 * 1024 * 1024  # a page of 100 items is ~60 KB
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
    that is not the documented JSON fails the fetch. Raises FetchError.
    """
    retry = retry or RetryPolicy()
    say = progress or (lambda _message: None)
    items: list[dict[str, Any]] = []
    for region in regions:
        query = urllib.parse.urlencode(
            {"$filter": REGION_FILTER.format(region=region)}, quote_via=urllib.parse.quote
        )
        url: str | None = f"{base_url}?{query}"
        pages = http.Pages(f"Azure retail prices for {region}", MAX_PAGES)
        while url:
            page = pages.follow(url)
            what = f"Azure retail prices ({region}, page {page})"
            try:
                body = call_with_retries(
                    functools.partial(
                        http.get,
                        url,
                        deadline_s=retry.deadline_s,
                        read_timeout_s=retry.timeout_s,
                        max_bytes=MAX_PAGE_BYTES,
                        what=what,
                        headers={"Accept": "application/json"},
                    ),
                    policy=retry,
                    retryable=http.retryable,
                    what=what,
                    retry_after_s=lambda exc: getattr(exc, "retry_after_s", None),
                )
            except FetchError:
                raise
            except (HttpStatusError, urllib.error.URLError, OSError) as exc:
                raise FetchError(f"{what}: {describe(exc)}; check the URL and the network") from exc
            try:
                data = json.loads(body)
                page_items = data["Items"]
                next_link = data.get("NextPageLink")
                if not isinstance(page_items, list):
                    raise TypeError("Items is not a list")
                if next_link is not None and not isinstance(next_link, str):
                    raise TypeError("NextPageLink is not a link")
            except (json.JSONDecodeError, KeyError, TypeError, UnicodeDecodeError) as exc:
                raise FetchError(
                    f"Azure retail prices ({region}, page {page}) is not the documented JSON "
                    f"with Items and NextPageLink ({describe(exc)}); try again later"
                ) from None
            items += page_items
            say(f"azure {region}: page {page}, {len(items)} price items")
            url = _quoted(next_link) if next_link else None
    return AzurePayload(tuple(regions), items)


def _quoted(link: str) -> str:
    """NextPageLink with the spaces and quotes of its $filter percent-encoded."""
    return urllib.parse.quote(link, safe=":/?#[]@!$&()*+,;=%")


# ---------------------------------------------------------------------------- parse


def price_rows(
    items: Iterable[dict[str, Any]], regions: Sequence[str], fixes: list[Fix]
) -> pd.DataFrame:
    """Linux consumption, spot and reservation prices per (region, size, kind), USD/h."""
    fields = (
        "armRegionName", "armSkuName", "retailPrice", "type", "productName", "skuName",
        "meterName", "unitOfMeasure", "currencyCode", "serviceName",
    )  # fmt: skip
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
    keys = ["region", "instance_type", "kind"]
    frame = frame.loc[:, columns].drop_duplicates()
    bad = ~(frame["usd"] > 0) | frame.duplicated(keys, keep=False)
    for row in frame.loc[bad].drop_duplicates(keys).itertuples():
        fixes.append(
            fix(
                "azure",
                str(row.region),
                str(row.instance_type),
                str(row.kind),
                "set missing",
                "placeholder price (0 or not a number)"
                if not row.usd > 0
                else "two meters price it differently",
            )
        )
    frame.loc[bad, "usd"] = np.nan
    return frame.drop_duplicates(keys).reset_index(drop=True)


def parse_azure(payload: AzurePayload, priced_at: str) -> ParsedCatalog:
    """Offers (pay-as-you-go, spot, 1y/3y reserved) and fixes from retail price items."""
    fixes: list[Fix] = []
    prices = price_rows(payload.items, payload.regions, fixes)
    wide = (
        prices.set_index(["region", "instance_type", "kind"])["usd"]
        .unstack("kind")
        .reindex(columns=list(PRICE_COLUMNS))
        .reset_index()
    )
    wide.columns.name = None
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
    offers = offers.join(shapes, on="instance_type")
    offers["gpu_name"] = resolve_gpus("azure", offers, "accelerator", fixes)
    offers = offers.loc[offers["gpu_name"].notna()].copy()
    offers["provider"] = "azure"
    offers["gpu_memory_gib"] = np.nan
    offers["interconnect"] = interconnects(offers["gpu_name"], offers["gpu_count"])
    offers["source"] = f"{SOURCE}, retrieved {priced_at}"
    offers["priced_at"] = priced_at
    drop_spot_not_below_on_demand(offers, "azure", fixes)
    offers = drop_unpriced(offers, "azure", fixes)
    return ParsedCatalog(finish_offers(offers, "azure", fixes), fixes_frame(fixes), SOURCE)
