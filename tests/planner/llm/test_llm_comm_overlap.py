"""Communication overlap a run states: tensor-parallel collectives pipelined with the GEMMs
(tp_overlap); ZeRO-1's collectives after the backward (dp_overlap) are tested beside
nanotron's in test_llm_layout.py; plan's --fp32-reduce (the gradients' bytes)."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from planner.llm.corpus import COMM_OVERLAP, CORPUS_PATH, corpus_run, load_corpus
from planner.llm.throughput import predict_layout
from planner.settings import LLMSettings, StatedLayout
from planner.workloads.catalog import get_workload

P69 = get_workload("llm-69b-1.38t")  # Llama-2-70B shape
IB = 3200.0


def _pinned(tp: int, pp: int, **settings: object) -> object:
    """Llama-2-70B on 64 H100 at tp/pp (mb 1, ZeRO-1), under `settings`."""
    stated = LLMSettings(
        micro_batch=1, zero="zero1", recompute="none", pinned=StatedLayout(tp=tp, pp=pp, vpp=1),
        global_batch_tokens=2**22, **settings,  # type: ignore[arg-type]
    )  # fmt: skip
    return predict_layout(P69, "bf16", "H100-SXM", 64, 8, IB, settings=stated).layout


def test_tp_overlap_shows_one_chunk_of_the_tensor_parallel_time() -> None:
    plain, overlapped = _pinned(8, 2), _pinned(8, 2, tp_overlap=True)
    assert plain.fits and overlapped.fits and plain.tp_share > 0.05
    # t_tp / tp per slot: the step's tp seconds fall by the tensor-parallel size, 8
    tp_plain = plain.tp_share * plain.step_s
    tp_overlapped = overlapped.tp_share * overlapped.step_s
    assert tp_overlapped == pytest.approx(tp_plain / 8, rel=1e-6)
    assert overlapped.tokens_per_s > plain.tokens_per_s
    # nothing else in the step moves
    rest = (1 - plain.tp_share - plain.bubble_share) * plain.step_s
    rest_overlapped = (1 - overlapped.tp_share - overlapped.bubble_share) * overlapped.step_s
    assert rest_overlapped == pytest.approx(rest, rel=1e-6)


def test_tp_overlap_is_refused_by_stacks_that_do_not_run_it() -> None:
    LLMSettings(framework="fsdp2", tp_overlap=True)  # torchtitan's async tensor parallel
    for stack in ("fsdp", "deepspeed", "nanotron"):
        with pytest.raises(ValueError, match=rf"which {stack} does not run.*megatron, fsdp2"):
            LLMSettings(framework=stack, tp_overlap=True)
    # the plan command's refusal names its flag
    done = CliRunner().invoke(
        app, ["plan", "-w", "llm-7b-140b", "--framework", "nanotron", "--tp-overlap"]
    )
    assert done.exit_code == 2 and "tp_overlap (--tp-overlap) is" in done.output


def test_the_corpus_reads_the_overlap_its_sources_state() -> None:
    runs, _ = load_corpus()
    by_source: dict[str, set[tuple[bool, bool]]] = {}
    for run in runs:
        by_source.setdefault(run.source, set()).add((run.dp_overlap, run.tp_overlap))
    assert by_source["NVIDIA/Megatron-LM"] == {(True, True)}  # README: all three flags
    assert by_source["yanring/Megatron-MoE-ModelZoo"] == {(True, True)}
    flagperf = {(r.family, r.dp_overlap, r.tp_overlap) for r in runs if "FlagPerf" in r.source}
    assert ("megatron", False, False) in flagperf  # launch scripts pass none of them
    # DeepSpeed ZeRO-1 with DeepSpeed's default overlap_comm (off below stage 3), and the
    # Megatron-DeepSpeed case whose ds_config.json sets overlap_comm false
    off = ("Baichuan2", "Megatron-DeepSpeed")
    zero1 = {
        r.dp_overlap for r in runs if "FlagPerf" in r.source and any(k in r.model for k in off)
    }  # fmt: skip
    assert zero1 == {False}
    others = {
        r.dp_overlap for r in runs
        if "FlagPerf" in r.source and r.family == "deepspeed"
        and not any(k in r.model for k in off)
    }  # fmt: skip
    assert others == {True}
    # blank: as the stack usually runs
    assert by_source["allenai/OLMo-core"] == {COMM_OVERLAP[""]} == {(True, False)}


def test_a_bad_comm_overlap_cell_is_refused_naming_the_row_and_the_values() -> None:
    row = pd.read_csv(CORPUS_PATH).iloc[0].copy()  # a usable row
    row["comm_overlap"] = "sometimes"
    with pytest.raises(ValueError, match=r"corpus row 7: comm_overlap 'sometimes'.*dp\+tp, none"):
        corpus_run(7, row)
    row["comm_overlap"] = "DP+TP"  # case aside
    run = corpus_run(7, row)
    assert not isinstance(run, str) and run.tp_overlap and run.dp_overlap


def test_plan_takes_fp32_reduce_and_its_rows_say_what_was_timed() -> None:
    def first_row(*flags: str) -> pd.Series:
        done = CliRunner().invoke(
            app,
            ["plan", "-w", "llm-70b-140b", "--gpu", "H100-SXM", "--gpus", "64", "--framework",
             "fsdp", "--provider", "aws", "--format", "csv", *flags],
        )  # fmt: skip
        assert done.exit_code == 0, done.output
        return pd.read_csv(io.StringIO(done.stdout)).iloc[0]

    own, fp32, bf16 = first_row(), first_row("--fp32-reduce"), first_row("--no-fp32-reduce")
    assert not own["fp32_reduce"] and fp32["fp32_reduce"] and not bf16["fp32_reduce"]
    assert fp32["throughput"] < own["throughput"] == bf16["throughput"]
    assert "as asked: --fp32-reduce" in fp32["throughput_detail"]
    assert "fp32-reduce" not in own["throughput_detail"] + bf16["throughput_detail"]
