"""Full recomputation's early stop (planner.llm.frameworks recompute_early_stop): PyTorch's
non-reentrant checkpoint does not run a layer's last GEMM, the MLP's down projection, again;
the reentrant checkpoints Megatron-LM, nanotron, DeepSpeed and Hugging Face run replay the
whole layer."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import numpy as np
import pytest
import torch
from torch import nn
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
    CheckpointImpl,
    apply_activation_checkpointing,
    checkpoint_wrapper,
)
from torch.utils._python_dispatch import TorchDispatchMode

from planner.llm.frameworks import FRAMEWORKS
from planner.llm.layout import _candidates, _micro_batches
from planner.llm.ops import LayerShape, OpRates, _gemms, _train_gemm_seconds, micro_batch_seconds
from planner.llm.throughput import _predict, predict_layout
from planner.settings import LLMSettings, StatedLayout
from planner.workloads.catalog import llm_workload

WIDTH, MLP = 64, 96


class _Block(nn.Module):
    """A Llama-style layer: norm, q/k/v, attention, output projection, norm, SwiGLU."""

    def __init__(self) -> None:
        super().__init__()
        self.norms = nn.ModuleList([nn.RMSNorm(WIDTH), nn.RMSNorm(WIDTH)])
        self.q, self.k, self.v, self.o = (nn.Linear(WIDTH, WIDTH, bias=False) for _ in range(4))
        self.w1, self.w3 = (nn.Linear(WIDTH, MLP, bias=False) for _ in range(2))
        self.w2 = nn.Linear(MLP, WIDTH, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.norms[0](x)
        b, t, _ = y.shape
        q, k, v = (m(y).view(b, t, 4, WIDTH // 4).transpose(1, 2) for m in (self.q, self.k, self.v))
        a = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, WIDTH))
        y = self.norms[1](x)
        return x + self.w2(nn.functional.silu(self.w1(y)) * self.w3(y))


class _Matmuls(TorchDispatchMode):
    """Counts the matmuls run, by their inner (reduction) width."""

    def __init__(self) -> None:
        super().__init__()
        self.inner: list[int] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        if func is torch.ops.aten.mm.default:
            self.inner.append(int(args[0].shape[1]))
        return func(*args, **(kwargs or {}))


def _backward_matmuls(impl: CheckpointImpl | None) -> list[int]:
    torch.manual_seed(0)
    model = nn.Sequential(_Block(), _Block())
    if impl is not None:
        wrap = partial(checkpoint_wrapper, checkpoint_impl=impl)
        apply_activation_checkpointing(model, checkpoint_wrapper_fn=wrap,
                                       check_fn=lambda m: isinstance(m, _Block))  # fmt: skip
    # the input asks for its gradient: the reentrant checkpoint replays only then
    loss = model(torch.randn(2, 16, WIDTH, requires_grad=True)).sum()
    counted = _Matmuls()
    with counted:
        loss.backward()
    return counted.inner


def test_torch_non_reentrant_checkpoint_skips_the_mlp_down_projection():
    plain = _backward_matmuls(None)
    early = _backward_matmuls(CheckpointImpl.NO_REENTRANT)
    replay = _backward_matmuls(CheckpointImpl.REENTRANT)
    forward_per_layer = 7  # q, k, v, o, w1, w3, w2
    assert len(replay) - len(plain) == 2 * forward_per_layer
    assert len(early) - len(plain) == 2 * (forward_per_layer - 1)
    # the one not run again is w2, the only forward matmul reducing over the MLP's width
    # (the backward's own input-gradient matmuls of w1 and w3 reduce over it too)
    assert early.count(MLP) == plain.count(MLP) and replay.count(MLP) == plain.count(MLP) + 2


def test_only_the_pytorch_stacks_stop_early():
    stops = {name for name, profile in FRAMEWORKS.items() if profile.recompute_early_stop}
    assert stops == {"fsdp", "fsdp2"}


LLAMA3_8B = LayerShape(4096, 32, 8, 14336, True, 128256, 4096)
RATES = OpRates(gemm_flops=700e12, attention_flops=450e12, hbm_bytes_per_s=4.8e12, sms=132)


def _recompute(share: float, early_stop: bool) -> float:
    one = np.array([1.0])
    return float(
        micro_batch_seconds(
            LLAMA3_8B, RATES, np.array([32.0]), one * 2, one, one, np.array([share]),
            np.array([False]), weight_grads=True, early_stop=early_stop,
        ).recompute[0]
    )  # fmt: skip


@pytest.mark.parametrize("share", [1.0, 0.25])
def test_early_stop_saves_the_down_projection_forward_of_each_recomputed_layer(share: float):
    tokens = np.array([2.0 * 4096])
    down_f, _ = _train_gemm_seconds(_gemms(LLAMA3_8B, tokens, np.ones(1))[-1:], RATES, False)
    saved = _recompute(share, False) - _recompute(share, True)
    assert saved == pytest.approx(32 * share * down_f[0], rel=1e-9)
    # the down projection is h x f of the layer's h (q + 2 kv + o) + 3 h f GEMM FLOPs: 27%
    all_f, _ = _train_gemm_seconds(_gemms(LLAMA3_8B, tokens, np.ones(1)), RATES, True)
    assert 0.2 < down_f[0] / all_f[0] < 0.35
    assert _recompute(0.0, True) == 0.0


def test_a_full_recompute_fsdp_plan_recomputes_less_than_its_forward(
    monkeypatch: pytest.MonkeyPatch,
):
    workload = llm_workload(8e9, 1e9, seq_len=4096)
    settings = LLMSettings(framework="fsdp", recompute="full", micro_batch=2, zero="zero1",
                           pinned=StatedLayout(tp=1, pp=1, vpp=1))  # fmt: skip

    def clear() -> None:
        for cached in (_predict, _candidates, _micro_batches):
            cached.cache_clear()

    def seconds() -> tuple[float, float]:
        """(recompute, GEMM) seconds a step of 8B on 8 H200, timed anew."""
        clear()
        found = predict_layout(workload, "bf16", "H200-SXM", 8, 8, 3200.0, settings=settings)
        layout = found.layout
        assert layout.fits
        return layout.recompute_time_share * layout.step_s, layout.gemm_share * layout.step_s

    early, gemm = seconds()
    replaying = replace(FRAMEWORKS["fsdp"], recompute_early_stop=False)
    monkeypatch.setitem(FRAMEWORKS, "fsdp", replaying)
    replayed, same_gemm = seconds()
    clear()  # no later test may read a plan timed with the replaced profile
    assert same_gemm == pytest.approx(gemm, rel=1e-9)
    # the down projection is about a quarter of the forward's GEMM time, which is most of it
    assert 0.72 < early / replayed < 0.88
