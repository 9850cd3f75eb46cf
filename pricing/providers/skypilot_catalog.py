"""Every cloud's GPU offers from SkyPilot's public catalog CSVs (no credentials needed).

fetch_skypilot is the only I/O: for each cloud it downloads
`{catalog_url}/{cloud}/vms.csv` (github.com/skypilot-org/skypilot-catalog, Apache-2.0,
refreshed by SkyPilot's own fetchers) and asks the GitHub commits API for the date and
commit of that file's last change; parse_skypilot parses each file with the same parser
that built the bundled snapshots (pricing.providers.skypilot). The price date of a cloud
is its catalog file's last commit date; when the commits API gives none (rate limit,
no network to api.github.com) the server's Last-Modified date is used, and failing that
the refresh fails rather than guess a date.

Both base URLs can be changed (--base-url, $GPUPLAN_SKYPILOT_CATALOG_URL and
$GPUPLAN_SKYPILOT_COMMITS_URL), for a mirror or a local test server.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import io
import json
import os
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pandas as pd

from pricing.providers import http
from pricing.providers.common import MalformedPayload, ParsedCatalog, fixes_frame
from pricing.providers.regions import DEFAULT_DEADLINES_S
from pricing.providers.retry import (
    DeadlineExceeded,
    FetchError,
    RefreshClock,
    RetryPolicy,
    describe,
)
from pricing.providers.skypilot import parse_skypilot_vms

REPOSITORY = "skypilot-org/skypilot-catalog"
CATALOG_VERSION = "v8"
CATALOG_URL = f"https://raw.githubusercontent.com/{REPOSITORY}/master/catalogs/{CATALOG_VERSION}"
COMMITS_URL = f"https://api.github.com/repos/{REPOSITORY}/commits"
# Clouds whose vms.csv lists GPU offers the alias tables can name (pricing.aliases);
# checked 2026-11 against the catalogs/v8 folder of the repository.
CLOUDS = (
    "aws",
    "gcp",
    "azure",
    "lambda",
    "nebius",
    "fluidstack",
    "paperspace",
    "runpod",
    "cudo",
    "vast",
)
REQUIRED_COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")
# Each file is held whole (pandas parses it): at most MAX_CATALOG_BYTES, so ten clouds
# hold at most ten times that; the largest real one (aws) is a few MB.
MAX_CATALOG_BYTES = 64 * 1024 * 1024
MAX_COMMITS_BYTES = 1024 * 1024  # one commit asked for (per_page=1): a few KB
DEFAULT_DEADLINE_S = DEFAULT_DEADLINES_S["skypilot"]
SOURCE = f"SkyPilot catalog {CATALOG_VERSION} (github.com/{REPOSITORY}, Apache-2.0)"

Progress = Callable[[str], None]


@dataclass(frozen=True)
class CatalogFile:
    """One cloud's vms.csv as downloaded, with the date and commit of its last change."""

    cloud: str
    text: str
    priced_at: str
    date_basis: str
    commit: str = ""


@dataclass(frozen=True)
class SkypilotPayload:
    """The catalog files of the clouds asked for."""

    regions: tuple[str, ...]
    files: list[CatalogFile] = field(default_factory=list)


def catalog_url() -> str:
    """The catalog base URL: $GPUPLAN_SKYPILOT_CATALOG_URL, else GitHub's raw files."""
    return os.environ.get("GPUPLAN_SKYPILOT_CATALOG_URL") or CATALOG_URL


def commits_url() -> str:
    """The commits API URL: $GPUPLAN_SKYPILOT_COMMITS_URL, else GitHub's."""
    return os.environ.get("GPUPLAN_SKYPILOT_COMMITS_URL") or COMMITS_URL


def fetch_skypilot(
    regions: Sequence[str] = (),
    *,
    clouds: Sequence[str] = CLOUDS,
    base_url: str | None = None,
    commits: str | None = None,
    retry: RetryPolicy | None = None,
    progress: Progress | None = None,
) -> SkypilotPayload:
    """Download each cloud's vms.csv and its last commit date, all within the one deadline
    of retry.deadline_s seconds. Raises FetchError."""
    retry = retry or RetryPolicy(deadline_s=DEFAULT_DEADLINE_S)
    clock = retry.refresh_clock()
    say = progress or (lambda _message: None)
    base = (base_url or catalog_url()).rstrip("/")
    commits = commits or commits_url()
    unknown = [c for c in clouds if c not in CLOUDS]
    if unknown:
        raise FetchError(f"SkyPilot catalog: unknown cloud {unknown[0]!r}; known: {CLOUDS}")
    files = []
    for cloud in clouds:
        url = f"{base}/{cloud}/vms.csv"
        what = f"SkyPilot catalog {cloud}/vms.csv"
        headers: dict[str, str] = {}
        body = http.get_with_retries(
            url,
            retry=retry,
            clock=clock,
            what=what,
            max_bytes=MAX_CATALOG_BYTES,
            on_headers=headers.update,  # Last-Modified: the date when GitHub gives none
        )
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise FetchError(f"{what} is not UTF-8 text; is {base} a catalog?") from None
        priced_at, basis, commit = _catalog_date(cloud, commits, retry, clock, headers)
        files.append(CatalogFile(cloud, text, priced_at, basis, commit))
        say(f"skypilot {cloud}: {len(body):,} bytes, last changed {priced_at}")
    return SkypilotPayload(tuple(regions), files)


def _catalog_date(
    cloud: str, commits: str, retry: RetryPolicy, clock: RefreshClock, headers: dict[str, str]
) -> tuple[str, str, str]:
    """(priced_at, date basis, commit) of a cloud's catalog file."""
    path = f"catalogs/{CATALOG_VERSION}/{cloud}/vms.csv"
    query = urllib.parse.urlencode({"path": path, "per_page": "1"})
    what = f"GitHub commits of {path}"
    reason = ""
    try:
        body = http.get_with_retries(
            f"{commits}?{query}", retry=retry, clock=clock, what=what, max_bytes=MAX_COMMITS_BYTES
        )
        latest = json.loads(body)[0]
        stamp = str(latest["commit"]["committer"]["date"])
        day = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).date().isoformat()
        sha = str(latest.get("sha", ""))
        return day, f"last commit of {path} ({sha[:8]}) on {stamp}", sha
    except DeadlineExceeded:
        raise
    except FetchError as exc:
        reason = str(exc)
    except (ValueError, KeyError, IndexError, TypeError, RecursionError) as exc:
        reason = f"{what} is not the documented JSON ({describe(exc)})"
    modified = headers.get("Last-Modified")
    when = email.utils.parsedate_to_datetime(modified) if modified else None
    if when is not None:
        return when.date().isoformat(), f"Last-Modified of {cloud}/vms.csv: {modified}", ""
    raise FetchError(
        f"no date for the {cloud} catalog: {reason}; and its server gave no Last-Modified. "
        "A price without a date is not used; try again later"
    )


def parse_skypilot(payload: SkypilotPayload, priced_at: str) -> ParsedCatalog:
    """Offers of every cloud (each dated by its catalog file) and their fixes.

    `priced_at` (the refresh date) is not used: each file carries its own date. A file
    without the columns the parser needs, or cut short, fails the refresh.
    """
    offers, fixes, bases = [], [], {}
    for file in payload.files:
        if not file.text.endswith("\n"):
            raise MalformedPayload(
                f"SkyPilot catalog {file.cloud}/vms.csv ends mid-line: the download was cut short"
            )
        try:
            catalog = pd.read_csv(io.StringIO(file.text))
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            raise MalformedPayload(
                f"SkyPilot catalog {file.cloud}/vms.csv is not a readable CSV ({describe(exc)})"
            ) from None
        missing = [c for c in REQUIRED_COLUMNS if c not in catalog.columns]
        if missing and not (file.cloud == "gcp" and missing == ["InstanceType"]):
            raise MalformedPayload(
                f"SkyPilot catalog {file.cloud}/vms.csv lacks column(s) {missing} "
                f"(has {list(catalog.columns)[:12]}); the catalog format changed: "
                "pricing/providers/skypilot.py needs updating"
            )
        if payload.regions:
            catalog = catalog.loc[catalog["Region"].astype(str).isin(payload.regions)]
        source = f"{SOURCE}: {file.cloud}/vms.csv" + (f"@{file.commit[:8]}" if file.commit else "")
        try:
            cloud_offers, cloud_fixes = parse_skypilot_vms(
                file.cloud, catalog, source, file.priced_at
            )
        except (KeyError, ValueError, TypeError) as exc:
            raise MalformedPayload(
                f"SkyPilot catalog {file.cloud}/vms.csv has values the parser cannot read "
                f"({describe(exc)})"
            ) from None
        offers.append(cloud_offers)
        fixes.append(cloud_fixes)
        bases[file.cloud] = (file.priced_at, file.date_basis, file.commit)
    frame = pd.concat(offers, ignore_index=True) if offers else pd.DataFrame()
    fix_frame = pd.concat(fixes, ignore_index=True) if fixes else fixes_frame([])
    return ParsedCatalog(frame, fix_frame, SOURCE, dates=bases)
