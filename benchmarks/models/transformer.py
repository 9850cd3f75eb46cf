"""What the BERT encoder and the GPT decoder share: their weight init and fused-QKV attention."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn import functional as F


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
