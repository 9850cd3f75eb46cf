"""Multi-GPU scaling: scalability laws fitted to measured points, and a data-parallel
communication model for counts and node sizes beyond the data.

Laws (X(N): throughput on N GPUs; λ: throughput of one GPU; E(N) = X(N) / (N λ)):

  linear  X(N) = λN                                   no loss (the naive baseline)
  amdahl  X(N) = λN / (1 + (1 − p)(N − 1))            Amdahl 1967: speedup 1 / ((1 − p) + p/N)
  usl     X(N) = λN / (1 + σ(N − 1) + κN(N − 1))      Gunther 1993, 2007: Universal Scalability Law
  ring    X(N) = λN / (1 + θ · 2(N − 1)/N)            the ring all-reduce cost shape

`ring` is the communication model below with its one unknown fitted: a ring all-reduce
moves 2(N − 1)/N × the gradient bytes per GPU (Patarasuk & Yuan 2009; Thakur et al. 2005),
so the exposed communication time per step, relative to compute, is θ · 2(N − 1)/N. It
saturates: most of the loss comes from 1 → 2 GPUs, which is what the published 1-4 GPU
data shows (Amdahl and USL keep losing at every doubling).

All four share one form, E(N) = 1 / (1 + a·f(N) + b·N(N − 1)) with f(N) = N − 1 (amdahl:
a = 1 − p; usl: a = σ, b = κ) or f(N) = 2(N − 1)/N (ring: a = θ), so they evaluate as arrays
(`effective_gpus`). Fits are bounded least squares on relative error (scipy), with each
GPU's parameters shrunk toward the median over GPUs of the same model and precision.

Fitted tables (columns, one row per group):

  scaling fits   gpu_name, model, precision, interconnect, law, a, b, n_points, counts,
                 max_count, fit_mape (in-sample relative error)
  pooled laws    model, precision, law, a, b, groups, heldout_groups, heldout_mape,
                 q_low, q_high (log-residual quantiles per doubling), chosen (bool)

`heldout_mape` is the error of predicting each group's largest count from its smaller
ones (all laws side by side); the law with the lowest one is chosen per model and
precision (globally when fewer than MIN_HELDOUT_GROUPS groups can be held out). q_low and
q_high are the 10% and 90% quantiles of log(predicted / truth) per doubling of the count,
shrunk halfway toward the quantiles over all groups: an 80% band.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from planner.machines.specs import load_specs
from planner.settings import CommModel

LAWS: tuple[str, ...] = ("linear", "amdahl", "usl", "ring")
LAW_CODE: dict[str, int] = {law: i for i, law in enumerate(LAWS)}
GROUP_KEYS = ["gpu_name", "model", "precision", "interconnect"]
POOL_KEYS = ["model", "precision"]
MIN_HELDOUT_GROUPS = 8
# Used when no group has three counts to hold one out: the ring law had the lowest
# held-out error on the bundled Lambda data (tools/evaluate_estimator.py).
DEFAULT_LAW = "ring"
# Shrinkage: one pseudo-point (relative-error units) pulling a GPU's law parameters
# toward the median over GPUs of the same model and precision.
PRIOR_WEIGHT = 1.0
BAND_QUANTILES = (0.1, 0.9)
# Bounds of the law parameters (a: σ, 1 − p or θ; b: κ).
A_MAX = {"amdahl": 1.0, "usl": 1.0, "ring": 5.0}
B_MAX = 0.5

# --------------------------------------------------------------------------- the laws


def effective_gpus(n: Any, law_code: Any, a: Any, b: Any) -> np.ndarray:
    """N · E(N) for arrays of counts and law parameters (broadcasting).

    E(N) = 1 / (1 + a f(N) + b N(N − 1)), f(N) = 2(N − 1)/N for the ring law, N − 1 for
    Amdahl (a = 1 − p; Amdahl 1967) and the USL (a = σ, b = κ; Gunther 1993, 2007);
    a = b = 0 is linear. Fractional counts (a GPU slice) scale linearly below one GPU.
    """
    n = np.asarray(n, dtype=float)
    code = np.asarray(law_code)
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    m = np.maximum(n, 1.0)
    f = np.where(code == LAW_CODE["ring"], 2.0 * (m - 1.0) / m, m - 1.0)
    f = np.where(code == LAW_CODE["linear"], 0.0, f)
    b = np.where(code == LAW_CODE["usl"], b, 0.0)
    return n / (1.0 + a * f + b * m * (m - 1.0))


def efficiency(n: Any, law: str, a: float = 0.0, b: float = 0.0) -> np.ndarray:
    """Scaling efficiency E(N) = X(N) / (N X(1)) of one law, for an array of counts."""
    n = np.asarray(n, dtype=float)
    return effective_gpus(n, LAW_CODE[law], a, b) / n


def usl_throughput(n: Any, lam: float, sigma: float, kappa: float) -> np.ndarray:
    """X(N) = λN / (1 + σ(N − 1) + κN(N − 1)) (Gunther 1993; Guerrilla Capacity Planning 2007)."""
    return lam * effective_gpus(n, LAW_CODE["usl"], sigma, kappa)


def amdahl_throughput(n: Any, lam: float, p: float) -> np.ndarray:
    """X(N) = λ / ((1 − p) + p/N): Amdahl 1967, p the parallel fraction."""
    return lam * effective_gpus(n, LAW_CODE["amdahl"], 1.0 - p, 0.0)


def ring_throughput(n: Any, lam: float, theta: float) -> np.ndarray:
    """X(N) = λN / (1 + θ 2(N − 1)/N): exposed ring all-reduce time θ·2(N−1)/N per step
    relative to compute (ring volume 2(N − 1)/N: Patarasuk & Yuan 2009)."""
    return lam * effective_gpus(n, LAW_CODE["ring"], theta, 0.0)


# --------------------------------------------------------------------------- fitting


def fit_law(
    counts: np.ndarray,
    throughputs: np.ndarray,
    law: str,
    levels: np.ndarray | None = None,
    prior: tuple[float, float] = (0.0, 0.0),
    prior_weight: float = 0.0,
) -> tuple[float, float, np.ndarray]:
    """Fit one law to one group's points; returns (a, b, λ per level). See fit_law_groups."""
    counts = np.asarray(counts, dtype=float)
    levels = np.zeros(len(counts), dtype=int) if levels is None else np.asarray(levels, int)
    a, b, lam = fit_law_groups(
        counts,
        np.asarray(throughputs, dtype=float),
        np.zeros(len(counts), dtype=int),
        levels,
        law,
        np.array([prior[0]]),
        np.array([prior[1]]),
        prior_weight,
    )
    return float(a[0]), float(b[0]), lam


def fit_law_groups(
    counts: np.ndarray,
    throughputs: np.ndarray,
    group: np.ndarray,
    level: np.ndarray,
    law: str,
    prior_a: np.ndarray,
    prior_b: np.ndarray,
    prior_weight: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fit one law to many groups at once: bounded least squares on relative error (scipy).

    For each group g (points i with group[i] == g) minimises
      Σ_i (λ_level(i) · N_i E(N_i) / X_i − 1)² + w [(a_g − a0_g)² + (2 (b_g − b0_g))²]
    over a_g, b_g (the law's shape) and one level λ per `level` value: generations of a
    GPU share the shape, not the level. The groups are independent, so they are stacked
    into one problem with a block-diagonal Jacobian (scipy least_squares, trf, sparse).
    Returns (a per group, b per group, λ per level).
    """
    from scipy.optimize import least_squares

    counts = np.asarray(counts, dtype=float)
    x = np.asarray(throughputs, dtype=float)
    group = np.asarray(group, dtype=int)
    level = np.asarray(level, dtype=int)
    n_groups = int(group.max()) + 1
    n_levels = int(level.max()) + 1
    if law == "linear":
        ratio = counts / x
        lam = np.bincount(level, ratio, n_levels) / np.bincount(level, ratio**2, n_levels)
        return np.zeros(n_groups), np.zeros(n_groups), lam
    weight = np.sqrt(prior_weight)
    problem = _LawProblem(
        counts, x, group, level, law, n_groups, n_levels, prior_a, prior_b, weight
    )
    start, lower, upper = problem.start_and_bounds()
    solution = least_squares(
        problem.residuals,
        start,
        jac=problem.jacobian,
        bounds=(lower, upper),
        method="trf",
        tr_solver="lsmr",
        x_scale="jac",
        ftol=1e-5,
        xtol=1e-5,
    )
    a, b, log_lam = problem.unpack(solution.x)
    return a.copy(), b.copy(), np.exp(log_lam)


class _LawProblem:
    """fit_law_groups' least-squares problem: parameters θ = (a per group, b per group for
    USL, log λ per level), residuals and their sparse Jacobian, start and bounds."""

    def __init__(
        self,
        counts: np.ndarray,
        x: np.ndarray,
        group: np.ndarray,
        level: np.ndarray,
        law: str,
        n_groups: int,
        n_levels: int,
        prior_a: np.ndarray,
        prior_b: np.ndarray,
        weight: float,
    ) -> None:
        self.counts, self.x, self.group, self.level, self.law = counts, x, group, level, law
        self.n_groups, self.n_levels, self.weight = n_groups, n_levels, weight
        self.code = LAW_CODE[law]
        self.usl = law == "usl"
        self.a_max = A_MAX[law]
        self.a0 = np.clip(np.broadcast_to(prior_a, n_groups).astype(float), 0.0, self.a_max)
        b_max = B_MAX if self.usl else 0.0
        self.b0 = np.clip(np.broadcast_to(prior_b, n_groups).astype(float), 0.0, b_max)
        self.n_b = n_groups if self.usl else 0
        self.rows = np.arange(len(x))

    def unpack(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(a per group, b per group, log λ per level) from θ."""
        g, n_b = self.n_groups, self.n_b
        a = theta[:g]
        b = theta[g : g + n_b] if self.usl else np.zeros(g)
        return a, b, theta[g + n_b :]

    def residuals(self, theta: np.ndarray) -> np.ndarray:
        """λ N E(N) / X − 1 per point, then the prior's penalties."""
        a, b, log_lam = self.unpack(theta)
        g = self.group
        effective = effective_gpus(self.counts, self.code, a[g], b[g])
        fit = np.exp(log_lam[self.level]) * effective / self.x - 1
        parts = [fit, self.weight * (a - self.a0)]
        if self.usl:
            parts.append(2.0 * self.weight * (b - self.b0))
        return np.concatenate(parts)

    def jacobian(self, theta: np.ndarray) -> Any:
        """∂residuals/∂θ, block-diagonal by group (scipy.sparse CSR)."""
        from scipy.sparse import coo_matrix, hstack, identity, vstack

        a, b, log_lam = self.unpack(theta)
        n_points, g, rows = len(self.x), self.group, self.rows
        m = np.maximum(self.counts, 1.0)
        f = 2.0 * (m - 1.0) / m if self.law == "ring" else m - 1.0
        denom = 1.0 + a[g] * f + b[g] * m * (m - 1.0)
        value = np.exp(log_lam[self.level]) * self.counts / denom / self.x
        blocks = [coo_matrix((-value * f / denom, (rows, g)), shape=(n_points, self.n_groups))]
        if self.usl:
            d_b = -value * m * (m - 1.0) / denom
            blocks.append(coo_matrix((d_b, (rows, g)), shape=(n_points, self.n_b)))
        blocks.append(coo_matrix((value, (rows, self.level)), shape=(n_points, self.n_levels)))
        w, n_b, n_groups, n_levels = self.weight, self.n_b, self.n_groups, self.n_levels
        pen = [hstack([w * identity(n_groups), coo_matrix((n_groups, n_b + n_levels))])]
        if self.usl:
            zeros_a, zeros_l = coo_matrix((n_b, n_groups)), coo_matrix((n_b, n_levels))
            pen.append(hstack([zeros_a, 2.0 * w * identity(n_b), zeros_l]))
        return vstack([hstack(blocks), *pen]).tocsr()

    def start_and_bounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """θ at the prior with each level's median λ, and θ's bounds."""
        g, n_b, n_levels = self.n_groups, self.n_b, self.n_levels
        base = self.x / effective_gpus(
            self.counts, self.code, self.a0[self.group], self.b0[self.group]
        )
        start_lam = np.log(
            np.array([np.median(base[self.level == i]) for i in range(n_levels)], dtype=float)
        )
        start = np.concatenate([self.a0, self.b0[:n_b], start_lam])
        lower = np.concatenate([np.zeros(g + n_b), np.full(n_levels, -np.inf)])
        upper = np.concatenate(
            [np.full(g, self.a_max), np.full(n_b, B_MAX), np.full(n_levels, np.inf)]
        )
        return np.clip(start, lower, upper), lower, upper


def _group_points(points: pd.DataFrame) -> pd.DataFrame:
    """Points of groups with at least two distinct counts, with integer group/level ids."""
    n_counts = points.groupby(GROUP_KEYS)["total_gpus"].transform("nunique")
    kept = points.loc[n_counts >= 2].sort_values([*GROUP_KEYS, "generation", "total_gpus"])
    kept = kept.reset_index(drop=True)
    kept["_group"] = kept.groupby(GROUP_KEYS, sort=False).ngroup()
    kept["_level"] = kept.groupby([*GROUP_KEYS, "generation"], sort=False).ngroup()
    return kept


def _fit_groups(
    kept: pd.DataFrame,
    laws: tuple[str, ...],
    priors: dict[tuple[str, str, str], tuple[float, float]] | None,
) -> pd.DataFrame:
    columns = [*GROUP_KEYS, "law", "a", "b", "n_points", "counts", "max_count", "fit_mape"]
    if kept.empty:
        return pd.DataFrame(columns=columns)
    info = kept.groupby("_group", sort=True).agg(
        **{k: (k, "first") for k in GROUP_KEYS},
        n_points=("total_gpus", "size"),
        counts=("total_gpus", lambda c: ",".join(f"{v:g}" for v in sorted(set(c)))),
        max_count=("total_gpus", "max"),
    )
    counts = kept["total_gpus"].to_numpy(float)
    x = kept["throughput"].to_numpy(float)
    group = kept["_group"].to_numpy()
    level = kept["_level"].to_numpy()
    tables = []
    for law in laws:
        weight = 0.0
        prior_a = np.zeros(len(info))
        prior_b = np.zeros(len(info))
        if priors is not None:
            weight = PRIOR_WEIGHT
            fallback = priors.get(("", "", law), (0.0, 0.0))
            pairs = [
                priors.get((m, p, law), fallback)
                for m, p in zip(info["model"], info["precision"], strict=True)
            ]
            prior_a = np.array([pair[0] for pair in pairs])
            prior_b = np.array([pair[1] for pair in pairs])
        a, b, lam = fit_law_groups(counts, x, group, level, law, prior_a, prior_b, weight)
        fitted = lam[level] * effective_gpus(counts, LAW_CODE[law], a[group], b[group])
        error = np.bincount(group, np.abs(fitted / x - 1.0), len(info)) / info["n_points"]
        table = info.copy()
        table["law"] = law
        table["a"] = a
        table["b"] = b
        table["fit_mape"] = error.to_numpy()
        tables.append(table)
    return pd.concat(tables, ignore_index=True).loc[:, columns]


def _priors(raw: pd.DataFrame) -> dict[tuple[str, str, str], tuple[float, float]]:
    """Median law parameters per (model, precision, law), and over everything ('', '')."""
    priors: dict[tuple[str, str, str], tuple[float, float]] = {}
    if raw.empty:
        return priors
    for (model, precision, law), rows in raw.groupby([*POOL_KEYS, "law"]):
        priors[(model, precision, law)] = (float(rows["a"].median()), float(rows["b"].median()))
    for law, rows in raw.groupby("law"):
        priors[("", "", str(law))] = (float(rows["a"].median()), float(rows["b"].median()))
    return priors


def _fit_all(points: pd.DataFrame, laws: tuple[str, ...]) -> tuple[pd.DataFrame, dict]:
    kept = _group_points(points)
    priors = _priors(_fit_groups(kept, laws, None))
    return _fit_groups(kept, laws, priors), priors


def predict_from_anchor(
    n: Any, anchor_n: Any, anchor_x: Any, law_code: Any, a: Any, b: Any
) -> np.ndarray:
    """X(N) = X(anchor) · N E(N) / (anchor E(anchor)): a law's shape through a known point."""
    return (
        np.asarray(anchor_x, dtype=float)
        * effective_gpus(n, law_code, a, b)
        / effective_gpus(anchor_n, law_code, a, b)
    )


def heldout_errors(points: pd.DataFrame, laws: tuple[str, ...] = LAWS) -> pd.DataFrame:
    """Relative error of predicting each group's largest count from its smaller counts.

    Every group with three or more counts loses its largest count; the laws and their
    priors are refitted on what is left (so no group sees any held-out point), and each
    held-out point is predicted from the largest remaining count of the same generation.
    Columns: GROUP_KEYS, generation, law, count, anchor_count, truth, predicted,
    rel_error (predicted / truth − 1), doublings (log2 count / anchor_count).
    """
    n_counts = points.groupby(GROUP_KEYS)["total_gpus"].transform("nunique")
    top = points.groupby(GROUP_KEYS)["total_gpus"].transform("max")
    held = (n_counts >= 3) & (points["total_gpus"] == top)
    columns = [*GROUP_KEYS, "generation", "law", "count", "anchor_count", "truth", "predicted"]
    if not held.any():
        return pd.DataFrame(columns=[*columns, "rel_error", "doublings"])
    train = points.loc[~held]
    fits, _ = _fit_all(train, laws)
    anchors = train.sort_values("total_gpus").drop_duplicates(
        [*GROUP_KEYS, "generation"], keep="last"
    )
    targets = points.loc[held].merge(
        anchors.rename(columns={"total_gpus": "anchor_count", "throughput": "anchor_x"}),
        on=[*GROUP_KEYS, "generation"],
        how="inner",
    )
    out = targets.merge(fits, on=GROUP_KEYS, how="inner")
    out["predicted"] = predict_from_anchor(
        out["total_gpus"],
        out["anchor_count"],
        out["anchor_x"],
        out["law"].map(LAW_CODE),
        out["a"],
        out["b"],
    )
    out = out.rename(columns={"total_gpus": "count", "throughput": "truth"}).loc[:, columns]
    out["rel_error"] = out["predicted"] / out["truth"] - 1.0
    out["doublings"] = np.log2(out["count"] / out["anchor_count"])
    return out.reset_index(drop=True)


def _law_summary(errors: pd.DataFrame) -> dict[str, float]:
    log_per_doubling = np.log1p(errors["rel_error"]) / errors["doublings"].clip(lower=0.5)
    q_low, q_high = np.quantile(log_per_doubling, BAND_QUANTILES)
    return {
        "heldout_groups": float(len(errors)),
        "heldout_mape": float(errors["rel_error"].abs().mean()),
        "q_low": float(min(q_low, 0.0)),
        "q_high": float(max(q_high, 0.0)),
    }


@dataclass(frozen=True)
class ScalingFits:
    """Fitted scaling laws: per group, pooled per (model, precision), and the choice.

    `groups`: GROUP_KEYS + law (the chosen one), a, b, n_points, counts, max_count,
    fit_mape, heldout_mape, q_low, q_high. `pooled`: POOL_KEYS + law, a, b, groups,
    heldout_groups, heldout_mape, q_low, q_high, chosen — every law, so a report can
    show them side by side. `heldout`: heldout_errors() of the fitted points.
    """

    groups: pd.DataFrame
    pooled: pd.DataFrame
    heldout: pd.DataFrame
    all_laws: pd.DataFrame = field(repr=False)
    global_laws: pd.DataFrame = field(repr=False, default_factory=pd.DataFrame)

    @property
    def global_chosen(self) -> dict[str, Any]:
        """The law chosen over all groups: law, a, b (median parameters), heldout_mape,
        q_low, q_high; used where a model and precision has no fitted group."""
        if self.global_laws.empty:
            return {
                "law": DEFAULT_LAW,
                "a": 0.0,
                "b": 0.0,
                "heldout_mape": np.nan,
                "q_low": -0.1,
                "q_high": 0.1,
            }
        return self.global_laws.loc[self.global_laws["chosen"]].iloc[0].to_dict()

    def chosen_pooled(self) -> pd.DataFrame:
        """One row per (model, precision) with the chosen law and its pooled parameters."""
        return self.pooled.loc[self.pooled["chosen"]].reset_index(drop=True)


def fit_scaling(points: pd.DataFrame, laws: tuple[str, ...] = LAWS) -> ScalingFits:
    """Fit every law to every group, choose per (model, precision) by held-out error.

    `points`: one row per measured point: gpu_name, model, precision, interconnect,
    generation, total_gpus, throughput (a median over runs). Groups are GROUP_KEYS;
    generations of a group share a law's shape with one level each.
    """
    fits, priors = _fit_all(points, laws)
    heldout = heldout_errors(points, laws)
    global_summary = {
        law: _law_summary(rows) for law, rows in heldout.groupby("law") if len(rows) > 0
    }
    global_law = (
        min(global_summary, key=lambda law: global_summary[law]["heldout_mape"])
        if global_summary
        else DEFAULT_LAW
    )
    pairs = points.loc[:, POOL_KEYS].drop_duplicates().itertuples(index=False)
    pooled_rows = []
    for model, precision in pairs:
        errors = heldout.loc[(heldout["model"] == model) & (heldout["precision"] == precision)]
        groups_here = fits.loc[(fits["model"] == model) & (fits["precision"] == precision)]
        per_law = {law: _law_summary(e) for law, e in errors.groupby("law")}
        enough = len(errors) >= MIN_HELDOUT_GROUPS * len(laws)
        for law, stats_here in per_law.items():
            # Quantiles of ~15 residuals are noisy: shrink halfway to the global ones.
            for column in ("q_low", "q_high"):
                stats_here[column] = (stats_here[column] + global_summary[law][column]) / 2
        chosen = min(per_law, key=lambda law: per_law[law]["heldout_mape"]) if enough else None
        for law in laws:
            a, b = priors.get((model, precision, law), priors.get(("", "", law), (0.0, 0.0)))
            stats = per_law.get(law) if enough else global_summary.get(law)
            stats = stats or {
                "heldout_groups": 0.0,
                "heldout_mape": np.nan,
                "q_low": -0.1,
                "q_high": 0.1,
            }
            pooled_rows.append(
                {
                    "model": model,
                    "precision": precision,
                    "law": law,
                    "a": a,
                    "b": b,
                    "groups": int((groups_here["law"] == law).sum()),
                    **stats,
                    "chosen": law == (chosen or global_law),
                }
            )
    pooled = pd.DataFrame(
        pooled_rows,
        columns=[
            *POOL_KEYS,
            "law",
            "a",
            "b",
            "groups",
            "heldout_groups",
            "heldout_mape",
            "q_low",
            "q_high",
            "chosen",
        ],
    )
    choice = pooled.loc[pooled["chosen"], [*POOL_KEYS, "law", "heldout_mape", "q_low", "q_high"]]
    groups = fits.merge(choice, on=[*POOL_KEYS, "law"], how="inner")
    global_rows = []
    for law in laws:
        a, b = priors.get(("", "", law), (0.0, 0.0))
        stats = global_summary.get(law) or {
            "heldout_groups": 0.0,
            "heldout_mape": np.nan,
            "q_low": -0.1,
            "q_high": 0.1,
        }
        global_rows.append({"law": law, "a": a, "b": b, **stats, "chosen": law == global_law})
    return ScalingFits(
        groups.reset_index(drop=True), pooled, heldout, fits, pd.DataFrame(global_rows)
    )


# ------------------------------------------------------------- communication model

# PCIe x16 bandwidth per direction in GB/s (PCI-SIG: 8, 16, 32, 64 GT/s per lane with
# 128b/130b encoding, x16; gen 6 uses FLIT mode at 64 GT/s PAM4).
PCIE_X16_GBS: dict[int, float] = {3: 15.75, 4: 31.5, 5: 63.0, 6: 121.0}


def ring_allreduce_bytes(n: Any, message_bytes: Any) -> np.ndarray:
    """Bytes each GPU sends (and receives) in a ring all-reduce: 2(N − 1)/N × message.

    Reduce-scatter then all-gather, N − 1 steps each of message/N bytes (Patarasuk &
    Yuan 2009, "Bandwidth optimal all-reduce algorithms"; Thakur et al. 2005).
    """
    n = np.asarray(n, dtype=float)
    return 2.0 * (n - 1.0) / n * np.asarray(message_bytes, dtype=float)


def ring_allreduce_seconds(n: Any, message_bytes: Any, bus_gbs: Any, latency_s: float) -> Any:
    """T = 2(N − 1)α + 2(N − 1)/N · bytes / bandwidth (Thakur et al. 2005, ring all-reduce)."""
    n = np.asarray(n, dtype=float)
    volume = ring_allreduce_bytes(np.maximum(n, 1.0), message_bytes)
    steps = 2.0 * np.maximum(n - 1.0, 0.0)
    return steps * latency_s + volume / (np.asarray(bus_gbs, dtype=float) * 1e9)


def interconnect_class(gpu_names: pd.Series) -> pd.Series:
    """nvlink (NVLink/NVSwitch), nvlink-bridge (pairs) or pcie, from the spec table
    (its nvlink_bridge flag: NVLink only between bridged cards)."""
    specs = load_specs()
    nvlink = gpu_names.map(specs["nvlink_gbs"]).astype(float)
    bridge = gpu_names.map(specs["nvlink_bridge"]).eq(True)
    out = np.where(nvlink.notna() & ~bridge, "nvlink", np.where(bridge, "nvlink-bridge", "pcie"))
    return pd.Series(out, index=gpu_names.index)


def bus_bandwidth_gbs(
    gpu_names: pd.Series,
    n: Any,
    comm: CommModel,
    gpus_per_node: Any = None,
    network_gbps: Any = None,
) -> np.ndarray:
    """Ring bus bandwidth per GPU in GB/s for N GPUs of a kind.

    Within a node: NVLink per direction (spec nvlink_gbs is bidirectional, so half);
    an NVLink bridge joins pairs only, so more than 2 GPUs go over PCIe (x16 by
    pcie_gen; gen 4 when the spec has none). Across nodes the ring crosses each node's
    network: min(within-node, network Gb/s / 8), the network per row when
    `network_gbps` is given (planner.machines.network), else comm.network_gbps_per_node. Times
    achievable_fraction.
    """
    specs = load_specs()
    n = np.asarray(n, dtype=float)
    kind = interconnect_class(gpu_names).to_numpy()
    nvlink = gpu_names.map(specs["nvlink_gbs"]).astype(float).to_numpy() / 2.0
    gen = gpu_names.map(specs["pcie_gen"]).astype(float).fillna(4.0).to_numpy()
    pcie = np.select([gen <= 3, gen == 4, gen == 5], [15.75, 31.5, 63.0], PCIE_X16_GBS[6])
    intra = np.where(
        (kind == "nvlink") | ((kind == "nvlink-bridge") & (n <= 2)), np.nan_to_num(nvlink), pcie
    )
    intra = np.where(intra > 0, intra, pcie)
    network = (
        comm.network_gbps_per_node if network_gbps is None else np.asarray(network_gbps, float)
    ) / 8.0
    per_node = comm.gpus_per_node if gpus_per_node is None else np.asarray(gpus_per_node)
    bus = np.where(n > per_node, np.minimum(intra, network), intra)
    return bus * comm.achievable_fraction


def comm_efficiency(
    n: Any,
    compute_s: Any,
    gradient_bytes: Any,
    bus_gbs: Any,
    comm: CommModel,
    global_batch: Any = False,
) -> np.ndarray:
    """E(N) = t_compute / (t_compute + exposed comm) for data-parallel training.

    Exposed comm = max(0, T_ring(N) − overlap · t_compute) with T_ring the ring all-reduce
    time of the gradients (Thakur et al. 2005); t_compute is one GPU's step time
    (per-GPU batch / 1-GPU throughput), divided by N when the batch is global (strong
    scaling: NCF, Transformer-XL in Lambda's configs).
    """
    n = np.asarray(n, dtype=float)
    m = np.maximum(n, 1.0)
    compute = np.asarray(compute_s, dtype=float) / np.where(global_batch, m, 1.0)
    t_comm = ring_allreduce_seconds(m, gradient_bytes, bus_gbs, comm.latency_s)
    exposed = np.maximum(0.0, t_comm - comm.overlap * compute)
    return compute / (compute + exposed)


# Gradient bytes per parameter: PyTorch AMP (autocast) keeps fp32 parameters, so DDP
# all-reduces fp32 gradients at every precision used here (PyTorch AMP docs,
# torch.amp: "autocast ... parameters stay float32"; Micikevicius et al. 2018, fp32
# master weights).
GRADIENT_BYTES_PER_PARAM: dict[str, float] = {
    "fp32": 4.0,
    "tf32": 4.0,
    "fp16": 4.0,
    "fp16_amp": 4.0,
    "bf16": 4.0,
}


@dataclass(frozen=True)
class DataParallelModel:
    """What the communication model needs of a benchmark model (approximate figures).

    params: trainable parameters; step_units_per_gpu: throughput units one GPU processes
    per step at one GPU (per-GPU batch × units per sample); global_batch: the batch is
    split across GPUs (strong scaling); kernels_per_step: CUDA kernels one training step
    launches in PyTorch eager mode (forward ≈ one per layer op, backward ≈ 2 ×, plus AMP
    casts and the optimizer; counted from the architectures, approximate to ±50%), for
    the per-step floor of planner.throughput.step_model.
    """

    params: float
    step_units_per_gpu: float
    global_batch: bool = False
    source: str = ""
    kernels_per_step: float = 1000.0


# Per-GPU batches are the medians of batch_size_per_gpu in Lambda's 1-GPU fp16 runs
# (reference/benchmarks); units per sample are approximate and only matter where no
# measured scaling exists.
DATA_PARALLEL_MODELS: dict[str, DataParallelModel] = {
    "resnet50": DataParallelModel(
        25.6e6, 1280, source="He et al. 2016; 1280 images", kernels_per_step=550
    ),
    "ssd": DataParallelModel(
        22e6, 448, source="SSD300, ResNet-50 to conv4 (approx.); 448 images", kernels_per_step=600
    ),
    "maskrcnn": DataParallelModel(
        44.2e6, 16, source="Mask R-CNN R50-FPN; 16 images", kernels_per_step=3000
    ),
    "bert_base_squad": DataParallelModel(
        110e6, 320, source="Devlin et al. 2019; 320 sequences", kernels_per_step=1100
    ),
    "bert_large_squad": DataParallelModel(
        340e6, 112, source="Devlin et al. 2019; 112 sequences", kernels_per_step=2200
    ),
    "gnmt": DataParallelModel(
        160e6, 1520 * 50, source="GNMT v2 (approx.); 1520 x ~50 tokens", kernels_per_step=1500
    ),
    "ncf": DataParallelModel(
        31.8e6, 1e7, True, "NeuMF on ML-20m (approx.); global 1e7 samples", kernels_per_step=60
    ),
    "transformerxl_base": DataParallelModel(
        151e6, 40 * 192, True, "Dai et al. 2019; global 40 x 192 tokens", kernels_per_step=1500
    ),
    "transformerxl_large": DataParallelModel(
        257e6, 24 * 384, True, "Dai et al. 2019; global 24 x 384 tokens", kernels_per_step=2500
    ),
    "tacotron2": DataParallelModel(
        28.2e6, 256 * 560, source="Shen et al. 2018; 256 x ~560 frames", kernels_per_step=11000
    ),
    "waveglow": DataParallelModel(
        87.9e6, 48 * 16000, source="Prenger et al. 2019; 48 x 16000", kernels_per_step=1000
    ),
}
