"""LLM memory per GPU: ZeRO stages, LoRA, and activations with and without FlashAttention."""

from __future__ import annotations

import numpy as np
import pytest

from planner.llm.memory import (
    activation_bytes_per_gpu,
    activation_bytes_per_layer,
    state_bytes_per_gpu,
)

ONE = np.array([1])


def test_model_states_follow_zero_stages_over_the_model_parallel_share() -> None:
    # 70e9 parameters on tp8 pp1 dp8: 8.75e9 per GPU.
    zero0 = state_bytes_per_gpu(70e9, 0.0, "pretrain", "bf16", [8], ONE, [8], [0])
    zero1 = state_bytes_per_gpu(70e9, 0.0, "pretrain", "bf16", [8], ONE, [8], [1])
    zero3 = state_bytes_per_gpu(70e9, 0.0, "pretrain", "bf16", [8], ONE, [8], [3])
    assert zero0[0] == pytest.approx(16 * 8.75e9)  # plain data parallelism: all of it
    assert zero1[0] == pytest.approx((2 + 2) * 8.75e9 + 12 * 8.75e9 / 8)  # ZeRO-1
    assert zero3[0] == pytest.approx(16 * 8.75e9 / 8)  # ZeRO-3: everything sharded
    fp32 = state_bytes_per_gpu(1e9, 0.0, "pretrain", "fp32", ONE, ONE, ONE, [1])
    assert fp32[0] == pytest.approx(16e9)  # 4 + 4 + 8
    # fp8 computes in fp8 but keeps bf16 weights and fp32 optimizer state.
    fp8 = state_bytes_per_gpu(1e9, 0.0, "pretrain", "fp8", ONE, ONE, ONE, [1])
    assert fp8[0] == pytest.approx(16e9)


def test_lora_keeps_frozen_16_bit_weights_and_trains_only_the_adapters() -> None:
    lora = state_bytes_per_gpu(70e9, 1e8, "lora", "bf16", [8], ONE, ONE, [1])
    assert lora[0] == pytest.approx(2 * 70e9 / 8 + 16 * 1e8 / 8)
    qlora = state_bytes_per_gpu(70e9, 1e8, "qlora", "bf16", ONE, ONE, ONE, [1])
    assert qlora[0] == pytest.approx(4.127 / 8 * 70e9 + 16 * 1e8)  # NF4 + double quantization
    assert lora[0] * 8 < 0.2 * 16 * 70e9  # a fraction of full fine-tuning's states


def test_activations_per_layer_korthikanti_with_and_without_flash_attention() -> None:
    s, h, a = 2048, 8192, 64
    sbh = s * 1 * h
    none = activation_bytes_per_layer(s, ONE, h, a, ONE, np.array(["none"]), flash=False)
    flash = activation_bytes_per_layer(s, ONE, h, a, ONE, np.array(["none"]), flash=True)
    selective = activation_bytes_per_layer(s, ONE, h, a, ONE, np.array(["selective"]), False)
    full = activation_bytes_per_layer(s, ONE, h, a, ONE, np.array(["full"]), flash=True)
    assert none[0] == sbh * (34 + 5 * a * s / h)  # eq. 1: 5as/h = 80 -> 114 sbh
    assert flash[0] == selective[0] == 34 * sbh  # no s^2 attention matrix stored
    assert full[0] == 2 * sbh  # only the layer input
    # Tensor parallelism with sequence parallelism divides all of it by t.
    tp8 = activation_bytes_per_layer(s, ONE, h, a, [8], np.array(["none"]), flash=True)
    assert tp8[0] == 34 * sbh / 8
    fp32 = activation_bytes_per_layer(s, ONE, h, a, ONE, np.array(["none"]), True, "fp32")
    assert fp32[0] == 2 * 34 * sbh


def test_pipeline_first_stage_holds_p_micro_batches_of_its_layers() -> None:
    s, h, a, layers, vocab = 2048, 8192, 64, 80, 32000
    per_layer = 34 * s * h
    output = 4 * s * (h + vocab)
    held = activation_bytes_per_gpu(
        s, h, a, layers, vocab, "bf16", ONE, [4], ONE, [8], np.array(["none"]), True
    )
    # 20 layers per stage x min(p=4, m=8) micro-batches in flight = 80 layers' worth.
    assert held[0] == 20 * 4 * per_layer + output
    few = activation_bytes_per_gpu(
        s, h, a, layers, vocab, "bf16", ONE, [4], ONE, [2], np.array(["none"]), True
    )
    assert few[0] == 20 * 2 * per_layer + output  # only m = 2 micro-batches exist
    full = activation_bytes_per_gpu(
        s, h, a, layers, vocab, "bf16", ONE, ONE, ONE, [8], np.array(["full"]), True
    )
    # Full recomputation: every layer's input, plus one layer rebuilt at a time.
    assert full[0] == 80 * 2 * s * h + per_layer + output


def test_a_layer_keeps_what_its_own_widths_say() -> None:
    """Korthikanti's 34 s b h less its two dropout masks for a 4h GELU MLP and multi-head
    attention; a SwiGLU MLP keeps its gate/up output and the down projection's input; a
    mixture-of-experts layer (no dense MLP: its experts are counted apart) keeps attention's."""
    from planner.llm.memory import layer_activation_sbh
    from planner.llm.ops import LayerShape

    gpt = LayerShape(2048, 16, 16, 8192, False, 50304, 2048)
    assert layer_activation_sbh(gpt) == pytest.approx(32.0)
    swiglu_mha = LayerShape(2048, 32, 32, 8192, True, 131072, 4096)  # nanotron's 1.34B
    assert layer_activation_sbh(swiglu_mha) == pytest.approx(2 * (4 + 2 + 2 + 12))
    llama3_8b = LayerShape(4096, 32, 8, 14336, True, 128256, 8192)  # GQA: K and V at 1/4
    assert layer_activation_sbh(llama3_8b) == pytest.approx(2 * (4 + 2 + 0.5 + 3 * 3.5))
    qwen3_moe = LayerShape(4096, 64, 4, 0, True, 151936, 4096, head_dim=128)
    assert layer_activation_sbh(qwen3_moe) == pytest.approx(2 * (4 + 4 + 0.25))
    kept = activation_bytes_per_layer(4096, ONE, 2048, 32, ONE, np.array(["none"]), True,
                                      layer_sbh=layer_activation_sbh(swiglu_mha))  # fmt: skip
    assert kept[0] == pytest.approx(40.0 * 4096 * 2048)


def test_the_loss_keeps_the_stacks_bytes_per_logit() -> None:
    """Megatron's vocabulary-parallel cross-entropy keeps 4 bytes a logit (Korthikanti);
    PyTorch's cross-entropy on upcast logits keeps 10: the difference is 6 s b V / t on the
    same layout, and the plan's memory carries it."""
    from planner.llm.frameworks import framework

    assert framework("megatron").logit_bytes == 4.0
    assert {framework(n).logit_bytes for n in ("fsdp", "fsdp2", "deepspeed", "nanotron")} == {10.0}
    args = (4096, 2048, 16, 24, 50304, "bf16", [2], ONE, [4], [8], np.array(["none"]), True)
    torch_loss = activation_bytes_per_gpu(*args, logit_bytes=10.0)
    megatron_loss = activation_bytes_per_gpu(*args, logit_bytes=4.0)
    assert torch_loss[0] - megatron_loss[0] == pytest.approx(6.0 * 4096 * 4 * 50304 / 2)


def test_a_stack_that_keeps_fp32_gradients_holds_four_bytes_a_parameter_for_them() -> None:
    """nanotron accumulates its gradients in fp32 buffers: 2 + 4 bytes a parameter stay on
    every data-parallel rank under ZeRO-1, and all 18 are sharded under ZeRO-3."""
    from planner.llm.frameworks import FRAMEWORKS

    assert {n for n, f in FRAMEWORKS.items() if f.grad_bytes == 4.0} == {"nanotron"}
    zero1 = state_bytes_per_gpu(8e9, 0.0, "pretrain", "bf16", ONE, ONE, [8], [1], grad_bytes=4.0)
    assert zero1[0] == pytest.approx((2 + 4) * 8e9 + 12 * 8e9 / 8)
    zero3 = state_bytes_per_gpu(8e9, 0.0, "pretrain", "bf16", ONE, ONE, [8], [3], grad_bytes=4.0)
    assert zero3[0] == pytest.approx(18 * 8e9 / 8)
    fp32 = state_bytes_per_gpu(1e9, 0.0, "pretrain", "fp32", ONE, ONE, ONE, [1], grad_bytes=4.0)
    assert fp32[0] == pytest.approx(16e9)  # fp32 training's gradients are fp32 already
