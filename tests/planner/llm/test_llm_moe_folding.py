"""Megatron-Core's MoE parallel folding (expert tensor parallel 1, experts over tp x cp x
dp: planner.llm.moe), the all-to-all's own scaling, and how the corpus states both."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from planner.llm.corpus import corpus_run
from planner.llm.layout import Layout, LayoutSettings, _a2a_seconds, memory_terms
from planner.llm.moe import all_to_all_seconds, expert_layer_seconds
from planner.llm.ops import OpRates
from planner.llm.stack_fit import run_settings
from planner.llm.stack_profiles import StackParams, StepParts, rescaled_step, stack_params
from planner.llm.throughput import llm_shape_of, predict_layout
from planner.llm.user_layout import LayoutSpecError, UserLayout, check_layout, parse_layout
from planner.settings import LLMSettings, StatedLayout
from planner.workloads.catalog import get_workload, moe_workload

RATES = OpRates(gemm_flops=700e12, attention_flops=400e12, hbm_bytes_per_s=3e12, sms=132)
QWEN = moe_workload(235e9, 22e9, 1e12, seq_len=4096)  # Qwen3-235B-A22B's card shape
ONE = np.array([1.0])


def _seconds(tp: float, ep: float, etp: float) -> tuple[np.ndarray, ...]:
    return expert_layer_seconds(
        np.array([65536.0]), tp * ONE, ep * ONE, 4096, 128, 8, 2048, RATES, True, etp * ONE
    )


def test_folded_experts_run_whole_on_fewer_tokens_for_the_same_work():
    split, whole = _seconds(4, 8, 4), _seconds(4, 8, 1)
    # Split over tp 4: each GPU runs a quarter of every local expert on all the tokens;
    # folded: whole experts on the quarter of the tokens it holds. Same FLOPs and traffic
    # where both fill whole GEMM tiles (f_e / 4 = 512 rows: no padding either way).
    for a, b in zip(split, whole, strict=True):
        assert float(b[0]) == pytest.approx(float(a[0]), rel=1e-9)
    # A split narrower than a tile pads: 1536 / 4 = 384 rows of 512 in the weight gradients.
    narrow = [expert_layer_seconds(np.array([65536.0]), 4 * ONE, 8 * ONE, 4096, 128, 8, 1536,
                                   RATES, True, etp * ONE)[1][0] for etp in (4.0, 1.0)]  # fmt: skip
    assert narrow[0] > narrow[1]
    # etp defaults to tp: the unfolded layout as before.
    default = expert_layer_seconds(np.array([65536.0]), 4 * ONE, 8 * ONE, 4096, 128, 8, 2048,
                                   RATES)  # fmt: skip
    assert float(default[0][0]) == float(split[0][0])


def test_folded_expert_states_shard_over_ep_and_their_optimizer_over_tp_cp_dp():
    shape = llm_shape_of(QWEN)
    routed = shape.expert_params
    settings = LayoutSettings(global_batch_tokens=2048 * 4096)

    def experts(tp: float, dp: float, ep: float, etp: float) -> float:
        terms = memory_terms(
            shape, settings, tp * ONE, ONE, 8 * ONE, dp * ONE, ONE, 128 * ONE,
            ONE, np.array(["none"]), ONE, ep * ONE, etp * ONE,
        )  # fmt: skip
        return float(terms["expert_states"][0])

    # tp4 ep8 split over tp: 1/32 of the experts, one rank holds the same (ZeRO-1 over 1).
    assert experts(4, 8, 8, 4) == pytest.approx(routed / 8 / 4 / 8 * 16)
    # Folded: whole experts, 1/8 of them; the optimizer over tp dp / ep = 4 ranks.
    assert experts(4, 8, 8, 1) == pytest.approx(routed / 8 / 8 * (4 + 12 / 4))
    # ep32 folded over tp2 dp16 holds what ep16 split over tp2 does.
    assert experts(2, 16, 32, 1) == pytest.approx(experts(2, 16, 16, 2))


def test_folded_expert_ranks_are_consecutive_gpus_so_one_node_holds_them():
    shape = llm_shape_of(QWEN)
    hw = predict_layout(QWEN, "bf16", "H100-SXM", 64, 8, 3200.0).hardware
    assert hw is not None

    def a2a(etp: float) -> float:
        return float(_a2a_seconds(shape, hw, 4 * ONE, ONE, 8 * ONE, ONE, ONE, np.zeros(1),
                                  2.0, etp * ONE, 16 * ONE)[0])  # fmt: skip

    # ep8 after tp4 spans four nodes (2 ranks each); folded, the 8 ranks share one node:
    # NVLink only, 2.8x faster here (network at NETWORK_FRACTION of the NIC line rate)
    assert 0 < a2a(1) < a2a(4) / 2.5

    # Without tensor parallelism the experts fold when there are more expert ranks than
    # data-parallel ones (ep8 over cp2 x dp4): the 8 are consecutive GPUs, one node. ep8
    # out of dp8 after cp2 spans two nodes (4 ranks each).
    def tp1_cp2(dp: float) -> float:
        return float(_a2a_seconds(shape, hw, ONE, 2 * ONE, 8 * ONE, ONE, ONE, np.zeros(1),
                                  2.0, ONE, dp * ONE)[0])  # fmt: skip

    # (NVLink alone against half the tokens' copies crossing the network: about 0.86)
    assert 0 < tp1_cp2(4) < 0.9 * tp1_cp2(8)
    layout = Layout("fits", tp=1, cp=2, dp=4, ep=8, etp=1)
    assert layout.folded and not Layout("fits", tp=1, cp=2, dp=8, ep=8, etp=1).folded


def test_a_token_crosses_the_network_once_per_other_node_its_experts_sit_on():
    nbytes, ep, peers = np.array([64e6]), np.array([32.0]), np.array([8.0])  # 4 nodes

    def one(top_k: int) -> float:
        return float(all_to_all_seconds(nbytes, ep, peers, 360.0, 40.0, 0.0, 0.0, top_k)[0])

    # Pairwise: 24 of 32 ranks elsewhere, so 3/4 of the k copies cross the network.
    assert one(0) == pytest.approx(0.75 * 64e6 / 40e9)
    # Deduplicated: a token's 8 experts hit 3 x (1 - (3/4)^8) = 2.70 other nodes on
    # average, one copy each (2.70 / 8 of the bytes); the rest is forwarded over NVLink.
    assert one(8) == pytest.approx(3 * (1 - 0.75**8) / 8 * 64e6 / 40e9)
    # Within one node nothing crosses the network: the setting changes nothing.
    inside = [all_to_all_seconds(nbytes, np.array([8.0]), np.array([8.0]), 360.0, 40.0, 0.0,
                                 0.0, k)[0] for k in (0, 8)]  # fmt: skip
    assert inside[0] == inside[1] > 0


def test_the_all_to_all_is_scaled_by_the_moe_factor_not_the_stacks_collectives():
    shape = llm_shape_of(QWEN)
    hw = predict_layout(QWEN, "bf16", "H100-SXM", 64, 8, 3200.0).hardware
    assert hw is not None
    slower = dataclasses.replace(hw, intra_gbs=hw.intra_gbs / 2,
                                 network_gbs_per_gpu=hw.network_gbs_per_gpu / 2,
                                 comm_exposure=hw.comm_exposure * 2)  # fmt: skip
    args = (shape, 2 * ONE, ONE, 8 * ONE, ONE, ONE, np.zeros(1), 2.0, 2 * ONE, 8 * ONE)
    assert float(_a2a_seconds(*args[:1], slower, *args[1:])[0]) == pytest.approx(
        float(_a2a_seconds(*args[:1], hw, *args[1:])[0])
    )
    parts = StepParts(kernels=1.0, memory=0, comm=1.0, tp=0, cast=0, bubble=0, other=0, a2a=1.0)
    base = StackParams("x")
    more_comm = dataclasses.replace(base, comm_exposure=2.0)
    assert rescaled_step(parts, base, more_comm) == pytest.approx(4.0)  # comm doubles, a2a not
    assert rescaled_step(parts, base, dataclasses.replace(base, moe_factor=2.0)) == (
        pytest.approx(4.0)
    )


def test_the_search_weighs_folded_layouts_and_a_stated_etp_keeps_its_own():
    settings = LLMSettings(global_batch_tokens=2048 * 4096, micro_batch=1, recompute="full")

    def laid_out(pinned: StatedLayout) -> str:
        found = predict_layout(QWEN, "bf16", "H100-SXM", 256, 8, 3200.0,
                               settings=dataclasses.replace(settings, pinned=pinned))  # fmt: skip
        return found.layout.label

    # ep32 cannot come out of dp16: only the folded layout has it.
    assert " ep32 etp1 " in laid_out(StatedLayout(tp=2, pp=8, vpp=4, ep=32))
    assert " ep8 etp1 " in laid_out(StatedLayout(tp=4, pp=8, vpp=4, ep=8, etp=1))
    split = laid_out(StatedLayout(tp=4, pp=8, vpp=4, ep=8, etp=4))
    assert " ep8 " in split and "etp" not in split


def test_a_users_layout_takes_etp1_and_says_when_ep_needs_it():
    shape = llm_shape_of(QWEN)
    user = parse_layout("tp2 pp8 vpp4 ep32 etp1 mb1")
    assert user.etp == 1 and user.expert_tp == 1 and "etp1" in user.text
    check_layout(user.for_gpus(256), shape)
    with pytest.raises(LayoutSpecError, match="with etp1 they fold over tp x cp x dp"):
        check_layout(UserLayout(tp=2, pp=8, ep=32, dp=16), shape)
    with pytest.raises(LayoutSpecError, match="etp3 must be tp2"):
        check_layout(UserLayout(tp=2, pp=8, ep=8, dp=16, etp=3), shape)
    with pytest.raises(LayoutSpecError, match="tp x cp x dp = 32"):
        check_layout(UserLayout(tp=2, pp=8, ep=64, dp=16, etp=1), shape)


def test_estimate_llm_times_an_etp_column(tmp_path: Path):
    queries = tmp_path / "q.csv"
    queries.write_text(
        "params,active_params,seq_len,num_gpus,gpu_model,precision,tp,pp,ep,etp,vpp,mbs,"
        "recompute,global_batch_tokens\n"
        "235b,22b,4096,256,H100-SXM,bf16,4,8,8,1,4,1,full,8388608\n"
    )
    out = tmp_path / "out.csv"
    done = CliRunner().invoke(
        app, ["estimate-llm", "--queries", str(queries), "--output", str(out)]
    )
    assert done.exit_code == 0, done.output
    row = pd.read_csv(out).iloc[0]
    assert "ep8 etp1" in str(row["layout"]) and row["tokens_per_s"] > 0


def _row(**given: object) -> pd.Series:
    columns = ("source", "framework", "model", "params", "n_layer", "d_model", "ffn", "heads",
               "kv_heads", "vocab", "seq_len", "gpu_model", "num_gpus", "gpus_per_node",
               "interconnect", "precision", "tp", "pp", "cp", "vp", "ep", "dp", "zero_fsdp",
               "mbs", "gbs", "recompute", "tokens_per_s_per_gpu", "tokens_per_s_per_gpu_max",
               "tflops_per_gpu", "mfu_pct", "notes")  # fmt: skip
    return pd.Series({c: given.get(c, math.nan) for c in columns})


MOE_ROW = {"source": "s", "framework": "megatron-core", "model": "Qwen3-235B-A22B (MoE)",
           "params": "235B total / 22B active", "gpu_model": "H100-SXM", "num_gpus": 256,
           "tp": 2, "pp": 8, "vp": 4, "ep": 32, "dp": 16, "mbs": 1, "gbs": 2048,
           "seq_len": 4096, "recompute": "selective", "tokens_per_s_per_gpu": 1800.0}  # fmt: skip


def test_the_corpus_reads_a_stated_etp_and_a_stated_all_to_all_overlap():
    run = corpus_run(0, _row(**MOE_ROW, notes="EDP 1, ETP 1; +1f1b overlap"))
    assert not isinstance(run, str)
    assert run.pinned == StatedLayout(tp=2, pp=8, cp=1, vpp=4, ep=32, etp=1) and run.moe_overlap
    plain = corpus_run(1, _row(**MOE_ROW, notes=""))
    assert not isinstance(plain, str) and plain.pinned.etp == 0 and not plain.moe_overlap
    dense = corpus_run(2, _row(**{**MOE_ROW, "model": "Llama3 8B", "params": "8B", "ep": math.nan,
                                  "notes": "1f1b overlap"}))  # fmt: skip
    assert not isinstance(dense, str) and not dense.moe_overlap


def test_a_published_layout_is_timed_where_the_memory_model_says_it_does_not_fit():
    run = corpus_run(0, _row(**MOE_ROW, notes="ETP 1"))
    assert not isinstance(run, str)
    settings = run_settings(run, stack_params("megatron"))
    assert settings.pinned_ran  # the fitting tools' setting

    def predict(ran: bool):
        return predict_layout(run.workload, "bf16", "H100-SXM", 256, 8, run.network_gbps,
                              settings=dataclasses.replace(settings, pinned_ran=ran))  # fmt: skip

    refused = predict(False).layout  # a plan: the memory model's verdict stands
    assert refused.reason == "no_layout_fits" and refused.memory_per_gpu_gb > refused.usable_gb
    ran = predict(True).layout  # the run happened: its own layout, timed
    assert ran.fits and (ran.tp, ran.pp, ran.ep, ran.etp, ran.interleave) == (2, 8, 32, 1, 4)
    assert ran.memory_per_gpu_gb > ran.usable_gb


def test_a_plan_of_a_moe_preset_may_fold_its_experts():
    found = predict_layout(get_workload("qwen3-235b-a22b-1t"), "bf16", "H100-SXM", 256, 8, 3200.0)
    assert found.layout.fits
    label = found.layout.label
    assert ("etp1" in label) == found.layout.folded


def test_a_folded_layout_given_back_is_read_and_timed_the_same():
    shape = llm_shape_of(QWEN)
    for text in ("tp2 pp8 vpp4 ep32 etp1 mb1", "tp4 pp8 vpp4 ep8 etp1 mb1"):
        user = parse_layout(text).for_gpus(256)
        check_layout(user, shape)
        pinned = StatedLayout(user.tp, user.pp, 1, user.vpp, user.ep, 1)
        settings = LLMSettings(global_batch_tokens=2048 * 4096, recompute="full",
                               micro_batch=1, pinned=pinned)  # fmt: skip
        found = predict_layout(QWEN, "bf16", "H100-SXM", 256, 8, 3200.0, settings=settings)
        label = found.layout.label
        assert "etp1" in label  # whole experts (and, at ep32, more expert than dp ranks)
        again = parse_layout(label.replace(" zero1", "").replace(" full-recompute", ""))
        check_layout(again.for_gpus(256), shape)


def test_a_moe_layer_stores_its_experts_activations_instead_of_a_dense_mlps():
    from planner.llm.memory import layer_activation_sbh
    from planner.llm.moe import LOAD_IMBALANCE, expert_activation_bytes
    from planner.llm.ops import LayerShape

    tokens, h, f, k = np.array([4096.0]), 4096, 1536, 8
    routed = float(expert_activation_bytes(tokens, h, f, k, ONE, 2.0)[0])
    # each routed copy's dispatched input and combined output and its SwiGLU's three
    # f_e-wide tensors, at 2 bytes
    assert routed == pytest.approx(4096 * LOAD_IMBALANCE * k * (2 * h + 3 * f) * 2)
    # the layer itself keeps no dense MLP; a shared expert of width 2048 is in its own count
    # (its three 2048-wide tensors)
    bare = layer_activation_sbh(LayerShape(h, 32, 8, 0, True, 151936, 4096))
    shared = layer_activation_sbh(LayerShape(h, 32, 8, 2048, True, 151936, 4096))
    assert (shared - bare) * h == pytest.approx(2 * 3 * 2048)
    # Split over tp 2, half of it per GPU.
    assert float(expert_activation_bytes(tokens, h, f, k, 2 * ONE, 2.0)[0]) == pytest.approx(
        routed / 2
    )
