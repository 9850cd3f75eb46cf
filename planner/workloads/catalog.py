"""Workload catalog: what "train X" means in samples (or tokens) and FLOPs.

A Workload names the benchmark that measures it (`model`, `model_size`) and how much
work one training run is. FLOPs per sample are analytic, training = forward + backward
= 3 x forward (backward ~ 2 x forward: Kaplan et al. 2020, "Scaling Laws for Neural
Language Models", section 2.1).

LLM workloads are a family: `llm-<params>[-<mode>]-<tokens>` with mode pretrain (the
default), finetune (full fine-tuning of an existing model) or lora / qlora (low-rank adapters
on frozen 16-bit / 4-bit weights): e.g. `llm-6.7b-134b`, `llm-70b-finetune-2b`,
`llm-69b-lora-1b`. Sizes that match a preset (planner.workloads.llm_presets, named by their true
parameter count) take its published shape; other sizes get a GPT-3-like shape (llm_shape).
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from planner.workloads.llm_presets import (
    LLM_PRESETS,
    DecoderShape,
    gated_by_width,
    label_params,
    preset_for,
)
from planner.workloads.moe_presets import MOE_PRESETS, moe_preset_for
from planner.workloads.moe_shape import (
    expert_ffn_width,
    moe_training_flops_per_token,
    routed_expert_params,
)
from pricing.gpus import did_you_mean

IMAGENET_TRAIN_IMAGES = 1_281_167  # ILSVRC-2012 train set (Russakovsky et al. 2015)
SQUAD_V11_TRAIN_FEATURES_384 = 88_641  # SQuAD v1.1 train, seq 384 / stride 128 features
RESNET50_FORWARD_FLOPS = 2 * 4.09e9  # 4.09 GMACs at 224x224 (He et al. 2016), 2 FLOPs/MAC
LLM_DEFAULT_SEQ_LEN = 2048
CHINCHILLA_TOKENS_PER_PARAM = 20  # Hoffmann et al. 2022, compute-optimal D ~ 20 N
# ILSVRC2012_img_train.tar: 137.7 GiB = 147.9 GB (image-net.org download page).
IMAGENET_TRAIN_GB = 147.9
SQUAD_DATASET_GB = 0.04  # SQuAD v1.1 train-v1.1.json 30 MB + BERT vocabulary and features
# BERT pre-training text: English Wikipedia (2,500M words) + BooksCorpus (800M words)
# (Devlin et al. 2019, section 3.1), ~6 bytes a word as plain text: ~20 GB.
BERT_PRETRAIN_GB = 20.0
# Goyal et al. 2017: linear scaling with warm-up keeps 90-epoch accuracy up to B = 8k.
RESNET50_FIXED_BATCH_CAP = 8192.0


@dataclass(frozen=True)
class Workload:
    """One training job: `samples` of `sample_unit`, each costing `flops_per_sample`."""

    name: str
    description: str
    model: str  # benchmark workload: resnet50 | bert | gpt
    model_size: str  # benchmark size: full | base | large | 124m | ...
    sample_unit: str  # images | sequences | tokens
    samples: float  # total samples (tokens for LLMs) to train
    flops_per_sample: float  # training FLOPs per sample (per token for LLMs)
    published_model: str | None = None  # Lambda model name for published throughput
    params: float | None = None  # parameters (LLMs)
    n_layer: int | None = None
    d_model: int | None = None
    seq_len: int | None = None
    source: str = ""
    tags: tuple[str, ...] = field(default_factory=tuple)
    # LLMs only: attention heads (and key/value heads under grouped-query attention), MLP
    # width, vocabulary, and how it is trained (LLM_MODES) with the LoRA rank.
    n_heads: int | None = None
    n_kv_heads: int | None = None
    ffn_dim: int | None = None
    vocab_size: int | None = None
    llm_mode: str = "pretrain"
    lora_rank: int = 16
    # Global batch cap (samples per step): the largest batch the recipe keeps accuracy
    # at; past cap / per-GPU batch GPUs, each GPU's batch shrinks (planner.throughput.
    # step_model). None: no cap.
    global_batch_cap: float | None = None
    # Time-to-accuracy workloads: samples to the target grow with the global batch B as
    # S(B) = samples_min (1 + B / batch_noise) (McCandlish et al. 2018, eq. 2.11); None for
    # fixed-epoch workloads, whose `samples` do not depend on B.
    samples_min: float | None = None
    batch_noise: float | None = None
    target: str = ""  # what "done" means for time-to-accuracy workloads
    dataset_gb: float = 0.0  # bytes staged to each instance before training (GB)
    loader: str = ""  # "jpeg": images decoded and augmented on the CPU each step
    # Benchmark samples one sample of this workload costs (its FLOPs / the benchmark's):
    # BERT pre-training at seq 512 timed by the seq-384 SQuAD benchmark.
    benchmark_samples_per_sample: float = 1.0
    # Mixture-of-experts LLMs only (planner.llm.moe): routed experts per MoE layer, experts
    # each token is routed to, always-active shared experts, each expert's MLP width, and
    # the parameters one token passes through (FLOPs and MFU count these; `params` is the
    # total, which memory holds). experts == 0: a dense model.
    experts: int = 0
    top_k: int = 0
    shared_experts: int = 0
    expert_ffn: int | None = None
    active_params: float | None = None
    # LLMs: a gated (SwiGLU, 3-matrix) MLP; None: gated where ffn_dim != 4 d_model (LLaMA's
    # widths; GPT's 4 d MLP is not gated), the rule for shapes that do not say.
    gated_mlp: bool | None = None
    # LLMs: the output layer shares the input embedding's matrix; None: tied where the MLP is
    # not gated (planner.workloads.llm_presets.tied_by_mlp), the rule for shapes that do not say.
    tied_embeddings: bool | None = None
    # LLMs: each attention head's width where the model card gives one wider or narrower
    # than d_model / n_heads (Qwen3: 128 at width 4096 with 64 heads; GPT-OSS: 64 at 2880);
    # None: d_model / n_heads.
    head_dim: int | None = None

    @property
    def mlp_gated(self) -> bool:
        """Whether the MLP is gated (`gated_mlp`, else its width's rule); MoE: always."""
        if self.gated_mlp is not None:
            return self.gated_mlp
        width = int(self.d_model or 0)
        return self.is_moe or gated_by_width(width, int(self.ffn_dim or 4 * width))

    @property
    def kind(self) -> str:
        """ "to-accuracy" (samples grow with the global batch) or "fixed" (a set amount)."""
        return "to-accuracy" if self.samples_min is not None else "fixed"

    def samples_at(self, global_batch: Any) -> np.ndarray:
        """Samples to train at global batch B: `samples` for fixed workloads, else
        samples_min (1 + B / batch_noise) (McCandlish et al. 2018)."""
        batch = np.asarray(global_batch, dtype=float)
        if self.samples_min is None or self.batch_noise is None:
            return np.full(batch.shape, self.samples)
        return self.samples_min * (1.0 + np.nan_to_num(batch, nan=0.0) / self.batch_noise)

    @property
    def throughput_unit(self) -> str:
        """Unit of throughput for this workload ("images/s", "tokens/s", ...)."""
        return f"{self.sample_unit}/s"

    @property
    def total_flops(self) -> float:
        """Training FLOPs of the whole run."""
        return self.samples * self.flops_per_sample

    @property
    def is_moe(self) -> bool:
        """True for a mixture-of-experts LLM (FLOPs counted on its active parameters)."""
        return self.experts > 0

    @property
    def is_llm(self) -> bool:
        """True for LLM workloads, any mode (throughput in tokens/s)."""
        return self.sample_unit == "tokens"


def transformer_training_flops_per_token(
    params: float, n_layer: int, seq_len: int, d_model: int
) -> float:
    """Training FLOPs per token of a dense transformer: 6 N + 12 n_layer n_ctx d_model.

    The model-FLOPs count of Chowdhery et al. 2022 (PaLM), appendix B, which defines MFU:
    6 N for the weight matmuls (2 forward + 4 backward per weight) and 12 n_layer n_ctx d
    for attention scores and their weighted sum. The GPT benchmark
    (benchmarks/models/gpt.py) counts the same way, so a measured MFU transfers to a
    target model with this count. Kaplan et al. 2020 (table 1) count half the attention
    term (6 n_layer n_ctx d); at n_ctx 2048 the two differ by a few percent.
    """
    return 6 * params + 12 * n_layer * seq_len * d_model


# How an LLM is trained: pretrain and finetune update every weight (same FLOPs and memory;
# a fine-tune starts from a checkpoint and trains far fewer tokens); lora trains low-rank
# adapters on frozen 16-bit weights (Hu et al. 2021); qlora on frozen 4-bit NF4 weights
# (Dettmers et al. 2023).
LLM_MODES: tuple[str, ...] = ("pretrain", "finetune", "lora", "qlora")
DEFAULT_LORA_RANK = 16  # QLoRA's setting for all linear layers (Dettmers et al. 2023, sec. 4)
DEFAULT_VOCAB_SIZE = 50257  # GPT-2/GPT-3 BPE vocabulary (Radford et al. 2019)


def lora_adapter_params(
    n_layer: int,
    d_model: int,
    ffn_dim: int,
    n_heads: int,
    n_kv_heads: int,
    rank: int,
    gated: bool | None = None,
) -> float:
    """Adapter parameters of LoRA on every linear layer: r (d_in + d_out) per matrix.

    Hu et al. 2021 (eq. 3): W + B A with B d_out x r and A r x d_in. Adapters on q, k, v, o
    and the MLP's matrices (all linear layers, as QLoRA recommends: Dettmers et al. 2023);
    the MLP has 3 matrices when `gated` (None: gated_by_width), else 2.
    """
    d_kv = d_model * n_kv_heads // n_heads
    attention = 2 * (d_model + d_model) + 2 * (d_model + d_kv)
    gated = gated_by_width(d_model, ffn_dim) if gated is None else gated
    mlp = (3 if gated else 2) * (d_model + ffn_dim)
    return float(n_layer * rank * (attention + mlp))


def lora_training_flops_per_token(
    params: float, n_layer: int, seq_len: int, d_model: int, adapter_params: float
) -> float:
    """Training FLOPs per token with frozen weights: 4 N + 12 n_layer n_ctx d + 6 A.

    Forward 2 N; backward 2 N for the activations' gradient only: frozen weights need no
    weight gradient (the other 2 N of the usual 4 N backward: Kaplan et al. 2020 sec. 2.1;
    Hu et al. 2021 sec. 4.2, "we do not need to calculate the gradients ... for most
    parameters"). Attention scores (12 n_layer n_ctx d, PaLM app. B) are computed and
    back-propagated as in full training; the adapters A train fully (6 A).
    """
    return 4 * params + 12 * n_layer * seq_len * d_model + 6 * adapter_params


# A shape the user gives may differ from the size its workload names by at most this
# fraction of that size; beyond it, the name and the shape disagree and the plan is refused.
SHAPE_SIZE_TOLERANCE = 0.10


def llm_shape(params: float) -> tuple[int, int]:
    """(n_layer, d_model) of a GPT-style model with `params` non-embedding parameters.

    N ~ 12 n_layer d_model^2 (Kaplan et al. 2020) with d_model = 128 n_layer (GPT-3's
    aspect ratio, Brown et al. 2020), d_model rounded to a multiple of 128; from 4096 up to
    a multiple of 1024 (eight heads of 128, so tensor parallelism up to 8 divides the heads:
    Shoeybi et al. 2019), with n_layer then refitted to N.
    """
    n_layer = max(2, round((params / (12 * 128**2)) ** (1 / 3)))
    width = math.sqrt(params / (12 * n_layer))
    step = 1024 if width >= 4096 else 128
    d_model = max(128, round(width / step) * step)
    if step == 1024:
        n_layer = max(2, round(params / (12 * d_model**2)))
    return n_layer, d_model


_SCALE = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}
_LLM_NAME = re.compile(
    r"^llm-(\d+(?:\.\d+)?)([mbt])(?:-(pretrain|finetune|lora|qlora))?-(\d+(?:\.\d+)?)([kmbt])$"
)


def _fmt_count(value: float) -> str:
    for suffix, scale in (("t", 1e12), ("b", 1e9), ("m", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:.3g}{suffix}"
    return f"{value:g}"


MODE_WORDS = {
    "pretrain": "Pre-train",
    "finetune": "Fully fine-tune",
    "lora": "LoRA-fine-tune (16-bit frozen weights)",
    "qlora": "QLoRA-fine-tune (4-bit frozen weights)",
}


def llm_workload(
    params: float,
    tokens: float,
    seq_len: int = LLM_DEFAULT_SEQ_LEN,
    n_layer: int | None = None,
    d_model: int | None = None,
    name: str | None = None,
    mode: str = "pretrain",
    lora_rank: int = DEFAULT_LORA_RANK,
    shape: DecoderShape | None = None,
) -> Workload:
    """An LLM workload: `tokens` tokens through a `params`-parameter decoder, trained by `mode`.

    A size within 1% of a preset (planner.workloads.llm_presets) takes its published shape; else
    the shape follows llm_shape (or the given n_layer and d_model), heads of width 128
    (64 at d_model <= 1024, as GPT-2), an MLP of 4 d_model and the GPT-2 vocabulary.
    A given `shape` is used as it is (its parameter count is the caller's `params`).
    """
    if params <= 0 or tokens <= 0:
        raise ValueError(f"an LLM needs params > 0 and tokens > 0 (got {params:g}, {tokens:g})")
    if seq_len < 1:
        raise ValueError(f"an LLM needs a sequence length >= 1 token (got {seq_len})")
    if mode not in LLM_MODES:
        raise ValueError(
            f"unknown LLM mode {mode!r}{did_you_mean(mode, LLM_MODES)} Valid: "
            + ", ".join(LLM_MODES)
        )
    preset = preset_for(params)
    gated: bool | None = None
    tied: bool | None = None
    if shape is not None:
        layers, width = shape.n_layer, shape.d_model
        heads, kv, ffn, vocab = shape.n_heads, shape.n_kv_heads, shape.ffn_dim, shape.vocab_size
        gated, tied = shape.gated, shape.tied  # None: the rules, as for any shape
        reference = (
            f"{layers} layers of width {width}, {heads} heads ({kv} key/value), "
            f"{shape.mlp_and_embeddings}"
        )
        preset = None
    elif preset and n_layer in (None, preset.n_layer) and d_model in (None, preset.d_model):
        layers, width = preset.n_layer, preset.d_model
        heads, kv, ffn, vocab = preset.n_heads, preset.n_kv_heads, preset.ffn_dim, preset.vocab_size
        gated, tied = preset.gated, preset.tied  # what the preset says (None: the rules)
        reference = f"{preset.reference} shape"
    else:
        if n_layer is None or d_model is None:
            layers, width = llm_shape(params)
            reference = "shape from N ~ 12 n_layer d_model^2, d_model = 128 n_layer"
        else:
            layers, width = n_layer, d_model
            reference = f"{layers} layers of width {width}"
        heads = max(1, width // (64 if width <= 1024 else 128))
        kv, ffn, vocab = heads, 4 * width, DEFAULT_VOCAB_SIZE
    size = preset.label if preset and layers == preset.n_layer else _fmt_count(params)
    if name is None:
        middle = "" if mode == "pretrain" else f"-{mode}"
        name = f"llm-{size}{middle}-{_fmt_count(tokens)}"
    if mode in ("lora", "qlora"):
        adapters = lora_adapter_params(layers, width, ffn, heads, kv, lora_rank, gated)
        flops = lora_training_flops_per_token(params, layers, seq_len, width, adapters)
        source = (
            "4N + 12 n_layer n_ctx d + 6 A FLOPs per token: frozen weights get no weight "
            f"gradient (Hu et al. 2021; Kaplan et al. 2020); rank-{lora_rank} adapters on "
            "every linear layer"
        )
    else:
        flops = transformer_training_flops_per_token(params, layers, seq_len, width)
        source = "6N + 12 n_layer n_ctx d FLOPs per token (Chowdhery et al. 2022, PaLM app. B)"
    return Workload(
        name=name,
        description=f"{MODE_WORDS[mode]} a {size}-parameter decoder LLM on "
        f"{_fmt_count(tokens)} tokens (seq {seq_len}; {reference})",
        model="gpt",
        model_size=size,
        sample_unit="tokens",
        samples=float(tokens),
        flops_per_sample=flops,
        params=float(params),
        n_layer=layers,
        d_model=width,
        seq_len=seq_len,
        source=source,
        tags=("llm", mode),
        n_heads=heads,
        n_kv_heads=kv,
        ffn_dim=ffn,
        vocab_size=vocab,
        llm_mode=mode,
        lora_rank=lora_rank,
        gated_mlp=gated,
        tied_embeddings=tied,
    )


# Experts of an `llm-<total>-a<active>` name that no preset matches: 128 routed experts,
# top-8, no shared expert (Qwen3's MoE models: Qwen Team 2025, table 2); an assumption.
DEFAULT_EXPERTS, DEFAULT_TOP_K = 128, 8
_MOE_NAME = re.compile(
    r"^llm-(\d+(?:\.\d+)?)([mbt])-a(\d+(?:\.\d+)?)([mbt])(?:-(pretrain|finetune))?"
    r"-(\d+(?:\.\d+)?)([kmbt])$"
)
_PRESET_NAME = re.compile(r"^(.+)-(\d+(?:\.\d+)?)([kmbt])$")


def moe_workload(
    params: float,
    active_params: float,
    tokens: float,
    seq_len: int = LLM_DEFAULT_SEQ_LEN,
    name: str | None = None,
    mode: str = "pretrain",
    experts: int | None = None,
    top_k: int | None = None,
    shared_experts: int | None = None,
    expert_ffn: int | None = None,
) -> Workload:
    """A mixture-of-experts LLM: `params` in total, `active_params` per token (FLOPs and MFU
    count these: planner.llm.moe), trained on `tokens` by pretrain or finetune.

    Counts within 2% of a preset (planner.workloads.moe_presets) take its published shape; else
    the active parameters take a dense shape (llm_shape), DEFAULT_EXPERTS routed experts of
    which DEFAULT_TOP_K per token (or those given), and each expert's width holds the
    routed parameters, (N - A) E / (E - k) (planner.llm.moe.expert_ffn_width).
    """
    if params <= 0 or tokens <= 0 or not 0 < active_params <= params:
        raise ValueError(
            f"a MoE LLM needs params > 0, 0 < active_params <= params and tokens > 0 (got "
            f"{params:g}, {active_params:g}, {tokens:g})"
        )
    if mode not in ("pretrain", "finetune"):
        raise ValueError(f"MoE mode {mode!r}: valid are pretrain, finetune (no LoRA model)")
    preset = moe_preset_for(params, active_params)
    if preset is not None and experts in (None, preset.experts) and top_k in (None, preset.top_k):
        layers, width, heads, kv, vocab = (
            preset.n_layer, preset.d_model, preset.n_heads, preset.n_kv_heads, preset.vocab_size
        )  # fmt: skip
        head_dim = preset.head_dim or None
        experts, top_k = preset.experts, preset.top_k
        shared = preset.shared_experts if shared_experts is None else shared_experts
        ffn = expert_ffn or preset.expert_ffn
        size, reference = preset.key, f"{preset.title} shape, {preset.reference}"
    else:
        layers, width = llm_shape(active_params)
        heads = max(1, width // (64 if width <= 1024 else 128))
        kv, vocab = heads, DEFAULT_VOCAB_SIZE
        head_dim = None
        experts = experts or DEFAULT_EXPERTS
        top_k = top_k or min(DEFAULT_TOP_K, experts)
        shared = shared_experts or 0
        routed = routed_expert_params(params, active_params, experts, top_k)
        ffn = expert_ffn or expert_ffn_width(routed, layers, width, experts)
        size = f"{_fmt_count(params)}-a{_fmt_count(active_params)}"
        reference = f"dense shape of the active parameters, {experts} experts, top-{top_k}"
    if not 0 < top_k <= experts:
        raise ValueError(f"top_k must be between 1 and experts ({experts}), got {top_k}")
    if name is None:
        middle = "" if mode == "pretrain" else f"-{mode}"
        name = f"{size if preset else 'llm-' + size}{middle}-{_fmt_count(tokens)}"
    return Workload(
        name=name,
        description=f"{MODE_WORDS[mode]} a mixture-of-experts LLM of {_fmt_count(params)} "
        f"parameters, {_fmt_count(active_params)} active per token (FLOPs and MFU count these), "
        f"on {_fmt_count(tokens)} "
        f"tokens (seq {seq_len}; {experts} experts, top-{top_k}"
        + (f" + {shared} shared" if shared else "")
        + f"; {reference})",
        model="gpt",
        model_size=size,
        sample_unit="tokens",
        samples=float(tokens),
        flops_per_sample=moe_training_flops_per_token(
            active_params, layers, seq_len, heads * head_dim if head_dim else width
        ),
        params=float(params),
        n_layer=layers,
        d_model=width,
        seq_len=seq_len,
        source="6A + 12 n_layer n_ctx d FLOPs per token on the ACTIVE parameters A "
        "(Chowdhery et al. 2022, PaLM app. B; planner.llm.moe)",
        tags=("llm", mode, "moe"),
        n_heads=heads,
        n_kv_heads=kv,
        head_dim=head_dim,
        ffn_dim=shared * ffn,
        vocab_size=vocab,
        llm_mode=mode,
        experts=int(experts),
        top_k=int(top_k),
        shared_experts=int(shared),
        expert_ffn=int(ffn),
        active_params=float(active_params),
    )


def _resnet50(**fields: Any) -> Workload:
    """A ResNet-50 ImageNet-1k workload: the model, FLOPs per image (He et al. 2016: 4.09
    GMACs forward, training = 3 x forward), JPEG loading and the dataset's size."""
    return Workload(
        model="resnet50",
        model_size="full",
        sample_unit="images",
        flops_per_sample=3 * RESNET50_FORWARD_FLOPS,
        published_model="resnet50",
        dataset_gb=IMAGENET_TRAIN_GB,
        loader="jpeg",
        **fields,
    )


def _bert(size: str, layers: int, d_model: int, params: float) -> Workload:
    seq = 384
    return Workload(
        name=f"bert-{size}-squad-2ep",
        description=f"Fine-tune BERT-{size} on SQuAD v1.1, 2 epochs at sequence length 384",
        model="bert",
        model_size=size,
        sample_unit="sequences",
        samples=2 * SQUAD_V11_TRAIN_FEATURES_384,
        flops_per_sample=seq * transformer_training_flops_per_token(params, layers, seq, d_model),
        published_model=f"bert_{size}_squad",
        params=params,
        n_layer=layers,
        d_model=d_model,
        seq_len=seq,
        source="88,641 train features (SQuAD v1.1, seq 384, stride 128; Devlin et al. 2019); "
        "FLOPs 6N + 12 n_layer n_ctx d per token (Chowdhery et al. 2022, PaLM app. B); "
        "global batch cap 256 (fine-tuning batches of 32-256 keep accuracy, Devlin et al. "
        "2019 appendix A.3 and its SQuAD batch of 32 for 2-3 epochs)",
        global_batch_cap=256.0,
        dataset_gb=SQUAD_DATASET_GB,
    )


WORKLOADS: dict[str, Workload] = {
    "resnet50-imagenet-90ep": _resnet50(
        name="resnet50-imagenet-90ep",
        description="Train ResNet-50 on ImageNet-1k for 90 epochs (the MLPerf-era recipe)",
        samples=90 * IMAGENET_TRAIN_IMAGES,
        source="1,281,167 images x 90 epochs (Goyal et al. 2017); 4.09 GMACs/image forward "
        "(He et al. 2016), training = 3 x forward; global batch cap 8k (Goyal et al. 2017)",
        global_batch_cap=RESNET50_FIXED_BATCH_CAP,
    ),
    "resnet50-imagenet-1ep": _resnet50(
        name="resnet50-imagenet-1ep",
        description="One epoch of ResNet-50 on ImageNet-1k (1,281,167 images)",
        samples=IMAGENET_TRAIN_IMAGES,
        source="ILSVRC-2012 train set; global batch cap 8k (Goyal et al. 2017)",
        global_batch_cap=RESNET50_FIXED_BATCH_CAP,
    ),
    "resnet50-imagenet-to-75.9": _resnet50(
        name="resnet50-imagenet-to-75.9",
        description="Train ResNet-50 on ImageNet-1k to 75.9% top-1 (time to accuracy; "
        "larger batches need more epochs)",
        samples=90 * IMAGENET_TRAIN_IMAGES,
        source="epochs(B) = 72 (1 + B / 32k) (McCandlish et al. 2018 form): 90 epochs at "
        "B = 8k as with linear scaling + warm-up (Goyal et al. 2017), about 1.6 x that at "
        "32k, where LARS still converges (You et al. 2017); global batch cap 32k (LARS)",
        global_batch_cap=32768.0,
        samples_min=72 * IMAGENET_TRAIN_IMAGES,
        batch_noise=32768.0,
        target="75.9% top-1",
    ),
    "bert-large-pretrain-phase2": Workload(
        name="bert-large-pretrain-phase2",
        description="BERT-large pre-training phase 2 (sequence 512) to the phase's target "
        "loss (time to accuracy; LAMB)",
        model="bert",
        model_size="large",
        sample_unit="sequences",
        samples=25.6e6,
        flops_per_sample=512
        * transformer_training_flops_per_token(12 * 24 * 1024**2, 24, 512, 1024),
        published_model="bert_large_squad",
        params=12 * 24 * 1024**2,
        n_layer=24,
        d_model=1024,
        seq_len=512,
        source="sequences(B) = 25.4M (1 + B / 32k) (McCandlish et al. 2018 form) through "
        "two published points: 100k steps x 256 at seq 512 (Devlin et al. 2019, A.2) and "
        "1,563 steps x 32k with LAMB (You et al. 2019, table 1); cap 32k (LAMB). "
        "Throughput: the BERT-large SQuAD (seq 384) benchmark x 384/512 tokens",
        global_batch_cap=32768.0,
        samples_min=25.4e6,
        batch_noise=32256.0,
        target="phase-2 loss of the LAMB recipe",
        benchmark_samples_per_sample=(
            512 * transformer_training_flops_per_token(12 * 24 * 1024**2, 24, 512, 1024)
        )
        / (384 * transformer_training_flops_per_token(12 * 24 * 1024**2, 24, 384, 1024)),
        dataset_gb=BERT_PRETRAIN_GB,
    ),
    # Non-embedding parameters: 12 n_layer d^2 (BERT-large 24 x 1024: 302M of 335M).
    "bert-large-squad-2ep": _bert("large", 24, 1024, 12 * 24 * 1024**2),
    "bert-base-squad-2ep": _bert("base", 12, 768, 12 * 12 * 768**2),
}
for _preset in LLM_PRESETS.values():
    # Pre-training at ~20 tokens per parameter (Chinchilla), named by the true size.
    _w = llm_workload(_preset.params, CHINCHILLA_TOKENS_PER_PARAM * label_params(_preset.label))
    WORKLOADS[_w.name] = _w
# Fine-tuning an existing model: 1B tokens (e.g. an instruction set of ~500k sequences of
# 2k); the default sequence length, as every llm-... name has (set another with --seq-len).
for _label in ("6.7b", "69b"):
    for _mode in ("finetune", "lora", "qlora"):
        _w = llm_workload(LLM_PRESETS[_label].params, 1e9, mode=_mode)
        WORKLOADS[_w.name] = _w


# Mixture-of-experts presets pre-trained on 1T tokens (set another count in the name:
# deepseek-v3-14.8t).
for _moe in MOE_PRESETS.values():
    _w = moe_workload(_moe.params, _moe.active_params, 1e12)
    WORKLOADS[_w.name] = _w


def _moe_named(name: str) -> Workload | None:
    """`llm-<total>-a<active>[-finetune]-<tokens>` or `<MoE preset>-<tokens>`, else None."""
    match = _MOE_NAME.match(name)
    if match:
        params = float(match.group(1)) * _SCALE[match.group(2)]
        active = float(match.group(3)) * _SCALE[match.group(4)]
        tokens = float(match.group(6)) * _SCALE[match.group(7)]
        return moe_workload(params, active, tokens, name=name, mode=match.group(5) or "pretrain")
    match = _PRESET_NAME.match(name)
    if match and match.group(1) in MOE_PRESETS:
        preset = MOE_PRESETS[match.group(1)]
        tokens = float(match.group(2)) * _SCALE[match.group(3)]
        return moe_workload(preset.params, preset.active_params, tokens, name=name)
    return None


def get_workload(name: str) -> Workload:
    """A workload by name: a catalog entry, any `llm-<params>-<tokens>` name, any
    mixture-of-experts `llm-<total>-a<active>-<tokens>` name or `<MoE preset>-<tokens>`.

    Raises ValueError listing the valid names and the closest match.
    """
    if name in WORKLOADS:
        return WORKLOADS[name]
    moe = _moe_named(name.strip().lower())
    if moe is not None:
        return moe
    match = _LLM_NAME.match(name.strip().lower())
    if match:
        params = float(match.group(1)) * _SCALE[match.group(2)]
        tokens = float(match.group(4)) * _SCALE[match.group(5)]
        mode = match.group(3) or "pretrain"
        return llm_workload(params, tokens, name=name.strip().lower(), mode=mode)
    fix = did_you_mean(name, WORKLOADS)
    raise ValueError(
        f"unknown workload {name!r}{fix} Valid: {', '.join(WORKLOADS)}, "
        "or llm-<params>[-finetune|-lora|-qlora]-<tokens> such as llm-7b-140b, llm-69b-lora-1b, "
        "or a mixture of experts llm-<total>-a<active>-<tokens> such as llm-235b-a22b-1t"
    )


class ShapeSizeError(ValueError):
    """A shape whose parameter count is more than SHAPE_SIZE_TOLERANCE from the size the
    workload names: `described` (the shape and its count), `apart` (the named size and the
    tolerance) and `size` (the shape's own size label, "8.03b") for each caller's words."""

    def __init__(self, message: str, described: str, apart: str, size: str) -> None:
        super().__init__(message)
        self.described, self.apart, self.size = described, apart, size


def reshape_llm(
    workload: Workload,
    seq_len: int | None = None,
    n_layer: int | None = None,
    d_model: int | None = None,
    ffn_dim: int | None = None,
    n_heads: int | None = None,
    n_kv_heads: int | None = None,
    vocab_size: int | None = None,
    gated: bool | None = None,
    tied: bool | None = None,
) -> Workload:
    """An LLM workload with another sequence length or shape (same tokens and mode).

    Only a sequence length: the same model. A shape field: the shape given is the model.
    Given only one of n_layer and d_model, the other follows N ~ 12 n_layer d_model^2
    (Kaplan et al. 2020), d_model rounded to a multiple of 128; fields not given keep the
    workload's (heads, MLP width: only at its own width, else heads of 128 and 4 d_model).
    `gated` (a SwiGLU MLP) and `tied` (output layer tied to the input embedding) say what
    the rules of gated_by_width and tied_by_mlp would otherwise assume; not given, they are
    the workload's while its MLP (width and MLP width) and its embeddings (width and
    vocabulary) are.
    Parameters and FLOPs are counted from the shape (dense_decoder_params), the name says
    that size, and a shape more than SHAPE_SIZE_TOLERANCE from the size the workload names
    is refused with both counts (ShapeSizeError).
    """
    if not workload.is_llm or workload.params is None:
        raise ValueError(f"{workload.name} is not an LLM workload: no sequence length or shape")
    fields = {
        "seq_len": seq_len,
        "n_layer": n_layer,
        "d_model": d_model,
        "ffn": ffn_dim,
        "heads": n_heads,
        "kv_heads": n_kv_heads,
        "vocab": vocab_size,
    }
    for label, value in fields.items():
        if value is not None and value < 1:
            raise ValueError(f"{label} must be >= 1 (got {value})")
    if workload.is_moe:
        if any(v is not None for v in (ffn_dim, n_heads, n_kv_heads, vocab_size, gated, tied)):
            raise ValueError(
                f"{workload.name} is a mixture-of-experts model: its shape comes from its "
                "preset or its counts; --ffn, --heads, --kv-heads, --vocab, --mlp and "
                "--embeddings apply to dense LLMs only"
            )
        return _reshape_moe(workload, seq_len, n_layer, d_model)
    seq = seq_len or int(workload.seq_len or LLM_DEFAULT_SEQ_LEN)
    shape_given = [v for k, v in fields.items() if k != "seq_len"] + [gated, tied]
    if all(value is None for value in shape_given):
        return workload if seq_len is None else _rebuild(workload, seq, workload.params)
    shape = _given_shape(workload, n_layer, d_model, ffn_dim, n_heads, n_kv_heads, vocab_size)
    same_mlp = (shape.d_model, shape.ffn_dim) == (workload.d_model, workload.ffn_dim)
    same_embeddings = (shape.d_model, shape.vocab_size) == (workload.d_model, workload.vocab_size)
    shape = dataclasses.replace(
        shape,
        gated=gated if gated is not None or not same_mlp else workload.gated_mlp,
        tied=tied if tied is not None or not same_embeddings else workload.tied_embeddings,
    )
    params = shape.params
    named = workload.params
    if abs(params - named) > SHAPE_SIZE_TOLERANCE * named:
        described = (
            f"the shape given has {params / 1e9:.3g}B parameters ({shape.n_layer} layers x "
            f"{shape.d_model}, {shape.n_heads} heads, {shape.n_kv_heads} kv heads, "
            f"{shape.mlp_and_embeddings})"
        )
        apart = f"{named / 1e9:.3g}B, more than {SHAPE_SIZE_TOLERANCE:.0%} apart"
        raise ShapeSizeError(
            f"{described} but {workload.name} names {apart}", described, apart,
            _fmt_count(params),
        )  # fmt: skip
    middle = "" if workload.llm_mode == "pretrain" else f"-{workload.llm_mode}"
    name = f"llm-{_fmt_count(params)}{middle}-{_fmt_count(workload.samples)}"
    return llm_workload(
        params,
        workload.samples,
        seq_len=seq,
        name=name,
        mode=workload.llm_mode,
        lora_rank=workload.lora_rank,
        shape=shape,
    )


def _rebuild(workload: Workload, seq_len: int, params: float) -> Workload:
    """The workload at another sequence length, its shape unchanged."""
    return llm_workload(
        params,
        workload.samples,
        seq_len=seq_len,
        n_layer=workload.n_layer,
        d_model=workload.d_model,
        name=workload.name,
        mode=workload.llm_mode,
        lora_rank=workload.lora_rank,
    )


def _given_shape(
    workload: Workload,
    n_layer: int | None,
    d_model: int | None,
    ffn_dim: int | None,
    n_heads: int | None,
    n_kv_heads: int | None,
    vocab_size: int | None,
) -> DecoderShape:
    """The full shape: the fields given, the others from the workload (reshape_llm)."""
    params = float(workload.params or 0.0)
    if n_layer is not None and d_model is None:
        d_model = max(128, round(math.sqrt(params / (12 * n_layer)) / 128) * 128)
    elif d_model is not None and n_layer is None:
        n_layer = max(1, round(params / (12 * d_model**2)))
    layers = int(n_layer or workload.n_layer or 1)
    width = int(d_model or workload.d_model or 128)
    same_width = width == workload.d_model
    heads = n_heads or (
        workload.n_heads
        if same_width and workload.n_heads
        else max(1, width // (64 if width <= 1024 else 128))
    )
    if n_kv_heads is None:
        own_kv = workload.n_kv_heads if heads == workload.n_heads else None
        n_kv_heads = own_kv or heads
    ffn = ffn_dim or (workload.ffn_dim if same_width and workload.ffn_dim else 4 * width)
    vocab = vocab_size or int(workload.vocab_size or DEFAULT_VOCAB_SIZE)
    return DecoderShape(layers, width, int(heads), int(n_kv_heads), int(ffn), vocab)


def _reshape_moe(
    workload: Workload, seq_len: int | None, n_layer: int | None, d_model: int | None
) -> Workload:
    """A MoE workload at another sequence length (its shape is the preset's or follows from
    its counts: no other layers or width)."""
    if n_layer is not None or d_model is not None:
        raise ValueError(
            f"{workload.name} is a mixture-of-experts model: its shape comes from its preset "
            "or its counts; --n-layer and --d-model apply to dense LLMs only"
        )
    seq = int(seq_len or workload.seq_len or LLM_DEFAULT_SEQ_LEN)
    flops = moe_training_flops_per_token(
        float(workload.active_params or 0.0), int(workload.n_layer or 0), seq,
        int(workload.d_model or 0),
    )  # fmt: skip
    old = f"seq {workload.seq_len}"
    return dataclasses.replace(
        workload,
        seq_len=seq,
        flops_per_sample=flops,
        description=workload.description.replace(old, f"seq {seq}", 1),
    )
