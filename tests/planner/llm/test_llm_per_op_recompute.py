"""torchtitan's per-operator selective recomputation: what it stores, what it recomputes, and
where it may be asked for."""

from __future__ import annotations

import numpy as np
import pytest

from planner.llm.corpus import load_corpus
from planner.llm.memory import activation_bytes_per_layer
from planner.llm.ops import (
    LayerShape,
    OpRates,
    _gemms,
    _train_gemm_seconds,
    attention_seconds,
    micro_batch_seconds,
)
from planner.llm.per_op_recompute import recomputed_gemm_share, stored_bytes_per_token
from planner.llm.throughput import predict_layout
from planner.llm.user_layout import LayoutSpecError, compare_layout, parse_layout
from planner.settings import LLMSettings
from planner.workloads.catalog import llm_workload

# Llama 3 8B's widths: h 4096, 32 query heads and 8 key/value heads of 128, SwiGLU f 14336.
H, KV, F = 4096.0, 1024.0, 14336.0
LLAMA3_8B = LayerShape(4096, 32, 8, 14336, True, 128256, 8192)
GPT_MHA = LayerShape(4096, 32, 32, 4 * 4096, False, 50257, 8192)  # GELU 4h MLP, MHA


def test_the_key_output_and_second_mlp_matmuls_are_recomputed():
    # wk (h x 1024), wo (4096 x h), w3 (h x f) of wq, wk, wv, wo, w1, w3, w2.
    share = recomputed_gemm_share(LLAMA3_8B)
    by_hand = (H * KV + H * H + H * F) / (H * (H + 2 * KV) + H * H + 3 * H * F)
    assert share == pytest.approx(by_hand)
    assert 0.36 < share < 0.37
    # GELU: q, k, v, o, fc, proj: proj is the second MLP matmul.
    assert recomputed_gemm_share(GPT_MHA) == pytest.approx(
        (H * H + H * H + 4 * H * H) / (3 * H * H + H * H + 8 * H * H)
    )


def test_it_stores_the_saved_matmul_and_attention_outputs_only():
    # input, wq, wv, attention output, w1, w2: 2 bytes each.
    assert stored_bytes_per_token(LLAMA3_8B) == 2 * (H + H + KV + H + F + H)
    assert stored_bytes_per_token(GPT_MHA) == 16 * H  # PER_OP_SBH's 16
    per_op, selective, full = (
        activation_bytes_per_layer(8192, np.array([1.0]), 4096, 32, np.array([1.0]),
                                   np.array([mode]), flash=True, per_op_sbh=15.5)[0]
        for mode in ("per-op", "selective", "full")
    )  # fmt: skip
    assert per_op == pytest.approx(15.5 * 8192 * 4096)
    assert full < per_op < selective


def test_its_time_is_the_recomputed_gemms_and_the_forward_memory_work():
    rates = OpRates(gemm_flops=700e12, attention_flops=450e12, hbm_bytes_per_s=2.7e12, sms=132)
    one = np.array([1.0])
    args = (LLAMA3_8B, rates, np.array([32.0]), one, one, one)

    def recompute(share: float, per_op: bool) -> float:
        return float(micro_batch_seconds(*args, np.array([share]), np.array([False]),
                                         weight_grads=True, per_op=np.array([per_op])
                                         ).recompute[0])  # fmt: skip

    gemm_f, _ = _train_gemm_seconds(_gemms(LLAMA3_8B, one * 8192, one), rates, True)
    attn_f, _ = attention_seconds(LLAMA3_8B, one, one, one, rates)
    full, per_op = recompute(1.0, False), recompute(0.0, True)
    # full: L (gemm_f + attn_f + mem_f); per-op: L (share gemm_f + mem_f)
    share = recomputed_gemm_share(LLAMA3_8B)
    assert full - per_op == pytest.approx(32 * ((1 - share) * gemm_f[0] + attn_f[0]))
    assert recompute(0.0, False) == 0.0


def test_fsdp2_plans_time_and_label_it():
    workload = llm_workload(8e9, 1e9, seq_len=8192)
    settings = LLMSettings(framework="fsdp2", recompute="per-op")
    found = predict_layout(workload, "bf16", "H100-SXM", 8, 8, 3200.0, settings=settings)
    assert found.layout.fits and found.layout.label.endswith("per-op-recompute")
    none = predict_layout(workload, "bf16", "H100-SXM", 8, 8, 3200.0,
                          settings=LLMSettings(framework="fsdp2", recompute="none",
                                               micro_batch=found.layout.micro_batch))  # fmt: skip
    assert found.layout.recompute_time_share > 0 and none.layout.recompute_time_share == 0


def test_a_stack_without_it_refuses_it_and_names_those_that_run_it():
    with pytest.raises(ValueError, match="megatron does not run: set the framework to fsdp, fsdp2"):
        LLMSettings(framework="megatron", recompute="per-op")
    workload = llm_workload(8e9, 1e9, seq_len=8192)
    best = predict_layout(workload, "bf16", "H100-SXM", 8, 8, 3200.0)  # megatron
    with pytest.raises(LayoutSpecError, match="recompute=per-op is torchtitan's"):
        compare_layout(best, workload, "H100-SXM", parse_layout("tp1 mb1 recompute=per-op"))


def test_a_layout_with_it_stores_less_than_selective_on_fsdp2():
    workload = llm_workload(8e9, 1e9, seq_len=8192)
    settings = LLMSettings(framework="fsdp2")
    best = predict_layout(workload, "bf16", "H100-SXM", 8, 8, 3200.0, settings=settings)
    acts = {
        mode: dict(compare_layout(best, workload, "H100-SXM",
                                  parse_layout(f"tp1 mb1 zero3 recompute={mode}"),
                                  settings).timed.terms_gb)["activations"]
        for mode in ("per-op", "selective", "full")
    }  # fmt: skip
    assert acts["full"] < acts["per-op"] < acts["selective"]


def test_the_corpus_reads_per_op_sac_as_per_op():
    runs, _ = load_corpus()
    ao = [r for r in runs if r.source == "pytorch/ao"]
    assert ao and {r.recompute for r in ao} == {"per-op"}
