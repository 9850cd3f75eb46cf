"""What the BERT encoder and the GPT decoder share: their shape and FLOP count, their weight
init and fused-QKV attention."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F


@dataclass(frozen=True)
class TransformerShape:
    """Layers, width, heads, vocabulary and training sequence length of a BERT or GPT model."""

    n_layer: int
    d_model: int
    n_head: int
    vocab_size: int
    seq_len: int

    @property
    def d_ff(self) -> int:
        """Feed-forward width: 4 d_model (Devlin et al. 2019; Radford et al. 2019)."""
        return 4 * self.d_model

    @property
    def block_matmul_params(self) -> int:
        """Weights of the layers that multiply activations, no biases: per layer QKV, the
        attention output and two feed-forward layers; 12 n_layer d_model^2 (Kaplan et al.
        2020's non-embedding N)."""
        d = self.d_model
        return self.n_layer * (3 * d * d + d * d + 2 * d * self.d_ff)


def training_flops_per_token(shape: TransformerShape, matmul_params: int) -> float:
    """Training FLOPs per token: 6 N + 12 n_layer n_ctx d_model.

    6 N for the weight matmuls (2 forward + 4 backward per weight, N = `matmul_params`;
    embeddings are lookups, not matmuls) and 12 n_layer n_ctx d for attention scores and
    their weighted sum over the whole context, causal mask or not: the model-FLOPs count of
    Chowdhery et al. 2022 (PaLM), appendix B, used for MFU; Kaplan et al. 2020 table 1
    counts the same terms.
    """
    return 6 * matmul_params + 12 * shape.n_layer * shape.seq_len * shape.d_model


def init_normal(module: nn.Module) -> None:
    """Normal(0, 0.02) weights, zero biases, for Linear and Embedding layers (`model.apply`):
    the init of BERT's and GPT-2's released code (Devlin et al. 2019; Radford et al. 2019)."""
    if isinstance(module, nn.Linear | nn.Embedding):
        nn.init.normal_(module.weight, std=0.02)
    if isinstance(module, nn.Linear) and module.bias is not None:
        nn.init.zeros_(module.bias)


def self_attention(qkv: torch.Tensor, n_head: int, **sdpa: Any) -> torch.Tensor:
    """Multi-head attention of a fused (batch, seq, 3 d) query/key/value projection, back as
    (batch, seq, d); `sdpa` goes to scaled_dot_product_attention (is_causal, dropout_p)."""
    batch, seq, width = qkv.shape
    d = width // 3
    q, k, v = qkv.view(batch, seq, 3, n_head, d // n_head).unbind(2)
    attn = F.scaled_dot_product_attention(
        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), **sdpa
    )
    return attn.transpose(1, 2).reshape(batch, seq, d)
