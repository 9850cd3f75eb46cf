"""Mixture-of-experts LLM presets, from their model cards and reports.

Each preset gives the total and active parameters as the card states them (memory holds
the total, FLOPs and MFU count the active: planner.llm.moe) and the shape the operator
model times: layers, width, attention heads and key/value heads, vocabulary, routed
experts, experts per token (top-k), shared experts and each expert's MLP width.

- DeepSeek-V3: 671B total, 37B active; 61 layers of width 7168, 128 heads, vocabulary
  129,280; 256 routed experts + 1 shared, top-8, expert width 2048 (DeepSeek-AI 2024,
  "DeepSeek-V3 Technical Report", arXiv:2412.19437, sec. 4.2). Its first 3 layers are dense
  and its attention is multi-head latent attention; both are timed as MoE layers with
  multi-head attention (MHA-equivalent, planner.llm.moe).
- Qwen3-30B-A3B: 30.5B total, 3.3B active; 48 layers of width 2048, 32 query / 4 key-value
  heads of width 128 (twice 2048 / 32), vocabulary 151,936; 128 experts, top-8, expert width
  768, no shared expert. Qwen3-235B-A22B: 235B total, 22B active; 94 layers of width 4096,
  64 / 4 heads of 128; 128 experts, top-8, expert width 1536 (Qwen Team 2025, "Qwen3
  Technical Report", arXiv:2505.09388, table 2; the models' config.json on Hugging Face).
- GPT-OSS-120B: 116.8B total, 5.1B active; 36 layers of width 2880, 64 query / 8 key-value
  heads of width 64, vocabulary 201,088; 128 experts, top-4, expert width 2880 (its
  alternating 128-token banded attention is timed as full attention). GPT-OSS-20B: 20.9B total,
  3.6B active; 24 layers, 32 experts, otherwise the same (OpenAI 2025, "gpt-oss-120b &
  gpt-oss-20b Model Card", table 1 and sec. 2.1).
- Mixtral 8x7B: 46.7B total, 12.9B active; 32 layers of width 4096, 32 / 8 heads, vocabulary
  32,000; 8 experts, top-2, expert width 14,336 (Jiang et al. 2024, "Mixtral of Experts",
  table 1). Mixtral 8x22B: 141B total, 39B active; 56 layers of width 6144, 48 / 8 heads,
  vocabulary 32,768, 8 experts, top-2, expert width 16,384 (Mistral AI 2024, "Cheaper,
  Better, Faster, Stronger", and the model's config.json).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MoEPreset:
    """One published MoE model: stated parameter counts and its shape (module docstring)."""

    key: str
    title: str
    params: float
    active_params: float
    n_layer: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    vocab_size: int
    experts: int
    top_k: int
    shared_experts: int
    expert_ffn: int
    reference: str
    head_dim: int = 0  # each head's width where it is not d_model / n_heads (0: it is)


MOE_PRESETS: dict[str, MoEPreset] = {
    p.key: p
    for p in (
        MoEPreset("deepseek-v3", "DeepSeek-V3", 671e9, 37e9, 61, 7168, 128, 128, 129280,
                  256, 8, 1, 2048, "DeepSeek-AI 2024, arXiv:2412.19437"),
        MoEPreset("qwen3-30b-a3b", "Qwen3-30B-A3B", 30.5e9, 3.3e9, 48, 2048, 32, 4, 151936,
                  128, 8, 0, 768, "Qwen Team 2025, arXiv:2505.09388", head_dim=128),
        MoEPreset("qwen3-235b-a22b", "Qwen3-235B-A22B", 235e9, 22e9, 94, 4096, 64, 4, 151936,
                  128, 8, 0, 1536, "Qwen Team 2025, arXiv:2505.09388", head_dim=128),
        MoEPreset("gpt-oss-20b", "GPT-OSS-20B", 20.9e9, 3.6e9, 24, 2880, 64, 8, 201088,
                  32, 4, 0, 2880, "OpenAI 2025, gpt-oss model card", head_dim=64),
        MoEPreset("gpt-oss-120b", "GPT-OSS-120B", 116.8e9, 5.1e9, 36, 2880, 64, 8, 201088,
                  128, 4, 0, 2880, "OpenAI 2025, gpt-oss model card", head_dim=64),
        MoEPreset("mixtral-8x7b", "Mixtral 8x7B", 46.7e9, 12.9e9, 32, 4096, 32, 8, 32000,
                  8, 2, 0, 14336, "Jiang et al. 2024, arXiv:2401.04088"),
        MoEPreset("mixtral-8x22b", "Mixtral 8x22B", 141e9, 39e9, 56, 6144, 48, 8, 32768,
                  8, 2, 0, 16384, "Mistral AI 2024, Mixtral 8x22B"),
    )
}  # fmt: skip


def moe_preset_for(params: float, active: float, tolerance: float = 0.02) -> MoEPreset | None:
    """The preset whose total and active counts are both within `tolerance` of these."""
    for preset in MOE_PRESETS.values():
        if (
            abs(preset.params - params) <= tolerance * params
            and abs(preset.active_params - active) <= tolerance * active
        ):
            return preset
    return None
