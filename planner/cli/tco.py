"""`gpuplan tco`: on-prem amortized $/GPU-hour, and break-even against cloud offers.

The command checks its flags, reads the on-prem config and the offers to compare with,
has planner.onprem.tco build the table and prints it (planner.render.tco_tables). The
engine is imported when the command runs: `gpuplan --help` loads no pandas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from edge.console import abort
from planner.cli.options import Format, Wide, abort_on_value_error, check_format
from planner.io.validate import check_flags, warn_lines
from pricing.output import emit

if TYPE_CHECKING:
    import pandas as pd

    from planner.onprem.tco import LoadedConfig, OnPremConfig

SPOT_WARNING = (
    "spot prices are per hour of capacity: interruptions add lost work and restarts "
    "(planner.costs.spot overhead factor), not included here"
)


def tco(
    config: Annotated[
        str, typer.Option("--config", "-c", help="on-prem TOML (examples/onprem-dgx-h100.toml)")
    ],
    compare: Annotated[
        list[str] | None,
        typer.Option(
            "--compare",
            help="provider:region:instance_type, provider:instance_type (cheapest region) or a "
            "GPU name (its cheapest offer); repeatable. Default: the cheapest offer of the "
            "config's GPU from each provider",
        ),
    ] = None,
    pricing: Annotated[
        str, typer.Option(help="cloud price: on-demand | spot | reserved-1y | reserved-3y")
    ] = "on-demand",
    reserved_discount: Annotated[
        float | None,
        typer.Option(
            help="reserved pricing: where no reserved price is listed, assume on-demand less "
            "this fraction (0.35 = 35%; labelled an assumption)"
        ),
    ] = None,
    utilization: Annotated[
        float | None, typer.Option(help="0 < U <= 1; overrides the config's utilization")
    ] = None,
    monthly_gpu_hours: Annotated[
        float | None,
        typer.Option(help="demand for break-even months (default: capacity x utilization)"),
    ] = None,
    fmt: Format = "table",
    wide: Wide = False,
    explain: Annotated[
        bool, typer.Option("--explain", help="every assumption and defaulted field in full")
    ] = False,
) -> None:
    """On-prem amortized $/GPU-hour, and break-even utilization and months against cloud offers."""
    _check_tco_flags(fmt, pricing, utilization, monthly_gpu_hours)
    loaded, onprem, rows = _tco_rows(
        config, compare, pricing, reserved_discount, utilization, monthly_gpu_hours
    )
    warnings = _tco_warnings(onprem, rows, pricing)
    if fmt != "table":
        from planner.render.tco_tables import worded_tco

        emit(worded_tco(rows), fmt)
        warn_lines(warnings)
        return
    from planner.render.tco_tables import print_tco

    notes = loaded.defaulted_notes()
    assumptions = _tco_assumptions(onprem)
    print_tco(onprem, rows, assumptions, notes, warnings, wide=wide, explain=explain)


def _check_tco_flags(
    fmt: str, pricing: str, utilization: float | None, monthly_gpu_hours: float | None
) -> None:
    """Exit 2 at the first flag out of its choices or range, naming the flag."""
    from planner.onprem.tco import OnPremConfigError, check_value
    from pricing.catalog import PRICING_KINDS, check_choices

    check_format(fmt)
    with abort_on_value_error():
        check_choices([pricing], list(PRICING_KINDS), "pricing")
    if utilization is not None:
        try:
            check_value("utilization", utilization)
        except OnPremConfigError as exc:
            abort(f"--utilization {utilization:g}: {exc.message}")
    with abort_on_value_error():
        check_flags({"--monthly-gpu-hours": monthly_gpu_hours})


def _tco_rows(
    config: str,
    compare: list[str] | None,
    pricing: str,
    reserved_discount: float | None,
    utilization: float | None,
    monthly_gpu_hours: float | None,
) -> tuple[LoadedConfig, OnPremConfig, pd.DataFrame]:
    """The config as read, the on-prem figures it gives (at `utilization` where given) and
    the TCO table against the offers compared; exit 2 where the config, a reference or
    the snapshot is refused (--monthly-gpu-hours named when that is what is refused)."""
    from planner.onprem.tco import OnPremConfigError, load_onprem_config, tco_table

    try:
        loaded = load_onprem_config(config)
        onprem = loaded.config
        if utilization is not None:
            onprem = onprem.with_utilization(utilization)
        chosen = _compared_offers(onprem, compare, pricing, reserved_discount)
        rows = tco_table(onprem, chosen, monthly_gpu_hours, source=str(config))
    except OnPremConfigError as exc:
        if exc.field == "monthly_gpu_hours":
            abort(f"--monthly-gpu-hours {monthly_gpu_hours:g}: {exc.message}")
        abort(str(exc))
    except ValueError as exc:  # a bad reference, snapshot or GPU name
        abort(str(exc))
    return loaded, onprem, rows


def _compared_offers(
    onprem: OnPremConfig, compare: list[str] | None, pricing: str, reserved_discount: float | None
) -> pd.DataFrame:
    """The offers named by --compare, else the cheapest of the config's GPU per provider,
    priced at `pricing` (reserved: at on-demand less `reserved_discount` where given);
    ValueError when there is nothing to compare with."""
    from pricing.catalog import load_offers
    from pricing.refs import cheapest_per_provider, resolve_offer_refs
    from pricing.reserved import (
        RESERVED_KINDS,
        has_kind_price,
        no_reserved_message,
        with_reserved_discount,
    )

    offers = load_offers()
    if reserved_discount is not None:
        offers = with_reserved_discount(offers, pricing, reserved_discount)
    elif pricing in RESERVED_KINDS and not has_kind_price(offers, pricing):
        raise ValueError(no_reserved_message(pricing))
    if compare:
        return resolve_offer_refs(offers, compare, pricing)
    chosen = cheapest_per_provider(offers, onprem.gpu_name, pricing)
    if chosen.empty:
        raise ValueError(
            f"no {pricing} price for {onprem.gpu_name} in the snapshot to compare with; "
            "try --pricing on-demand, or name offers with --compare"
        )
    return chosen


def _tco_warnings(onprem: OnPremConfig, rows: pd.DataFrame, pricing: str) -> list[str]:
    """What the table leaves out: offers of another GPU, and spot's interruptions."""
    warnings = [
        f"{ref} has {gpu}, not {onprem.gpu_name}: its price per GPU-hour buys different work"
        for ref, gpu in zip(rows["ref"].iloc[1:], rows["gpu_name"].iloc[1:], strict=True)
        if gpu != onprem.gpu_name
    ]
    if pricing == "spot":
        warnings.append(SPOT_WARNING)
    return warnings


def _tco_assumptions(onprem: OnPremConfig) -> list[str]:
    """The assumptions behind every TCO figure, in words."""
    from planner.onprem.tco import COMPONENTS

    return [
        f"Power: {onprem.power_basis}.",
        "Capex straight-line over the lifetime, no salvage value, no cost of capital; "
        f"components: {', '.join(COMPONENTS)}; a year is 8760 h, a month 730 h.",
        "Break-even utilization: where amortized on-prem $/GPU-h equals the cloud's; "
        "break-even months: when cumulative cloud spend for the demand exceeds capex plus "
        "cumulative running cost.",
    ]
