"""AWS GPU offers from the public Price List bulk offer files (no credentials needed).

fetch_aws_public is the only I/O: for each region it streams
`{base}/{region}/index.csv` (docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/
using-the-aws-price-list-bulk-api.html: five metadata lines, then one row per SKU and
term) and keeps, while reading, only the rows of GPU instances ("Instance Family" = "GPU
instance") that gpuplan prices: Linux, shared tenancy, no pre-installed software, used
capacity, an hourly unit, on-demand or reserved standard No Upfront for 1 or 3 years.
A region's file is hundreds of MB; memory holds one line (at most MAX_LINE_BYTES) and
the kept rows (at most MAX_KEPT_ROWS per region, each cell at most MAX_CELL_CHARS), so
a server sending an endless body, a body without newlines or endless GPU rows fails
the refresh at a bound, never fills the memory.

parse_aws_public turns those rows into offers: the GPU model from the instance family
(pricing.aliases.AWS_FAMILY_GPU; these files name no GPU model), the GPU count, vCPUs
and memory from the file. The price date is the file's "Publication Date". Spot prices
are not in these files (`gpuplan pricing refresh aws` reads them with credentials).
"""

from __future__ import annotations

import csv
import datetime as dt
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from pricing.aliases import AWS_FAMILY_GPU
from pricing.providers import http
from pricing.providers.common import (
    PRICE_KEYS,
    Fix,
    MalformedPayload,
    ParsedCatalog,
    drop_unpriced,
    finish_offers,
    fix,
    fixes_frame,
    interconnects,
    set_prices_missing,
    wide_prices,
)
from pricing.providers.regions import DEFAULT_DEADLINES_S
from pricing.providers.regions import DEFAULT_REGIONS as PROVIDER_DEFAULT_REGIONS
from pricing.providers.retry import FetchError, RetryPolicy

OFFERS_URL = "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current"
DEFAULT_REGIONS = PROVIDER_DEFAULT_REGIONS["aws-public"]
MAX_FILE_BYTES = 8 * 1024**3  # us-east-1 is several hundred MB; streamed, never held whole
MAX_LINE_BYTES = 256 * 1024  # a row of ~90 columns is 1-3 KB
MAX_HEADER_LINES = 100  # the header row comes after five metadata lines
MAX_KEPT_ROWS = 20_000  # per region; a real one keeps ~13 rows for each of ~100 GPU types
MAX_CELL_CHARS = 200  # a kept cell: "p5.48xlarge", "2048 GiB", "55.0400000000": a few dozen
DEFAULT_DEADLINE_S = DEFAULT_DEADLINES_S["aws-public"]
GPU_FAMILY = "GPU instance"
# Row filter: column -> kept value (pricing the same instances as the credentialed
# Price List query: Linux, shared tenancy, no pre-installed software, used capacity).
KEEP: dict[str, str] = {
    "Product Family": "Compute Instance",
    "Operating System": "Linux",
    "Tenancy": "Shared",
    "Pre Installed S/W": "NA",
    "CapacityStatus": "Used",
    "Unit": "Hrs",
    "Currency": "USD",
}
RESERVED_TERMS = {"1yr": "reserved_1y_usd_per_hour", "3yr": "reserved_3y_usd_per_hour"}
COLUMNS = (
    "TermType",
    "PricePerUnit",
    "LeaseContractLength",
    "PurchaseOption",
    "OfferingClass",
    "Instance Type",
    "Instance Family",
    "vCPU",
    "Memory",
    "GPU",
    "Region Code",
    *KEEP,
)
SOURCE = "AWS Price List bulk offer files (AmazonEC2, Linux, shared tenancy; public)"

Progress = Callable[[str], None]


@dataclass(frozen=True)
class AwsPublicPayload:
    """The kept rows of each region's offer file (COLUMNS only) and its publication date."""

    regions: tuple[str, ...]
    rows: list[dict[str, str]] = field(default_factory=list)
    published: dict[str, str] = field(default_factory=dict)


def offers_url() -> str:
    """The offer files' base URL: $GPUPLAN_AWS_OFFERS_URL, else AWS's."""
    return os.environ.get("GPUPLAN_AWS_OFFERS_URL") or OFFERS_URL


def fetch_aws_public(
    regions: Sequence[str] = DEFAULT_REGIONS,
    *,
    base_url: str | None = None,
    retry: RetryPolicy | None = None,
    progress: Progress | None = None,
) -> AwsPublicPayload:
    """Stream each region's EC2 offer file and keep its GPU rows, all within the one
    deadline of retry.deadline_s seconds. Raises FetchError or MalformedPayload."""
    retry = retry or RetryPolicy(deadline_s=DEFAULT_DEADLINE_S)
    clock = retry.refresh_clock()
    say = progress or (lambda _message: None)
    base = (base_url or offers_url()).rstrip("/")
    rows: list[dict[str, str]] = []
    published: dict[str, str] = {}
    for region in regions:
        url = f"{base}/{region}/index.csv"
        what = f"AWS offer file {url}"

        def once(url: str = url, what: str = what) -> tuple[list[dict[str, str]], str]:
            chunks = http.stream(
                url,
                clock=clock,
                read_timeout_s=retry.timeout_s,
                max_bytes=MAX_FILE_BYTES,
                what=what,
            )
            return read_offer_file(_lines(chunks, what), what)

        kept, date = http.with_retries(
            once, retry=retry, clock=clock, what=what, passes=(FetchError, MalformedPayload)
        )
        rows += kept
        published[region] = date
        say(f"aws-public {region}: {len(kept)} GPU price rows, published {date}")
    return AwsPublicPayload(tuple(regions), rows, published)


def _lines(chunks: Iterable[bytes], what: str) -> Iterator[str]:
    """Text lines (with their newline; a last one without) of at most MAX_LINE_BYTES
    bytes each, from byte chunks."""
    for line in http.lines(chunks, max_line_bytes=MAX_LINE_BYTES, what=what):
        yield line.decode("utf-8", errors="replace")


def _cells(line: str, what: str) -> list[str]:
    """The CSV cells of one line; MalformedPayload if csv cannot read it."""
    try:
        return next(csv.reader([line]), [])
    except csv.Error as exc:
        raise MalformedPayload(f"{what}: a row is not readable CSV ({exc})") from None


def _header(lines: Iterator[str], what: str) -> tuple[list[str], str]:
    """(header cells, Publication Date text) from the first MAX_HEADER_LINES lines."""
    published = ""
    for _, line in zip(range(MAX_HEADER_LINES), lines, strict=False):
        cells = _cells(line, what)
        if cells[:1] == ["Publication Date"] and len(cells) > 1:
            published = cells[1]
        if cells[:1] == ["SKU"]:
            return cells, published
    raise MalformedPayload(
        f"{what} has no header row (SKU, ...) in its first {MAX_HEADER_LINES} lines: "
        "not an offer file; check the URL"
    )


def _kept_row(cells: list[str], index: dict[str, int], what: str) -> dict[str, str]:
    """The COLUMNS of one GPU row; MalformedPayload for a cell past MAX_CELL_CHARS."""
    row = {name: cells[i] for name, i in index.items()}
    for name, value in row.items():
        if len(value) > MAX_CELL_CHARS:
            raise MalformedPayload(
                f"{what}: a GPU row's {name!r} has {len(value):,} characters, more than the "
                f"{MAX_CELL_CHARS} of any real offer file; not an offer file: check the URL"
            )
    return row


def read_offer_file(lines: Iterable[str], what: str) -> tuple[list[dict[str, str]], str]:
    """(kept rows, publication date YYYY-MM-DD) of an offer file's lines.

    Raises MalformedPayload for a file without the metadata, the header or the columns
    this parser needs (a changed format), cut off in a row, or keeping more than
    MAX_KEPT_ROWS rows (an answer that is not an offer file, or never ends).
    """
    lines = iter(lines)
    header, published = _header(lines, what)
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise MalformedPayload(
            f"{what} lacks column(s) {missing}: the offer file format changed; "
            "pricing/providers/aws_public.py needs updating"
        )
    try:
        day = dt.datetime.fromisoformat(published.replace("Z", "+00:00")).date().isoformat()
    except ValueError:
        raise MalformedPayload(
            f"{what} has no readable Publication Date ({published[:40]!r})"
        ) from None
    index = {name: header.index(name) for name in COLUMNS}
    needle = f'"{GPU_FAMILY}"'
    kept: list[dict[str, str]] = []
    last = ""
    # Only rows naming the GPU family are parsed as CSV: the rest are skipped as text.
    for line in lines:
        last = line
        if needle not in line:
            continue
        cells = _cells(line, what)
        if len(cells) != len(header):
            raise MalformedPayload(
                f"{what}: a row has {len(cells)} cells, the header {len(header)}: "
                "the file is cut short or malformed"
            )
        if cells[index["Instance Family"]] != GPU_FAMILY:
            continue
        if any(cells[index[column]] != value for column, value in KEEP.items()):
            continue
        if len(kept) >= MAX_KEPT_ROWS:
            raise MalformedPayload(
                f"{what}: more than {MAX_KEPT_ROWS:,} GPU price rows (a real region has a "
                "few thousand): not an AWS offer file, or one that never ends; check the URL"
            )
        kept.append(_kept_row(cells, index, what))
    if last and not last.endswith("\n"):
        raise MalformedPayload(f"{what} ends mid-line: the download was cut short")
    return kept, day


def _number(text: str) -> float:
    """The leading number of '1152 GiB', '8', '0.125'; NaN if none."""
    head = text.strip().split(" ")[0].replace(",", "")
    try:
        return float(head)
    except ValueError:
        return float("nan")


def parse_aws_public(payload: AwsPublicPayload, priced_at: str) -> ParsedCatalog:
    """Offers (on-demand, 1y/3y standard No Upfront reserved) and fixes from kept rows.

    `priced_at` is not used: the offers carry their files' publication date.
    """
    fixes: list[Fix] = []
    prices = price_rows(payload.rows)
    bad = ~(prices["usd"] > 0) | (prices.groupby(PRICE_KEYS)["usd"].transform("nunique") > 1)
    set_prices_missing(prices, bad, "aws", fixes, "SKUs")
    prices = prices.drop_duplicates(PRICE_KEYS)
    shapes = prices.groupby(["region", "instance_type"], as_index=False)[
        ["gpu_count", "vcpus", "memory_gib"]
    ].first()
    offers = wide_prices(prices, ["region", "instance_type"]).merge(
        shapes, on=["region", "instance_type"]
    )
    offers = _family_gpus(offers, fixes)
    published = payload.published
    offers["priced_at"] = offers["region"].map(published)
    offers["provider"] = "aws"
    offers["gpu_memory_gib"] = np.nan
    offers["spot_usd_per_hour"] = np.nan
    offers["interconnect"] = interconnects(offers["gpu_name"], offers["gpu_count"])
    offers["source"] = SOURCE
    offers = drop_unpriced(offers, "aws", fixes)
    day = min(published.values()) if published else priced_at
    basis = "AWS Price List publication date of each region's offer file: " + ", ".join(
        f"{region} {date}" for region, date in sorted(published.items())
    )
    return ParsedCatalog(
        finish_offers(offers, "aws", fixes),
        fixes_frame(fixes),
        SOURCE,
        dates={"aws": (day, basis, "")},
    )


PRICE_ROW_COLUMNS = ("region", "instance_type", "kind", "usd", "gpu_count", "vcpus", "memory_gib")


def _price_kind(row: dict[str, str]) -> str:
    """The PRICE_COLUMNS name of a kept row's term: on-demand, or reserved standard No
    Upfront for 1 or 3 years; '' for any other term."""
    if row["TermType"] == "OnDemand":
        return "usd_per_hour"
    if (
        row["TermType"] == "Reserved"
        and row["PurchaseOption"] == "No Upfront"
        and row["OfferingClass"] == "standard"
    ):
        return RESERVED_TERMS.get(row["LeaseContractLength"], "")
    return ""


def price_rows(rows: Iterable[dict[str, str]]) -> pd.DataFrame:
    """One row (PRICE_ROW_COLUMNS) per kept row of a priced term: the price in USD/h (NaN
    where the file's is not a number) and the instance's GPU count, vCPUs and GiB."""
    records = [
        {
            "region": row["Region Code"],
            "instance_type": row["Instance Type"],
            "kind": kind,
            "usd": _number(row["PricePerUnit"]),
            "gpu_count": _number(row["GPU"]),
            "vcpus": _number(row["vCPU"]),
            "memory_gib": _number(row["Memory"]),
        }
        for row in rows
        if (kind := _price_kind(row))
    ]
    return pd.DataFrame(records, columns=list(PRICE_ROW_COLUMNS))


def _family_gpus(offers: pd.DataFrame, fixes: list[Fix]) -> pd.DataFrame:
    """The offers with their GPU from the instance family (pricing.aliases.AWS_FAMILY_GPU;
    these files name no GPU model); families not listed, and rows with no GPU count in the
    file, dropped on record."""
    family = offers["instance_type"].str.split(".").str[0]
    offers = offers.assign(gpu_name=family.map(AWS_FAMILY_GPU))
    for instance in sorted(set(offers.loc[offers["gpu_name"].isna(), "instance_type"])):
        fixes.append(
            fix(
                "aws",
                "*",
                instance,
                "gpu_name",
                "dropped",
                "instance family not in pricing.aliases.AWS_FAMILY_GPU (legacy or non-NVIDIA "
                "GPU); add it there to plan for it",
            )
        )
    no_count = offers["gpu_name"].notna() & ~(offers["gpu_count"] > 0)
    for instance in sorted(set(offers.loc[no_count, "instance_type"])):
        fixes.append(fix("aws", "*", instance, "gpu_count", "dropped", "no GPU count in the file"))
    return offers.loc[offers["gpu_name"].notna() & ~no_count].copy()
