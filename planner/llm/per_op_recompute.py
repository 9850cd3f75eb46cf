"""Per-operator selective recomputation as torchtitan runs it (`[activation_checkpoint] mode =
"selective"`, `selective_ac_option = "op"`): what each decoder layer stores and recomputes.

The policy (pytorch/torchtitan @82010c79, torchtitan/models/llama/parallelize_llama.py,
`_apply_ac_to_transformer_block`; the float8 benchmarks of pytorch/ao ran it) wraps each
block in torch.utils.checkpoint with a selective policy that saves the output of every
matmul, every scaled-dot-product attention and every max, "except every second mm" of the
block, and recomputes everything else in the backward pass. A Llama block calls its
matmuls in the order wq, wk, wv, wo, then w1, w3, w2 (SwiGLU) or fc, proj (GELU), so the
key projection, the output projection and the MLP's second matmul (w3, or proj) are
recomputed, with every norm, rotary embedding, activation and product between them.

Per token and layer, in values of the layer's width (16-bit, tensor parallel t divides
them all), the block stores its input, the query and value projections, the attention
output and the MLP's saved matmuls: h + 2 a d + g d + f + h gated (w1 and w2 saved; 4 h +
g d + f where a d = h), without the last h with GELU (fc saved). Recomputation costs the
recomputed matmuls' forward FLOPs and the layer's forward memory-bound traffic (norms,
activations, residual adds); attention is not run again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from planner.llm.ops import LayerShape


def _widths(layer: LayerShape) -> tuple[float, float, float, float]:
    """(h, query width a d, key/value width g d, MLP width f) of a layer, unsharded."""
    d = layer.d_head
    return float(layer.d_model), layer.n_heads * d, layer.n_kv_heads * d, float(layer.ffn_dim)


def recomputed_gemm_share(layer: LayerShape) -> float:
    """Share of a layer's forward GEMM FLOPs the policy recomputes: the key projection
    (h x g d), the output projection (a d x h) and the MLP's second matmul (h x f), over
    all of them (module docstring)."""
    h, q, kv, f = _widths(layer)
    recomputed = h * kv + q * h + h * f
    total = h * (q + 2.0 * kv) + q * h + (3.0 if layer.gated else 2.0) * h * f
    return recomputed / total


def stored_bytes_per_token(layer: LayerShape, value_bytes: float = 2.0) -> float:
    """Bytes a layer keeps per token for the backward pass (before tensor parallelism): its
    input (h), query (a d), value (g d), attention output (a d), and the saved MLP matmuls
    (w1's f and w2's h gated, fc's f with GELU) (module docstring)."""
    h, q, kv, f = _widths(layer)
    mlp = f + (h if layer.gated else 0.0)
    return value_bytes * (h + 2.0 * q + kv + mlp)
