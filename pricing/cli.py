"""`gpuplan pricing`: look at the price snapshots (show, status)."""

from __future__ import annotations

from typing import Annotated

import typer

from pricing.catalog import (
    OFFER_COLUMNS,
    SnapshotError,
    check_choices,
    filter_offers,
    load_offers,
    unique_values,
)
from pricing.gpus import UnknownGPUError
from pricing.output import FORMATS, abort, emit

app = typer.Typer(help="Price snapshots: show offers, check their age.", no_args_is_help=True)

SHOW_COLUMNS = (
    "provider",
    "region",
    "instance_type",
    "gpu_name",
    "gpu_count",
    "usd_per_hour",
    "spot_usd_per_hour",
    "reserved_1y_usd_per_hour",
    "reserved_3y_usd_per_hour",
    "price_date",
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
    fmt: Annotated[str, typer.Option("--format", help="table | json | csv")] = "table",
) -> None:
    """Offers in the snapshot, cheapest per GPU first, with each price's date."""
    try:
        check_choices([fmt], FORMATS, "format")
        offers = load_offers()
        check_choices(provider or [], unique_values(offers, "provider"), "provider")
        check_choices(region or [], unique_values(offers, "region"), "region")
        chosen = filter_offers(offers, provider, region, gpu)
    except (SnapshotError, UnknownGPUError, ValueError) as exc:
        abort(str(exc))
        return
    chosen = chosen.assign(
        price_date=chosen["priced_at"],
        usd_per_gpu_hour=chosen["usd_per_hour"] / chosen["gpu_count"],
    )
    chosen = chosen.sort_values(["gpu_name", "usd_per_gpu_hour", "provider", "region"])
    columns = [
        *SHOW_COLUMNS,
        *(c for c in OFFER_COLUMNS if c not in SHOW_COLUMNS and c != "priced_at"),
        "usd_per_gpu_hour",
    ]
    emit(
        chosen.loc[:, columns],
        fmt,
        title=f"{len(chosen)} offers",
        table_columns=[*SHOW_COLUMNS[:-3], "usd_per_gpu_hour", "price_date"],
    )
