"""Words for the codes in plan and option rows: which limits a row misses, where an on-prem
price comes from, what a network figure is, and the request's constraints.

`worded_rows` gives a table of plan rows as the CLI writes it (and the app downloads it):
misses and price_source in words, the figures they are worded from left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from edge.format import duration, money
from planner.codes import Miss, NetworkBasis, PriceBasis
from planner.machines.network import (
    DEFAULT_NETWORK_GBPS,
    ONPREM_NETWORK_GBPS,
    PROVIDER_DEFAULT_GBPS,
)
from planner.plan import PRICE_FIGURE_COLUMNS

if TYPE_CHECKING:
    from planner.request import PlanRequest

MISS_WORDS: dict[str, str] = {Miss.DEADLINE: "deadline", Miss.BUDGET: "budget"}
# Why a provider's network figure is assumed (planner.machines.network.PROVIDER_DEFAULT_GBPS).
PROVIDER_NETWORK_WORDS: dict[str, str] = {
    "vast": "marketplace hosts: {gbps:g} Gb/s assumed between independent machines",
    "lambda": "on-demand instances: no cluster fabric between them; {gbps:g} Gb/s assumed",
}


def misses_text(codes: Iterable[str] | str | None) -> str:
    """'deadline, budget', 'deadline', '' for a row's Miss codes."""
    if codes is None or isinstance(codes, str) or pd.api.types.is_scalar(codes):
        return ""
    return ", ".join(MISS_WORDS.get(str(c), str(c)) for c in codes)


# The columns price_source_text reads (the last two on on-prem rows).
PRICE_SOURCE_READS = (
    "price_source",
    "price_basis",
    "onprem_config",
    "amortized_usd_per_gpu_hour",
    "utilization",
)


def price_source_text(row: Mapping[str, Any], short: bool = False) -> str:
    """Where a row's price comes from: the catalog's source, or for on-prem 'lab.toml:
    amortized $2.31/GPU-h at 90% utilization (planner.onprem.tco)'. `short`: without what is in
    brackets (the catalog's extract or tier, the module that amortizes)."""
    source = str(row.get("price_source", "") or "")
    if str(row.get("price_basis", "")) != PriceBasis.AMORTIZED:
        return source.split(" (")[0] if short else source
    shown = source or f"on-prem config {row.get('onprem_config', '')}"
    text = (
        f"{shown}: amortized ${float(row['amortized_usd_per_gpu_hour']):.2f}/GPU-h at "
        f"{float(row['utilization']):.0%} utilization"
    )
    return text if short else text + " (planner.onprem.tco)"


def network_basis_text(row: Mapping[str, Any]) -> str:
    """What an option's network figure is: the published fabric, or the assumption."""
    basis = str(row.get("network_basis", ""))
    gbps = float(row.get("network_gbps", DEFAULT_NETWORK_GBPS))
    if basis == NetworkBasis.PUBLISHED:
        return str(row.get("network_fabric", ""))
    if basis == NetworkBasis.ONPREM_ASSUMED:
        return f"on-prem: one {ONPREM_NETWORK_GBPS:g} Gb/s InfiniBand NDR port per server assumed"
    provider = str(row.get("provider", ""))
    if basis == NetworkBasis.PROVIDER_ASSUMED and provider in PROVIDER_NETWORK_WORDS:
        return PROVIDER_NETWORK_WORDS[provider].format(
            gbps=PROVIDER_DEFAULT_GBPS.get(provider, gbps)
        )
    return f"not published here: {gbps:g} Gb/s assumed"


def worded_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Plan rows (or picks, frontier) as written out: misses and price_source in words, the
    columns they are worded from dropped; a table without them is returned as it is."""
    if "misses" not in frame.columns and "price_basis" not in frame.columns:
        return frame
    out = frame.copy()
    if "misses" in out.columns:
        out["misses"] = pd.Series(
            [misses_text(v) for v in out["misses"]], index=out.index, dtype=object
        )
    if "price_basis" in out.columns:
        read = [c for c in PRICE_SOURCE_READS if c in out.columns]  # not all ~100 columns
        records = out.loc[:, read].to_dict(orient="records")
        out["price_source"] = pd.Series(
            [price_source_text(r) for r in records], index=out.index, dtype=object
        )
    return out.drop(columns=[c for c in PRICE_FIGURE_COLUMNS if c in out.columns])


def constraint_phrases(request: PlanRequest) -> list[str]:
    """One short phrase per constraint that was set (for assumptions and headers)."""
    parts = []
    if request.deadline_hours is not None:
        parts.append(f"deadline {duration(request.deadline_hours)}")
    if request.budget_usd is not None:
        parts.append(f"budget {money(request.budget_usd)}")
    if request.gpu_count is not None:
        parts.append(f"exactly {request.gpu_count} GPUs")
    parts.append(f"at most {request.max_gpus} GPUs per option")
    for name, values in (
        ("providers", request.providers),
        ("regions", request.regions),
        ("GPUs", request.gpus),
        ("on-prem", tuple(c.name for c in request.onprem)),
    ):
        if values:
            parts.append(f"{name} {', '.join(values)}")
    parts.append(f"pricing {request.pricing}")
    if request.reserved_discount is not None:
        parts.append(f"assumed reserved discount {request.reserved_discount:.0%} off on-demand")
    return parts
