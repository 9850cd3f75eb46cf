"""`gpuplan tco`: buy or rent, answered with every cost line, a band and a verdict.

The command checks its flags, reads the on-prem config and the offers to compare with
(planner.onprem.compare: the plan's provider tiers unless --tier says otherwise), has
planner.onprem.answer build the answer and prints it (planner.render.tco_tables). The
engine is imported when the command runs: `gpuplan --help` loads no pandas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from edge.console import abort
from edge.output import emit
from planner.cli.options import Format, Wide, abort_on_value_error, check_format
from planner.io.validate import check_flags, warn_lines
from pricing.cli import tier_option_help

if TYPE_CHECKING:
    import pandas as pd

    from planner.onprem.answer import TcoAnswer
    from planner.onprem.load import LoadedConfig

SPOT_WARNING = (
    "spot prices are per hour of capacity: interruptions add lost work and restarts "
    "(planner.costs.spot overhead factor), not included here"
)


def tco(
    config: Annotated[
        str,
        typer.Option(
            "--config", "-c", help="on-prem TOML, or example:onprem-dgx-h100 (gpuplan examples)"
        ),
    ],
    compare: Annotated[
        list[str] | None,
        typer.Option(
            "--compare",
            help="provider:region:instance_type, provider:instance_type (cheapest region) or a "
            "GPU name (its cheapest offer in the tiers weighed); repeatable. Default: the "
            "cheapest offer of the config's GPU from each provider in the tiers weighed",
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
        float | None,
        typer.Option(
            help="1e-6 <= U <= 1; overrides the config's (use --monthly-gpu-hours instead)"
        ),
    ] = None,
    monthly_gpu_hours: Annotated[
        float | None,
        typer.Option(
            help="the work: GPU-hours a month; sets the utilization (x 12 / (GPUs x 8760 h)) "
            "and, where it does not fit, the servers needed"
        ),
    ] = None,
    tier: Annotated[list[str] | None, typer.Option("--tier", help=tier_option_help())] = None,
    cloud_price_trend: Annotated[
        float | None,
        typer.Option(
            help="cloud price change per year over the server's life (-0.15 = 15% cheaper "
            "each year); drawn within +/-50% of it. Default: flat"
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Monte Carlo seed (the same figures every run)")] = (
        20261202
    ),
    fmt: Format = "table",
    wide: Wide = False,
    explain: Annotated[
        bool, typer.Option("--explain", help="every assumption and defaulted field in full")
    ] = False,
) -> None:
    """Buy or rent: on-prem cost per GPU-hour by line with its P10-P90 band, and against
    each cloud offer the share of cases buying is cheaper over the server's life."""
    _check_tco_flags(fmt, pricing, utilization, monthly_gpu_hours, cloud_price_trend)
    loaded, answer = _tco_answer(
        config, compare, pricing, reserved_discount, utilization, monthly_gpu_hours, tier,
        cloud_price_trend, seed,
    )  # fmt: skip
    warnings = _tco_warnings(answer, pricing)
    if fmt != "table":
        from planner.render.tco_words import worded_tco

        emit(worded_tco(answer), fmt)
        warn_lines(warnings)
        return
    from planner.onprem.sensitivity import sensitivity
    from planner.render.tco_tables import print_tco
    from planner.render.tco_words import deciding_inputs

    deciding = deciding_inputs(sensitivity(answer.config, answer.defaulted))
    print_tco(answer, deciding, loaded.defaulted_notes(), warnings, wide=wide, explain=explain)


def _check_tco_flags(
    fmt: str,
    pricing: str,
    utilization: float | None,
    monthly_gpu_hours: float | None,
    trend: float | None,
) -> None:
    """Exit 2 at the first flag out of its choices or range, naming the flag."""
    from edge.choices import check_choices
    from planner.onprem.config import OnPremConfigError, check_value
    from pricing.catalog import PRICING_KINDS

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
    if utilization is not None and monthly_gpu_hours is not None:
        abort(
            "--utilization and --monthly-gpu-hours both set the utilization; give one "
            "(--monthly-gpu-hours: the work, which sets it)"
        )
    if trend is not None and not -0.9 <= trend <= 1.0:
        abort(f"--cloud-price-trend {trend:g}: must be between -0.9 and 1 (-0.15 = 15% a year)")


def _tco_answer(
    config: str,
    compare: list[str] | None,
    pricing: str,
    reserved_discount: float | None,
    utilization: float | None,
    monthly_gpu_hours: float | None,
    tiers: list[str] | None,
    trend: float | None,
    seed: int,
) -> tuple[LoadedConfig, TcoAnswer]:
    """The config as read and the answer against the offers compared; exit 2 where the
    config, a reference, a tier or the snapshot is refused (--monthly-gpu-hours named when
    that is what is refused)."""
    from planner.io.examples import input_path
    from planner.onprem.answer import tco_answer
    from planner.onprem.config import OnPremConfigError
    from planner.onprem.load import load_onprem_config

    try:
        loaded = load_onprem_config(input_path(config))
        onprem = loaded.config
        defaulted = loaded.defaulted
        if utilization is not None:
            onprem = onprem.with_utilization(utilization)
            defaulted = tuple(k for k in defaulted if k != "utilization")
        chosen = _compared_offers(onprem.gpu_name, compare, pricing, reserved_discount, tiers)
        answer = tco_answer(
            onprem, chosen, defaulted, monthly_gpu_hours, trend, source=str(config), seed=seed
        )
    except OnPremConfigError as exc:
        if exc.field == "monthly_gpu_hours":
            abort(f"--monthly-gpu-hours {monthly_gpu_hours:g}: {exc.message}")
        abort(str(exc))
    except ValueError as exc:  # a bad reference, tier, snapshot or GPU name
        abort(str(exc))
    return loaded, answer


def _compared_offers(
    gpu_name: str,
    compare: list[str] | None,
    pricing: str,
    reserved_discount: float | None,
    tiers: list[str] | None,
) -> pd.DataFrame:
    """The offers named by --compare, else the cheapest of the config's GPU per provider in
    the tiers weighed, priced at `pricing` (reserved: at on-demand less `reserved_discount`
    where given); ValueError when there is nothing to compare with."""
    from planner.onprem.compare import compared_offers
    from pricing.catalog import load_offers
    from pricing.reserved import (
        RESERVED_KINDS,
        has_kind_price,
        no_reserved_message,
        with_reserved_discount,
    )
    from pricing.tiers import DEFAULT_TIERS

    offers = load_offers()
    if reserved_discount is not None:
        offers = with_reserved_discount(offers, pricing, reserved_discount)
    elif pricing in RESERVED_KINDS and not has_kind_price(offers, pricing):
        raise ValueError(no_reserved_message(pricing))
    chosen = compared_offers(offers, gpu_name, compare, pricing, tiers)
    if chosen.empty:
        weighed = ", ".join(tiers or DEFAULT_TIERS)
        raise ValueError(
            f"no {pricing} price for {gpu_name} from the tiers weighed ({weighed}) to compare "
            "with; try --pricing on-demand, --tier marketplace, or name offers with --compare"
        )
    return chosen


def _tco_warnings(answer: TcoAnswer, pricing: str) -> list[str]:
    """What the answer leaves out: offers of another GPU, and spot's interruptions."""
    gpu = answer.config.gpu_name
    warnings = [
        f"{ref} has {other}, not {gpu}: its price per GPU-hour buys different work"
        for ref, other in zip(answer.cloud["ref"], answer.cloud["gpu_name"], strict=True)
        if other != gpu
    ]
    if pricing == "spot":
        warnings.append(SPOT_WARNING)
    return warnings
