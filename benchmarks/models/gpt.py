"""GPT-style decoder-only LLM, written here (no transformers library).

Architecture: GPT-2 (Radford et al. 2019): pre-LayerNorm blocks, GELU MLP of width
4 d_model, learned positions, output projection tied to the token embedding. Sizes:
124m = GPT-2 small (12 x 768), 350m = GPT-2 medium (24 x 1024), 1.3b = GPT-3 XL shape
(24 x 2048, Brown et al. 2020, table 2.1, with 128-wide heads). The vocabulary is
GPT-2's 50,257 padded to 50,304 (a multiple of 64), as nanoGPT does for tensor-core
shapes. Attention runs through torch.nn.functional.scaled_dot_product_attention
(causal). No dropout: pre-training recipes of this size use none (nanoGPT's bench.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from benchmarks.models import transformer
from benchmarks.models.transformer import TransformerShape, init_normal, self_attention


@dataclass(frozen=True)
class GPTConfig(TransformerShape):
    """Shape of a decoder and its training context length."""

    vocab_size: int = 50304
    seq_len: int = 1024


CONFIGS: dict[str, GPTConfig] = {
    "tiny": GPTConfig(n_layer=2, d_model=64, n_head=4, vocab_size=1024, seq_len=64),
    "124m": GPTConfig(n_layer=12, d_model=768, n_head=12),
    "350m": GPTConfig(n_layer=24, d_model=1024, n_head=16),
    "1.3b": GPTConfig(n_layer=24, d_model=2048, n_head=16, seq_len=2048),
}


def matmul_params(cfg: GPTConfig) -> int:
    """Weights that multiply activations: per layer QKV, projection, MLP; the LM head.

    The LM head is the tied token embedding, counted once here because it is a matmul;
    position embeddings are a lookup and are not counted.
    """
    return cfg.block_matmul_params + cfg.d_model * cfg.vocab_size


def non_embedding_params(cfg: GPTConfig) -> int:
    """Kaplan et al. 2020's N: 12 n_layer d_model^2 (weights of the blocks, no biases)."""
    return cfg.block_matmul_params


def training_flops_per_token(cfg: GPTConfig) -> float:
    """Training FLOPs per token: 6 N + 12 n_layer n_ctx d_model, N = matmul_params, which
    includes the LM head (transformer.training_flops_per_token: PaLM appendix B, used for
    MFU). Kaplan et al. 2020's 6 N' + 6 n_layer n_ctx d (N' = non_embedding_params) is the
    same count without the LM head and with half the attention term (kaplan_flops_per_token).
    """
    return transformer.training_flops_per_token(cfg, matmul_params(cfg))


def kaplan_flops_per_token(cfg: GPTConfig) -> float:
    """6 N + 6 n_layer n_ctx d_model with N non-embedding (Kaplan et al. 2020, table 1)."""
    return 6 * non_embedding_params(cfg) + 6 * cfg.n_layer * cfg.seq_len * cfg.d_model


def training_flops_per_sample(cfg: GPTConfig) -> float:
    """Training FLOPs per sequence of seq_len tokens (training_flops_per_token x seq_len)."""
    return float(cfg.seq_len * training_flops_per_token(cfg))


class Block(nn.Module):
    """x + attn(ln(x)); x + mlp(ln(x))."""

    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.n_head = cfg.n_head
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.fc = nn.Linear(cfg.d_model, cfg.d_ff)
        self.fc_proj = nn.Linear(cfg.d_ff, cfg.d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.proj(self_attention(self.qkv(self.ln1(x)), self.n_head, is_causal=True))
        return x + self.fc_proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    """Token + position embeddings, blocks, final LayerNorm, tied LM head."""

    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.wpe = nn.Embedding(cfg.seq_len, cfg.d_model)
        blocks = [Block(cfg) for _ in range(cfg.n_layer)]
        self.blocks = nn.ModuleList(blocks)
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight  # tied (Press & Wolf 2017; GPT-2)
        self.apply(init_normal)  # GPT-2
        for block in blocks:  # scaled residual init (Radford et al. 2019, section 2.3)
            nn.init.normal_(block.proj.weight, std=0.02 / (2 * cfg.n_layer) ** 0.5)
            nn.init.normal_(block.fc_proj.weight, std=0.02 / (2 * cfg.n_layer) ** 0.5)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(positions)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def build(cfg: GPTConfig) -> GPT:
    """A freshly initialised decoder for `cfg`."""
    return GPT(cfg)


def make_batch(
    cfg: GPTConfig, batch_size: int, device: torch.device, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Synthetic token ids and next-token targets (N, seq_len) on `device`."""
    tokens = torch.randint(
        0, cfg.vocab_size, (batch_size, cfg.seq_len + 1), device=device, generator=generator
    )
    return tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()


def loss(model: nn.Module, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
    """Next-token cross-entropy over every position."""
    idx, targets = batch
    logits = model(idx)
    return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))
