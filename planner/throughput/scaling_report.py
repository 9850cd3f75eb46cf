"""One GPU's scaling for a model and precision, as tables: what the Scaling page draws.

All figures come from a fitted planner.throughput.estimate.ThroughputModel; nothing here fits anew
except the level λ of each law's curve (the closed-form step of the planner's own fit).

  scaling_points        the measured / published figures, with their efficiency
  law_curves            every law the planner fits to this GPU, and which one it chose
  extrapolation         the planner's throughput at 1..1024 GPUs with its 80% band
  interconnect_assumed  the links the communication model assumes at each scale

Efficiency E(N) = X(N) / (N X(1)) (the scalability laws' definition, planner.throughput.scaling).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from planner.machines.specs import load_specs
from planner.settings import CommModel
from planner.throughput.estimate import ThroughputModel, predict_throughput
from planner.throughput.scaling import (
    LAW_CODE,
    LAWS,
    bus_bandwidth_gbs,
    effective_gpus,
    interconnect_class,
)

EXTRAPOLATION_MAX_GPUS = 1024
POINT_COLUMNS: tuple[str, ...] = (
    "total_gpus", "throughput", "throughput_low", "throughput_high", "efficiency",
    "source", "generation", "runs", "detail",
)  # fmt: skip
LAW_COLUMNS: tuple[str, ...] = (
    "law", "total_gpus", "throughput", "efficiency", "a", "b", "fit_mape", "heldout_mape",
    "chosen", "generation",
)  # fmt: skip
EXTRAPOLATION_COLUMNS: tuple[str, ...] = (
    "total_gpus", "throughput", "throughput_low", "throughput_high", "efficiency",
    "efficiency_low", "efficiency_high", "throughput_source", "beyond_node", "throughput_detail",
    "per_gpu_batch", "compute_s", "comm_s", "overhead_s", "limit_code",
)  # fmt: skip


def extrapolation_counts(
    max_gpus: int = EXTRAPOLATION_MAX_GPUS, gpus_per_node: int = 8, points: int = 64
) -> np.ndarray:
    """Whole GPU counts from 1 to `max_gpus`, spaced evenly in log, with every power of two,
    1-4 and the node boundary (gpus_per_node and one more) included."""
    spaced = np.round(np.geomspace(1, max_gpus, points))
    powers = 2.0 ** np.arange(int(np.log2(max_gpus)) + 1)
    extra = np.array([1, 2, 3, 4, gpus_per_node, gpus_per_node + 1], dtype=float)
    counts = np.unique(np.concatenate([spaced, powers, extra]))
    return counts[(counts >= 1) & (counts <= max_gpus)]


def _figures(model: ThroughputModel, gpu_name: str, model_name: str, precision: str):
    f = model.figures
    return f.loc[
        (f["gpu_name"] == gpu_name) & (f["model"] == model_name) & (f["precision"] == precision)
    ]


def scaling_points(
    model: ThroughputModel, gpu_name: str, model_name: str, precision: str
) -> pd.DataFrame:
    """The figures of this GPU (one row per generation and count), POINT_COLUMNS.

    efficiency = X(N) / (N X(1)) within the figure's generation; NaN without a 1-GPU figure.
    """
    rows = _figures(model, gpu_name, model_name, precision)
    rows = rows.sort_values(["generation", "total_gpus"])
    one = rows.loc[rows["total_gpus"] == 1].set_index("generation")["throughput"]
    x1 = rows["generation"].map(one).astype(float)
    out = rows.assign(efficiency=rows["throughput"] / (rows["total_gpus"] * x1))
    return out.loc[:, list(POINT_COLUMNS)].reset_index(drop=True)


def newest_generation(points: pd.DataFrame, generations: tuple[str, ...]) -> str:
    """The newest generation (in `generations` order) among the points; '' when none."""
    present = [g for g in generations if g in set(points["generation"])]
    return present[-1] if present else ""


def law_curves(
    model: ThroughputModel,
    gpu_name: str,
    model_name: str,
    precision: str,
    counts: np.ndarray,
) -> pd.DataFrame:
    """Every law fitted to this GPU's figures, evaluated at `counts` (LAW_COLUMNS).

    Shape parameters (a, b) and fit_mape are the planner's fit (ScalingFits.all_laws);
    heldout_mape is the law's held-out error over this model and precision, and `chosen`
    marks the law the planner uses for this GPU. Each curve's level λ is the relative-error
    least-squares level of the newest generation's figures for that shape,
    λ = Σ r / Σ r² with r = N E(N) / X (the λ step of planner.throughput.scaling.fit_law_groups).
    Empty when the GPU has figures at fewer than two counts (nothing was fitted to it).
    """
    fits = model.scaling
    interconnect = interconnect_class(pd.Series([gpu_name])).iloc[0]
    mine = fits.all_laws.loc[
        (fits.all_laws["gpu_name"] == gpu_name)
        & (fits.all_laws["model"] == model_name)
        & (fits.all_laws["precision"] == precision)
        & (fits.all_laws["interconnect"] == interconnect)
    ]
    if mine.empty:
        return pd.DataFrame(columns=list(LAW_COLUMNS))
    points = scaling_points(model, gpu_name, model_name, precision)
    generation = newest_generation(points, model.generations)
    level = points.loc[points["generation"] == generation]
    chosen = fits.groups.loc[
        (fits.groups["gpu_name"] == gpu_name)
        & (fits.groups["model"] == model_name)
        & (fits.groups["precision"] == precision),
        "law",
    ]
    pooled = fits.pooled.loc[
        (fits.pooled["model"] == model_name) & (fits.pooled["precision"] == precision)
    ].set_index("law")["heldout_mape"]
    n = np.asarray(counts, dtype=float)
    frames = []
    for row in mine.set_index("law").reindex(list(LAWS)).dropna(subset=["a"]).itertuples():
        code = LAW_CODE[str(row.Index)]
        r = effective_gpus(level["total_gpus"], code, row.a, row.b) / level["throughput"]
        lam = float(r.sum() / (r**2).sum())
        nx = effective_gpus(n, code, row.a, row.b)
        frames.append(
            pd.DataFrame(
                {
                    "law": row.Index,
                    "total_gpus": n,
                    "throughput": lam * nx,
                    "efficiency": nx / n,
                    "a": row.a,
                    "b": row.b,
                    "fit_mape": row.fit_mape,
                    "heldout_mape": pooled.get(row.Index, np.nan),
                    "chosen": bool(len(chosen)) and row.Index == chosen.iloc[0],
                    "generation": generation,
                }
            )
        )
    return pd.concat(frames, ignore_index=True).loc[:, list(LAW_COLUMNS)]


def with_comm(model: ThroughputModel, comm: CommModel) -> ThroughputModel:
    """The same fitted model under other communication assumptions (no refit needed)."""
    return replace(model, comm=comm)


def extrapolation(
    model: ThroughputModel,
    gpu_name: str,
    model_name: str,
    precision: str,
    counts: np.ndarray,
    comm: CommModel | None = None,
    global_batch: float | None = None,
) -> pd.DataFrame:
    """The planner's throughput for this GPU at `counts` (EXTRAPOLATION_COLUMNS).

    `global_batch` caps the samples per step (None: no cap); per_gpu_batch, compute_s,
    comm_s (exposed) and overhead_s are the step time's parts (planner.throughput.
    step_model), NaN for models without a size for the step model.

    Same engine as every plan row (planner.throughput.estimate.predict_throughput) under `comm`
    (default the model's): the fitted law within the data and the node, the ring
    all-reduce model across nodes (`beyond_node`), band = the method's 80% band.
    Efficiency is relative to the curve's own 1-GPU value; its band's top is at most
    linear scaling (efficiency 1, or the law's own figure where higher).
    """
    comm = comm or model.comm
    n = np.asarray(counts, dtype=float)
    queries = pd.DataFrame(
        {
            "gpu_name": gpu_name,
            "total_gpus": np.concatenate([[1.0], n]),
            "model": model_name,
            "precision": precision,
            "gpus_per_node": float(comm.gpus_per_node),
            "global_batch": np.nan if global_batch is None else float(global_batch),
        }
    )
    predicted = predict_throughput(with_comm(model, comm), queries, numbers=True)
    x1 = float(predicted["throughput"].iloc[0])
    out = predicted.iloc[1:].reset_index(drop=True)
    per_gpu = n * x1
    out.insert(0, "total_gpus", n)
    out["efficiency"] = out["throughput"] / per_gpu
    out["efficiency_low"] = out["throughput_low"] / per_gpu
    # The band's top cannot promise more than the law allows: linear scaling (or the law's
    # own efficiency where it is above 1); the throughput band of a many-GPU count divided
    # by one GPU's point figure read "86%-117%".
    ceiling = np.maximum(out["efficiency"].to_numpy(dtype=float), 1.0)
    out["efficiency_high"] = np.minimum(out["throughput_high"] / per_gpu, ceiling)
    return out.loc[:, list(EXTRAPOLATION_COLUMNS)]


def interconnect_assumed(gpu_name: str, comm: CommModel) -> pd.DataFrame:
    """The link a ring all-reduce crosses at each scale, and its bus bandwidth.

    Columns: scope, total_gpus (a representative count), link, bus_gbs (GB/s per GPU after
    comm.achievable_fraction; planner.throughput.scaling.bus_bandwidth_gbs).
    """
    specs = load_specs()
    per_node = int(comm.gpus_per_node)
    kind = interconnect_class(pd.Series([gpu_name])).iloc[0]
    spec = specs.loc[gpu_name] if gpu_name in specs.index else None
    nvlink = float(spec["nvlink_gbs"]) / 2 if spec is not None else np.nan
    gen = spec["pcie_gen"] if spec is not None else np.nan
    pcie = f"PCIe gen {int(gen)} x16" if pd.notna(gen) else "PCIe gen 4 x16 (assumed)"
    nv_text = f"NVLink ({nvlink:g} GB/s per direction)" if np.isfinite(nvlink) else "NVLink"
    scopes = []
    if per_node >= 2:
        pair = nv_text if kind in ("nvlink", "nvlink-bridge") else pcie
        scopes.append(("2 GPUs", 2, pair + (" bridge" if kind == "nvlink-bridge" else "")))
    if per_node >= 3:
        scopes.append(
            (
                f"3-{per_node} GPUs in a node",
                min(per_node, 3),
                nv_text if kind == "nvlink" else pcie,
            )
        )
    scopes.append(
        (
            f"more than {per_node} GPU{'' if per_node == 1 else 's'} (across nodes)",
            per_node + 1,
            f"network {comm.network_gbps_per_node:g} Gb/s per node "
            f"({comm.network_gbps_per_node / 8:g} GB/s), or the node's link if slower",
        )
    )
    counts = np.array([s[1] for s in scopes], dtype=float)
    bus = bus_bandwidth_gbs(pd.Series([gpu_name] * len(scopes)), counts, comm)
    return pd.DataFrame(
        {
            "scope": [s[0] for s in scopes],
            "total_gpus": counts,
            "link": [s[2] for s in scopes],
            "bus_gbs": bus,
        }
    )


def model_choices(reference: pd.DataFrame) -> pd.DataFrame:
    """(model, precision) pairs with figures, and how many GPUs and counts each has.

    `reference` is planner.throughput.reference_from_results' table. Columns: model,
    precision, gpus, max_count; sorted by model, then most GPUs first.
    """
    table = (
        reference.groupby(["model", "precision"])
        .agg(gpus=("gpu_name", "nunique"), max_count=("total_gpus", "max"))
        .reset_index()
    )
    return table.sort_values(["model", "gpus"], ascending=[True, False]).reset_index(drop=True)


def gpus_with_figures(reference: pd.DataFrame, model_name: str, precision: str) -> pd.DataFrame:
    """GPUs with figures for a model and precision: gpu_name, counts (distinct), max_count;
    most counts first, then name."""
    rows = reference.loc[(reference["model"] == model_name) & (reference["precision"] == precision)]
    table = (
        rows.groupby("gpu_name")
        .agg(counts=("total_gpus", "nunique"), max_count=("total_gpus", "max"))
        .reset_index()
    )
    return table.sort_values(["counts", "gpu_name"], ascending=[False, True]).reset_index(drop=True)


def throughput_unit(results: pd.DataFrame, model_name: str) -> str:
    """The unit figures of a benchmark model are in (images/s, sequences/s, tokens/s, ...)."""
    from planner.throughput.offers import _result_model

    pairs = results.loc[:, ["workload", "model_size", "throughput_unit"]].fillna("")
    pairs = pairs.drop_duplicates()
    names = [
        _result_model(w, s) for w, s in zip(pairs["workload"], pairs["model_size"], strict=True)
    ]
    units = pairs.loc[[n == model_name for n in names], "throughput_unit"]
    return str(units.iloc[0]) if len(units) else "samples/s"
