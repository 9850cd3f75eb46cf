"""Eager PyTorch (no torch.compile): twice the memory-bound traffic of a compiled stack's fit,
and a micro-batch no faster than the host dispatches its kernels."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from planner.llm.corpus import CORPUS_PATH, OWN_RUNS_PATH, load_corpus
from planner.llm.ops import (
    EAGER_KERNELS_PER_LAYER,
    LayerShape,
    OpRates,
    micro_batch_seconds,
)
from planner.llm.throughput import predict_layout
from planner.settings import KERNEL_FLOOR_S, LLMSettings
from planner.workloads.catalog import Workload, llm_workload

runner = CliRunner()
RATES = OpRates(gemm_flops=700e12, attention_flops=450e12, hbm_bytes_per_s=2.7e12, sms=132)


def _times(shape: LayerShape, rates: OpRates, sequences: int) -> float:
    one = np.array([1.0])
    times = micro_batch_seconds(
        shape, rates, np.array([12.0]), np.array([float(sequences)]), one, one,
        np.array([0.0]), np.array([False]), True,
    )  # fmt: skip
    return float(times.total[0])


def test_a_tiny_micro_batch_waits_for_the_host_a_large_one_does_not() -> None:
    shape = LayerShape(d_model=768, n_heads=12, n_kv_heads=12, ffn_dim=3072, gated=False,
                       vocab_size=50304, seq_len=1024)  # fmt: skip
    eager = OpRates(**{**RATES.__dict__, "eager": True})
    host = 12 * EAGER_KERNELS_PER_LAYER * KERNEL_FLOOR_S
    assert _times(shape, RATES, 1) < host  # compiled: faster than eager dispatch could go
    assert _times(shape, eager, 1) == pytest.approx(host)
    large_compiled, large_eager = _times(shape, RATES, 64), _times(shape, eager, 64)
    assert large_compiled > host and large_eager == pytest.approx(large_compiled)


@pytest.mark.parametrize(
    ("stack", "work"),
    [("fsdp", llm_workload(1.3e9, 26e9)),
     # deepspeed's fit rests on fused-kernel runs (GPT-NeoX, Megatron-DeepSpeed), its
     # Hugging Face runs timed eager: --eager there is a Hugging Face model under DeepSpeed
     ("deepspeed", llm_workload(6.7e9, 1e9, 4096))],
)  # fmt: skip
def test_eager_is_slower_by_its_memory_traffic_on_the_same_layout(
    stack: str, work: Workload
) -> None:
    compiled, eager = (
        predict_layout(work, "bf16", "H100-SXM", 8, 8, 3200.0,
                       settings=LLMSettings(framework=stack, eager=flag))
        for flag in (False, True)
    )  # fmt: skip
    assert eager.layout.fits and compiled.layout.fits
    assert 0.7 < eager.tokens_per_s / compiled.tokens_per_s < 0.97
    # The added time is memory-bound: the GEMM seconds per step stay the same.
    assert eager.layout.label == compiled.layout.label  # the same layout, timed eager
    gemm_s = [p.layout.step_s * p.layout.gemm_share for p in (compiled, eager)]
    assert gemm_s[1] == pytest.approx(gemm_s[0], rel=1e-6)
    assert eager.layout.memory_share > compiled.layout.memory_share


@pytest.mark.parametrize("stack", ["megatron", "nanotron"])
def test_eager_is_refused_on_stacks_that_run_their_own_fused_kernels(stack: str) -> None:
    with pytest.raises(ValueError, match="its own fused kernels") as raised:
        LLMSettings(framework=stack, eager=True)
    assert "(fsdp, fsdp2, deepspeed)" in str(raised.value)  # the stacks that take it
    assert LLMSettings(framework="fsdp2", eager=True).eager


def test_runs_are_read_as_eager_only_where_their_framework_text_says_so() -> None:
    own, _ = load_corpus(OWN_RUNS_PATH)
    table = pd.read_csv(OWN_RUNS_PATH)
    said_eager = table["framework"].str.contains("eager").tolist()
    assert [r.eager for r in own] == [said_eager[r.row] for r in own]
    assert sum(r.eager for r in own) == 3  # the three eager runs beside their compiled twins
    published, _ = load_corpus()
    # KempnerForge's one run with compile off; FlagPerf's Hugging Face models under DeepSpeed
    eager = [r for r in published if r.eager]
    assert sorted((r.source, r.family, r.num_gpus) for r in eager) == [
        ("FlagOpen/FlagPerf", "deepspeed", 8), ("FlagOpen/FlagPerf", "deepspeed", 8),
        ("FlagOpen/FlagPerf", "deepspeed", 16), ("FlagOpen/FlagPerf", "deepspeed", 16),
        ("KempnerInstitute/KempnerForge", "fsdp", 8),
    ]  # fmt: skip
    corpus = pd.read_csv(CORPUS_PATH)
    texts = [str(corpus.at[r.row, "framework"]) for r in eager]
    assert all("compile" in t or "Hugging Face" in t for t in texts)
    # FlagPerf's Megatron-DeepSpeed runs run Megatron's fused model code: not eager
    fused = [r for r in published if r.family == "deepspeed" and not r.eager]
    fused_texts = [str(corpus.at[r.row, "framework"]).lower() for r in fused]
    assert all(any(k in t for k in ("megatron", "gpt-neox", "paddle")) for t in fused_texts)


def _plan_hours(*extra: str) -> float:
    """The fastest pick's hours of a small LLM plan on AWS H100s (JSON)."""
    done = runner.invoke(
        app,
        ["plan", "--workload", "llm-1.3b-26b", "--gpu", "H100", "--provider", "aws",
         "--max-gpus", "8", "--format", "json", "--view", "picks", *extra],
    )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    picks = json.loads(done.stdout)
    return min(float(p["hours_to_train"]) for p in picks)


def test_plan_eager_needs_a_compiled_stack_and_then_takes_longer(tmp_path: Path) -> None:
    refused = runner.invoke(app, ["plan", "--workload", "llm-1.3b-26b", "--eager"])
    assert refused.exit_code == 2
    assert "megatron's rates are its own fused kernels'" in refused.stderr
    assert "fsdp, fsdp2" in refused.stderr
    compiled = _plan_hours("--framework", "fsdp")
    eager = _plan_hours("--framework", "fsdp", "--eager")
    assert compiled * 1.03 < eager < compiled * 1.5


@pytest.mark.parametrize("stack", ["fsdp", "deepspeed"])
def test_a_plan_says_how_the_fit_ran_its_kernels_and_which_flag_times_eager(stack: str) -> None:
    def explained(*extra: str) -> str:
        done = runner.invoke(
            app,
            ["plan", "--workload", "llm-1.3b-26b", "--gpu", "H100", "--provider", "aws",
             "--max-gpus", "8", "--top", "1", "--framework", stack, "--explain", *extra],
        )  # fmt: skip
        assert done.exit_code == 0, done.stderr
        return " ".join((done.stdout + done.stderr).split())

    fused = explained()
    assert f"Kernels as the {stack} fit's runs ran them:" in fused and "--eager" in fused
    said = {"fsdp": "torch.compile", "deepspeed": "Hugging Face model under DeepSpeed runs eager"}
    assert said[stack] in fused
    eager = explained("--eager")
    assert "Kernels as the" not in eager
    assert f"Eager PyTorch (no torch.compile): 2x the {stack} fit's memory-bound traffic" in eager
    megatron = runner.invoke(app, ["plan", "--workload", "llm-1.3b-26b", "--gpu", "H100",
                                   "--provider", "aws", "--top", "1", "--explain"])  # fmt: skip
    assert "Kernels as the" not in " ".join(megatron.stdout.split())  # no --eager there


def test_estimate_llm_takes_an_eager_column_and_refuses_a_bad_one(tmp_path: Path) -> None:
    queries = tmp_path / "q.csv"
    queries.write_text(
        "params,seq_len,num_gpus,gpu_model,precision,framework,eager\n"
        "1.3b,2048,8,H100,bf16,fsdp,false\n1.3b,2048,8,H100,bf16,fsdp,TRUE\n"
        "1.3b,2048,8,H100,bf16,fsdp,\n"
    )
    out = tmp_path / "out.csv"
    done = runner.invoke(app, ["estimate-llm", "--queries", str(queries), "--output", str(out)])
    assert done.exit_code == 0, done.stderr
    rates = pd.read_csv(out)["tokens_per_s"].tolist()
    assert rates[1] < rates[0] and rates[2] == pytest.approx(rates[0])
    with_flag = tmp_path / "flag.csv"
    done = runner.invoke(
        app,
        ["estimate-llm", "--queries", str(queries), "--output", str(with_flag), "--eager",
         "--framework", "fsdp"],
    )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    flagged = pd.read_csv(with_flag)["tokens_per_s"].tolist()
    assert flagged[0] == pytest.approx(rates[0]) and flagged[2] == pytest.approx(rates[1])
    for cell, expected in (
        ("maybe", "'maybe' is not true or false"),
        ("yes", "megatron's rates are its own fused kernels'"),
    ):
        bad = tmp_path / "bad.csv"
        bad.write_text(
            "params,seq_len,num_gpus,gpu_model,precision,framework,eager\n"
            f"1.3b,2048,8,H100,bf16,megatron,{cell}\n"
        )
        target = tmp_path / "never.csv"
        done = runner.invoke(app, ["estimate-llm", "--queries", str(bad), "--output", str(target)])
        assert done.exit_code == 2
        assert f"{bad}, line 2, field 'eager'" in done.stderr and expected in done.stderr
        assert not target.exists()
    assert all(math.isfinite(r) for r in rates)


def test_the_estimate_llm_table_shows_the_query_files_eager_column(tmp_path: Path) -> None:
    queries = tmp_path / "q.csv"
    queries.write_text(
        "params,seq_len,num_gpus,gpu_model,precision,framework,eager\n"
        "6.7b,4096,8,H100,bf16,deepspeed,false\n6.7b,4096,8,H100,bf16,deepspeed,true\n"
    )
    done = runner.invoke(app, ["estimate-llm", "--queries", str(queries)], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.stderr
    lines = done.stdout.splitlines()
    header = next(line for line in lines if line.startswith("params"))
    assert header.split()[6] == "eager"  # beside the framework it applies to
    rows = [line.split() for line in lines if line.startswith("6.7b")]
    assert [r[5:7] for r in rows] == [["deepspeed", "false"], ["deepspeed", "true"]]
    rates = [int(r[7].replace(",", "")) for r in rows]
    assert rates[1] < rates[0]  # eager is slower on the same layout
