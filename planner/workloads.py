"""Workload catalog: what "train X" means in samples (or tokens) and FLOPs.

A Workload names the benchmark that measures it (`model`, `model_size`) and how much
work one training run is. FLOPs per sample are analytic, training = forward + backward
= 3 x forward (backward ~ 2 x forward: Kaplan et al. 2020, "Scaling Laws for Neural
Language Models", section 2.1).

LLM pre-training workloads are a family: `llm-<params>-<tokens>` (e.g. `llm-7b-140b`,
`llm-1.3b-26b`, `llm-70b-1.4t`), with presets for common sizes.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from pricing.gpus import did_you_mean

IMAGENET_TRAIN_IMAGES = 1_281_167  # ILSVRC-2012 train set (Russakovsky et al. 2015)
SQUAD_V11_TRAIN_FEATURES_384 = 88_641  # SQuAD v1.1 train, seq 384 / stride 128 features
RESNET50_FORWARD_FLOPS = 2 * 4.09e9  # 4.09 GMACs at 224x224 (He et al. 2016), 2 FLOPs/MAC
LLM_DEFAULT_SEQ_LEN = 2048
CHINCHILLA_TOKENS_PER_PARAM = 20  # Hoffmann et al. 2022, compute-optimal D ~ 20 N


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

    @property
    def throughput_unit(self) -> str:
        """Unit of throughput for this workload ("images/s", "tokens/s", ...)."""
        return f"{self.sample_unit}/s"

    @property
    def total_flops(self) -> float:
        """Training FLOPs of the whole run."""
        return self.samples * self.flops_per_sample

    @property
    def is_llm(self) -> bool:
        """True for LLM pre-training workloads (throughput in tokens/s)."""
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


def llm_shape(params: float) -> tuple[int, int]:
    """(n_layer, d_model) of a GPT-style model with `params` non-embedding parameters.

    N ~ 12 n_layer d_model^2 (Kaplan et al. 2020) with d_model = 128 n_layer (GPT-3's
    aspect ratio, Brown et al. 2020), d_model rounded to a multiple of 128.
    """
    n_layer = max(2, round((params / (12 * 128**2)) ** (1 / 3)))
    d_model = max(128, round(math.sqrt(params / (12 * n_layer)) / 128) * 128)
    return n_layer, d_model


# Presets with the published shapes: label -> (params, n_layer, d_model, reference).
LLM_PRESETS: dict[str, tuple[float, int, int, str]] = {
    "124m": (124e6, 12, 768, "GPT-2 small (Radford et al. 2019)"),
    "350m": (350e6, 24, 1024, "GPT-2 medium (Radford et al. 2019)"),
    "1.3b": (1.3e9, 24, 2048, "GPT-3 XL (Brown et al. 2020)"),
    "7b": (6.7e9, 32, 4096, "LLaMA-7B shape (Touvron et al. 2023)"),
    "13b": (13e9, 40, 5120, "LLaMA-13B shape (Touvron et al. 2023)"),
    "70b": (70e9, 80, 8192, "LLaMA-2-70B shape (Touvron et al. 2023)"),
}
_SCALE = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}
_LLM_NAME = re.compile(r"^llm-(\d+(?:\.\d+)?)([mbt])-(\d+(?:\.\d+)?)([kmbt])$")


def _fmt_count(value: float) -> str:
    for suffix, scale in (("t", 1e12), ("b", 1e9), ("m", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:g}{suffix}"
    return f"{value:g}"


def llm_workload(
    params: float,
    tokens: float,
    seq_len: int = LLM_DEFAULT_SEQ_LEN,
    n_layer: int | None = None,
    d_model: int | None = None,
    name: str | None = None,
) -> Workload:
    """An LLM pre-training workload: `tokens` tokens on a `params`-parameter decoder."""
    if params <= 0 or tokens <= 0:
        raise ValueError(f"an LLM needs params > 0 and tokens > 0 (got {params:g}, {tokens:g})")
    preset = next((p for p in LLM_PRESETS.values() if abs(p[0] - params) / params < 0.02), None)
    reference = "shape from N ~ 12 n_layer d_model^2, d_model = 128 n_layer"
    if n_layer is None or d_model is None:
        if preset:
            _, n_layer, d_model, reference = preset
        else:
            n_layer, d_model = llm_shape(params)
    size = _fmt_count(params)
    if name is None:
        name = f"llm-{size}-{_fmt_count(tokens)}"
    return Workload(
        name=name,
        description=f"Pre-train a {size}-parameter decoder LLM on {_fmt_count(tokens)} tokens "
        f"(seq {seq_len}; {reference})",
        model="gpt",
        model_size=size,
        sample_unit="tokens",
        samples=float(tokens),
        flops_per_sample=transformer_training_flops_per_token(params, n_layer, seq_len, d_model),
        params=float(params),
        n_layer=n_layer,
        d_model=d_model,
        seq_len=seq_len,
        source="6N + 12 n_layer n_ctx d FLOPs per token (Chowdhery et al. 2022, PaLM app. B)",
        tags=("llm",),
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
        "FLOPs 6N + 12 n_layer n_ctx d per token (Chowdhery et al. 2022, PaLM app. B)",
    )


WORKLOADS: dict[str, Workload] = {
    "resnet50-imagenet-90ep": Workload(
        name="resnet50-imagenet-90ep",
        description="Train ResNet-50 on ImageNet-1k for 90 epochs (the MLPerf-era recipe)",
        model="resnet50",
        model_size="full",
        sample_unit="images",
        samples=90 * IMAGENET_TRAIN_IMAGES,
        flops_per_sample=3 * RESNET50_FORWARD_FLOPS,
        published_model="resnet50",
        source="1,281,167 images x 90 epochs (Goyal et al. 2017); 4.09 GMACs/image forward "
        "(He et al. 2016), training = 3 x forward",
    ),
    "resnet50-imagenet-1ep": Workload(
        name="resnet50-imagenet-1ep",
        description="One epoch of ResNet-50 on ImageNet-1k (1,281,167 images)",
        model="resnet50",
        model_size="full",
        sample_unit="images",
        samples=IMAGENET_TRAIN_IMAGES,
        flops_per_sample=3 * RESNET50_FORWARD_FLOPS,
        published_model="resnet50",
        source="ILSVRC-2012 train set",
    ),
    # Non-embedding parameters: 12 n_layer d^2 (BERT-large 24 x 1024: 302M of 335M).
    "bert-large-squad-2ep": _bert("large", 24, 1024, 12 * 24 * 1024**2),
    "bert-base-squad-2ep": _bert("base", 12, 768, 12 * 12 * 768**2),
}
for _label, (_params, _layers, _d, _ref) in LLM_PRESETS.items():
    _nominal = float(_label[:-1]) * _SCALE[_label[-1]]
    _tokens = CHINCHILLA_TOKENS_PER_PARAM * _nominal
    _w = llm_workload(
        _params, _tokens, n_layer=_layers, d_model=_d, name=f"llm-{_label}-{_fmt_count(_tokens)}"
    )
    WORKLOADS[_w.name] = _w


def workload_names() -> list[str]:
    """Names of the catalog workloads (LLM names outside the presets also parse)."""
    return list(WORKLOADS)


def get_workload(name: str) -> Workload:
    """A workload by name: a catalog entry or any `llm-<params>-<tokens>` name.

    Raises ValueError listing the valid names and the closest match.
    """
    if name in WORKLOADS:
        return WORKLOADS[name]
    match = _LLM_NAME.match(name.strip().lower())
    if match:
        params = float(match.group(1)) * _SCALE[match.group(2)]
        tokens = float(match.group(3)) * _SCALE[match.group(4)]
        return llm_workload(params, tokens, name=name.strip().lower())
    fix = did_you_mean(name, WORKLOADS)
    raise ValueError(
        f"unknown workload {name!r}{fix} Valid: {', '.join(WORKLOADS)}, "
        "or llm-<params>-<tokens> such as llm-7b-140b"
    )
