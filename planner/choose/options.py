"""Options a plan weighs: a cloud offer x a number of instances, or an on-prem config x GPUs.

Option table columns (one row per option; OPTION_COLUMNS):

  option_id        int, position in the table
  kind             "cloud" | "on-prem"
  offer_key        str, the offer (or config) the option belongs to: counts are chosen per key
  provider, region, instance_type, gpu_name
  gpu_count        GPUs per instance (on-prem: per server used, or the GPUs used below one)
  instances        instances (on-prem: servers) in the option
  total_gpus       gpu_count x instances
  gpus_per_node    GPUs that share a node's NVLink/PCIe fabric (the instance's, at least 1)
  network_gbps     network between instances, Gb/s per instance (planner.machines.network), and
  network_basis    what that figure is (planner.codes.NetworkBasis: published, or an
                   assumption), network_fabric the published fabric ("" when assumed)
  gpu_memory_gb    memory of one GPU from the spec table (NaN when the GPU has no row)
  usd_per_hour     price of one instance per hour at `pricing` (on-prem: amortized USD per
                   GPU-hour x gpu_count); option_usd_per_hour = usd_per_hour x instances
  spot_usd_per_hour, pricing, price_date, price_source, interconnect
  price_date_basis "exact", or "not-before" when price_date is only a lower bound (a
                   bundled catalog extract); "" for on-prem
  price_basis      planner.codes.PriceBasis: catalog (price_source is the catalog's source)
                   or amortized (on-prem: price_source is the config's file or label, ""
                   when none; onprem_config its name; amortized_usd_per_gpu_hour at
                   utilization); planner.render.rows words them

Counts: instances 1, 2, 4, ... while total GPUs stay within `max_gpus`; a fractional GPU
slice, and a marketplace listing (planner.machines.network.SINGLE_HOST_PROVIDERS), is one instance
only. On-prem: 1, 2, 4, ... GPUs below one server, then 1, 2, 4, ...
servers and all of them, within `max_gpus`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from planner.codes import NetworkBasis, PriceBasis
from planner.dropped import drop_without
from planner.machines.network import (
    ONPREM_NETWORK_GBPS,
    SINGLE_HOST_PROVIDERS,
    instance_network_gbps,
)
from planner.machines.specs import load_specs
from planner.notes import Note
from pricing.catalog import price_date_bases, price_for_kind

if TYPE_CHECKING:
    from planner.onprem.tco import OnPremConfig
    from planner.request import PlanRequest

OPTION_COLUMNS: tuple[str, ...] = (
    "option_id", "kind", "offer_key", "provider", "region", "instance_type", "gpu_name",
    "gpu_count", "instances", "total_gpus", "gpus_per_node", "network_gbps", "network_basis",
    "gpu_memory_gb", "vcpus", "usd_per_hour",
    "option_usd_per_hour", "spot_usd_per_hour", "pricing", "price_date",
    "price_date_basis", "price_source", "interconnect", "network_fabric", "price_basis",
    "onprem_config", "utilization", "amortized_usd_per_gpu_hour",
)  # fmt: skip


def doublings(limit: float) -> np.ndarray:
    """1, 2, 4, ... up to `limit` (at least [1])."""
    top = int(np.floor(np.log2(max(limit, 1.0)) + 1e-9))
    return 2.0 ** np.arange(top + 1)


def cloud_options(
    offers: pd.DataFrame, pricing: str, max_gpus: int, exact: int | None = None
) -> tuple[pd.DataFrame, list[Note]]:
    """Every offer x instance count within `max_gpus` (vectorized): 1, 2, 4, ... instances,
    and with an `exact` GPU count the instances that make it (24 GPUs: 3 x 8). Returns
    options, notes (offers too big for the cap; offers whose instances cannot make
    `exact`)."""
    price = price_for_kind(offers, pricing).astype(float)
    per = offers["gpu_count"].astype(float).to_numpy()
    counts = doublings(max_gpus)
    warnings = []
    if exact is not None:
        whole = (per >= 1) & (np.mod(exact, np.maximum(per, 1.0)) == 0)
        counts = np.unique(np.r_[counts, exact / per[whole]])
        uneven = (per >= 1) & ~whole & (per <= exact)
        if uneven.any():
            sizes = tuple(int(g) for g in np.unique(per[uneven]))
            warnings.append(
                Note("gpu_count_uneven", {"offers": int(uneven.sum()), "gpu_count": exact,
                                          "sizes": sizes})
            )  # fmt: skip
    grid_offer = np.repeat(np.arange(len(offers)), len(counts))
    grid_k = np.tile(counts, len(offers))
    g = per[grid_offer]
    single_host = offers["provider"].isin(list(SINGLE_HOST_PROVIDERS)).to_numpy()
    keep = (
        (grid_k * g <= max_gpus + 1e-9)
        & ((g >= 1) | (grid_k == 1))
        & (~single_host[grid_offer] | (grid_k == 1))
    )
    too_big = per > max_gpus
    if too_big.any():
        cap = "gpu_count" if exact is not None else "max_gpus"
        warnings.append(
            Note("offers_too_big", {"offers": int(too_big.sum()), "max_gpus": max_gpus,
                                    "cap": cap})
        )  # fmt: skip
    rows = grid_offer[keep]
    k = grid_k[keep]
    n = len(rows)
    network, network_basis, network_fabric = instance_network_gbps(offers)
    per_gpu_count = per[rows]
    usd = price.to_numpy()[rows]
    # Each column is made once per offer and taken per option (rows: the offer of each).
    frame = pd.DataFrame(
        {
            "kind": _same("cloud", n),
            "offer_key": _text_at(np.char.add("cloud:", np.arange(len(offers)).astype(str)), rows),
            "provider": _text_at(offers["provider"], rows),
            "region": _text_at(offers["region"], rows),
            "instance_type": _text_at(offers["instance_type"], rows),
            "gpu_name": _text_at(offers["gpu_name"], rows),
            "gpu_count": per_gpu_count,
            "instances": k,
            "total_gpus": per_gpu_count * k,
            "gpus_per_node": np.maximum(per_gpu_count, 1.0),
            "network_gbps": network[rows],
            "network_basis": _text_at(network_basis, rows),
            "gpu_memory_gb": _spec_memory(offers["gpu_name"])[rows],
            "vcpus": (
                offers["vcpus"].astype(float).to_numpy()[rows]
                if "vcpus" in offers.columns
                else np.full(n, np.nan)
            ),
            "usd_per_hour": usd,
            "option_usd_per_hour": usd * k,
            "spot_usd_per_hour": offers["spot_usd_per_hour"].astype(float).to_numpy()[rows],
            "pricing": _same(pricing, n),
            "price_date": _text_at(offers["priced_at"], rows),
            "price_date_basis": _text_at(price_date_bases(offers), rows),
            "price_source": _text_at(offers["source"], rows),
            "interconnect": _text_at(offers["interconnect"], rows),
            "network_fabric": _text_at(network_fabric, rows),
            "price_basis": _same(PriceBasis.CATALOG, n),
            "onprem_config": _same("", n),
            "utilization": np.full(n, np.nan),
            "amortized_usd_per_gpu_hour": np.full(n, np.nan),
        }
    )
    return frame, warnings


def cpu_options(cpu_offers: pd.DataFrame, pricing: str) -> pd.DataFrame:
    """One option per CPU-only offer (pricing.cpu_offers), one instance each, in
    OPTION_COLUMNS: gpu_name pricing.cpu_offers.CPU_NAME, gpu_count and total_gpus 0,
    offer_key "cpu:<i>". A CPU baseline's options (planner.cpu_baseline)."""
    from pricing.cpu_offers import CPU_NAME

    n = len(cpu_offers)
    price = price_for_kind(cpu_offers, pricing).astype(float).to_numpy()
    network, network_basis, network_fabric = instance_network_gbps(cpu_offers)
    frame = pd.DataFrame(
        {
            "option_id": np.arange(n),
            "kind": _same("cloud", n),
            "offer_key": _text(np.char.add("cpu:", np.arange(n).astype(str))),
            "provider": _text(cpu_offers["provider"]),
            "region": _text(cpu_offers["region"]),
            "instance_type": _text(cpu_offers["instance_type"]),
            "gpu_name": _same(CPU_NAME, n),
            "gpu_count": np.zeros(n),
            "instances": np.ones(n),
            "total_gpus": np.zeros(n),
            "gpus_per_node": np.ones(n),
            "network_gbps": network,
            "network_basis": _text(network_basis),
            "gpu_memory_gb": np.full(n, np.nan),
            "vcpus": cpu_offers["vcpus"].astype(float).to_numpy(),
            "usd_per_hour": price,
            "option_usd_per_hour": price,
            "spot_usd_per_hour": cpu_offers["spot_usd_per_hour"].astype(float).to_numpy(),
            "pricing": _same(pricing, n),
            "price_date": _text(cpu_offers["priced_at"]),
            "price_date_basis": _text(price_date_bases(cpu_offers)),
            "price_source": _text(cpu_offers["source"]),
            "interconnect": _same("none", n),
            "network_fabric": _text(network_fabric),
            "price_basis": _same(PriceBasis.CATALOG, n),
            "onprem_config": _same("", n),
            "utilization": np.full(n, np.nan),
            "amortized_usd_per_gpu_hour": np.full(n, np.nan),
        }
    )
    return frame.loc[:, list(OPTION_COLUMNS)]


def onprem_counts(
    config: OnPremConfig, max_gpus: int, exact: int | None = None
) -> list[tuple[int, int]]:
    """(GPUs per server used, servers) pairs an on-prem config offers, within `max_gpus`:
    1, 2, 4, ... GPUs of one server, 1, 2, 4, ... servers and all of them, and an `exact`
    GPU count where the config can make it (part of one server, or whole servers)."""
    per = config.gpus_per_server
    pairs = [(int(g), 1) for g in doublings(per) if g < per]
    servers = sorted({*(int(s) for s in doublings(config.servers)), config.servers})
    pairs += [(per, s) for s in servers]
    if exact is not None and exact < per:
        pairs.append((exact, 1))
    elif exact is not None and exact % per == 0 and exact // per <= config.servers:
        pairs.append((per, exact // per))
    pairs = sorted(set(pairs), key=lambda p: (p[0] * p[1], p[0]))
    return [(g, s) for g, s in pairs if g * s <= max_gpus]


def onprem_options(
    configs: Sequence[OnPremConfig],
    max_gpus: int,
    sources: Sequence[str] = (),
    exact: int | None = None,
) -> tuple[pd.DataFrame, list[Note]]:
    """Each on-prem config x the GPUs it can give one job, priced at its amortized rate.

    A config's USD per GPU-hour is planner.onprem.tco.amortized_usd_per_gpu_hour at the config's
    utilization; the option pays it for every GPU it uses, for the hours it runs.
    """
    frames = []
    warnings: list[Note] = []
    if not configs:
        return empty_options(), warnings
    from planner.onprem.tco import amortized_usd_per_gpu_hour  # pydantic: only when asked

    for i, config in enumerate(configs):
        source = sources[i] if i < len(sources) else ""
        pairs = onprem_counts(config, max_gpus, exact)
        if not pairs:
            warnings.append(Note("onprem_no_count", {"name": config.name, "max_gpus": max_gpus}))
            continue
        rate = float(amortized_usd_per_gpu_hour(config))
        per = np.array([p[0] for p in pairs], dtype=float)
        servers = np.array([p[1] for p in pairs], dtype=float)
        frames.append(
            pd.DataFrame(
                {
                    "kind": _text(["on-prem"] * len(pairs)),
                    "offer_key": _text([f"on-prem:{i}"] * len(pairs)),
                    "provider": _text(["on-prem"] * len(pairs)),
                    "region": _text([""] * len(pairs)),
                    "instance_type": _text(
                        [f"{config.name} ({config.servers} x {config.gpus_per_server}-GPU server)"]
                        * len(pairs)
                    ),
                    "gpu_name": _text([config.gpu_name] * len(pairs)),
                    "gpu_count": per,
                    "instances": servers,
                    "total_gpus": per * servers,
                    "gpus_per_node": float(config.gpus_per_server),
                    "network_gbps": ONPREM_NETWORK_GBPS,
                    "network_basis": _text([NetworkBasis.ONPREM_ASSUMED] * len(pairs)),
                    "gpu_memory_gb": _spec_memory(pd.Series([config.gpu_name] * len(per))),
                    "usd_per_hour": rate * per,
                    "option_usd_per_hour": rate * per * servers,
                    "spot_usd_per_hour": np.nan,
                    "pricing": _text(["amortized"] * len(pairs)),
                    "price_date": _text([""] * len(pairs)),
                    "price_date_basis": _text([""] * len(pairs)),
                    "price_source": _text([source] * len(pairs)),
                    "interconnect": _text([""] * len(pairs)),
                    "network_fabric": _text([""] * len(pairs)),
                    "price_basis": _text([PriceBasis.AMORTIZED] * len(pairs)),
                    "onprem_config": _text([config.name] * len(pairs)),
                    "utilization": float(config.utilization),
                    "amortized_usd_per_gpu_hour": rate,
                }
            )
        )
    if not frames:
        return empty_options(), warnings
    return pd.concat(frames, ignore_index=True), warnings


def combine(*tables: pd.DataFrame) -> pd.DataFrame:
    """One option table with option_id, in OPTION_COLUMNS."""
    parts = [t for t in tables if not t.empty]
    frame = pd.concat(parts, ignore_index=True) if parts else empty_options()
    frame["option_id"] = np.arange(len(frame))
    # reindex, not .loc: an on-prem-only table has no cloud columns (vcpus), left missing.
    return frame.reindex(columns=list(OPTION_COLUMNS))


def empty_options() -> pd.DataFrame:
    """An option table without rows."""
    return pd.DataFrame(columns=list(OPTION_COLUMNS), dtype=object)


def no_spec_row(options: pd.DataFrame) -> np.ndarray:
    """True where the option's GPU has no row in planner/data/gpu_specs.csv."""
    return ~options["gpu_name"].isin(load_specs().index).to_numpy()


def _text(values: object) -> pd.Series:
    """Strings as an object column: row selections copy pointers, not Arrow buffers."""
    if isinstance(values, pd.Series):
        return pd.Series(values.astype(str).to_numpy(dtype=object), dtype=object)
    return pd.Series(np.asarray(values, dtype=str).astype(object), dtype=object)


def _text_at(values: pd.Series | np.ndarray, rows: np.ndarray) -> pd.Series:
    """_text(values) at the positions `rows`: each value converted once, then taken."""
    return pd.Series(_text(values).to_numpy()[rows], dtype=object)


def _same(value: str, n: int) -> pd.Series:
    """_text of `n` copies of one value: the value converted once."""
    return pd.Series(np.full(n, str(value), dtype=object), dtype=object)


def _spec_memory(gpu_names: pd.Series) -> np.ndarray:
    return gpu_names.map(load_specs()["memory_gb"]).astype(float).to_numpy()


def options_for(request: PlanRequest, offers: pd.DataFrame) -> tuple[pd.DataFrame, list[Note]]:
    """The options a request weighs: every offer x count and on-prem config x GPUs within
    request.gpu_limit (exactly request.gpu_count when given), less those without a price
    or without a spec-table row. Returns the options and notes on what was left out."""
    exact = request.gpu_count
    cloud, notes = cloud_options(offers, request.pricing, request.gpu_limit, exact)
    local, onprem_notes = onprem_options(
        request.onprem, request.gpu_limit, request.onprem_sources, exact
    )
    opts = combine(cloud, local)
    if request.gpu_count is not None:
        opts = opts.loc[opts["total_gpus"].to_numpy(float) == request.gpu_count]
    opts, no_price = drop_without(
        opts, opts["option_usd_per_hour"].isna(), "no_price", pricing=request.pricing
    )
    opts, no_spec = drop_without(opts, no_spec_row(opts), "no_spec_row")
    return opts, notes + onprem_notes + no_price + no_spec


def machine_option(gpu_name: str, gpu_count: int) -> pd.DataFrame:
    """One machine of `gpu_count` GPUs in one node, unpriced: the option a sweep run's
    preview times (planner.sweep_preview), in OPTION_COLUMNS."""
    option: dict[str, object] = {column: "" for column in OPTION_COLUMNS}
    numbers = ("network_gbps", "vcpus", "usd_per_hour", "option_usd_per_hour")
    option |= {column: np.nan for column in (*numbers, "spot_usd_per_hour", "utilization")}
    option |= {
        "option_id": 0,
        "kind": "cloud",
        "offer_key": "machine:0",
        "gpu_name": gpu_name,
        "gpu_count": float(gpu_count),
        "instances": 1.0,
        "total_gpus": float(gpu_count),
        "gpus_per_node": float(max(gpu_count, 1)),
        "network_basis": NetworkBasis.DEFAULT_ASSUMED,
        "gpu_memory_gb": _spec_memory(pd.Series([gpu_name]))[0],
        "amortized_usd_per_gpu_hour": np.nan,
    }
    return pd.DataFrame([option], columns=list(OPTION_COLUMNS))
