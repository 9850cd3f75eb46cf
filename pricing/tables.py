"""`gpuplan pricing show` as a table that fits the terminal (money short, names cut with …)."""

from __future__ import annotations

import pandas as pd

from edge.format import money
from edge.tables import Col, console_width, make_console, print_fit, print_wide
from pricing.catalog import price_date_labels


def _usd(value: object) -> str:
    return money(float(value))  # type: ignore[arg-type]


def _gpus(value: object) -> str:
    return f"{float(value):g}"  # type: ignore[arg-type]


OFFER_COLUMNS: tuple[Col, ...] = (
    Col("provider", "provider"),
    Col("region", "region", drop=2),
    Col("instance_type", "instance", shrink_to=16),
    Col("gpu_name", "GPU"),
    Col("gpu_count", "GPUs", _gpus, right=True),
    Col("usd_per_hour", "$/h", _usd, right=True, drop=1),
    Col("spot_usd_per_hour", "spot $/h", _usd, right=True, drop=3),
    Col("usd_per_gpu_hour", "$/GPU-h", _usd, right=True),
    Col("priced", "priced"),
)


def print_offers(offers: pd.DataFrame, wide: bool = False) -> None:
    """Offers, one per line, fitting the terminal (every column with `wide`)."""
    title = f"{len(offers)} offers, cheapest per GPU-hour first within each GPU"
    if wide:
        print_wide(offers, title)
        return
    if {"priced_at", "price_date_basis"} <= set(offers.columns):
        # "≥ 2025-06-01" for a catalog extract's lower bound, as the plan table says it.
        offers = offers.assign(priced=price_date_labels(offers, "priced_at"))
    else:
        offers = offers.assign(priced=offers.get("price_date", ""))
    width = console_width()
    print_fit(offers, OFFER_COLUMNS, title, width)
    make_console(width).print(
        "reserved prices, source and more columns: --wide or --format csv", highlight=False
    )
