"""Training frameworks: which layouts each allows and how it runs them.

The same model on the same GPUs runs at different speeds under different stacks; a profile
says which parallel dimensions the layout search may use, which ZeRO stages, how much of
the memory-bound traffic its kernels fuse away, and how much tensor-parallel communication
it hides.

- megatron: Megatron-LM / Megatron-Core (and NeMo, which runs on it). Tensor parallel with
  sequence parallelism, pipeline parallel with interleaved stages, context parallelism and
  the distributed optimizer (ZeRO-1 with gradient reduce-scatter and parameter all-gather
  overlapped with compute) (Shoeybi et al. 2019; Narayanan et al. 2021; Korthikanti et al.
  2022; Megatron-Core's context-parallel documentation); fused norm, bias-activation and
  softmax kernels (unfused 1.0).
- fsdp: PyTorch FSDP (Zhao et al. 2023), as Hugging Face Accelerate, Lightning and
  torchtitan run it: parameters, gradients and optimizer state sharded (ZeRO-3, FULL_SHARD)
  or gradients and state only (ZeRO-2-like SHARD_GRAD_OP, timed as ZeRO-1), all-gathers
  prefetched behind compute; tensor parallel within a node (torchtitan's 2-D layout); no
  pipeline or context parallelism; eager PyTorch norms and activations read and write
  their tensors op by op (unfused 1.5: an assumption, torch.compile fuses most of it).
- fsdp2: PyTorch FSDP2 as torchtitan runs it (Liang et al. 2024, "TorchTitan", sec. 3):
  per-parameter sharding (ZeRO-3, or ZeRO-2-like without resharding after the forward,
  timed as ZeRO-1) composed with tensor parallel within a node, pipeline parallel with
  interleaved and zero-bubble schedules, and context parallelism (ring attention) for long
  sequences; torch.compile per block fuses norms and activations (unfused prior 1.25, as
  deepspeed's partly fused kernels: an assumption). Its kernels and communication take the
  fitted fsdp stack's parameters (planner.llm.stack_profiles.FIT_FAMILY): the corpus's
  FSDP runs are compiled FSDP/FSDP2 runs. Its attention is SDPA with cuDNN's kernel first,
  as torchtitan orders the backends (torchtitan/models/attention.py,
  ScaledDotProductAttentionWrapper): FlashAttention-3-class on Hopper and data-center
  Blackwell (planner.llm.kernel_rates.kernel_on). Its gradients reduce-scatter in fp32
  (`fp32_gradients`): torchtitan's training.mixed_precision_reduce, default and only choice
  "float32" (torchtitan/config_manager.py @0da8901b and config/job_config.py @2c8b5947,
  passed to FSDP2's MixedPrecisionPolicy(reduce_dtype)); fsdp's stays at 16 bits, as
  Hugging Face Accelerate's bf16 policy and fms-fsdp's bfSixteen set it.
- nanotron: Hugging Face nanotron (and picotron): tensor, pipeline (1F1B, no interleaving)
  and data parallel with ZeRO-1, no context parallelism (the Ultra-Scale Playbook's
  configurations, huggingface/nanotron docs/benchmark_summary.svg); gradients accumulated
  and reduced in fp32 (`fp32_gradients`: nanotron's accumulate_grad_in_fp32, true in its
  example configs and the playbook's sweep script, all-reduces the fp32 buffers in
  optim/gradient_accumulator.py get_fp32_accum_hook; picotron's data parallel keeps
  grad_type float32); pipeline stages balanced by compute cost (`balanced_stages`: its
  trainer gives each stage the blocks up to (rank + 1) / p of the cumulative cost of
  get_block_compute_costs, a decoder layer 4 h^2 + 3 f h and the language-model head V h,
  so the last stage holds fewer layers beside the head;
  planner.llm.layout.balanced_stage_layers); ZeRO-1's updated weights all-gathered after
  the optimizer step, a blocking collective nothing overlaps (`gather_after_step`:
  optim/zero.py ZeroDistributedOptimizer.step calls _all_gather_params, a synchronous
  all_gather_coalesced), while the fp32 gradients reduce-scatter from DDP hooks during the
  backward pass (optim/gradient_accumulator.py get_fp32_accum_hook, async). That gather
  shards each weight tensor on its own and copies every rank's slice of every tensor back
  with its own small copy (`per_tensor_gather`: distributed.all_gather_coalesced's
  update_output), d x tensors host-bound copies a step (planner.llm.layout
  SLICE_COPY_HOST_S); the other stacks gather flat buffers.
- per-operator selective recomputation (`per_op_recompute`; torchtitan's `selective_ac_option
  = "op"`, a torch.utils.checkpoint policy any PyTorch FSDP stack can run:
  planner.llm.per_op_recompute) for fsdp and fsdp2; Megatron's selective recomputation is
  the attention core's (Korthikanti et al. 2022).
- full recomputation's early stop (`recompute_early_stop`) for fsdp and fsdp2: PyTorch's
  non-reentrant activation checkpointing (torch.utils.checkpoint with use_reentrant=False,
  and checkpoint_wrapper's default CheckpointImpl.NO_REENTRANT, which torchtitan and
  KempnerForge wrap each block in) stops recomputing once the backward pass has every
  tensor it saved (torch/utils/checkpoint.py, early_stop, on by default), and torch.compile's
  partitioner recomputes only what the backward reads: neither runs a layer's last GEMM,
  the MLP's down projection, whose output only the residual add takes. Measured on this
  torch (a two-layer Llama-style block, tests/planner/llm/test_llm_recompute_early_stop.py):
  12 of its 14 forward matmuls run again, as against all 14 under the reentrant checkpoint
  that Megatron-LM (tensor_parallel.checkpoint), nanotron (its CheckpointFunction),
  DeepSpeed (deepspeed.checkpointing) and Hugging Face Transformers (use_reentrant=True by
  default) run, which replay the whole layer.
- tensor-parallel communication overlap (`tp_overlap`; planner.settings.LLMSettings.tp_overlap):
  Megatron-Core's --tp-comm-overlap (Transformer Engine's userbuffers) and torchtitan's
  asynchronous tensor parallel for fsdp2 (Liang et al. 2024, sec. 3.1) split each
  tensor-parallel all-gather and reduce-scatter into chunks pipelined with the GEMM's; the
  other stacks run the collectives between the GEMMs.
- deepspeed: DeepSpeed ZeRO-1/3 (Rajbhandari et al. 2020) with its pipeline engine (no
  interleaving) and Megatron-DeepSpeed's tensor parallelism; no context parallelism;
  Megatron's fused model code as GPT-NeoX and Megatron-DeepSpeed run it (unfused prior 1.25:
  an assumption); a Hugging Face Transformers model under DeepSpeed runs eager (`--eager`),
  as the fit times FlagPerf's Llama2, ChatGLM3 and Baichuan2 runs. ZeRO-1/2's optimizer step ends by
  all-gathering the updated partitions before the next forward (`gather_after_step`:
  runtime/zero/stage_1_and_2.py step calls all_gather_dp_groups); its gradient reduction
  runs under the backward only with `overlap_comm`, which DeepSpeed leaves off below stage 3
  (runtime/zero/config.py): LayoutSettings.dp_overlap off is DeepSpeed's default config.

`logit_bytes`: what the loss keeps per logit (planner.llm.memory): 4 for megatron, whose
vocabulary-parallel cross-entropy keeps the fp32 logits and works in place (Korthikanti et
al. 2022, sec. 4.3); 10 for the others, whose loss is a cross-entropy on upcast logits (the
16-bit logits, the fp32 log-softmax kept for the backward pass and its fp32 gradient).
gpuplan's own GPT runs on one H200 (reference/own_runs) peak within 4% of that count; with
Korthikanti's 4 bytes (and 34 s b h a layer) their 124M runs were counted up to 35% under.

`grad_bytes`: the gradient buffer per parameter in 16-bit training (planner.llm.memory):
4 for nanotron, whose accumulate_grad_in_fp32 keeps fp32 gradient buffers on every
data-parallel rank under ZeRO-1 (the Ultra-Scale Playbook sweep's runs hold about 8 bytes a
parameter unsharded, where 2 + 2 were counted), 2 for the others. Megatron-LM's distributed
optimizer documents fp32 main gradients too (docs/distrib_optimizer.md: 6 + 12/d bytes), but
FlagPerf's Megatron LLaMA-1 7B run on A100-40GB peaks below even the 4 + 12/d count, so
megatron keeps 2 until a Megatron run's measured memory says otherwise.

`accumulate_bytes` / `accumulate_first`: the HBM bytes a parameter's gradient accumulation
moves each micro-batch below ZeRO-3 (planner.llm.layout t_opt). nanotron adds every
micro-batch's 16-bit gradients into fp32 buffers (optim/gradient_accumulator.py
FP32GradientAccumulator._accumulate_grad and its DDP hook: fp32_grad.add_(grad), read 4 + 2
bytes and write 4), as DeepSpeed's bf16 optimizer does after each backward
(runtime/bf16_optimizer.py update_hp_grads); PyTorch's autograd adds each later
micro-batch's gradient into the 16-bit .grad in place (read 2 + 2, write 2: the fsdp stacks'
ZeRO-0/1); Megatron-Core's gradient_accumulation_fusion (on by default) accumulates into
the fp32 main gradients inside the weight-gradient GEMM, which the GEMM's time already
holds (0). ZeRO-3 reduce-scatters each micro-batch's gradients and accumulates the shard
only.

`eager_refusal`: why eager PyTorch (planner.settings.LLMSettings.eager) cannot be timed
against the stack's fit; "" where it can: fsdp and fsdp2 were fitted on torch.compile runs,
deepspeed on fused-kernel runs with its eager runs timed as eager, while megatron and
nanotron run their own fused kernels.

`unfused` here is the prior; planner.llm.stack_profiles holds each stack's value fitted on
published runs, with the other parameters that say how it runs (kernel efficiency, exposed
communication, fp8 casts).

DEFAULT_FRAMEWORK is megatron: the layouts most LLM plans need beyond one node (tensor and
pipeline parallel for 70B and up) are Megatron-Core's, and NeMo and Megatron-DeepSpeed run
on it; choose fsdp for Hugging Face / torchtitan training.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Framework:
    """What a training stack allows and how it runs (module docstring)."""

    name: str
    pipeline: bool
    interleave: bool
    context_parallel: bool
    zero: tuple[str, ...]
    unfused: float
    eager_refusal: str = ""
    fp32_gradients: bool = False  # gradients reduced in fp32: 4 bytes a value, not 2
    balanced_stages: bool = False  # pipeline stages split by compute cost, head included
    per_op_recompute: bool = False  # torchtitan's per-operator selective recomputation
    recompute_early_stop: bool = False  # full recomputation stops before the MLP's down GEMM
    gather_after_step: bool = False  # ZeRO-1's weight all-gather runs alone after the step
    per_tensor_gather: bool = False  # that gather copies each tensor's slice per rank
    tp_overlap: bool = False  # can pipeline tensor-parallel collectives under the GEMMs
    fitted_kernels: str = ""  # how the fit's runs ran their kernels, where --eager differs
    logit_bytes: float = 10.0  # bytes a logit keeps for the loss (planner.llm.memory)
    grad_bytes: float = 2.0  # gradient buffer bytes per parameter in 16-bit training
    accumulate_bytes: float = 6.0  # HBM bytes a parameter's gradient accumulation moves
    accumulate_first: bool = False  # the first micro-batch accumulates too (fp32 buffers)


# The eager_refusal of stacks that run their own fused kernels, not PyTorch's.
OWN_KERNELS = "its own fused kernels'"
COMPILED = "compiled with torch.compile"  # the fsdp fit's runs
FRAMEWORKS: dict[str, Framework] = {
    "megatron": Framework(
        "megatron",
        True,
        True,
        True,
        ("zero1", "zero3"),
        1.0,
        OWN_KERNELS,
        tp_overlap=True,
        logit_bytes=4.0,  # vocabulary-parallel cross-entropy in place (Korthikanti sec. 4.3)
        accumulate_bytes=0.0,  # gradient_accumulation_fusion: in the wgrad GEMM
    ),
    "fsdp": Framework(
        "fsdp",
        False,
        False,
        False,
        ("zero3", "zero1"),
        1.5,
        per_op_recompute=True,
        recompute_early_stop=True,
        fitted_kernels=COMPILED,
    ),
    "fsdp2": Framework(
        "fsdp2",
        True,
        True,
        True,
        ("zero3", "zero1"),
        1.25,
        per_op_recompute=True,
        recompute_early_stop=True,
        tp_overlap=True,
        fitted_kernels=COMPILED,
        fp32_gradients=True,
    ),
    "deepspeed": Framework(
        "deepspeed",
        True,
        False,
        False,
        ("zero1", "zero3"),
        1.25,
        gather_after_step=True,
        accumulate_bytes=10.0,  # BF16_Optimizer: fp32 += bf16 each backward
        accumulate_first=True,
        fitted_kernels="Megatron's fused model code, as GPT-NeoX and Megatron-DeepSpeed run it "
        "(a Hugging Face model under DeepSpeed runs eager)",
    ),
    "nanotron": Framework(
        "nanotron",
        True,
        False,
        False,
        ("zero1",),
        1.25,
        OWN_KERNELS,
        fp32_gradients=True,
        balanced_stages=True,
        gather_after_step=True,
        per_tensor_gather=True,
        grad_bytes=4.0,  # accumulate_grad_in_fp32's fp32 gradient buffers
        accumulate_bytes=10.0,  # fp32 += bf16: read 4 + 2, write 4
        accumulate_first=True,
    ),
}
DEFAULT_FRAMEWORK = "megatron"
# The attention kernel a plan may name (LLMSettings.attention; rates: planner.llm.kernel_rates):
# auto, the stack's own (planner.llm.stack_profiles.ATTENTION_KERNEL); fa2, FlashAttention-2
# (the flash-attn package, SDPA's flash backend); fa3, FlashAttention-3-class
# (FlashAttention-3, Transformer Engine's and cuDNN's fused attention); cudnn, PyTorch SDPA
# with cuDNN's kernel first (FlashAttention-3-class on Hopper and data-center Blackwell,
# FlashAttention-2's elsewhere).
ATTENTION_CHOICES = ("auto", "fa2", "fa3", "cudnn")
# Each kernel in words, as plans name the one they timed.
ATTENTION_NAMES = {
    "fa2": "FlashAttention-2",
    "fa3": "FlashAttention-3-class",
    "cudnn": "cuDNN's via PyTorch SDPA (FlashAttention-3-class on Hopper and data-center "
    "Blackwell, FlashAttention-2's elsewhere)",
}


def framework(name: str) -> Framework:
    """The profile named `name` (ValueError naming the valid ones)."""
    try:
        return FRAMEWORKS[name]
    except KeyError:
        raise ValueError(f"framework {name!r}: valid are {', '.join(FRAMEWORKS)}") from None


def reduces_in_fp32(name: str, fp32_reduce: bool | None) -> bool:
    """Whether stack `name` moves fp32 gradients in its data-parallel collectives: as set
    (LLMSettings.fp32_reduce), else the profile's own (`fp32_gradients`)."""
    return framework(name).fp32_gradients if fp32_reduce is None else fp32_reduce


def per_op_refusal(name: str) -> str:
    """Why stack `name` cannot time per-operator recomputation ("" where it can), naming
    the stacks that run it."""
    return _refusal(
        name, "per_op_recompute", "torchtitan's per-operator policy", ", or use selective or full"
    )


def tp_overlap_refusal(name: str) -> str:
    """Why stack `name` cannot overlap tensor-parallel communication ("" where it can),
    naming the stacks that do."""
    return _refusal(
        name, "tp_overlap",
        "Megatron-Core's --tp-comm-overlap or torchtitan's asynchronous tensor parallel",
        ", or leave it off",
    )  # fmt: skip


def _refusal(name: str, flag: str, what: str, otherwise: str) -> str:
    """Why stack `name` lacks the profile flag `flag` ("" where it has it): `what` it is,
    the stacks that have it, and what to do `otherwise`."""
    if getattr(framework(name), flag):
        return ""
    runs_it = ", ".join(n for n, f in FRAMEWORKS.items() if getattr(f, flag))
    return f"{what}, which {name} does not run: set the framework to {runs_it}{otherwise}"


def eager_stacks() -> tuple[str, ...]:
    """The stacks eager PyTorch can be timed on (fitted on compiled runs: no
    `eager_refusal`)."""
    return tuple(name for name, f in FRAMEWORKS.items() if not f.eager_refusal)
