"""`gpuplan pricing`: price snapshots (show, status, refresh, diff, add-custom, remove)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

# Only light modules at the top (`gpuplan --help` loads no pandas); commands import the rest.
from edge.console import abort, text_console, warn
from edge.options import Format, Wide
from edge.output import FORMATS, emit
from pricing.providers.regions import DEFAULT_DEADLINES_S, DEFAULT_REGIONS

if TYPE_CHECKING:  # annotations only: `gpuplan --help` loads no pandas
    from pricing.providers.retry import RetryPolicy
    from pricing.refresh import Added

app = typer.Typer(
    help="Price snapshots: show offers, check their age, refresh them from the providers' "
    "APIs, compare them, add your own.",
    no_args_is_help=True,
)


def tier_option_help() -> str:
    from pricing.tiers import DEFAULT_TIERS, TIERS

    return (
        f"{' | '.join(TIERS)}; repeatable (default: {', '.join(DEFAULT_TIERS)}, or every "
        "tier of the providers named with --provider)"
    )


@app.command("show")
def show(
    gpu: Annotated[
        list[str] | None,
        typer.Option("--gpu", help="GPU name or family (H100 = H100-SXM, -PCIe, -NVL); repeatable"),
    ] = None,
    provider: Annotated[
        list[str] | None,
        typer.Option("--provider", help="aws, gcp, azure, lambda, ...; repeatable"),
    ] = None,
    region: Annotated[list[str] | None, typer.Option("--region", help="repeatable")] = None,
    tier: Annotated[list[str] | None, typer.Option("--tier", help=tier_option_help())] = None,
    include_retired: Annotated[
        bool,
        typer.Option("--include-retired", help="also list sizes the provider no longer sells"),
    ] = False,
    fmt: Format = "table",
    wide: Wide = False,
) -> None:
    """Offers in the snapshot, cheapest per GPU first, with each price's date."""
    from edge.choices import check_choices
    from pricing.catalog import (
        OFFER_COLUMNS,
        OFFER_HEAD_COLUMNS,
        PRICE_COLUMNS,
        SnapshotError,
        filter_offers,
        load_offers,
        price_date_bases,
        read_manifest,
        unique_values,
    )
    from pricing.gpus import UnknownGPUError
    from pricing.status import stale_text, status_frame

    try:
        check_choices([fmt], FORMATS, "format")
        offers = load_offers()
        infos = read_manifest()
        check_choices(provider or [], unique_values(offers, "provider"), "provider")
        check_choices(region or [], unique_values(offers, "region"), "region")
        chosen = filter_offers(
            offers, provider, region, gpu, tiers=tier, include_retired=include_retired
        )
    except (SnapshotError, UnknownGPUError, ValueError) as exc:
        abort(str(exc))
        return
    labels = {info.provider: info.date_label for info in infos}
    chosen = chosen.assign(
        price_date=[
            labels.get(p, d) if labels.get(p, "").startswith("catalog") else d
            for p, d in zip(chosen["provider"], chosen["priced_at"], strict=True)
        ],
        price_date_basis=price_date_bases(chosen),
        usd_per_gpu_hour=chosen["usd_per_hour"] / chosen["gpu_count"],
    )
    chosen = chosen.sort_values(["gpu_name", "usd_per_gpu_hour", "provider", "region"])
    first = (*OFFER_HEAD_COLUMNS, *PRICE_COLUMNS, "price_date")
    columns = [
        *first,
        *(c for c in OFFER_COLUMNS if c not in first and c != "priced_at"),
        "priced_at",
        "price_date_basis",
        "tier",
        "usd_per_gpu_hour",
    ]
    if fmt == "table":
        from pricing.tables import print_offers

        print_offers(chosen.loc[:, columns], wide=wide)
    else:
        emit(chosen.loc[:, columns], fmt)
    shown = {info.provider: info for info in infos if info.provider in set(chosen["provider"])}
    frame = status_frame(list(shown.values()))
    listed = stale_text(frame)
    if listed:
        warn(stale_warning(listed))


def stale_warning(listed: str) -> str:
    """The stale-prices warning, with what to run."""
    from pricing.catalog import STALE_AFTER_DAYS

    return (
        f"prices older than {STALE_AFTER_DAYS} days, or of unknown age: {listed}; "
        "refresh without credentials with `gpuplan pricing refresh skypilot` (every cloud "
        "SkyPilot covers), `aws-public` or `azure`; `gpuplan pricing status` says what "
        "each source needs"
    )


@app.command("status")
def status(
    fmt: Format = "table",
) -> None:
    """Each price source in use: its date, age and where it lives, and every source a
    refresh can read with what it needs; warns past 30 days."""
    from edge.choices import check_choices
    from pricing.catalog import SnapshotError, read_manifest, user_snapshot_dir
    from pricing.status import sources_frame, stale_text, status_frame

    try:
        check_choices([fmt], FORMATS, "format")
        infos = read_manifest()
    except (SnapshotError, ValueError) as exc:
        abort(str(exc))
        return
    frame = status_frame(infos)
    emit(
        frame,
        fmt,
        title=f"price sources in use (user snapshots: {user_snapshot_dir()})",
        table_columns=["provider", "origin", "price_date", "age", "rows", "refresh", "date_basis"],
        beneath=("refresh", "date_basis"),
    )
    if fmt == "table":
        emit(
            sources_frame(),
            fmt,
            title="sources `gpuplan pricing refresh SOURCE` reads",
            optional=("credentials",),
        )
    listed = stale_text(frame)
    if listed:
        warn(stale_warning(listed))
    for row in frame.loc[frame["integrity"] != "ok"].itertuples():
        warn(f"{row.provider}: {row.file} {row.integrity}")


def _split(values: list[str] | None) -> list[str]:
    return [v.strip() for value in values or [] for v in value.split(",") if v.strip()]


# Sources whose fetch takes a base_url (a mirror, or a local server in tests).
BASE_URL_SOURCES = ("azure", "aws-public", "skypilot")


@app.command("refresh")
def refresh_command(
    provider: Annotated[
        str, typer.Argument(help="aws | gcp | azure (APIs); aws-public | skypilot (public files)")
    ],
    regions: Annotated[
        list[str] | None,
        typer.Option(
            "--regions",
            "--region",
            help="comma-separated or repeated; default: "
            + "; ".join(f"{p} {', '.join(r) or 'all'}" for p, r in DEFAULT_REGIONS.items()),
        ),
    ] = None,
    project: Annotated[
        str | None, typer.Option(help="GCP project for the Compute API (gcp only)")
    ] = None,
    clouds: Annotated[
        str | None,
        typer.Option(help="skypilot only: comma-separated clouds (default: every cloud covered)"),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            help="azure, aws-public, skypilot: the source's base URL (a mirror; default: the "
            "provider's public URL)"
        ),
    ] = None,
    timeout: Annotated[float, typer.Option(help="seconds to wait for data before a retry")] = 60.0,
    deadline: Annotated[
        float | None,
        typer.Option(
            help="seconds the whole refresh may take: every page, file, retry and wait "
            "together; default: " + ", ".join(f"{p} {s:g}" for p, s in DEFAULT_DEADLINES_S.items())
        ),
    ] = None,
    attempts: Annotated[int, typer.Option(help="tries per page (throttling, 5xx, timeouts)")] = 5,
) -> None:
    """Fetch current prices from a provider's API or public files into new dated snapshots.

    The previous snapshot stays in use, unchanged, when anything fails.
    """
    from pricing.refresh import RefreshError, refresh

    options = _refresh_options(provider, project, clouds, base_url)
    retry = _refresh_retry(provider, timeout, deadline, attempts)
    console = text_console(stderr=True)
    try:
        with console.status(Text(f"refreshing {provider} prices")) as spinner:
            added = refresh(
                provider,
                _split(regions) or None,
                options=options,
                retry=retry,
                progress=lambda message: spinner.update(Text(message)),
            )
    except ValueError as exc:
        abort(str(exc))
        return
    except RefreshError as exc:
        abort(str(exc), code=1)
        return
    for one in (added, *added.also):
        _say_added(one)


def _refresh_options(
    provider: str, project: str | None, clouds: str | None, base_url: str | None
) -> dict[str, object]:
    """The source's fetch options from --project, --clouds and --base-url; aborts (exit
    2) on a flag the source does not take, or a base URL that is not http(s)."""
    options: dict[str, object] = {}
    if project and provider != "gcp":
        abort("--project is for gcp only")
    if project:
        options["project"] = project
    if clouds is not None:
        if provider != "skypilot":
            abort("--clouds is for skypilot only")
        options["clouds"] = _split([clouds])
    if base_url is not None:
        if provider not in BASE_URL_SOURCES:
            abort(f"--base-url is for {', '.join(BASE_URL_SOURCES)} only")
        if not base_url.startswith(("https://", "http://")):
            abort(f"--base-url must be an http(s) URL, not {base_url[:80]!r}")
        options["base_url"] = base_url
    return options


def _refresh_retry(
    provider: str, timeout: float, deadline: float | None, attempts: int
) -> RetryPolicy:
    """The refresh's retries from --attempts, --timeout and --deadline (seconds; the
    source's default deadline when not given); aborts (exit 2) when one is out of range."""
    from pricing.providers.retry import RetryPolicy

    if deadline is None:
        deadline = DEFAULT_DEADLINES_S.get(provider, 300.0)
    if not (1 <= attempts <= 100) or not (0 < timeout <= 3600) or not (0 < deadline <= 86400):
        abort(
            "--attempts must be 1..100, --timeout in (0, 3600] and --deadline in (0, 86400] "
            f"seconds (got {attempts}, {timeout}, {deadline})"
        )
    return RetryPolicy(attempts=attempts, timeout_s=timeout, deadline_s=deadline)


def _say_added(one: Added) -> None:
    """What a refresh put in use for one provider: its offers, regions, price date and
    file, the snapshot it replaced, and where the rows it dropped or fixed are listed."""
    info = one.info
    replaced = (
        f"; replaces the {one.previous.origin} snapshot of {one.previous.priced_at}"
        if one.previous
        else ""
    )
    where = ", ".join(one.regions) or "every region"
    typer.echo(
        f"{info.provider}: {info.rows} offers from {where}, priced "
        f"{info.date_label}, in {info.path}{replaced}."
    )
    if one.fixes:
        typer.echo(
            f"{one.fixes} rows dropped or values set missing, each with its reason: "
            f"{info.path.parent / info.fixes_file}"
        )


@app.command("add-custom")
def add_custom_command(
    file: Annotated[Path, typer.Argument(help="CSV of offers (see README: Prices)")],
    name: Annotated[
        str | None, typer.Option(help="name of this price list (default: the file name)")
    ] = None,
) -> None:
    """Validate a price list of your own (neoclouds, negotiated prices) and use it."""
    from pricing.catalog import SnapshotError
    from pricing.gpus import UnknownGPUError
    from pricing.refresh import add_custom

    try:
        added = add_custom(file, name)
    except (SnapshotError, UnknownGPUError, ValueError, OSError) as exc:
        abort(str(exc))
        return
    info = added.info
    verb = "replaced" if added.previous else "added"
    typer.echo(
        f"{verb} {info.provider}: {info.rows} offers (oldest price {info.priced_at}) "
        f"in {info.path}; `gpuplan plan` now ranks them."
    )


@app.command("remove")
def remove_command(
    provider: Annotated[str, typer.Argument(help="a user snapshot: aws, custom-NAME, ...")],
) -> None:
    """Stop using a refreshed or custom snapshot (the bundled one, if any, is used again)."""
    from pricing.catalog import SnapshotError
    from pricing.store import remove_snapshot

    try:
        removed = remove_snapshot(provider)
    except (SnapshotError, ValueError) as exc:
        abort(str(exc))
        return
    typer.echo(f"no longer using {removed.path}; its file is kept for `gpuplan pricing diff`.")


@app.command("diff")
def diff_command(
    old: Annotated[str, typer.Argument(help="CSV path, PROVIDER, PROVIDER@bundled or @YYYY-MM-DD")],
    new: Annotated[str, typer.Argument(help="the same kinds of reference")],
    fmt: Format = "table",
) -> None:
    """Offers added and removed and prices changed between two snapshots."""
    from edge.choices import check_choices
    from pricing.catalog import SnapshotError
    from pricing.diff import DIFF_COLUMNS, diff_offers, summarize
    from pricing.store import resolve_reference

    try:
        check_choices([fmt], FORMATS, "format")
        old_offers, old_label = resolve_reference(old)
        new_offers, new_label = resolve_reference(new)
    except (SnapshotError, ValueError) as exc:
        abort(str(exc))
        return
    changes = diff_offers(old_offers, new_offers)
    summary = f"{old_label} -> {new_label}: {summarize(changes)}"
    emit(
        changes,
        fmt,
        title=summary,
        table_columns=DIFF_COLUMNS,
        beneath=("detail",),
        optional=("region", "pricing", "gpu_count"),
    )
    if fmt != "table":
        text_console(stderr=True).print(Text(summary))


@app.command("spot-zones")
def spot_zones(
    region: Annotated[list[str] | None, typer.Option("--region", help="repeatable")] = None,
    instance_type: Annotated[
        list[str] | None, typer.Option("--instance-type", help="repeatable")
    ] = None,
    fmt: Format = "table",
) -> None:
    """AWS spot prices per availability zone, from the refreshed AWS snapshot in use."""
    import pandas as pd

    from edge.choices import check_choices
    from pricing.catalog import SnapshotError, read_manifest

    try:
        check_choices([fmt], FORMATS, "format")
        info = next((i for i in read_manifest() if i.provider == "aws"), None)
        if info is None or not info.spot_zones_file:
            raise ValueError(
                "the AWS snapshot in use has no per-zone spot prices; "
                "run `gpuplan pricing refresh aws`"
            )
        zones = pd.read_csv(info.path.parent / info.spot_zones_file)
    except (SnapshotError, ValueError, OSError) as exc:
        abort(str(exc))
        return
    if region:
        zones = zones.loc[zones["region"].isin(region)]
    if instance_type:
        zones = zones.loc[zones["instance_type"].isin(instance_type)]
    emit(zones, fmt, title=f"spot prices per zone, observed for the {info.priced_at} snapshot")
