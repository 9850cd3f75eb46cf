"""Stack parameters (planner.llm.stack_profiles), measured attention rates
(planner.llm.kernel_rates), the calibration corpus (planner.llm.corpus) and its fit
(planner.llm.stack_fit), on tiny inline tables and the bundled corpus."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from planner.llm.corpus import corpus_run, family_of, load_corpus, reported_flops_per_token
from planner.llm.frameworks import FRAMEWORKS
from planner.llm.kernel_rates import attention_share
from planner.llm.layout import _candidates, _greedy_stages, _micro_batches, balanced_stage_layers
from planner.llm.stack_fit import fit_stacks, predict_run, rescaled_tokens, time_run
from planner.llm.stack_profiles import (
    StackParams,
    StepParts,
    fitted_stacks,
    prior_params,
    rescaled_step,
    stack_params,
)
from planner.llm.throughput import _predict, llm_shape_of, predict_layout, prediction_record
from planner.render.llm import estimate_detail
from planner.settings import LLMSettings, StatedLayout
from planner.workloads.catalog import Workload, llm_workload, moe_workload

IB = 3200.0
P7 = llm_workload(6.7e9, 1e9, seq_len=4096)


def row(**given: object) -> pd.Series:
    """A corpus row with every column, blank unless given."""
    columns = (
        "source", "source_date", "framework", "model", "params", "n_layer", "d_model", "ffn",
        "heads", "kv_heads", "vocab", "seq_len", "gpu_model", "num_gpus", "gpus_per_node",
        "interconnect", "precision", "tp", "pp", "cp", "vp", "ep", "dp", "zero_fsdp", "mbs", "gbs",
        "recompute", "tokens_per_s_per_gpu", "tokens_per_s_per_gpu_max", "tflops_per_gpu",
        "mfu_pct", "comm_overlap", "notes",
    )  # fmt: skip
    return pd.Series({c: given.get(c, math.nan) for c in columns})


def test_attention_share_is_the_measured_table_and_rises_with_length_and_head_dim() -> None:
    # FlashAttention-2 fwd+bwd, causal, head dim 128 at 4k: 294 of 989.4 TFLOP/s.
    assert attention_share("fa2", 4096, 128) == pytest.approx(294.0 / 989.4)
    shares = attention_share("fa3", np.array([256.0, 1024.0, 8192.0, 65536.0]), 128)
    assert np.all(np.diff(shares) >= 0)
    # Outside the measured 512-16k tokens: the nearest measured length.
    assert attention_share("fa3", 256, 128) == attention_share("fa3", 512, 128)
    assert attention_share("fa3", 4096, 128) > attention_share("fa2", 4096, 128)
    assert attention_share("fa2", 4096, 96) < attention_share("fa2", 4096, 128)
    with pytest.raises(ValueError, match="valid are fa2, fa3"):
        attention_share("fa4", 4096, 128)


def test_corpus_rows_become_runs_or_say_why_not() -> None:
    base = {"source": "s", "framework": "megatron-core", "model": "Llama3 8B", "params": "8B",
            "seq_len": 8192, "gpu_model": "H100", "num_gpus": 16, "precision": "bf16+fp8 (TE)",
            "tp": 2, "gbs": 512, "tokens_per_s_per_gpu": 10000.0}  # fmt: skip
    run = corpus_run(0, row(**base))
    assert not isinstance(run, str)
    assert (run.family, run.precision, run.gpu_name, run.pinned) == (
        "megatron",
        "fp8",
        "H100-SXM",
        StatedLayout(2, 1, 1),
    )
    assert run.workload.n_kv_heads == 8 and run.global_batch_tokens == 512 * 8192
    assert corpus_run(1, row(**{**base, "model": "Unnamed 16x1B (MoE)"})) == "moe"
    assert corpus_run(2, row(**{**base, "precision": "fp32"})) == "fp32"
    assert corpus_run(3, row(**{**base, "framework": "not stated"})) == "no_framework"
    assert corpus_run(4, row(**{**base, "gpu_model": "GH200"})) == "no_gpu"
    # TFLOP/s per GPU over the FLOPs the stacks count (no input-embedding FLOPs).
    tflops = corpus_run(5, row(**{**base, "tokens_per_s_per_gpu": math.nan,
                                  "tflops_per_gpu": 400.0}))  # fmt: skip
    assert not isinstance(tflops, str)
    assert tflops.tokens_per_gpu == pytest.approx(
        400e12 / reported_flops_per_token(tflops.workload)
    )
    assert family_of("olmo-core (torch HSDP)") == "fsdp"
    assert family_of("paddlenlp (sharding stage1)") == "deepspeed"
    assert family_of("nanotron") == "nanotron" and family_of("Primus") == "megatron"


def test_the_corpus_times_the_fp32_gradient_reduction_its_fsdp_configs_set() -> None:
    # OLMo-core's train scripts (reduce_dtype=DType.float32), torchtitan under torchao's
    # float8 benchmarks (mixed_precision_reduce "float32") and KempnerForge's
    # MixedPrecisionPolicy; fms-fsdp's bfSixteen reduces in bf16, as the fsdp stack does
    runs, _ = load_corpus()
    by_source: dict[str, set[bool | None]] = {}
    for run in runs:
        by_source.setdefault(run.source, set()).add(run.fp32_reduce)
    for source in ("allenai/OLMo-core", "pytorch/ao", "KempnerInstitute/KempnerForge"):
        assert by_source[source] == {True}, source
    assert by_source["foundation-model-stack/fms-fsdp"] == {None}


def test_a_row_whose_source_says_it_ran_degraded_is_left_out_but_can_be_built() -> None:
    given = {"source": "s", "framework": "nanotron", "params": "80.0B", "gpu_model": "H100",
             "model": "80.0B llama-style (Ultra-Scale Playbook sweep)", "num_gpus": 32,
             "tp": 8, "pp": 4, "tokens_per_s_per_gpu": 285.0,
             "notes": 'degraded, as its source says: "near its memory limit"'}  # fmt: skip
    assert corpus_run(0, row(**given)) == "degraded"
    built = corpus_run(0, row(**given), degraded_too=True)
    assert not isinstance(built, str) and built.tokens_per_gpu == 285.0
    assert not isinstance(corpus_run(0, row(**{**given, "notes": "best config"})), str)


def test_a_row_naming_only_infiniband_ndr_gets_one_400g_nic_per_gpu_as_an_assumption() -> None:
    given = {"source": "s", "framework": "kempnerforge (FSDP2 + TP)", "model": "Llama-3-style 13B",
             "params": "14.84B", "n_layer": 40, "d_model": 5120, "heads": 40, "kv_heads": 8,
             "ffn": 17920, "vocab": 128256, "seq_len": 4096, "gpu_model": "H200", "num_gpus": 32,
             "gpus_per_node": 4, "interconnect": "NVLink intra-node; InfiniBand NDR inter-node",
             "tp": 4, "pp": 1, "dp": 8, "tokens_per_s_per_gpu": 3449.0,
             "precision": "bf16 (mixed; fp32 gradient reduction)"}  # fmt: skip
    run = corpus_run(0, row(**given))
    assert not isinstance(run, str)
    assert run.precision == "bf16" and run.fp32_reduce is True  # as the run states
    assert run.network_gbps == 4 * 400.0 and run.gpus_per_node == 4
    assert "network" in run.assumed.split()
    # every part of the shape stated: nothing of it is the Llama-3-style guess
    assert "shape" not in run.assumed.split()
    assert (run.workload.n_layer, run.workload.ffn_dim, run.workload.n_kv_heads) == (40, 17920, 8)
    unstated = corpus_run(1, row(**{**given, "interconnect": "NVLink", "ffn": math.nan}))
    assert not isinstance(unstated, str)
    assert unstated.network_gbps == 3200.0 and "shape" in unstated.assumed.split()
    assert corpus_run(2, row(**{**given, "precision": "bf16"})).fp32_reduce is None  # stack's
    # a stated NIC count a node (GPT-NeoX-20B's four HDR HCAs for 8 GPUs), not one per GPU
    counted = corpus_run(
        3,
        row(
            **{**given, "gpus_per_node": 8, "interconnect": "4 x IB 200Gb/s per node (ConnectX-6)"}
        ),
    )
    assert not isinstance(counted, str) and counted.network_gbps == 800.0
    assert "network" not in counted.assumed.split()
    one_each = corpus_run(4, row(**{**given, "gpus_per_node": 8, "interconnect": "IB 200Gb/s"}))
    assert not isinstance(one_each, str) and one_each.network_gbps == 1600.0


def nanotron_flops_per_token(layers, hidden, heads, kv_heads, vocab, seq, ffn) -> float:
    """nanotron models/llama.py get_flops (model FLOPs) for one sequence, over its tokens."""
    head = hidden // heads
    qkv = 2 * layers * seq * hidden * heads * head + 2 * layers * seq * hidden * 2 * kv_heads * head
    logits = 2 * layers * heads * seq * head * seq
    values = 2 * layers * heads * seq * seq * head
    out = 2 * layers * heads * seq * head * hidden
    mlp = 4 * layers * seq * hidden * ffn + 2 * layers * seq * ffn * hidden
    lm_head = 2 * seq * hidden * vocab
    return 3 * (qkv + logits + values + out + mlp + lm_head) / seq


@pytest.mark.parametrize(
    ("model", "params", "shape"),
    [
        ("1.34B llama-style (Ultra-Scale Playbook sweep)", "1.34B", (16, 2048, 32, 32, 8192)),
        ("80.0B llama-style (Ultra-Scale Playbook sweep)", "80.0B", (80, 8192, 64, 64, 28672)),
    ],
)
def test_a_playbook_sweep_row_takes_the_sweep_scripts_shape_and_nanotrons_flop_count(
    model, params, shape
) -> None:
    given = {"source": "s", "framework": "nanotron", "model": model, "params": params,
             "gpu_model": "H100", "num_gpus": 64, "tp": 1, "pp": 2, "mfu_pct": 40.0}  # fmt: skip
    run = corpus_run(0, row(**given))
    assert not isinstance(run, str)
    w = run.workload
    layers, hidden, heads, kv, ffn = shape
    assert (w.n_layer, w.d_model, w.n_heads, w.n_kv_heads, w.ffn_dim) == shape
    assert w.vocab_size == 131072 and w.seq_len == 4096 and "shape" not in run.assumed
    assert w.mlp_gated  # SwiGLU even where the MLP is 4 h wide (the 1.34B)
    # MFU over nanotron's own count: the output layer counted even when tied (the 1.34B).
    count = nanotron_flops_per_token(layers, hidden, heads, kv, 131072, 4096, ffn)
    assert reported_flops_per_token(w) == pytest.approx(count, rel=1e-9)
    assert run.tokens_per_gpu == pytest.approx(0.40 * 989.4e12 / count, rel=1e-3)


def test_only_a_gpt_rows_mlp_is_ungated() -> None:
    gpt = corpus_run(0, row(source="s", framework="megatron-lm", model="GPT 1.7B", params="1.7B",
                            n_layer=24, d_model=2048, heads=16, gpu_model="H100", num_gpus=8,
                            tp=1, tokens_per_s_per_gpu=1000.0))  # fmt: skip
    assert not isinstance(gpt, str) and gpt.workload.ffn_dim == 4 * 2048
    assert not gpt.workload.mlp_gated
    plain = llm_workload(1.3e9, 1e9, seq_len=2048, n_layer=24, d_model=2048)
    assert not plain.mlp_gated  # no MLP width given: GPT's 4 h, ungated
    assert dataclasses.replace(plain, ffn_dim=5632).mlp_gated  # LLaMA's widths
    assert dataclasses.replace(plain, gated_mlp=True).mlp_gated


def test_gradient_accumulation_stated_in_the_notes_gives_the_global_batch() -> None:
    given = {"source": "s", "framework": "deepspeed", "model": "Llama2 7B", "params": "7B",
             "seq_len": 2048, "gpu_model": "H100", "num_gpus": 16, "mbs": 2, "dp": 16,
             "tokens_per_s_per_gpu": 3000.0, "notes": "default GAS 8; token/p/s"}  # fmt: skip
    run = corpus_run(0, row(**given))
    assert not isinstance(run, str) and run.global_batch_tokens == 2 * 8 * 16 * 2048
    # No stated dp: the GPUs over the stated tp and pp.
    tp_pp = corpus_run(1, row(**{**given, "dp": math.nan, "tp": 2, "pp": 2,
                                 "notes": "accumulate=128, global bs"}))  # fmt: skip
    assert not isinstance(tp_pp, str) and tp_pp.global_batch_tokens == 2 * 128 * 4 * 2048
    unstated = corpus_run(2, row(**{**given, "notes": "no steps given"}))
    assert not isinstance(unstated, str) and unstated.global_batch_tokens is None
    assert "batch" in unstated.assumed


def test_a_moe_row_takes_its_presets_shape_its_stated_expert_ranks_and_active_flops() -> None:
    given = {"source": "s", "framework": "primus", "model": "Qwen3-235B-A22B (MoE)",
             "params": "235B total / 22B active", "gpu_model": "MI355 (variant not stated)",
             "num_gpus": 32, "pp": 4, "ep": 8, "tflops_per_gpu": 400.0}  # fmt: skip
    run = corpus_run(0, row(**given))
    assert not isinstance(run, str)
    assert run.workload.experts == 128 and run.workload.top_k == 8
    assert run.gpu_name == "MI355X" and run.pinned == StatedLayout(1, 4, 1, vpp=0, ep=8)
    # TFLOP/s over the ACTIVE parameters' FLOPs: far more tokens than the total would give.
    assert run.tokens_per_gpu == pytest.approx(400e12 / reported_flops_per_token(run.workload))
    assert run.tokens_per_gpu > 3 * 400e12 / (6 * 235e9)
    found = predict_run(run, stack_params("megatron"))
    assert found.layout.fits and (found.layout.pp, found.layout.ep) == (4, 8)


def test_the_moe_factor_slows_only_the_experts_grouped_gemms_and_all_to_all() -> None:
    moe = moe_workload(30.5e9, 3.3e9, 1e9, seq_len=4096)
    base = stack_params("megatron")
    slow = dataclasses.replace(base, moe_factor=2.0 * base.moe_factor)
    pinned = StatedLayout(1, 1, 1, ep=8)

    def predict(workload: Workload, stack: StackParams) -> float:
        settings = LLMSettings(framework="megatron", stack=stack, pinned=pinned, micro_batch=1)
        found = predict_layout(workload, "bf16", "H100-SXM", 16, 8, IB, settings=settings)
        return found.tokens_per_s

    fast_tokens, slow_tokens = predict(moe, base), predict(moe, slow)
    assert slow_tokens < fast_tokens
    layout = predict_layout(
        moe, "bf16", "H100-SXM", 16, 8, IB,
        settings=LLMSettings(framework="megatron", stack=base, pinned=pinned, micro_batch=1),
    ).layout  # fmt: skip
    moe_share = layout.grouped_gemm_share + layout.a2a_share
    assert 0.0 < moe_share < 1.0
    # Doubling the MoE parts adds their time once: the step grows by about their share.
    assert fast_tokens / slow_tokens == pytest.approx(1.0 + moe_share, rel=0.15)
    dense_settings = LLMSettings(framework="megatron", micro_batch=1)
    dense = [
        predict_layout(P7, "bf16", "H100-SXM", 16, 8, IB,
                       settings=dataclasses.replace(dense_settings, stack=s)).tokens_per_s
        for s in (base, slow)
    ]  # fmt: skip
    assert dense[0] == dense[1]


def test_a_moe_rows_detail_names_the_expert_parts_their_fitted_factor_and_active_mfu() -> None:
    settings = LLMSettings(framework="megatron", micro_batch=1)
    moe = moe_workload(30.5e9, 3.3e9, 1e9, seq_len=4096)
    moe_record, dense_record = (
        prediction_record(predict_layout(w, "bf16", "H100-SXM", 16, 8, IB, settings=settings))
        for w in (moe, P7)
    )
    assert moe_record["moe_factor"] == stack_params("megatron").moe_factor
    assert math.isnan(float(dense_record["moe_factor"]))  # type: ignore[arg-type]
    text = estimate_detail(moe_record)
    assert "expert all-to-all" in text and "expert grouped GEMM" in text
    assert f"{stack_params('megatron').moe_factor:.2f}x the operator model" in text
    assert "(on active parameters)" in text
    dense_text = estimate_detail(dense_record)
    assert "expert" not in dense_text and "active parameters" not in dense_text


def test_a_step_rescaled_to_its_own_stack_is_unchanged_and_slower_kernels_slow_it() -> None:
    parts = StepParts(kernels=6.0, memory=1.0, comm=0.5, tp=0.5, cast=0.2, bubble=1.0, other=0.3)
    base = prior_params("megatron")
    assert rescaled_step(parts, base, base) == pytest.approx(parts.total)
    slower = dataclasses.replace(base, kernel_efficiency=0.5)
    # Kernels take twice as long, and the bubble (a share of the pipeline slot) grows too.
    assert rescaled_step(parts, base, slower) == pytest.approx(
        12.0 + 1.0 + 0.5 + 0.5 + 0.2 + 1.0 * 14.2 / 8.2 + 0.3
    )


def test_the_fit_recovers_a_stacks_kernel_efficiency_from_runs_it_generated() -> None:
    """Runs timed by the model at a known kernel efficiency: the fit finds it again."""
    truth = dataclasses.replace(prior_params("fsdp"), kernel_efficiency=0.6)
    runs = []
    for i, (params, gpus) in enumerate(((1.3e9, 8), (6.7e9, 8), (13e9, 16), (6.7e9, 32))):
        found = corpus_run(i, row(source=f"s{i}", framework="fsdp", model="m",
                                  params=f"{params / 1e9}B", seq_len=4096, gpu_model="H100",
                                  num_gpus=gpus, precision="bf16", mbs=2,
                                  tokens_per_s_per_gpu=1.0))  # fmt: skip
        assert not isinstance(found, str)
        measured = predict_run(found, truth).tokens_per_s / gpus
        runs.append(dataclasses.replace(found, tokens_per_gpu=measured))
    fit = fit_stacks(runs)
    assert fit.families["fsdp"].kernel_efficiency == pytest.approx(0.6, rel=0.05)
    timed = time_run(runs[0], fit.families["fsdp"])
    assert rescaled_tokens(timed, fit.families["fsdp"]) == pytest.approx(timed.tokens_per_gpu)


def test_the_bundled_fit_has_every_stack_with_a_band_around_its_errors() -> None:
    stacks = fitted_stacks()
    assert {"megatron", "fsdp", "deepspeed", "nanotron"} <= set(stacks)
    for stack in stacks.values():
        assert stack.runs > 0 and stack.band_low < stack.band_high
        assert 0.3 <= stack.kernel_efficiency <= 2.0
    assert stack_params("fsdp").attention_kernel == "fa2"


def test_the_band_widens_and_the_spread_shows_when_no_stack_is_named() -> None:
    named = predict_layout(P7, "bf16", "H100-SXM", 64, 8, IB)
    unnamed = predict_layout(P7, "bf16", "H100-SXM", 64, 8, IB,
                             settings=LLMSettings(framework_stated=False))  # fmt: skip
    assert named.tokens_per_s == unnamed.tokens_per_s
    # megatron (assumed) is the fastest fitted stack here: the others widen the slow side
    assert unnamed.tokens_per_s_low < named.tokens_per_s_low
    assert unnamed.tokens_per_s_high >= named.tokens_per_s_high
    record = prediction_record(named)
    assert record["stack_spread"] > 0.05 and record["cast_share"] == 0.0
    fp8 = prediction_record(predict_layout(P7, "fp8", "H100-SXM", 64, 8, IB))
    assert fp8["cast_share"] > 0.0


def test_an_fp8_plan_takes_at_least_the_held_out_fp8_error_each_way() -> None:
    """The fit stores the held-out fp8 runs' error (fp8_band); an fp8 row on kernel
    defaults takes at least that band each way, a bf16 row only its stack's."""
    stack = stack_params("megatron")
    assert 0.05 < stack.fp8_band < 1.0
    assert {s.fp8_band for s in fitted_stacks().values()} == {stack.fp8_band}
    fp8 = predict_layout(P7, "fp8", "H100-SXM", 64, 8, IB, settings=LLMSettings())
    bf16 = predict_layout(P7, "bf16", "H100-SXM", 64, 8, IB, settings=LLMSettings())
    for found, floor in ((fp8, stack.fp8_band), (bf16, 0.0)):
        down = math.log(found.tokens_per_s / found.tokens_per_s_low)
        up = math.log(found.tokens_per_s_high / found.tokens_per_s)
        assert min(down, up) >= floor - 1e-9
    # the stack's own band is narrower than the fp8 one on at least one side
    assert min(-stack.band_low, stack.band_high) < stack.fp8_band
    narrow = dataclasses.replace(stack, fp8_band=0.0)
    unwidened = predict_layout(P7, "fp8", "H100-SXM", 64, 8, IB,
                               settings=LLMSettings(stack=narrow))  # fmt: skip
    assert unwidened.tokens_per_s == pytest.approx(fp8.tokens_per_s)
    assert (unwidened.tokens_per_s_low > fp8.tokens_per_s_low
            or unwidened.tokens_per_s_high < fp8.tokens_per_s_high)  # fmt: skip


def test_the_detail_names_the_assumed_stack_its_spread_and_the_fp8_casts() -> None:
    from planner.render.llm import llm_detail, step_parts_text

    row = {
        "layout": "tp1 pp1 dp8 zero3 mb2", "framework": "fsdp", "stack_spread": 0.3,
        "gemm_share": 0.6, "attention_share": 0.2, "memory_share": 0.1, "cast_share": 0.05,
        "step_s": 2.0, "mfu": 0.3, "memory_per_gpu_gb": 50.0, "usable_gb": 72.0,
    }  # fmt: skip
    assert "fp8 casts 5%" in step_parts_text(row)
    text = llm_detail(row, "fp8")
    assert "rates fitted on PyTorch FSDP's published runs" in text and "up to 30%" in text
    assert "stack" not in llm_detail({**row, "stack_spread": float("nan")}, "fp8")
    # nanotron's ZeRO-1 optimizer part holds its gradient accumulation and its per-tensor
    # weight-slice copies; Megatron accumulates in the GEMM; ZeRO-3 accumulates no buffer
    nanotron = {**row, "framework": "nanotron", "layout": "tp4 pp1 dp128 zero1 mb2",
                "optimizer_share": 0.1}  # fmt: skip
    said = "optimizer, gradient accumulation and its weight-slice copies 10%"
    assert said in step_parts_text(nanotron)
    plain = {**nanotron, "layout": "tp4 pp1 dp128 zero0 mb2"}
    assert "optimizer and gradient accumulation 10%" in step_parts_text(plain)
    assert "optimizer 10%" in step_parts_text({**nanotron, "framework": "megatron"})
    sharded = {**nanotron, "framework": "fsdp", "layout": "tp1 pp1 dp8 zero3 mb2"}
    assert "optimizer 10%" in step_parts_text(sharded)
    # a plan's row names its layout "sharding"
    planned = {k: v for k, v in nanotron.items() if k != "layout"}
    assert said in step_parts_text({**planned, "sharding": "tp4 pp1 dp128 zero1 mb2"})


def test_a_stated_tensor_parallel_size_wider_than_a_node_is_timed_not_replaced() -> None:
    settings = LLMSettings(global_batch_tokens=256 * 4096, framework="nanotron")
    found = predict_layout(
        P7, "bf16", "H100-SXM", 64, 8, IB,
        settings=dataclasses.replace(settings, pinned=StatedLayout(16, 1, 1)),
    )  # fmt: skip
    searched = predict_layout(P7, "bf16", "H100-SXM", 64, 8, IB, settings=settings)
    assert found.layout.fits and found.layout.tp == 16
    assert searched.layout.tp <= 8  # the search keeps tensor parallelism within a node
    assert found.tokens_per_s < searched.tokens_per_s


def test_nanotron_reduces_fp32_gradients_and_gathers_its_weights_after_the_step() -> None:
    # One stack's rates for both (collectives at the ring model's time, whatever the fit),
    # one pinned pure data-parallel layout of one micro-batch a step. Megatron all-reduces
    # 16-bit gradients (A seconds) under that micro-batch (t). nanotron reduce-scatters the
    # fp32 buffers (accumulate_grad_in_fp32: the same bytes, A) under it, then all-gathers
    # the 16-bit weights after the step (A / 2), blocking.
    stack = dataclasses.replace(stack_params("megatron"), comm_exposure=1.0)
    exposed, compute = {}, {}
    for name in ("megatron", "nanotron"):
        settings = LLMSettings(
            global_batch_tokens=64 * 4096, micro_batch=1, zero="zero1", framework=name,
            stack=stack, pinned=StatedLayout(1, 1, 1),
        )  # fmt: skip
        # 400 Gb/s per node: the all-reduce outlasts a micro-batch, so some of it shows.
        found = predict_layout(P7, "bf16", "H100-SXM", 64, 8, 400.0, settings=settings).layout
        assert found.fits and found.dp == 64 and found.micro_batches == 1
        exposed[name] = found.dp_share * found.step_s
        compute[name] = found.compute_share * found.step_s
    assert compute["nanotron"] == pytest.approx(compute["megatron"], rel=1e-6)
    allreduce = exposed["megatron"] + compute["megatron"]  # A = exposed + t
    assert exposed["megatron"] > 0.0
    assert exposed["nanotron"] == pytest.approx(exposed["megatron"] + allreduce / 2, rel=0.01)


def test_a_row_whose_notes_say_no_flashattention_is_timed_without_it() -> None:
    given = {"source": "s", "framework": "deepspeed", "model": "Llama2 13B", "params": "13B",
             "seq_len": 2048, "gpu_model": "H100", "num_gpus": 16, "mbs": 1, "dp": 16,
             "zero_fsdp": "zero-1", "recompute": "full",
             "tokens_per_s_per_gpu": 2000.0}  # fmt: skip
    flash = corpus_run(0, row(**given))
    plain = corpus_run(1, row(**given, notes="README: no FlashAttention-2 in the model code"))
    assert not isinstance(flash, str) and not isinstance(plain, str)
    assert flash.flash_attention and not plain.flash_attention
    stack = stack_params("deepspeed")
    assert predict_run(plain, stack).tokens_per_s < 0.95 * predict_run(flash, stack).tokens_per_s


def test_a_row_that_says_flashattention_3_ran_is_timed_with_it_others_with_the_stacks() -> None:
    given = {"source": "s", "framework": "nanochat (PyTorch, torch.compile)",
             "model": "d24 (GPT-style, 4x ReLU^2 MLP)", "params": "780140544", "n_layer": 24,
             "d_model": 1536, "ffn": 6144, "heads": 12, "kv_heads": 12, "vocab": 32768,
             "seq_len": 2048, "gpu_model": "H100", "num_gpus": 8, "tp": 1, "pp": 1, "dp": 8,
             "mbs": 16, "gbs": 256, "tokens_per_s_per_gpu": 99978.7}  # fmt: skip
    stacks = corpus_run(0, row(**given))
    fa3 = corpus_run(1, row(**given, notes="attention: FlashAttention-3 on Hopper"))
    assert not isinstance(stacks, str) and not isinstance(fa3, str)
    assert stacks.family == fa3.family == "fsdp" and not stacks.workload.mlp_gated
    assert (stacks.attention_kernel, fa3.attention_kernel) == ("", "fa3")
    stack = stack_params("fsdp")
    assert stack.attention_kernel == "fa2"
    slow, fast = predict_run(stacks, stack), predict_run(fa3, stack)
    assert fast.layout.label == slow.layout.label
    assert fast.tokens_per_s > 1.03 * slow.tokens_per_s  # attention alone is faster


def test_a_row_that_says_cudnn_attention_ran_is_timed_flashattention_3_class() -> None:
    # PyTorch SDPA's cuDNN backend (torch 2.11 + cuDNN 9.19 on sm90) and MaxText's
    # cudnn_flash_te run FlashAttention-3-class kernels; a cuDNN version alone says nothing.
    given = {"source": "s", "framework": "kempnerforge (FSDP2, torch.compile)",
             "model": "Llama-3-style 7B", "params": "8.03B", "seq_len": 4096,
             "gpu_model": "H200", "num_gpus": 4, "tp": 1, "pp": 1, "dp": 4, "mbs": 4,
             "gbs": 32, "tokens_per_s_per_gpu": 9746.0}  # fmt: skip
    notes = {
        "sdpa": "SDPA backend auto: torch 2.11, whose SDPA runs cuDNN attention on sm90",
        "maxtext": "attention=cudnn_flash_te, synthetic data",
        "version": "torch 2.11.0+cu128 with cuDNN 9.19.0",
        "none": "",
    }
    kernels = {}
    for i, (name, text) in enumerate(notes.items()):
        run = corpus_run(i, row(**given, notes=text))
        assert not isinstance(run, str)
        kernels[name] = run.attention_kernel
    assert kernels == {"sdpa": "fa3", "maxtext": "fa3", "version": "", "none": ""}


def test_a_run_published_before_flashattention_3_is_timed_with_flashattention_2() -> None:
    given = {"source": "s", "framework": "megatron-core", "model": "Llama3 8B",
             "params": "8.03B", "seq_len": 8192, "gpu_model": "H100", "num_gpus": 8, "tp": 2,
             "pp": 1, "dp": 4, "mbs": 1, "gbs": 512, "tokens_per_s_per_gpu": 8000.0}  # fmt: skip
    before = corpus_run(0, row(**given, source_date="2024-05-15"))
    after = corpus_run(1, row(**given, source_date="2024-07-15"))
    said = corpus_run(2, row(**given, source_date="2024-05-15", notes="FlashAttention-3"))
    assert not isinstance(before, str) and not isinstance(after, str)
    assert not isinstance(said, str)
    # FlashAttention-3 was released on 2024-07-11: before it, FlashAttention-2-class
    assert (before.attention_kernel, after.attention_kernel, said.attention_kernel) == (
        "fa2",
        "",
        "fa3",
    )
    stack = stack_params("megatron")  # its kernel today: FlashAttention-3-class
    assert stack.attention_kernel == "fa3"
    assert predict_run(before, stack).tokens_per_s < predict_run(after, stack).tokens_per_s


def test_a_run_without_zero_is_timed_as_plain_data_parallelism_and_nanotron_gathers_nothing():
    # The Ultra-Scale Playbook's heatmap states ZeRO-0 or ZeRO-1 for each best layout.
    given = {"source": "s", "framework": "nanotron", "model": "3.57B llama-style",
             "params": "3.57B", "seq_len": 4096, "gpu_model": "H100", "num_gpus": 256,
             "tp": 4, "pp": 1, "dp": 64, "mbs": 4, "gbs": 256, "mfu_pct": 26.77}  # fmt: skip
    runs = {
        text: corpus_run(0, row(**given, zero_fsdp=text))
        for text in ("zero-0", "zero-1", "none (DDP)", "paddle sharding stage2, degree 4")
    }
    assert {t: r.zero for t, r in runs.items() if not isinstance(r, str)} == {
        "zero-0": "zero0", "zero-1": "zero1", "none (DDP)": "zero0",
        "paddle sharding stage2, degree 4": "zero1",
    }  # fmt: skip
    stack = stack_params("nanotron")
    plain, sharded = (predict_run(runs[t], stack).layout for t in ("zero-0", "zero-1"))
    assert plain.label == "tp4 pp1 dp64 zero0 mb4" and sharded.label == "tp4 pp1 dp64 zero1 mb4"
    # ZeRO-1's weight gather after the step is gone; the all-reduce hides under the backward
    assert plain.dp_share * plain.step_s < sharded.dp_share * sharded.step_s
    assert plain.memory_per_gpu_gb > sharded.memory_per_gpu_gb  # the whole optimizer state


def test_a_run_that_says_only_that_its_pipeline_interleaved_is_timed_with_virtual_stages():
    # Llama 3's table states tp/pp/dp and "no activation checkpointing at 8K", and its text an
    # interleaved schedule without V. Plain 1F1B needs the least memory, so a run the memory
    # model finds too big would be timed at v = 1, a schedule the source rules out.
    given = {"source": "s", "framework": "Meta internal (4D parallel)", "model": "Llama 3 405B",
             "params": "405B", "n_layer": 126, "d_model": 16384, "ffn": 53248, "heads": 128,
             "kv_heads": 8, "vocab": 128000, "seq_len": 8192, "gpu_model": "H100-SXM",
             "num_gpus": 8192, "tp": 8, "pp": 16, "cp": 1, "dp": 64, "gbs": 2048, "mbs": 1,
             "zero_fsdp": "fsdp (DP stands for FSDP per Fig.5)", "recompute": "none",
             "tflops_per_gpu": 430.0}  # fmt: skip
    plain = corpus_run(0, row(**given))
    said = corpus_run(1, row(**given, notes="pipeline: interleaved schedule, V not stated"))
    assert not isinstance(plain, str) and not isinstance(said, str)
    assert said.pinned == dataclasses.replace(plain.pinned, interleaved=True)
    stack = stack_params("megatron")
    one, many = predict_run(plain, stack).layout, predict_run(said, stack).layout
    # the memory model finds both too big; they ran, so they are timed all the same
    assert one.memory_per_gpu_gb > one.usable_gb and many.memory_per_gpu_gb > many.usable_gb
    assert one.interleave == 1 and many.interleave > 1
    assert one.recompute == many.recompute == "none"  # as stated, though it "does not fit"
    assert many.bubble_share < one.bubble_share
    assert (one.tp, one.pp, one.dp) == (many.tp, many.pp, many.dp) == (8, 16, 64)


def test_nanotron_splits_its_pipeline_by_compute_cost_so_the_heads_stage_holds_fewer_layers():
    # nanotron's trainer: each block goes to the first stage whose (rank + 1) / p share of the
    # cumulative cost it does not exceed yet. 16 layers of 1 and a head of 4 on 2 stages:
    # the first 11 reach 11 > 10 = half of 20, so 11 | 5 + head.
    assert _greedy_stages(16, 2, 1.0, 4.0) == (5, 11)
    assert _greedy_stages(16, 1, 1.0, 4.0) == (16, 0)  # one stage holds everything
    # Without a head's weight the crossing block stays behind: 3 | 2 | 2 | 1.
    assert _greedy_stages(8, 4, 1.0, 0.0) == (1, 3)
    shape = llm_shape_of(P7)
    with_head, without = balanced_stage_layers(shape, np.array([1.0, 2.0, 4.0]))
    assert with_head[0] == shape.n_layer and without[0] == 0
    assert with_head[1] < shape.n_layer / 2 < without[1]  # the head's stage gives layers up


def test_nanotrons_pace_is_its_busiest_stage_as_its_cost_split_lays_them_out(monkeypatch):
    # The playbook's 80B on 32 stages: 80 layers and a 131,072-word head of about one
    # layer's cost. Evenly, the last stage holds 3 layers and the head; split by cost it
    # holds fewer, and a stage of 3 layers alone sets the pace.
    given = {"source": "s", "framework": "nanotron", "params": "80.0B", "gpu_model": "H100",
             "model": "80.0B llama-style (Ultra-Scale Playbook sweep)", "num_gpus": 128,
             "tp": 4, "pp": 32, "mfu_pct": 30.0}  # fmt: skip
    run = corpus_run(0, row(**given))
    assert not isinstance(run, str)
    settings = LLMSettings(global_batch_tokens=256 * 4096, micro_batch=1, framework="nanotron",
                           pinned=StatedLayout(4, 32, 1))  # fmt: skip

    def step() -> float:
        for cached in (_predict, _candidates, _micro_batches):
            cached.cache_clear()
        return predict_layout(run.workload, "bf16", "H100-SXM", 128, 8, IB,
                              settings=settings).layout.step_s  # fmt: skip

    with_head, without = balanced_stage_layers(llm_shape_of(run.workload), np.array([32.0]))
    assert with_head[0] < 3 <= without[0] <= 3
    by_cost = step()
    monkeypatch.setitem(
        FRAMEWORKS, "nanotron", dataclasses.replace(FRAMEWORKS["nanotron"], balanced_stages=False)
    )
    assert by_cost < 0.9 * step()
    monkeypatch.undo()
    step()  # the caches hold nanotron's own split again
