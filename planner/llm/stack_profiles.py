"""How fast each training stack runs the operator model's kernels: a few named parameters per
framework, fitted on published training runs (reference/calibration/llm_training_throughput.csv)
by tools/fit_llm_stacks.py, which writes planner/data/llm_stack_fit.csv.

Parameters (each multiplies one part of the step in planner.llm.ops / planner.llm.layout):

- kernel_efficiency: the share of the generation's kernel rates (KERNEL_DEFAULTS GEMM,
  measured FlashAttention attention) the stack's GEMMs and attention reach; 1 = the defaults.
- unfused: memory-bound traffic of norms, residual adds and activations over the fused ideal.
- comm_exposure: data-, pipeline- and context-parallel communication time over the
  alpha-beta ring model's (achievable bandwidth divided by it): how much slower than the
  model the stack's collectives run where exposed.
- tp_comm_exposure: the share of the ring model's tensor-parallel time that is exposed
  (Megatron-Core with Transformer Engine overlaps it with the GEMMs; eager stacks do not).
- cast_factor: fp8 cast traffic over the ideal 3 bytes per cast value (planner.llm.ops).
- fp8_gemm_factor: fp8 GEMM efficiency over the 16-bit one (pooled over stacks: the fp8
  kernels are the vendor's, not the stack's).
- moe_factor: a mixture of experts' routed-expert grouped GEMMs and token all-to-all over
  the model's (planner.llm.moe: load imbalance, grouped-kernel efficiency, the dispatcher's
  permutation and synchronisation); pooled over stacks, fitted on the corpus's MoE runs.
- overlap_cost: the share of the data-parallel collectives' time that the model hides under
  compute and that still lengthens the step (planner.llm.layout t_slow): the compute slowed
  by the communication kernels (they take SMs and memory bandwidth: 18.9% on average, up to
  40%, in Lee et al. 2025, arXiv:2507.03114, the prior's centre) and what overlap does not
  hide in practice (the first gather, the last reduce-scatter, stream synchronisation).
  Fitted per stack: what a collective costs the compute beside it depends on how the stack
  runs it (FSDP2 copies every gathered and reduced tensor in and out of its flat buffers
  with copy kernels: the fsdp ops all_gather_copy_in, split_with_sizes_copy and chunk_cat
  of torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py; Megatron's
  distributed optimizer reduces and gathers contiguous buckets in place).
- attention_kernel: FlashAttention-3-class ("fa3": Transformer Engine / cuDNN, Megatron),
  FlashAttention-2 ("fa2": PyTorch SDPA and the flash-attn package in eager stacks), or
  PyTorch SDPA with cuDNN's attention first ("cudnn": FSDP2 as torchtitan runs it;
  FlashAttention-3-class on Hopper and data-center Blackwell, else FlashAttention-2's:
  planner.llm.kernel_rates.kernel_on).
- band_low / band_high: 10% and 90% quantiles of log(predicted / measured) of the stack's
  runs, each predicted from a fit without its source (leave-one-source-out), widened to the
  same quantiles over every stack's held-out runs: the band a plan shows.
- fp8_band: the least half-width in log of an fp8 plan's band, the 80% quantile of
  |log(predicted / measured)| over every stack's held-out fp8 runs (pooled: each stack has
  few, and their errors are whole sources' biases of either sign, as what fp8 gains depends
  on the stack's casts and recipe); the same value on every stack's row.

Each value is stored with its spread (the 10-90% range of the value over the
leave-one-source-out fits), the runs and sources it rests on. A stack without fitted runs
takes PRIOR (the stacks' pooled fit is what the fit shrinks towards).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from pathlib import Path

import pandas as pd

from planner.llm.frameworks import framework

FIT_PATH = Path(__file__).resolve().parents[1] / "data" / "llm_stack_fit.csv"
FITTED = (
    "kernel_efficiency", "unfused", "comm_exposure", "cast_factor", "fp8_gemm_factor",
    "moe_factor", "overlap_cost",
)  # fmt: skip


@dataclass(frozen=True)
class StackParams:
    """One stack's fitted parameters (module docstring) and its 10-90% band in log."""

    framework: str
    kernel_efficiency: float = 1.0
    unfused: float = 1.0
    comm_exposure: float = 1.0
    tp_comm_exposure: float = 1.0
    cast_factor: float = 1.0
    fp8_gemm_factor: float = 0.85
    moe_factor: float = 1.0
    overlap_cost: float = 0.189  # Lee et al. 2025's mean compute slowdown under overlap
    attention_kernel: str = "fa3"
    band_low: float = -0.30  # log(predicted / measured) 10% quantile
    band_high: float = 0.30
    fp8_band: float = 0.30  # an fp8 plan's band is at least +/- this (log)
    runs: int = 0


# Before any fit: the operator model as published (kernels at their defaults, Megatron's
# fused kernels, the ring model's communication, Transformer Engine's FP8_GEMM_FACTOR 0.85,
# Lee et al. 2025's compute slowdown under overlapped communication) and an assumed +/-30% band.
PRIOR = StackParams("prior")
ATTENTION_KERNEL = {
    "megatron": "fa3", "fsdp": "fa2", "fsdp2": "cudnn", "deepspeed": "fa2", "nanotron": "fa2",
}  # fmt: skip
# Stacks timed with another stack's fitted parameters (planner.llm.frameworks): FSDP2's
# kernels and collectives are the compiled FSDP runs' the fsdp fit rests on.
FIT_FAMILY = {"fsdp2": "fsdp"}


@lru_cache(maxsize=1)
def _fit_table(path: Path = FIT_PATH) -> pd.DataFrame | None:
    """The fit table as written by tools/fit_llm_stacks.py, read once (None when absent)."""
    return pd.read_csv(path) if path.exists() else None


@lru_cache(maxsize=1)
def fitted_stacks(path: Path = FIT_PATH) -> dict[str, StackParams]:
    """The fitted table by framework (empty when the file is absent)."""
    table = _fit_table(path)
    if table is None:
        return {}
    casts = {"str": str, "int": int, "float": float}
    out = {}
    for row in table.to_dict("records"):
        # every field the table stores, as its type (a column it lacks keeps the default)
        values = {f.name: casts[str(f.type)](row[f.name]) for f in fields(StackParams)
                  if f.name in row}  # fmt: skip
        out[str(row["framework"])] = StackParams(**values)
    return out


def stack_params(name: str) -> StackParams:
    """The fitted parameters of framework `name` (PRIOR with the profile's unfused factor and
    its attention kernel when the fit has none)."""
    found = fitted_stacks().get(FIT_FAMILY.get(name, name))
    if found is not None:  # a stack timed with another's fit runs its own attention kernel
        kernel = ATTENTION_KERNEL.get(name, found.attention_kernel)
        return replace(found, framework=name, attention_kernel=kernel)
    return prior_params(name)


def prior_params(name: str) -> StackParams:
    """PRIOR for framework `name`: its profile's unfused factor (planner.llm.frameworks) and
    attention kernel (ATTENTION_KERNEL)."""
    return replace(
        PRIOR,
        framework=name,
        unfused=framework(name).unfused,
        attention_kernel=ATTENTION_KERNEL.get(name, "fa3"),
    )


@dataclass(frozen=True)
class StepParts:
    """A predicted step in seconds by what each stack parameter scales: kernels (GEMMs,
    attention, recomputation), memory-bound operators, exposed communication, fp8 casts,
    the pipeline bubble and the rest (optimizer); a MoE's routed-expert grouped GEMMs and
    exposed all-to-all (0 for dense models); what the hidden data-parallel collectives still
    cost (overlap)."""

    kernels: float
    memory: float
    comm: float
    tp: float
    cast: float
    bubble: float
    other: float
    grouped: float = 0.0
    a2a: float = 0.0
    overlap: float = 0.0

    @property
    def total(self) -> float:
        """The step's seconds."""
        return (
            self.kernels + self.memory + self.comm + self.tp + self.cast + self.bubble + self.other
            + self.grouped + self.a2a + self.overlap
        )  # fmt: skip


def rescaled_step(
    parts: StepParts, base: StackParams, other: StackParams, fp8_gemm_s: float = 0.0
) -> float:
    """The step's seconds under `other` stack's parameters, the layout kept: each part scaled
    by its parameter's ratio (the `fp8_gemm_s` of the kernels that are fp8 GEMMs by the fp8
    GEMM factor's too), the bubble by the pipeline slot's (first order: a layout the search
    would change is not re-searched)."""
    eta = base.kernel_efficiency / other.kernel_efficiency
    fp8 = base.fp8_gemm_factor / other.fp8_gemm_factor
    kernels = (parts.kernels - fp8_gemm_s) * eta + fp8_gemm_s * eta * fp8
    memory = parts.memory * other.unfused / base.unfused
    comm = parts.comm * other.comm_exposure / base.comm_exposure
    tp = parts.tp * other.tp_comm_exposure / base.tp_comm_exposure
    cast = parts.cast * (other.cast_factor / base.cast_factor if base.cast_factor > 0 else 1.0)
    moe = other.moe_factor / base.moe_factor
    grouped = parts.grouped * eta * moe
    a2a = parts.a2a * moe
    new = kernels + memory + comm + tp + cast + grouped + a2a
    slot = parts.total - parts.bubble - parts.other - parts.overlap
    bubble = parts.bubble * (new / slot if slot > 0 else 1.0)
    overlap = parts.overlap * other.overlap_cost / base.overlap_cost
    return new + bubble + parts.other + overlap


def stack_range(parts: StepParts, base: StackParams) -> tuple[float, float]:
    """(fastest, slowest) step of this layout over the fitted stacks, as a factor on the
    predicted step's seconds (1, 1 with no fitted stack)."""
    stacks = list(fitted_stacks().values())
    if not stacks or not parts.total > 0:
        return 1.0, 1.0
    ratios = [rescaled_step(parts, base, s) / parts.total for s in stacks]
    ratios = [r for r in ratios if math.isfinite(r)]
    return min([1.0, *ratios]), max([1.0, *ratios])


def layout_step_parts(layout: object) -> StepParts:
    """The StepParts of a chosen planner.llm.layout.Layout (its shares x its step)."""
    step = float(getattr(layout, "step_s", math.nan))

    def part(*names: str) -> float:
        return step * sum(float(getattr(layout, n)) for n in names)

    return StepParts(
        kernels=part("gemm_share", "attention_share", "recompute_time_share"),
        memory=part("memory_share"),
        comm=part("cp_share", "pp_share", "dp_share"),
        tp=part("tp_share"),
        cast=part("cast_share"),
        bubble=part("bubble_share"),
        other=part("optimizer_share"),
        grouped=part("grouped_gemm_share"),
        a2a=part("a2a_share"),
        overlap=part("overlap_share"),
    )
