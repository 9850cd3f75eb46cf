"""The benchmark models: standard parameter counts, SDPA attention, FLOPs vs a direct count."""

from __future__ import annotations

import pytest
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

from benchmarks import models
from benchmarks.models import bert, gpt, resnet


def params_of(workload: str, size: str) -> int:
    bench = models.load(workload, size)
    with torch.device("meta"):
        model = bench.build()
    return sum(p.numel() for p in model.parameters())


def test_resnet50_has_the_standard_parameter_count() -> None:
    assert params_of("resnet50", "full") == 25_557_032


@pytest.mark.parametrize(
    ("workload", "size", "expected", "tolerance"),
    [
        ("bert", "large", 335e6, 0.01),
        ("bert", "base", 110e6, 0.015),
        ("gpt", "124m", 124e6, 0.01),
        ("gpt", "350m", 350e6, 0.02),
        ("gpt", "1.3b", 1.3e9, 0.02),
    ],
)
def test_transformer_parameter_counts(
    workload: str, size: str, expected: float, tolerance: float
) -> None:
    assert abs(params_of(workload, size) - expected) / expected <= tolerance


def test_gpt_output_projection_is_tied_to_the_token_embedding() -> None:
    model = gpt.build(gpt.CONFIGS["tiny"])
    assert model.lm_head.weight is model.wte.weight
    cfg = gpt.CONFIGS["124m"]
    untied = params_of("gpt", "124m") + cfg.vocab_size * cfg.d_model
    assert untied > 160e6  # an untied head would be far from GPT-2 small's 124M


def test_resnet50_forward_is_4_09_gmacs() -> None:
    assert resnet.forward_macs(resnet.CONFIGS["full"]) == pytest.approx(4.09e9, rel=1e-3)


def _direct_flops(workload: str, size: str, backward: bool) -> float:
    bench = models.load(workload, size)
    with torch.device("meta"):
        model = bench.build()
    batch = tuple(t.to("meta") for t in bench.make_batch(2, torch.device("cpu"), torch.Generator()))
    # The math backend lowers attention to matmuls, which the counter sees on any device.
    with sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as counter:
        loss = bench.loss(model, batch)
        if backward:
            loss.backward()
    return counter.get_total_flops() / 2


@pytest.mark.parametrize(("workload", "size"), [("bert", "tiny"), ("bert", "base"),
                                                 ("gpt", "tiny"), ("gpt", "124m")])  # fmt: skip
def test_transformer_training_flops_match_a_direct_count(workload: str, size: str) -> None:
    analytic = models.load(workload, size).flops_per_sample
    assert _direct_flops(workload, size, backward=True) == pytest.approx(analytic, rel=1e-9)


@pytest.mark.parametrize("size", ["tiny", "full"])
def test_resnet_flops_match_a_direct_count(size: str) -> None:
    cfg = resnet.CONFIGS[size]
    assert _direct_flops("resnet50", size, backward=False) == 2 * resnet.forward_macs(cfg)
    # Training counts 3x forward; the counter skips the one product the formula counts
    # that autograd never computes: the input gradient of the first convolution.
    side = (cfg.image_size + 2 * 3 - 7) // 2 + 1
    first_conv_flops = 2 * 7 * 7 * 3 * cfg.base_width * side * side
    direct = _direct_flops("resnet50", size, backward=True)
    assert direct == resnet.training_flops_per_sample(cfg) - first_conv_flops


def test_kaplan_count_is_the_same_terms_without_head_and_half_attention() -> None:
    cfg = gpt.CONFIGS["124m"]
    gap = gpt.training_flops_per_token(cfg) - gpt.kaplan_flops_per_token(cfg)
    assert gap == 6 * cfg.d_model * cfg.vocab_size + 6 * cfg.n_layer * cfg.seq_len * cfg.d_model


@pytest.mark.parametrize(("workload", "module"), [("bert", bert), ("gpt", gpt)])
def test_attention_runs_through_sdpa(
    workload: str, module: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []
    real = torch.nn.functional.scaled_dot_product_attention

    def counting(*args: object, **kwargs: object) -> torch.Tensor:
        calls.append(kwargs.get("is_causal", False))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(module.F, "scaled_dot_product_attention", counting)  # type: ignore[attr-defined]
    bench = models.load(workload, "tiny")
    bench.loss(bench.build(), bench.make_batch(2, torch.device("cpu"), torch.Generator()))
    assert len(calls) == bench.config.n_layer
    assert all(calls) == (workload == "gpt")  # the decoder is causal, the encoder is not


@pytest.mark.parametrize("workload", ["resnet50", "bert", "gpt"])
def test_synthetic_batches_are_made_on_the_device_and_reproducible(workload: str) -> None:
    bench = models.load(workload, "tiny")
    first = bench.make_batch(3, torch.device("cpu"), torch.Generator().manual_seed(1))
    again = bench.make_batch(3, torch.device("cpu"), torch.Generator().manual_seed(1))
    assert all(t.device.type == "cpu" and t.shape[0] == 3 for t in first)
    assert all(torch.equal(a, b) for a, b in zip(first, again, strict=True))
    loss = bench.loss(bench.build(), first)
    assert loss.ndim == 0 and torch.isfinite(loss)


def test_unknown_names_get_the_valid_choices_and_the_closest() -> None:
    with pytest.raises(ValueError, match="did you mean 'full'"):
        models.check_size("resnet50", "ful")
    with pytest.raises(ValueError, match="did you mean 'bert'"):
        models.check_workload("bertt")
    assert models.check_size("gpt", "small") == "124m"
    assert models.check_size("bert", None) == "large"
