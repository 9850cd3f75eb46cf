"""How a plan's job is run: the settings a request carries and the steps read.

One record per part of the job, each with its defaults and their sources:
`JobOverheads` (start-up, staging, checkpoints: planner.costs.overheads times them),
`CommModel` (the data-parallel communication model's assumptions: planner.throughput.scaling)
and `LLMSettings` (how an LLM is trained: planner.llm.throughput). planner.request builds a
request from them and every step imports them from here, so no step imports another
step's folder for its settings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from planner.llm.fp8_recipes import checked_recipe
from planner.llm.frameworks import (
    ATTENTION_CHOICES,
    DEFAULT_FRAMEWORK,
    eager_stacks,
    framework,
    per_op_refusal,
    tp_overlap_refusal,
)

if TYPE_CHECKING:
    from planner.llm.stack_profiles import StackParams
    from planner.workloads.catalog import Workload

# Tokens per optimizer step when not given: 4M for pre-training (LLaMA, Touvron et al.
# 2023a, sec. 2.2); 64 sequences of 4,096 for fine-tuning (Llama 2's SFT, Touvron et al.
# 2023b, sec. 3.1).
PRETRAIN_BATCH_TOKENS = 4_194_304.0
FINETUNE_BATCH_TOKENS = 64 * 4096.0

# Per-kernel floor per step: the intercept of per-GPU step time against per-GPU batch,
# divided by the kernels per step, median over FlagPerf's DGX A100-40GB batch pairs
# (ResNet-50 32/256, MobileNetV2 32/512, Swin 256/384, DistilBERT 32/96, GLM-large 8/16,
# CPM-medium 32/128 per GPU on 8 GPUs; reference/calibration/cnn_training_throughput.csv)
# and gpuplan's own one-H200 sweeps (ResNet-50 16-256, BERT-large 4-64, fp16 and bf16;
# reference/own_runs/cnn_training_throughput.csv): 28 µs (fit_kernel_floor in
# planner.throughput.step_calibration; the CNNs give 25-38 µs, the transformers 22-48).
# Eager PyTorch's per-operator host overhead, not the CUDA launch alone (~4-10 µs): a
# faster GPU does not lower it. The data-parallel step model and eager LLM stacks
# (LLMSettings.eager) both use it.
KERNEL_FLOOR_S = 28e-6


@dataclass(frozen=True)
class JobOverheads:
    """Overrides of the defaults above (None: the provider's default).

    startup_minutes: provisioning + environment start; staging_gbps: staging bandwidth
    per instance (Gb/s), 0 for data already in place; checkpoint_every_hours: compute hours
    between checkpoints, 0 for none (None: Young's interval, planner.costs.checkpoint).
    """

    startup_minutes: float | None = None
    staging_gbps: float | None = None
    checkpoint_every_hours: float | None = None

    def __post_init__(self) -> None:
        for name in ("startup_minutes", "staging_gbps"):
            value = getattr(self, name)
            if value is not None and (not math.isfinite(value) or value < 0):
                raise ValueError(f"{name} must be a number >= 0 (got {value})")
        every = self.checkpoint_every_hours
        if every is not None and (not math.isfinite(every) or every < 0):
            raise ValueError("checkpoint_every_hours must be >= 0 (0 = no checkpoints)")


@dataclass(frozen=True)
class CommModel:
    """Assumptions of the data-parallel communication model (all settable).

    network_gbps_per_node: the node's network bandwidth, Gb/s (400 = one 400 Gb/s
      InfiniBand NDR or 4 x 100 Gb/s EFA, as on AWS p4d; p5 has 3,200).
    gpus_per_node: GPUs that share a node's NVLink/PCIe fabric (8 on HGX/DGX servers).
    overlap: fraction of the compute time that can hide communication (DDP overlaps the
      gradient all-reduce with the backward pass: Li et al. 2020, "PyTorch Distributed",
      VLDB). 0 (nothing hidden) predicted the published 2- and 4-GPU figures best where
      the step time is exact (ResNet-50, SSD, Mask R-CNN, BERT: 9.7% MAPE against 10.3%
      for linear scaling; tools/evaluate_estimator.py), and errs on the slow side.
    achievable_fraction: share of a link's peak a ring all-reduce reaches.
    latency_s: per-step latency α of the ring (Thakur et al. 2005 cost model).
    """

    network_gbps_per_node: float = 400.0
    gpus_per_node: int = 8
    overlap: float = 0.0
    achievable_fraction: float = 0.8
    latency_s: float = 5e-6

    def __post_init__(self) -> None:
        if self.network_gbps_per_node <= 0:
            raise ValueError("network_gbps_per_node must be > 0 (Gb/s per node, e.g. 400)")
        if self.gpus_per_node < 1:
            raise ValueError("gpus_per_node must be >= 1 (8 on HGX/DGX servers)")
        if not 0.0 <= self.overlap <= 1.0:
            raise ValueError("overlap must be in [0, 1] (fraction of compute hiding comm)")
        if not 0.0 < self.achievable_fraction <= 1.0:
            raise ValueError("achievable_fraction must be in (0, 1]")


@dataclass(frozen=True)
class StatedLayout:
    """The parallel sizes a run states (a published run's table, a user's layout): tensor,
    pipeline and context parallel; virtual pipeline stages per GPU, expert-parallel ranks
    and the expert-tensor-parallel size (tp, or 1: MoE parallel folding, planner.llm.moe)
    where stated (0: not stated, the layout search picks them). `interleaved`: the run
    states an interleaved pipeline schedule without its number of virtual stages (the
    search then picks among v > 1)."""

    tp: int = 1
    pp: int = 1
    cp: int = 1
    vpp: int = 0
    ep: int = 0
    etp: int = 0
    interleaved: bool = False


# The ZeRO stages a setting or a user's layout names, by their stage (Rajbhandari et al.
# 2020): 0 plain data parallelism (PyTorch DDP, Megatron without its distributed
# optimizer: every rank keeps the whole optimizer state), 1 the optimizer state sharded,
# 3 weights, gradients and optimizer state sharded (FSDP).
ZERO_STAGES = {"zero0": 0, "zero1": 1, "zero3": 3}

# The recomputation modes a setting or a user's layout names (planner.llm.memory, ops).
RECOMPUTE_CHOICES = ("none", "selective", "per-op", "full")
RECOMPUTE_SETTINGS = ("auto", *RECOMPUTE_CHOICES)


@dataclass(frozen=True)
class LLMSettings:
    """How the LLM is trained (all settable; defaults and their sources).

    global_batch_tokens: tokens per optimizer step over all GPUs (None: the mode's default,
      PRETRAIN_BATCH_TOKENS or FINETUNE_BATCH_TOKENS).
    micro_batch: sequences per GPU per forward pass (None: the search picks 1, 2, 4 or 8).
    recompute: "auto" (the search picks), "none", "selective" (Megatron's: the attention
      core), "per-op" (torchtitan's per-operator policy; fsdp and fsdp2 only) or "full".
    zero: "auto" (the search picks), "zero0" (plain data parallelism), "zero1" or "zero3"
      (FSDP): ZERO_STAGES.
    flash_attention: attention without stored scores (Dao et al. 2022); PyTorch's
      memory-efficient SDPA does the same on GPUs FlashAttention does not support.
    memory_reserve_fraction: share of each GPU's memory not available to the model.
    framework: the training stack (planner.llm.frameworks: megatron, fsdp, deepspeed).
    step_model: "ops" (the operator model) or "mfu-prior" (the older MFU-prior model, kept
      for comparison by tools/evaluate_estimator.py).
    framework_stated: False when the user named no stack: the band then also spans what
      the other stacks would give (planner.llm.stack_profiles.stack_range).
    stack: the stack's parameters (None: the fitted ones of `framework`,
      planner.llm.stack_profiles); set by the fitting and evaluation tools.
    pinned: the parallel sizes a run states (None: the search picks them).
    eager: PyTorch without torch.compile or fused kernels: each operator is its own kernel,
      dispatched from Python (planner.llm.ops.EAGER_KERNELS_PER_LAYER x KERNEL_FLOOR_S per
      layer and micro-batch instead of the fused stacks' launch gaps).
    fp8_recipe: how fp8 GEMMs scale their operands (planner.llm.fp8_recipes: tensorwise,
      delayed, rowwise, rowwise_with_gw_hp, blockwise, mxfp8); "auto": the stack's default.
    moe_overlap: a mixture of experts' all-to-all runs under another micro-batch's
      computation and is exposed only where it outlasts it (DeepSeek-V3's DualPipe,
      DeepSeek-AI 2024 sec. 3.2.1; Megatron-Core's --overlap-moe-expert-parallel-comm);
      False: exposed in full, as the corpus's MoE runs are timed unless their notes say it
      overlapped.
    pinned_ran: the pinned layout is a published run's, so it ran: where the memory model
      finds none of its variants fits, the one it finds smallest is timed instead of a
      searched layout the run never used (the fitting and evaluation tools set it; a plan
      never does).
    dp_overlap: ZeRO-0's gradient all-reduce, or ZeRO-1's gradient reduce-scatter and weight
      all-gather, run under the last micro-batch's backward and the next forward
      (Megatron-Core's --overlap-grad-reduce and --overlap-param-gather, on in NVIDIA's
      recipes; DDP's bucketed all-reduce, Li et al. 2020); False: after the backward,
      exposed in full (Megatron-Core's default).
    tp_overlap: each tensor-parallel all-gather and reduce-scatter is split into tp chunks
      pipelined with the GEMM's chunks, so one chunk's transfer shows (Megatron-Core's
      --tp-comm-overlap, torchtitan's asynchronous tensor parallel; Wang et al. 2023,
      "Overlap Communication with Dependent Computation via Decomposition"); megatron and
      fsdp2 only; False: the collectives run between the GEMMs (Megatron-Core's default).
    fp32_reduce: the data-parallel gradient collectives move fp32 values, 4 bytes each
      (FSDP2's MixedPrecisionPolicy(reduce_dtype=torch.float32); nanotron's
      accumulate_grad_in_fp32); False: the compute precision's 2; None: the stack's own
      (planner.llm.frameworks: fp32 on nanotron). The corpus sets it where a run states it.
    attention: the attention kernel (planner.llm.frameworks.ATTENTION_CHOICES); "auto": the
      stack's own (FlashAttention-3-class on megatron, SDPA with cuDNN first on fsdp2,
      FlashAttention-2 on fsdp, deepspeed and nanotron).
    board_gpus: GPUs of the node's board where they link to each other directly, without
      a switch (a 4-GPU NVIDIA node: planner.machines.boards); 0: the GPU's platform decides
      (AMD's Instinct boards are switchless, NVIDIA's 8-GPU HGX boards and the cloud's
      slices of them switched). The corpus sets it where a run states its node.
    """

    global_batch_tokens: float | None = None
    micro_batch: int | None = None
    recompute: str = "auto"
    zero: str = "auto"
    flash_attention: bool = True
    memory_reserve_fraction: float = 0.10
    framework: str = DEFAULT_FRAMEWORK
    step_model: str = "ops"
    framework_stated: bool = True
    stack: StackParams | None = None
    pinned: StatedLayout | None = None
    eager: bool = False
    fp8_recipe: str = "auto"
    moe_overlap: bool = False
    pinned_ran: bool = False
    dp_overlap: bool = True
    tp_overlap: bool = False
    fp32_reduce: bool | None = None
    attention: str = "auto"
    board_gpus: int = 0

    def __post_init__(self) -> None:
        stack = framework(self.framework)  # ValueError naming the valid ones
        checked_recipe(self.fp8_recipe)
        if self.eager and stack.eager_refusal:
            raise ValueError(
                f"eager PyTorch is timed against a stack fitted on compiled or fused-kernel runs "
                f"({', '.join(eager_stacks())}); {self.framework}'s rates are "
                f"{stack.eager_refusal}: set the framework to one of those"
            )
        if self.attention not in ATTENTION_CHOICES:
            raise ValueError(
                f"attention {self.attention!r}: valid are {', '.join(ATTENTION_CHOICES)}"
            )
        if self.board_gpus < 0 or self.board_gpus == 1:
            raise ValueError(
                f"board_gpus {self.board_gpus}: the GPUs of a switchless board (2 or more), "
                "or 0 for the GPU's own platform"
            )
        if self.step_model not in ("ops", "mfu-prior"):
            raise ValueError(f"step_model {self.step_model!r}: valid are ops, mfu-prior")
        if self.micro_batch is not None and self.micro_batch < 1:
            raise ValueError(f"micro_batch must be >= 1 sequence, got {self.micro_batch}")
        if self.global_batch_tokens is not None and not self.global_batch_tokens > 0:
            raise ValueError("global_batch_tokens must be > 0 (tokens per optimizer step)")
        if self.recompute not in RECOMPUTE_SETTINGS:
            raise ValueError(
                f"recompute {self.recompute!r}: valid are {', '.join(RECOMPUTE_SETTINGS)}"
            )
        if self.recompute == "per-op" and (refusal := per_op_refusal(self.framework)):
            raise ValueError(f"recompute 'per-op' is {refusal}")
        if self.tp_overlap and (refusal := tp_overlap_refusal(self.framework)):
            raise ValueError(f"tp_overlap (--tp-overlap) is {refusal}")
        if self.zero not in ("auto", *ZERO_STAGES):
            raise ValueError(f"zero {self.zero!r}: valid are auto, {', '.join(ZERO_STAGES)}")
        if not 0.0 <= self.memory_reserve_fraction < 1.0:
            raise ValueError("memory_reserve_fraction must be in [0, 1)")

    def batch_tokens(self, workload: Workload) -> float:
        """Tokens per optimizer step: the setting, else the mode's default (at least one
        sequence)."""
        if self.global_batch_tokens is not None:
            return float(self.global_batch_tokens)
        default = (
            PRETRAIN_BATCH_TOKENS if workload.llm_mode == "pretrain" else FINETUNE_BATCH_TOKENS
        )
        return max(default, float(workload.seq_len or 1))
