"""Mixture-of-experts LLMs: counts, names, memory, expert parallelism and the all-to-all."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from planner.llm.layout import LayoutSettings, memory_terms
from planner.llm.moe import (
    LOAD_IMBALANCE,
    all_to_all_seconds,
    expert_layer_seconds,
)
from planner.llm.ops import OpRates
from planner.llm.throughput import llm_shape_of, peak_flops, predict_layout
from planner.workloads.catalog import get_workload, moe_workload
from planner.workloads.moe_presets import MOE_PRESETS
from planner.workloads.moe_shape import routed_expert_params


def test_moe_flops_count_the_active_parameters_not_the_total():
    w = get_workload("deepseek-v3-1t")
    assert w.is_moe and w.params == 671e9 and w.active_params == 37e9
    assert w.flops_per_sample == pytest.approx(6 * 37e9 + 12 * 61 * 2048 * 7168)
    assert w.flops_per_sample < 0.1 * 6 * w.params


@pytest.mark.parametrize("key", sorted(MOE_PRESETS))
def test_preset_shapes_hold_the_cards_routed_parameters(key):
    """The card's (N - A) E / (E - k) routed parameters against L E 3 h f_e of its shape
    (DeepSeek-V3's 3 dense layers make its shape 5% larger)."""
    p = MOE_PRESETS[key]
    card = routed_expert_params(p.params, p.active_params, p.experts, p.top_k)
    shape = p.n_layer * p.experts * 3 * p.d_model * p.expert_ffn
    assert shape == pytest.approx(card, rel=0.06)


def test_total_active_names_parse_to_presets_or_derived_shapes():
    qwen = get_workload("llm-235b-a22b-1t")
    assert (qwen.model_size, qwen.experts, qwen.top_k, qwen.expert_ffn) == (
        "qwen3-235b-a22b", 128, 8, 1536,
    )  # fmt: skip
    made = get_workload("llm-100b-a10b-2t")
    assert made.samples == 2e12 and made.params == 100e9 and made.active_params == 10e9
    assert made.experts == 128 and made.top_k == 8
    routed = routed_expert_params(100e9, 10e9, 128, 8)
    held = made.n_layer * made.experts * 3 * made.d_model * made.expert_ffn
    assert held == pytest.approx(routed, rel=0.01)
    assert get_workload("mixtral-8x7b-14.8t").samples == pytest.approx(14.8e12)


def test_bad_moe_counts_are_refused():
    with pytest.raises(ValueError, match="active_params <= params"):
        moe_workload(10e9, 20e9, 1e12)
    with pytest.raises(ValueError, match="no LoRA"):
        moe_workload(235e9, 22e9, 1e9, mode="lora")
    with pytest.raises(ValueError, match="llm-<total>-a<active>-<tokens>"):
        get_workload("llm-235b-x22b-1t")


def _terms(shape, ep, dp=8):
    one = np.array([1.0])
    settings = LayoutSettings(global_batch_tokens=4e6)
    return memory_terms(
        shape, settings, one, one, one, np.array([float(dp)]), one, one, one,
        np.array(["full"]), one, np.array([float(ep)]),
    )  # fmt: skip


def test_memory_holds_every_parameter_and_ep_shards_the_experts():
    shape = llm_shape_of(get_workload("mixtral-8x7b-1t"))
    single = _terms(shape, ep=1, dp=1)
    # One GPU, ZeRO-1: 16 bytes for every one of the TOTAL parameters (ZeRO sec. 3.1).
    states = float(single["states"][0] + single["expert_states"][0])
    assert states == pytest.approx(16 * 46.7e9, rel=1e-6)
    at_1, at_8 = _terms(shape, ep=1)["expert_states"][0], _terms(shape, ep=8)["expert_states"][0]
    # dp 8, ZeRO-1: at ep 1 each GPU keeps every expert's weights and gradients (4 bytes)
    # and 1/8 of their optimizer (12 / 8); at ep 8 it keeps 1/8 of the experts, whose
    # optimizer is not split further (dp / ep = 1 rank holds the same experts).
    routed = shape.expert_params
    assert at_1 == pytest.approx(routed * (4 + 12 / 8))
    assert at_8 == pytest.approx(routed / 8 * 16)


def test_all_to_all_across_nodes_is_slower_than_inside_one():
    nbytes = np.array([64e6])
    inside = all_to_all_seconds(nbytes, np.array([8.0]), np.array([8.0]), 360.0, 40.0, 5e-6, 1e-5)
    across = all_to_all_seconds(nbytes, np.array([16.0]), np.array([8.0]), 360.0, 40.0, 5e-6, 1e-5)
    spread = all_to_all_seconds(nbytes, np.array([16.0]), np.array([2.0]), 360.0, 40.0, 5e-6, 1e-5)
    assert 0 < inside[0] < across[0] < spread[0]
    # Half of the 16 ranks sit in other nodes: 32 MB over 40 GB/s, plus one network latency
    # (every peer in one round); inside a node, 7/8 of 64 MB over NVLink plus NVLink's.
    assert across[0] == pytest.approx(1e-5 + 0.5 * 64e6 / 40e9)
    assert inside[0] == pytest.approx(5e-6 + 7 / 8 * 64e6 / 360e9)
    assert all_to_all_seconds(nbytes, np.array([1.0]), np.array([1.0]), 360, 40, 5e-6, 1e-5)[0] == 0


def test_grouped_gemms_lose_to_padding_when_experts_get_few_tokens():
    rates = OpRates(gemm_flops=700e12, attention_flops=400e12, hbm_bytes_per_s=3e12, sms=132)

    def seconds_per_token(tokens):
        forward = expert_layer_seconds(
            np.array([tokens]), np.array([1.0]), np.array([8.0]), 4096, 128, 8, 1536, rates
        )[0]
        return forward[0] / tokens

    # 16 experts per GPU; 64 tokens give 37 per expert (padded to 256 rows), 65,536 many.
    assert seconds_per_token(64) > 3 * seconds_per_token(65536)
    assert LOAD_IMBALANCE > 1


def test_layout_search_uses_expert_parallelism_and_names_moe_parts():
    w = get_workload("mixtral-8x7b-1t")
    found = predict_layout(w, "bf16", "H100-SXM", 32, 8, 3200.0)
    layout = found.layout
    assert layout.fits and layout.ep > 1 and f"ep{layout.ep}" in layout.label
    assert layout.grouped_gemm_share > 0.1 and layout.a2a_share > 0
    # MFU counts the active parameters: tokens/s x 6 A (+ attention) over the peak.
    flops = w.flops_per_sample * layout.tokens_per_s
    assert layout.mfu == pytest.approx(flops / (32 * peak_flops("H100-SXM", "bf16")))
    assert w.flops_per_sample < 6 * w.params / 3
    dense = predict_layout(get_workload("llm-6.7b-134b"), "bf16", "H100-SXM", 32, 8, 3200.0)
    assert dense.layout.ep == 1 and dense.layout.a2a_share == 0
    assert dense.layout.grouped_gemm_share == 0


def test_fp8_casts_cover_the_experts_grouped_gemms_and_none_without_fp8():
    bf16 = OpRates(gemm_flops=700e12, attention_flops=400e12, hbm_bytes_per_s=3e12, sms=132)
    fp8 = OpRates(
        gemm_flops=1400e12, attention_flops=400e12, hbm_bytes_per_s=3e12, sms=132,
        cast_factor=1.0,
    )  # fmt: skip
    args = (np.array([8192.0]), np.array([1.0]), np.array([8.0]), 4096, 128, 8, 1536)
    assert expert_layer_seconds(*args, bf16)[4][0] == 0.0
    # 16 local experts of 2 x 1536 + 1536 wide GEMMs on 8192 x 8 x 8 / 128 tokens each, at
    # 3 bytes per value cast (inputs, weights and output gradients) over 3 TB/s.
    tokens = 8192 * 8 * 8 / 128 * LOAD_IMBALANCE
    values = sum(tokens * k + k * n + tokens * n for n, k in ((3072, 4096), (4096, 1536)))
    assert expert_layer_seconds(*args, fp8)[4][0] == pytest.approx(16 * 3 * values / 3e12)
    w = get_workload("mixtral-8x7b-1t")
    found = predict_layout(w, "fp8", "H100-SXM", 32, 8, 3200.0).layout
    assert found.fits and found.cast_share > 0.02


def _deepseek(overlap: bool, dense: bool = False):
    from planner.settings import LLMSettings, StatedLayout

    work = get_workload("llm-37b-1t" if dense else "deepseek-v3-1t")
    settings = LLMSettings(global_batch_tokens=2**25, moe_overlap=overlap,
                           pinned=None if dense else StatedLayout(tp=1, pp=16, ep=64))  # fmt: skip
    return predict_layout(work, "bf16", "H800-SXM", 2048, 8, 3200.0, settings=settings)


def test_an_overlapped_all_to_all_shows_only_what_outlasts_the_compute():
    exposed, overlapped = _deepseek(False), _deepseek(True)
    assert exposed.layout.fits and overlapped.layout.fits
    assert exposed.layout.label == overlapped.layout.label  # the same layout, timed two ways
    step, a2a = exposed.layout.step_s, exposed.layout.a2a_share * exposed.layout.step_s
    compute = exposed.layout.compute_share * exposed.layout.step_s
    assert a2a > 0.2 * step  # 64-way expert parallelism across 8 nodes: a large part
    left = overlapped.layout.a2a_share * overlapped.layout.step_s
    assert left == pytest.approx(max(0.0, a2a - compute), abs=0.02 * step)
    assert overlapped.tokens_per_s > 1.2 * exposed.tokens_per_s
    # A dense model has no all-to-all to hide: the setting changes nothing.
    assert _deepseek(True, dense=True).tokens_per_s == _deepseek(False, dense=True).tokens_per_s


def test_plan_takes_the_overlap_flag_and_says_so():
    import json

    from typer.testing import CliRunner

    from planner.cli.main import app

    args = ["plan", "-w", "mixtral-8x7b-1t", "--provider", "aws", "--gpu", "H100",
            "--gpus", "32", "--format", "json"]  # fmt: skip
    runner = CliRunner()
    exposed = {r["option_id"]: r for r in json.loads(runner.invoke(app, args).stdout)}
    overlapped = json.loads(runner.invoke(app, [*args, "--moe-overlap"]).stdout)
    assert overlapped and {r["option_id"] for r in overlapped} == set(exposed)
    for row in overlapped:
        assert row["throughput"] >= exposed[row["option_id"]]["throughput"]
        assert "DualPipe-style overlap" in row["throughput_detail"]


def test_a_cards_head_width_sets_the_attention_projections_and_flops():
    from planner.llm.ops import _gemms, attention_seconds

    qwen = get_workload("qwen3-235b-a22b-1t")  # 64 heads of 128 at width 4096
    assert qwen.head_dim == 128 and qwen.n_heads * qwen.head_dim == 2 * qwen.d_model
    layer = llm_shape_of(qwen).layer
    assert layer.d_head == 128
    plain = llm_shape_of(dataclasses.replace(qwen, head_dim=None)).layer
    assert plain.d_head == 64  # d_model / heads, as a card without a head width reads
    tokens, one = np.array([4096.0]), np.array([1.0])
    qkv, out = _gemms(layer, tokens, one)[:2]
    assert float(qkv[1][0]) == (64 + 2 * 4) * 128 and float(out[2][0]) == 64 * 128
    rates = OpRates(gemm_flops=700e12, attention_flops=450e12, hbm_bytes_per_s=2.7e12, sms=132)
    wide, _ = attention_seconds(layer, one, one, one, rates)
    narrow, _ = attention_seconds(plain, one, one, one, rates)
    assert 1.3 < float(wide[0]) / float(narrow[0]) < 2.0  # twice the FLOPs, faster kernel at 128
    # The attention term of the FLOPs per token counts the heads' width, not d_model.
    s, layers = qwen.seq_len, qwen.n_layer
    assert qwen.flops_per_sample == pytest.approx(6 * 22e9 + 12 * layers * s * 64 * 128)
    assert get_workload("mixtral-8x7b-1t").head_dim is None  # 4096 / 32 = 128 already
