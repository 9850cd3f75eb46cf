"""A mixture-of-experts model's shape from its model card's counts: routed-expert parameters,
each expert's MLP width and the training FLOPs per token on the active parameters
(planner.llm.moe times them)."""

from __future__ import annotations


def routed_expert_params(total: float, active: float, experts: int, top_k: int) -> float:
    """Parameters of all routed experts: (N - A) E / (E - k) (module docstring); 0 when the
    model is dense or every expert is active."""
    if experts <= 0 or top_k >= experts:
        return 0.0
    return max(0.0, (total - active) * experts / (experts - top_k))


def moe_training_flops_per_token(
    active_params: float, n_layer: int, seq_len: int, attention_width: int
) -> float:
    """Training FLOPs per token of a MoE model: 6 A + 12 L s w, on the ACTIVE parameters A,
    w the attention width (heads x head width; d_model for most models) (PaLM app. B's
    count with A for N: Chowdhery et al. 2022; DeepSeek-AI 2024, sec. 3.1)."""
    return 6.0 * active_params + 12.0 * n_layer * seq_len * attention_width


def expert_ffn_width(routed_params: float, n_layer: int, d_model: int, experts: int) -> int:
    """Each routed expert's SwiGLU width f_e that holds `routed_params` over L layers of E
    experts (3 h f_e parameters each), for names that give only total and active counts."""
    return max(1, round(routed_params / (3.0 * n_layer * experts * d_model)))
