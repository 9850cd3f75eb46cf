"""One table of LLM presets, named by the parameter count they really have.

Used by the workload catalog (`llm-<label>-<tokens>` names in `gpuplan workloads`), the CLI
and the app alike. Each preset is a published architecture; `params` is its total parameter
count (embeddings included) computed from the shape below, and `label` is that count
rounded (tests/planner/workloads/test_llm_presets.py holds every label within 1% of `params`).
Shapes: GPT-2 (Radford et al. 2019), GPT-3 (Brown et al. 2020, table 2.1), LLaMA (Touvron
et al. 2023a, table 2), Llama 2 (Touvron et al. 2023b), Llama 3 (Dubey et al. 2024,
table 3). n_kv_heads < n_heads is grouped-query attention (Ainslie et al. 2023).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DecoderShape:
    """A dense decoder's shape: layers, width, attention heads and key/value heads (fewer
    under grouped-query attention), MLP hidden width and vocabulary; whether the MLP is
    gated and the output layer tied to the input embedding (None: the rules of
    gated_by_width and dense_decoder_params, for shapes that do not say)."""

    n_layer: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    ffn_dim: int
    vocab_size: int
    gated: bool | None = None
    tied: bool | None = None

    def __post_init__(self) -> None:
        for name in ("n_layer", "d_model", "n_heads", "n_kv_heads", "ffn_dim", "vocab_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a whole number >= 1 (got {value!r})")
        if self.d_model % self.n_heads:
            raise ValueError(
                f"heads {self.n_heads} must divide d_model {self.d_model} (each head is "
                f"d_model / heads wide); e.g. {self.d_model // 128 or 1} heads of 128"
            )
        if self.n_heads % self.n_kv_heads:
            raise ValueError(
                f"kv_heads {self.n_kv_heads} must divide heads {self.n_heads} (grouped-query "
                f"attention shares each key/value head among heads / kv_heads query heads)"
            )

    @property
    def mlp_gated(self) -> bool:
        """Whether the MLP is gated (`gated`, else gated_by_width)."""
        return gated_by_width(self.d_model, self.ffn_dim) if self.gated is None else self.gated

    @property
    def embeddings_tied(self) -> bool:
        """Whether the output layer shares the input embedding (`tied`, else tied_by_mlp)."""
        return tied_by_mlp(self.mlp_gated) if self.tied is None else self.tied

    @property
    def mlp_and_embeddings(self) -> str:
        """'SwiGLU MLP 14336, vocabulary 128256, embeddings untied': the MLP, the vocabulary
        and the output layer in words."""
        mlp = "SwiGLU" if self.mlp_gated else "GELU"
        tied = "tied" if self.embeddings_tied else "untied"
        return f"{mlp} MLP {self.ffn_dim}, vocabulary {self.vocab_size}, embeddings {tied}"

    @property
    def params(self) -> float:
        """Its parameter count (dense_decoder_params)."""
        return dense_decoder_params(
            self.n_layer, self.d_model, self.n_heads, self.n_kv_heads, self.ffn_dim,
            self.vocab_size, self.mlp_gated, self.embeddings_tied,
        )  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class LLMPreset(DecoderShape):
    """A published decoder's shape with its size label and source (`params`: the shape's)."""

    label: str
    reference: str


def gated_by_width(d_model: int, ffn_dim: int) -> bool:
    """The MLP taken as gated (SwiGLU, Shazeer 2020: 3 matrices) where its width is not
    GPT's 4 d (LLaMA's widths: Touvron et al. 2023a); the rule for shapes that do not say."""
    return ffn_dim != 4 * d_model


# The MLP kinds a shape may name, as gated or not: GPT's 2-matrix MLP (GELU; ReLU^2 and
# other ungated activations have the same matrices) and LLaMA's 3-matrix SwiGLU (GeGLU and
# other gated units too: Shazeer 2020).
MLP_KINDS = {"gelu": False, "swiglu": True}


def mlp_kind_gated(word: str) -> bool:
    """Whether the MLP kind `word` names is gated (MLP_KINDS; ValueError naming the valid
    ones)."""
    valid = "gelu (2 matrices, GPT) or swiglu (3 gated matrices, LLaMA)"
    return _named(word, MLP_KINDS, "MLP", valid)


# The output layer as a shape may name it: sharing the input embedding's matrix or its own.
EMBEDDING_KINDS = {"tied": True, "untied": False}


def embeddings_kind_tied(word: str) -> bool:
    """Whether the embeddings kind `word` names is tied (EMBEDDING_KINDS; ValueError naming
    the valid ones)."""
    valid = "tied (the output layer shares the input embedding) or untied"
    return _named(word, EMBEDDING_KINDS, "embeddings", valid)


def _named(word: str, kinds: dict[str, bool], what: str, valid: str) -> bool:
    """kinds[word], case and spaces aside (ValueError naming `what` and the valid words)."""
    key = str(word).strip().lower()
    if key not in kinds:
        raise ValueError(f"unknown {what} {word!r}: valid {valid}")
    return kinds[key]


def tied_by_mlp(gated: bool) -> bool:
    """The output layer taken as tied to the input embedding where the MLP is not gated
    (GPT-2 and GPT-3 tie theirs; LLaMA and Llama 3, gated, do not: Touvron et al. 2023a,
    Dubey et al. 2024); the rule for shapes that do not say. Small gated models often tie
    (Llama 3.2 1B and 3B): they say so."""
    return not gated


def layer_matmul_params(
    d_model: int, n_heads: int, n_kv_heads: int, ffn_dim: int, gated: bool
) -> float:
    """Weights one decoder layer multiplies by: attention q and o (d^2 each) + k and v (d x
    d_kv each, d_kv = d kv_heads / heads: grouped-query attention, Ainslie et al. 2023) +
    the MLP's 3 (gated) or 2 matrices of d x ffn."""
    d_kv = d_model * n_kv_heads // n_heads
    attention = 2 * d_model * d_model + 2 * d_model * d_kv
    return float(attention + (3 if gated else 2) * d_model * ffn_dim)


def dense_decoder_params(
    n_layer: int,
    d_model: int,
    n_heads: int,
    n_kv_heads: int,
    ffn_dim: int,
    vocab_size: int,
    gated: bool | None = None,
    tied: bool | None = None,
) -> float:
    """Total parameters of a dense decoder, GQA- and SwiGLU-aware.

    Per layer: attention q and o (d^2 each) + k and v (d x d_kv each, d_kv = d kv_heads /
    heads: grouped-query attention, Ainslie et al. 2023) + the MLP, 3 matrices of d x ffn
    when `gated` (SwiGLU, Shazeer 2020; None: gated_by_width) else 2 + two norms (2 d); plus
    the embeddings, in and out (2 V d, as LLaMA and Llama 3) or `tied` (V d, as GPT-2/GPT-3
    and Llama 3.2 1B; None: tied_by_mlp). Llama 3.1 8B (32 x 4096, 32 heads, 8 kv, ffn
    14336, V 128256; Dubey et al. 2024 table 3): 8.03e9. Llama 3.2 1B (16 x 2048, 32 heads,
    8 kv, ffn 8192 gated, V 128256 tied; its model card and config.json): 1.24e9.
    """
    gated = gated_by_width(d_model, ffn_dim) if gated is None else gated
    tied = tied_by_mlp(gated) if tied is None else tied
    layer = layer_matmul_params(d_model, n_heads, n_kv_heads, ffn_dim, gated)
    embeddings = (1 if tied else 2) * vocab_size * d_model
    return float(n_layer * (layer + 2 * d_model) + embeddings)


def _preset(
    label: str,
    n_layer: int,
    d: int,
    heads: int,
    kv: int,
    ffn: int,
    vocab: int,
    ref: str,
    gated: bool | None = None,
    tied: bool | None = None,
) -> LLMPreset:
    return LLMPreset(n_layer, d, heads, kv, ffn, vocab, gated, tied, label=label, reference=ref)


LLM_PRESETS: dict[str, LLMPreset] = {
    p.label: p
    for p in (
        _preset("124m", 12, 768, 12, 12, 3072, 50257, "GPT-2 small (Radford et al. 2019)"),
        _preset("355m", 24, 1024, 16, 16, 4096, 50257, "GPT-2 medium (Radford et al. 2019)"),
        # Llama 3.2 1B and 3B (their model cards and config.json): a SwiGLU MLP of 4 d and
        # 3.2 d, embeddings tied.
        _preset("1.24b", 16, 2048, 32, 8, 8192, 128256, "Llama 3.2 1B (Meta 2024)", True, True),
        _preset(
            "1.3b", 24, 2048, 16, 16, 8192, 50257, "GPT-3 XL (Brown et al. 2020)"
        ),  # 16 heads of 128, as benchmarks/models/gpt.py
        _preset("3.21b", 28, 3072, 24, 8, 8192, 128256, "Llama 3.2 3B (Meta 2024)", True, True),
        _preset("6.7b", 32, 4096, 32, 32, 11008, 32000, "LLaMA-7B (Touvron et al. 2023a)"),
        _preset("13b", 40, 5120, 40, 40, 13824, 32000, "LLaMA-13B (Touvron et al. 2023a)"),
        _preset("69b", 80, 8192, 64, 8, 28672, 32000, "Llama-2-70B (Touvron et al. 2023b)"),
        _preset("175b", 96, 12288, 96, 96, 49152, 50257, "GPT-3 175B (Brown et al. 2020)"),
        _preset("405b", 126, 16384, 128, 8, 53248, 128256, "Llama 3.1 405B (Dubey et al. 2024)"),
    )
}

# Size labels of the GPT benchmark (benchmarks/models/gpt.py) that round a preset's count
# differently: its "350m" is GPT-2 medium, 24 x 1024, whose parameters are 355M.
BENCHMARK_LABELS = {"350m": "355m"}

_SCALE = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}


def preset_named(label: str) -> LLMPreset | None:
    """The preset a label names: its own label, or a GPT benchmark size (BENCHMARK_LABELS)."""
    text = str(label).strip().lower()
    return LLM_PRESETS.get(BENCHMARK_LABELS.get(text, text))


def label_params(label: str) -> float:
    """The count a size label names: "6.7b" -> 6.7e9."""
    return float(label[:-1]) * _SCALE[label[-1]]


def preset_for(params: float, tolerance: float = 0.01) -> LLMPreset | None:
    """The preset whose parameter count is within `tolerance` of `params`, if any."""
    for preset in LLM_PRESETS.values():
        if abs(preset.params - params) <= tolerance * params:
            return preset
    return None
