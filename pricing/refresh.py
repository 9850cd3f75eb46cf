"""Refresh a provider's prices from its API, or add a custom price list, as a new snapshot.

refresh = the provider's fetch_* (network) -> parse_* (pure) -> store.commit_snapshot
(atomic). A failure anywhere (missing credentials, throttling that outlasts the retries,
an API error, a malformed page, a page that never comes, no offers found) raises
RefreshError saying why and which snapshot stays in use; the previous snapshot files and
manifest are left byte for byte as they were.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pricing.catalog import SnapshotError, SnapshotInfo, read_manifest, read_snapshot
from pricing.gpus import did_you_mean
from pricing.providers import aws, aws_public, azure, custom, gcp, skypilot_catalog
from pricing.providers.common import MalformedPayload, ParsedCatalog
from pricing.providers.retry import FetchError, RetryPolicy, describe
from pricing.store import NewSnapshot, commit_snapshot, commit_snapshots

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Source:
    """A price source: how to fetch, how to parse, which regions by default, which
    providers it prices, and what a refresh from it needs."""

    fetch: Callable[..., Any]
    parse: Callable[[Any, str], ParsedCatalog]
    default_regions: tuple[str, ...]
    providers: tuple[str, ...] = ()
    needs: str = "nothing: a public source"


SOURCES: dict[str, Source] = {
    "aws": Source(
        aws.fetch_aws,
        aws.parse_aws,
        aws.DEFAULT_REGIONS,
        ("aws",),
        "AWS credentials (pricing:GetProducts, ec2:DescribeInstanceTypes, "
        "ec2:DescribeSpotPriceHistory); pip install 'gpuplan[aws]'",
    ),
    "gcp": Source(
        gcp.fetch_gcp,
        gcp.parse_gcp,
        gcp.DEFAULT_REGIONS,
        ("gcp",),
        "GCP credentials (gcloud auth application-default login) and a project; "
        "pip install 'gpuplan[gcp]'",
    ),
    "azure": Source(
        azure.fetch_azure,
        azure.parse_azure,
        azure.DEFAULT_REGIONS,
        ("azure",),
        "nothing: Azure's public Retail Prices API",
    ),
    "aws-public": Source(
        aws_public.fetch_aws_public,
        aws_public.parse_aws_public,
        aws_public.DEFAULT_REGIONS,
        ("aws",),
        "nothing: AWS's public Price List bulk files (no spot prices)",
    ),
    "skypilot": Source(
        skypilot_catalog.fetch_skypilot,
        skypilot_catalog.parse_skypilot,
        (),
        skypilot_catalog.CLOUDS,
        "nothing: SkyPilot's public catalog on GitHub",
    ),
}
CUSTOM_PREFIX = "custom-"


class RefreshError(RuntimeError):
    """A refresh or custom price list that was not added; the message says why."""


@dataclass(frozen=True)
class Added:
    """A snapshot now in use: its manifest entry, what it replaced, what was fixed."""

    info: SnapshotInfo
    previous: SnapshotInfo | None
    fixes: int
    regions: tuple[str, ...] = ()
    # Other providers' snapshots the same refresh added (a source covering several).
    also: tuple[Added, ...] = ()


def _in_use(provider: str) -> SnapshotInfo | None:
    return next((i for i in read_manifest() if i.provider == provider), None)


def _kept(provider: str, previous: SnapshotInfo | None) -> str:
    if previous is None:
        return f"No {provider} snapshot was in use; none is."
    return (
        f"The {previous.origin} {provider} snapshot of {previous.priced_at} "
        f"({previous.path}) stays in use, unchanged."
    )


def refresh(
    provider: str,
    regions: Sequence[str] | None = None,
    *,
    options: Mapping[str, Any] | None = None,
    retry: RetryPolicy | None = None,
    progress: Progress | None = None,
    now: dt.datetime | None = None,
    directory: Path | None = None,
) -> Added:
    """Fetch a source's prices for `regions` and make them the snapshots in use.

    `provider` names a source (SOURCES); a source may price several providers
    (skypilot), each committed as its own snapshot in one manifest swap. `options` go
    to the source's fetch function (e.g. GCP's project). Raises RefreshError, with
    every previous snapshot untouched.
    """
    if provider not in SOURCES:
        fix = did_you_mean(provider, SOURCES)
        raise ValueError(
            f"no price source {provider!r}{fix} Refreshable: "
            f"{', '.join(SOURCES)} (other providers: `gpuplan pricing add-custom FILE`)"
        )
    source = SOURCES[provider]
    chosen = tuple(regions) if regions else source.default_regions
    now = now or dt.datetime.now(dt.UTC)
    priced_at = now.date().isoformat()
    covered = source.providers or (provider,)
    asked = (options or {}).get("clouds")
    if asked:  # skypilot --clouds: only the providers asked for are touched, or named
        covered = tuple(p for p in covered if p in asked) or covered
    try:
        previous = {p: _in_use(p) for p in covered}
    except SnapshotError as exc:
        raise RefreshError(f"{provider} refresh not started: {exc}") from exc
    kept = "\n".join(_kept(p, previous[p]) for p in covered)  # one line per provider
    where = ", ".join(chosen) if chosen else "every region"
    try:
        payload = source.fetch(chosen, retry=retry, progress=progress, **(options or {}))
        parsed = source.parse(payload, priced_at)
    except (FetchError, MalformedPayload, SnapshotError) as exc:
        raise RefreshError(f"{provider} refresh failed: {exc}.\n{kept}") from exc
    except Exception as exc:
        raise RefreshError(f"{provider} refresh failed: {describe(exc)}.\n{kept}") from exc
    if parsed.offers.empty:
        raise RefreshError(
            f"{provider} refresh found no GPU offers in {where}: check --regions.\n{kept}"
        )
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    snapshots = []
    for name in sorted(set(parsed.offers["provider"])):
        offers = parsed.offers.loc[parsed.offers["provider"] == name].reset_index(drop=True)
        fixes = parsed.fixes.loc[parsed.fixes["provider"] == name].reset_index(drop=True)
        day, basis, commit = parsed.dates.get(
            name, (priced_at, f"retrieved from the {provider} price API at {stamp}", "")
        )
        snapshots.append(
            NewSnapshot(
                name,
                offers,
                source=f"{parsed.source}; regions {where}",
                priced_at=day,
                date_basis=basis,
                retrieved_at=stamp,
                details={**parsed.details, "fixes": fixes},
                source_commit=commit,
            )
        )
    try:
        infos = commit_snapshots(snapshots, directory=directory)
    except (OSError, SnapshotError) as exc:
        raise RefreshError(f"{provider} snapshot not written: {exc}.\n{kept}") from exc
    added = [
        Added(info, previous.get(info.provider), len(new.details["fixes"]), chosen)
        for info, new in zip(infos, snapshots, strict=True)
    ]
    return Added(added[0].info, added[0].previous, added[0].fixes, chosen, tuple(added[1:]))


def custom_key(path: Path, name: str | None = None) -> str:
    """The manifest key of a custom price list: 'custom-' + a slug of its name or file stem."""
    slug = re.sub(r"[^a-z0-9]+", "-", (name or path.stem).lower()).strip("-")
    if not slug:
        raise ValueError(f"cannot make a name from {name or path.stem!r}; pass --name")
    return slug if slug.startswith(CUSTOM_PREFIX) else CUSTOM_PREFIX + slug


def add_custom(
    path: Path,
    name: str | None = None,
    *,
    now: dt.datetime | None = None,
    directory: Path | None = None,
) -> Added:
    """Validate a custom price list and make it a snapshot in use (replacing one of its name).

    Raises SnapshotError naming the file, line and field of the first problem.
    """
    key = custom_key(path, name)
    now = now or dt.datetime.now(dt.UTC)
    previous = _in_use(key)
    frame = custom.fetch_custom(path)
    parsed = custom.parse_custom(frame, path, set(SOURCES))

    def provider_names_are_free() -> None:
        # Under the snapshot folder's lock: no other list can land between this check
        # and the commit.
        taken = set(SOURCES)
        for info in read_manifest():
            if info.provider != key:
                taken |= set(read_snapshot(info.path, info.rows)["provider"])
        custom.parse_custom(frame, path, taken)

    oldest = str(parsed.offers["priced_at"].min())
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    info = commit_snapshot(
        key,
        parsed.offers,
        source=f"{parsed.source} ({path.resolve()})",
        priced_at=oldest,
        date_basis=f"the oldest priced_at in {path.name}; each row carries its own date",
        retrieved_at=stamp,
        directory=directory,
        check=provider_names_are_free,
    )
    return Added(info, previous, 0)
