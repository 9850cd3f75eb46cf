"""Gradient accumulation below ZeRO-3 (planner.llm.layout t_opt, planner.llm.frameworks
accumulate_bytes): each micro-batch's weight gradients added into the GPU's buffer at HBM
bandwidth, as each stack's code does it."""

from __future__ import annotations

import pytest

from planner.llm.throughput import LayoutPrediction, predict_layout
from planner.settings import LLMSettings, StatedLayout
from planner.workloads.catalog import get_workload

P7 = get_workload("llm-6.7b-140b")
IB = 3200.0
SEQ = P7.seq_len


def _optimizer_seconds(stack: str, micro_batches: int, zero: str = "zero1") -> tuple[float, float]:
    """(optimizer part's seconds, the GPU's HBM bytes/s) of the 6.7B model on 8 H100 at
    tp 2, dp 4, micro-batch 1 and `micro_batches` of them per step."""
    settings = LLMSettings(
        micro_batch=1, zero=zero, recompute="full", pinned=StatedLayout(tp=2, pp=1, vpp=1),
        global_batch_tokens=4 * micro_batches * SEQ, framework=stack,
    )  # fmt: skip
    found: LayoutPrediction = predict_layout(P7, "bf16", "H100-SXM", 8, 8, IB, settings=settings)
    layout = found.layout
    assert layout.fits and layout.micro_batches == micro_batches and layout.zero == zero
    assert found.hardware is not None
    return layout.optimizer_share * layout.step_s, found.hardware.rates.hbm_bytes_per_s


@pytest.mark.parametrize(
    ("stack", "each", "first"),
    [
        ("nanotron", 10.0, True),  # fp32 buffers: fp32_grad.add_(grad) every micro-batch
        ("deepspeed", 10.0, True),  # BF16_Optimizer.update_hp_grads after each backward
        ("fsdp", 6.0, False),  # autograd's .grad += after the first micro-batch
        ("megatron", 0.0, False),  # gradient_accumulation_fusion: inside the wgrad GEMM
    ],
)
def test_each_micro_batch_adds_its_gradients_into_the_buffer(
    stack: str, each: float, first: bool
) -> None:
    few, hbm = _optimizer_seconds(stack, 4)
    many, _ = _optimizer_seconds(stack, 16)
    local = P7.params / 2  # tp 2, pp 1: the GPU's unsharded share
    # 12 more micro-batches, each moving `each` bytes a local parameter
    assert many - few == pytest.approx(12 * local * each / hbm, rel=1e-6)
    one, _ = _optimizer_seconds(stack, 1)
    # the first micro-batch accumulates only into fp32 buffers
    assert few - one == pytest.approx(3 * local * each / hbm, rel=1e-6)
    assert (one > _optimizer_seconds("megatron", 1)[0]) == first


def test_zero3_accumulates_no_unsharded_buffer() -> None:
    few, _ = _optimizer_seconds("fsdp", 4, zero="zero3")
    many, _ = _optimizer_seconds("fsdp", 16, zero="zero3")
    assert many == pytest.approx(few, rel=1e-9)
