"""Fits of the step model's constants to public measurements (reference/calibration).

Two fits, each a pure function of a table so tests can run them on tiny inline rows:

- Per-step floor from batch sweeps. At a fixed GPU count, per-GPU step time is linear in
  the per-GPU batch b: t(b) = t_floor + b · t_sample (the step model's form; the
  per-GPU rate is then x(b) = x_sat · b / (b + b_half) with b_half = t_floor / t_sample).
  Two rows of the same source, model, GPU, count and precision at two batches give the
  line; t_floor / kernels per step is the per-kernel floor (PyTorch eager launches one
  kernel per operator; its host-side dispatch and launch do not shrink with the batch).
  Data: FlagPerf DGX A100-40GB batch pairs (cnn_training_throughput.csv) and gpuplan's own
  one-GPU batch sweeps (reference/own_runs/cnn_training_throughput.csv: H200, ResNet-50 and
  BERT-large at 4-256 per GPU).
- All-reduce latency from message-size sweeps. nccl-tests' bus bandwidth busbw of an
  all-reduce of S bytes on n ranks means t = 2(n − 1)/n · S / busbw (NVIDIA nccl-tests
  doc/PERFORMANCE.md); t(S) = α + 2(n − 1)/n · S / β is the α-β model (Hockney 1994;
  Thakur et al. 2005). α is fitted per sweep (robust least squares on log time); the
  per-call α inside a node is the median over one-node sweeps, and the latency per tree
  level across nodes is (α_multi − α_node) / (2 log2 nodes) (NCCL's double binary trees:
  Sanders, Speck & Träff 2009). Data: collectives.csv (ml-engineering H200/B200 sweeps).
- Synchronisation (stragglers) from 1- and N-GPU rows at the same per-GPU batch. A
  synchronous step waits for the slowest of N GPUs; with step times spread by a relative
  σ, the expected slowest is (1 + σ·z(N)), z(N) the expected maximum of N standard
  normals (order statistics; Blom 1958's approximation; the straggler effect of
  synchronous SGD: Chen et al. 2016, "Revisiting Distributed Synchronous SGD"; Dean &
  Barroso 2013, "The Tail at Scale"). σ = (x_1 / x_N − 1) / z(N), median over the pairs.
  Data: FlagPerf DGX A100-40GB 1- and 8-GPU rows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

from planner.throughput.step_model import expected_max_normal

CALIBRATION_DIR = Path(__file__).resolve().parents[2] / "reference" / "calibration"
CNN_FILE = CALIBRATION_DIR / "cnn_training_throughput.csv"
COLLECTIVES_FILE = CALIBRATION_DIR / "collectives.csv"
OWN_CNN_FILE = CALIBRATION_DIR.parent / "own_runs" / "cnn_training_throughput.csv"
# The bench's own BERT-large (benchmarks.models.bert: 24 layers, hidden 1024, SQuAD head).
# Its kernels, counted from the code: per layer forward a fused QKV, output and two
# feed-forward matmuls (each with autocast's weight cast), one fused attention
# (scaled_dot_product_attention), its head merge, two dropouts, two residual adds, two
# LayerNorms and a GELU, 17; backward about twice, 51-55 per layer; x 24 layers plus the
# embeddings, head, fused AdamW and loss scaling, about 1,300 (HF BERT's separate Q/K/V and
# eager attention come to the ~92 per layer counted below).
OWN_BERT_KERNELS = 1300.0
OWN_BERT_MODEL = "BERT-large (gpuplan bench bert large: 24 layers, hidden 1024, seq 384)"

# Kernels one eager PyTorch training step launches, counted as DataParallelModel's
# kernels_per_step are (forward one per layer op, backward about 2x, plus the optimizer):
# ResNet-50 (53 conv, 53 BN, 49 ReLU, 16 adds) and MobileNetV2 (52 conv, 52 BN, 35 ReLU6,
# 10 adds) both come to about 550; Swin-T (12 blocks of ~25 ops, the FlagPerf default
# configuration assumed) to about 1,000; transformer stacks at ~92 per layer, as BERT-large's
# 2,200 for 24 layers (DATA_PARALLEL_MODELS): DistilBERT 6 layers 550, GLM-large and
# CPM-medium 24 layers 2,200. Left out: BiT-M-R152x2 (weight-standardised convolutions: no
# count to trust; its 16/20 pair is too narrow to part floor from per-sample time) and
# torchvision detectors (per-image loops make their kernels grow with the batch).
SWEEP_KERNELS: dict[str, float] = {
    "ResNet-50": 550.0,
    "MobileNetV2": 550.0,
    "Swin Transformer": 1000.0,
    "DistilBERT (distilbert-base-uncased, sequence classification, seq 512)": 550.0,
    "GLM-large (blocklm-large-blank: 24 layers, hidden 1024, seq 512)": 2200.0,
    "CPM-medium (cpm_model_states_medium: 24 layers, hidden 1024, seq 200)": 2200.0,
    OWN_BERT_MODEL: OWN_BERT_KERNELS,
}
# Sweeps shorter than this many sizes cannot separate α from β.
MIN_SWEEP_SIZES = 8
SWEEP_KEY = ["source", "model", "gpu_model", "num_gpus", "precision", "memory_format"]


def batch_sweeps(rows: pd.DataFrame) -> pd.DataFrame:
    """Per sweep (SWEEP_KEY with two or more batches): the per-GPU step time line.

    `rows`: source, model, gpu_model, num_gpus, precision, memory_format (optional),
    batch_size (per GPU), train_samples_per_sec (total over the GPUs); repeated runs at one
    batch count once, at their mean rate. Returns SWEEP_KEY + batches (text), floor_s,
    sample_s, b_half and small_ratio: the per-GPU rate at the smallest batch over that at
    the largest (what the sweep measured).
    """
    out = []
    data = rows.dropna(subset=["batch_size", "train_samples_per_sec"]).copy()
    if "memory_format" not in data.columns:
        data["memory_format"] = ""
    data["memory_format"] = data["memory_format"].fillna("")
    for key, group in data.groupby(SWEEP_KEY, sort=True):
        rates = group.groupby("batch_size")["train_samples_per_sec"].mean().sort_index()
        batch = rates.index.to_numpy(float)
        if len(batch) < 2:
            continue
        per_gpu = rates.to_numpy(float) / float(key[3])
        step = batch / per_gpu
        sample_s, floor_s = np.polyfit(batch, step, 1)
        out.append(
            {
                **dict(zip(SWEEP_KEY, key, strict=True)),
                "batches": "/".join(f"{b:g}" for b in batch),
                "b_small": batch[0],
                "b_large": batch[-1],
                "floor_s": float(floor_s),
                "sample_s": float(sample_s),
                "b_half": float(floor_s / sample_s) if sample_s > 0 else np.nan,
                "small_ratio": float(per_gpu[0] / per_gpu[-1]),
            }
        )
    columns = [*SWEEP_KEY, "batches", "b_small", "b_large", "floor_s", "sample_s", "b_half",
               "small_ratio"]  # fmt: skip
    return pd.DataFrame(out, columns=columns)


def sweep_rows() -> pd.DataFrame:
    """The calibration table's CNN rows and gpuplan's own one-GPU batch sweeps, together."""
    return pd.concat([pd.read_csv(CNN_FILE), pd.read_csv(OWN_CNN_FILE)], ignore_index=True)


def fit_kernel_floor(sweeps: pd.DataFrame, kernels: dict[str, float] | None = None) -> float:
    """Per-kernel floor (seconds): median of floor_s / kernels over sweeps of known models."""
    kernels = SWEEP_KERNELS if kernels is None else kernels
    known = sweeps.loc[sweeps["model"].isin(list(kernels)) & (sweeps["floor_s"] > 0)]
    if known.empty:
        raise ValueError(f"no batch sweep of a model with a kernel count ({', '.join(kernels)})")
    return float(np.median(known["floor_s"] / known["model"].map(kernels)))


def straggler_pairs(rows: pd.DataFrame, count: int = 8) -> pd.DataFrame:
    """Per (source, model, precision, per-GPU batch) with 1- and `count`-GPU rows: the
    per-GPU efficiency and the σ it implies."""
    data = rows.dropna(subset=["batch_size", "train_samples_per_sec"])
    out = []
    for key, group in data.groupby(["source", "model", "precision", "batch_size"], sort=True):
        by_count = dict(zip(group["num_gpus"], group["train_samples_per_sec"], strict=False))
        if 1 not in by_count or count not in by_count:
            continue
        efficiency = by_count[count] / count / by_count[1]
        sigma = (1.0 / efficiency - 1.0) / float(expected_max_normal(count))
        out.append({"source": key[0], "model": key[1], "precision": key[2],
                    "batch_size": key[3], "efficiency": efficiency, "sigma": sigma})  # fmt: skip
    return pd.DataFrame(
        out, columns=["source", "model", "precision", "batch_size", "efficiency", "sigma"]
    )


def fit_straggler_sigma(pairs: pd.DataFrame) -> float:
    """σ: the median over straggler_pairs() (the median keeps one odd run from pulling it)."""
    if pairs.empty:
        raise ValueError("no model has 1- and N-GPU rows at the same per-GPU batch")
    return float(np.median(np.maximum(pairs["sigma"], 0.0)))


def allreduce_times(rows: pd.DataFrame) -> pd.DataFrame:
    """All-reduce rows with a message size and a bus bandwidth, plus time_s."""
    ok = (
        rows["collective"].eq("all_reduce")
        & rows["busbw_GBps"].notna()
        & rows["message_bytes"].notna()
        & rows["num_ranks"].notna()
    )
    out = rows.loc[ok].copy()
    n = out["num_ranks"].astype(float)
    out["time_s"] = (
        2
        * (n - 1)
        / n
        * out["message_bytes"].astype(float)
        / (out["busbw_GBps"].astype(float) * 1e9)
    )
    return out


def fit_alpha_beta(sizes: np.ndarray, times: np.ndarray, ranks: float) -> tuple[float, float]:
    """(α seconds, β bytes/s) of t = α + 2(n − 1)/n · S / β, robust fit on log time
    (soft-L1 loss: a warm-up outlier at the smallest size does not pull the fit)."""
    c = 2 * (ranks - 1) / ranks

    def residuals(p: np.ndarray) -> np.ndarray:
        return np.log((np.exp(p[0]) + c * sizes / np.exp(p[1])) / times)

    fit = least_squares(residuals, [np.log(3e-5), np.log(3e11)], loss="soft_l1", f_scale=0.1)
    return float(np.exp(fit.x[0])), float(np.exp(fit.x[1]))


def allreduce_sweeps(times: pd.DataFrame) -> pd.DataFrame:
    """α and β per size sweep (source, GPU, nodes, ranks, algorithm; MIN_SWEEP_SIZES sizes)."""
    key = ["source", "gpu_model", "num_nodes", "num_ranks", "algo"]
    out = []
    for values, group in times.groupby(key, sort=True, dropna=False):
        if group["message_bytes"].nunique() < MIN_SWEEP_SIZES:
            continue
        alpha, beta = fit_alpha_beta(
            group["message_bytes"].to_numpy(float),
            group["time_s"].to_numpy(float),
            float(values[3]),
        )
        fitted = {"alpha_s": alpha, "beta_gbs": beta / 1e9}
        out.append({**dict(zip(key, values, strict=True)), **fitted})
    return pd.DataFrame(out, columns=[*key, "alpha_s", "beta_gbs"])


def fit_allreduce_latency(sweeps: pd.DataFrame) -> tuple[float, float]:
    """(α of one call inside a node, α per tree level across nodes), seconds."""
    nodes = sweeps["num_nodes"].astype(float)
    inside = sweeps.loc[nodes == 1, "alpha_s"]
    across = sweeps.loc[nodes > 1]
    if inside.empty or across.empty:
        raise ValueError("all-reduce sweeps need one-node and multi-node rows to fit α")
    call = float(np.median(inside))
    levels = 2 * np.log2(across["num_nodes"].astype(float))
    level = float(np.median(np.maximum(across["alpha_s"] - call, 0.0) / levels))
    return call, level


def load_calibration() -> tuple[pd.DataFrame, pd.DataFrame]:
    """(batch sweeps, all-reduce sweeps) of the bundled calibration tables and own runs."""
    return (
        batch_sweeps(sweep_rows()),
        allreduce_sweeps(allreduce_times(pd.read_csv(COLLECTIVES_FILE))),
    )
