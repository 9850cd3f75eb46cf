"""BERT encoder with a SQuAD span head, written here (no transformers library).

Architecture: Devlin et al. 2019, "BERT: Pre-training of Deep Bidirectional Transformers"
(post-LayerNorm encoder, GELU, learned positions, token types; base 12 x 768, large
24 x 1024, vocabulary 30,522 WordPiece). The question-answering head is one linear layer
to start/end logits, as in the paper's SQuAD fine-tuning (section 4.2), at sequence
length 384 like the published `bert_*_squad` figures. Attention runs through
torch.nn.functional.scaled_dot_product_attention. BERT-large: 334.1M parameters.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from benchmarks.models.transformer import (
    TransformerShape,
    init_normal,
    self_attention,
    training_flops_per_token,
)


@dataclass(frozen=True)
class BertConfig(TransformerShape):
    """Shape of a BERT encoder and its (fixed) training sequence length."""

    vocab_size: int = 30522
    seq_len: int = 384
    max_position: int = 512
    type_vocab_size: int = 2
    dropout: float = 0.1


CONFIGS: dict[str, BertConfig] = {
    "tiny": BertConfig(
        n_layer=2, d_model=64, n_head=2, vocab_size=1024, max_position=128, seq_len=128
    ),
    "base": BertConfig(n_layer=12, d_model=768, n_head=12),
    "large": BertConfig(n_layer=24, d_model=1024, n_head=16),
}


def matmul_params(cfg: BertConfig) -> int:
    """Weights that multiply activations: per layer QKV, output, two FFN layers; QA head."""
    return cfg.block_matmul_params + 2 * cfg.d_model


def training_flops_per_sample(cfg: BertConfig) -> float:
    """Training FLOPs per sequence: seq_len x (6 N + 12 n_layer n_ctx d_model), N =
    matmul_params, attention over the full (bidirectional) context
    (transformer.training_flops_per_token: PaLM appendix B)."""
    return float(cfg.seq_len * training_flops_per_token(cfg, matmul_params(cfg)))


class EncoderLayer(nn.Module):
    """Self-attention and feed-forward, each followed by residual add and LayerNorm."""

    def __init__(self, cfg: BertConfig) -> None:
        super().__init__()
        self.n_head = cfg.n_head
        self.dropout = cfg.dropout
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.attn_out = nn.Linear(cfg.d_model, cfg.d_model)
        self.ln1 = nn.LayerNorm(cfg.d_model, eps=1e-12)
        self.ff_in = nn.Linear(cfg.d_model, cfg.d_ff)
        self.ff_out = nn.Linear(cfg.d_ff, cfg.d_model)
        self.ln2 = nn.LayerNorm(cfg.d_model, eps=1e-12)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dropout_p = self.dropout if self.training else 0.0
        attn = self_attention(self.qkv(x), self.n_head, dropout_p=dropout_p)
        x = self.ln1(x + self.drop(self.attn_out(attn)))
        return self.ln2(x + self.drop(self.ff_out(F.gelu(self.ff_in(x)))))


class BertForQuestionAnswering(nn.Module):
    """Embeddings, encoder, and a linear span head giving start and end logits."""

    def __init__(self, cfg: BertConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.word = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.position = nn.Embedding(cfg.max_position, cfg.d_model)
        self.token_type = nn.Embedding(cfg.type_vocab_size, cfg.d_model)
        self.ln = nn.LayerNorm(cfg.d_model, eps=1e-12)
        self.drop = nn.Dropout(cfg.dropout)
        self.layers = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.n_layer))
        self.qa = nn.Linear(cfg.d_model, 2)
        self.apply(init_normal)  # Devlin et al. 2019, released code

    def forward(
        self, input_ids: torch.Tensor, token_type_ids: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = self.word(input_ids) + self.position(positions) + self.token_type(token_type_ids)
        x = self.drop(self.ln(x))
        for layer in self.layers:
            x = layer(x)
        start, end = self.qa(x).unbind(-1)
        return start, end


def build(cfg: BertConfig) -> BertForQuestionAnswering:
    """A freshly initialised BERT span model for `cfg`."""
    return BertForQuestionAnswering(cfg)


def make_batch(
    cfg: BertConfig, batch_size: int, device: torch.device, generator: torch.Generator
) -> tuple[torch.Tensor, ...]:
    """Synthetic token ids, segment ids (question | context) and answer spans on `device`."""
    seq = cfg.seq_len
    input_ids = torch.randint(
        0, cfg.vocab_size, (batch_size, seq), device=device, generator=generator
    )
    token_type_ids = (torch.arange(seq, device=device) >= seq // 4).long().expand(batch_size, -1)
    start = torch.randint(seq // 4, seq, (batch_size,), device=device, generator=generator)
    end = torch.clamp(start + 8, max=seq - 1)
    return input_ids, token_type_ids.contiguous(), start, end


def loss(model: nn.Module, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
    """Mean of start- and end-position cross-entropy (Devlin et al. 2019, section 4.2)."""
    input_ids, token_type_ids, start, end = batch
    start_logits, end_logits = model(input_ids, token_type_ids)
    return (F.cross_entropy(start_logits, start) + F.cross_entropy(end_logits, end)) / 2
