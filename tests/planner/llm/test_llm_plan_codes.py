"""The LLM path of the engine returns numbers and codes; the CLI and the app word them."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmarks.results import BenchmarkResult, results_frame
from planner.llm.mfu import OWN_CODES
from planner.llm.ops import KERNEL_CODES
from planner.llm.records import LLM_DETAIL_COLUMNS, LLMMemoryError, Shortfall
from planner.notes import DROP_REASONS, NOTE_CODES
from planner.plan import make_plan
from planner.render.llm import no_fit_text, with_llm_details
from planner.render.notes import APP_CONTROLS, notes_text
from planner.request import PlanRequest
from planner.settings import LLMSettings
from planner.workloads.catalog import get_workload, reshape_llm
from pricing.catalog import validate_offers
from tests.cli_helpers import gpuplan_ok
from tests.planner.llm.test_llm_mfu import gpt


def offers(*rows: dict[str, object]) -> pd.DataFrame:
    base = {"provider": "aws", "region": "r1", "source": "test", "priced_at": "2026-11-01"}
    return validate_offers(pd.DataFrame([{**base, **r} for r in rows]))


def cpu_gpt_run() -> BenchmarkResult:
    return gpt(None, "tiny", 0.9, device="cpu", device_name="Intel Xeon")


def prose(value: object) -> bool:
    """A sentence hides in a string value: more than one word."""
    if isinstance(value, str):
        return " " in value.strip()
    if isinstance(value, (tuple, list)):
        return any(prose(v) for v in value)
    return False


def test_llm_plan_notes_and_rows_are_codes_and_numbers_only() -> None:
    workload = get_workload("llm-7b-140b")
    plan = make_plan(
        PlanRequest(workload, "bf16", max_gpus=8),
        offers(
            {"instance_type": "one", "gpu_name": "H100-SXM", "gpu_count": 1, "usd_per_hour": 4},
            {"instance_type": "t4", "gpu_name": "T4", "gpu_count": 1, "usd_per_hour": 0.5},
            {"instance_type": "eight", "gpu_name": "H100-SXM", "gpu_count": 8, "usd_per_hour": 32},
        ),
        results_frame([cpu_gpt_run()]),
    )
    codes = [n.code for n in plan.notes]
    assert "llm" not in NOTE_CODES and set(codes) <= set(NOTE_CODES)
    assert "gpt_results_unused" in codes
    dropped = [n for n in plan.notes if n.code == "offers_dropped"]
    assert {n["reason"] for n in dropped} == {"no_layout_fits", "no_llm_peak"}  # T4: no bf16
    assert all(n["reason"] in DROP_REASONS for n in dropped)
    for note in plan.notes:
        assert not any(prose(v) for v in note.values.values()), note
    # Rows: the figures the words come from, no words.
    assert len(plan.rows) and (plan.rows["throughput_detail"] == "").all()
    assert set(plan.rows["mfu_source"]) <= set(KERNEL_CODES) | set(OWN_CODES)
    numeric = [c for c in LLM_DETAIL_COLUMNS if c.endswith(("_s", "_share", "_gb"))]
    assert np.isfinite(plan.rows[numeric].to_numpy(float)).all()
    # The step: compute (GEMMs, attention, memory-bound operators, recomputation), the
    # bubble, exposed communication and the optimizer, nothing else.
    step = ["compute_share", "bubble_share", "tp_comm_share", "cp_comm_share",
            "pp_comm_share", "dp_comm_share", "optimizer_share"]  # fmt: skip
    assert plan.rows[step].sum(axis=1).to_numpy() == pytest.approx(1.0, abs=0.01)
    compute = ["gemm_share", "attention_share", "memory_share", "recompute_share"]
    parts = plan.rows[compute].sum(axis=1).to_numpy()
    assert parts == pytest.approx(plan.rows["compute_share"].to_numpy(), abs=0.01)
    # The interfaces word them: the rows shown, and the notes.
    worded = with_llm_details(plan)
    assert all(
        d.startswith("layout tp") and "Hopper kernels" in d
        for d in worded.rows["throughput_detail"]
    )
    assert (worded.frontier["throughput_detail"] != "").all()
    texts = notes_text(plan.notes)
    assert any(
        "1 options left out: too few GPUs to hold llm-7b-140b in any layout (H100-SXM)" in t
        for t in texts
    )
    assert any("1 GPT results from CPUs" in t for t in texts)


def test_no_fit_error_carries_figures_and_each_interface_names_its_own_control() -> None:
    workload = get_workload("llm-70b-1.4t")
    with pytest.raises(LLMMemoryError) as caught:
        make_plan(
            PlanRequest(workload, "fp16", max_gpus=8),
            offers({"instance_type": "t4", "gpu_name": "T4", "gpu_count": 8, "usd_per_hour": 4}),
            results_frame([]),
        )
    error = caught.value
    assert str(error) == "no_layout_fits" and error.max_gpus == 8
    assert error.shortfalls and all(isinstance(s, Shortfall) for s in error.shortfalls)
    short = error.shortfalls[0]
    assert (short.gpu_name, short.gpus) == ("T4", 8) and short.need_gb > short.usable_gb
    assert "Raise --max-gpus (now 8)" in no_fit_text(error)
    app_text = no_fit_text(error, APP_CONTROLS)
    assert "Raise Max GPUs per option (now 8)" in app_text and "--" not in app_text
    # an exact count set the cap: its own control is named, not the most GPUs per option
    with pytest.raises(LLMMemoryError) as caught:
        make_plan(
            PlanRequest(workload, "fp16", gpu_count=8, max_gpus=512),
            offers({"instance_type": "t4", "gpu_name": "T4", "gpu_count": 8, "usd_per_hour": 4}),
            results_frame([]),
        )
    assert caught.value.cap_field == "gpu_count"
    assert "Raise --gpus (now 8)" in no_fit_text(caught.value)
    assert "Raise Exact GPU count (now 8)" in no_fit_text(caught.value, APP_CONTROLS)


def test_no_fit_error_names_the_stacks_that_hold_it_and_the_batch_that_stops_it() -> None:
    """405B at 131k tokens on 64 x 8 H100: FSDP (no context or pipeline parallelism) holds it
    at no count; the stacks with context parallelism do at 512 (without it, one 131k-token
    sequence's logits and activations outgrow a GPU on deepspeed and nanotron too). At 512
    FSDP would need 64
    data-parallel ranks and the default 4M-token batch has 32 sequences: the batch stops
    that count, not memory."""
    workload = reshape_llm(get_workload("llm-405b-1t"), 131072)
    request = PlanRequest(workload, "bf16", max_gpus=512, llm=LLMSettings(framework="fsdp"))
    h100 = {"instance_type": "p5", "gpu_name": "H100-SXM", "gpu_count": 8, "usd_per_hour": 98}
    with pytest.raises(LLMMemoryError) as caught:
        make_plan(request, offers(h100), results_frame([]))
    error = caught.value
    # Each stack with context parallelism holds it; fsdp's own kin comes first.
    assert error.framework == "fsdp"
    assert error.frameworks_that_fit == ("fsdp2", "megatron")
    assert error.batch_limited
    # The shortfall is at the largest count memory stops (256), not the batch-limited 512.
    assert [(s.gpu_name, s.gpus) for s in error.shortfalls] == [("H100-SXM", 256)]
    text = no_fit_text(error)
    assert "under the fsdp stack" in text and "set --framework to fsdp2" in text
    assert "raise --global-batch-tokens" in text and "Otherwise raise --max-gpus" in text
    app_text = no_fit_text(error, APP_CONTROLS)
    assert "set Framework to fsdp2" in app_text and "--" not in app_text
    # Under FSDP2 the same request plans.
    fsdp2 = dataclasses.replace(request, llm=LLMSettings(framework="fsdp2"))
    assert len(make_plan(fsdp2, offers(h100), results_frame([])).rows)


def test_cli_prints_the_llm_rows_detail_and_notes(results_dir: Path) -> None:
    done = gpuplan_ok(
        "plan -w llm-7b-140b --precision bf16 --provider lambda --format json --max-gpus 8"
    )
    rows = json.loads(done.stdout)
    assert rows
    for row in rows:
        detail = str(row["throughput_detail"])
        assert detail.startswith(f"layout {row['sharding']} (megatron layout search: tensor/")
        step = re.search(r"step ([\d.]+) s: GEMM (\d+)%", detail)  # the largest part first
        attention = re.search(r", attention (\d+)%", detail)
        mfu = re.search(r"; MFU (\d+)% of the bf16 peak", detail)
        assert step and attention and mfu, detail
        assert float(step[1]) == pytest.approx(float(row["step_s"]), rel=0.01)
        assert int(step[2]) == pytest.approx(100 * float(row["gemm_share"]), abs=1)
        assert int(attention[1]) == pytest.approx(100 * float(row["attention_share"]), abs=1)
        assert int(mfu[1]) == pytest.approx(100 * float(row["mfu"]), abs=1)
        assert row["mfu_source"] in KERNEL_CODES
