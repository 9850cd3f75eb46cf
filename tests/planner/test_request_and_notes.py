"""PlanRequest validation, the exact GPU count, structured notes and own-result notes."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from planner.notes import Note
from planner.onprem.tco import DEFAULTS, OnPremConfig
from planner.plan import make_plan
from planner.render.notes import APP_CONTROLS, CLI_CONTROLS, note_text, notes_text
from planner.request import PlanRequest, RequestError
from planner.throughput.own_results import own_result_notes
from planner.workloads.catalog import get_workload
from tests.planner.choose.test_plan_constraints import CLOUD, RESNET, RESULTS

LLM = get_workload("llm-7b-140b")


def test_a_request_is_frozen_normalised_and_names_the_bad_field() -> None:
    request = PlanRequest(RESNET, providers=["aws"], interruption_rates={"aws": 0.1})
    assert request.providers == ("aws",) and request.rates == {"aws": 0.1}
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.max_gpus = 4  # type: ignore[misc]
    for field, value in (
        ("deadline_hours", float("nan")),
        ("budget_usd", 0),
        ("gpu_count", 0),
        ("draws", 10**9),
        ("checkpoint_hours", -1.0),
        ("precision", "fp8"),
    ):
        with pytest.raises(RequestError) as info:
            PlanRequest(RESNET, **{field: value})
        assert info.value.field == field
    with pytest.raises(RequestError, match="did you mean 'bf16'"):
        PlanRequest(RESNET, precision="bf61")


def test_the_bad_field_is_the_check_that_refused_it_whatever_its_message_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import planner.request as request_module

    def refuse(message: str):
        def check(_value: object) -> None:
            raise ValueError(message)

        return check

    monkeypatch.setattr(request_module, "check_discount", refuse("a tier-like discount"))
    with pytest.raises(RequestError) as info:
        PlanRequest(RESNET, reserved_discount=0.3)
    assert info.value.field == "reserved_discount"
    monkeypatch.setattr(request_module, "check_tiers", refuse("no such thing"))
    with pytest.raises(RequestError) as info:
        PlanRequest(RESNET, tiers=("hyperscaler",))
    assert info.value.field == "tiers"


def test_an_exact_gpu_count_keeps_only_options_with_that_many_gpus() -> None:
    every = make_plan(PlanRequest(RESNET, max_gpus=64), CLOUD, RESULTS)
    eight = make_plan(PlanRequest(RESNET, max_gpus=64, gpu_count=8), CLOUD, RESULTS)
    assert set(every.options["total_gpus"]) > {8.0}
    assert set(eight.options["total_gpus"]) == {8.0}
    assert set(eight.rows["total_gpus"]) == {8.0}
    # every offer that can make 8 GPUs is there: 1-GPU offers at 8 instances, the 8-GPU at 1
    assert sorted(eight.rows["instance_type"]) == ["a100x1", "a100x8", "h100x1"]


def test_notes_are_codes_and_values_worded_per_interface() -> None:
    note = Note("onprem_no_count", {"name": "lab", "max_gpus": 4})
    assert note.to_dict() == {"code": "onprem_no_count", "name": "lab", "max_gpus": 4}
    assert note_text(note, CLI_CONTROLS) == "on-prem lab: no GPU count within --max-gpus 4"
    assert note_text(note, APP_CONTROLS) == "on-prem lab: no GPU count within Max GPUs per option 4"
    with pytest.raises(ValueError, match="unknown note code"):
        Note("something_else")


def _own(**fields: object) -> dict[str, object]:
    row = {
        "id": "run",
        "source": "measured",
        "workload": "resnet50",
        "model_size": "",
        "precision": "fp16",
        "gpu_name": "A100-SXM-80GB",
        "device": "cuda",
        "world_size": 1,
        "throughput": 2500.0,
        "throughput_unit": "images/s",
    }
    return {**row, **fields}


def test_each_own_result_is_said_used_or_skipped_with_its_reason() -> None:
    table = pd.DataFrame(
        [
            _own(id="gpu-run"),
            _own(id="cpu-run", device="cpu", gpu_name=None),
            _own(id="odd-device", gpu_name=None),
            _own(id="fp32-run", precision="fp32"),
            _own(id="gpt-run", workload="gpt"),
            _own(id="published", source="published:lambda"),
        ]
    )
    notes = own_result_notes(table, RESNET, "fp16")
    by_id = {n.values.get("id"): n for n in notes}
    assert by_id["gpu-run"].code == "own_result_used"
    assert by_id["cpu-run"]["reason"] == "cpu_run"
    assert by_id["odd-device"]["reason"] == "unknown_gpu"
    assert by_id["fp32-run"]["reason"] == "other_precision"
    assert notes[-1].to_dict() == {
        "code": "own_results_elsewhere",
        "count": 1,
        "workloads": ("gpt",),
    }
    assert "published" not in by_id
    words = notes_text(notes)
    assert "own result cpu-run not used: a CPU run does not predict a GPU" in words
    assert "own result fp32-run not used: measured at fp32, the plan is at fp16" in words
    # the same gpt result is used by an LLM plan (MFU at bf16 ~ fp16)
    (gpt,) = [n for n in own_result_notes(table, LLM, "bf16") if n.values.get("id") == "gpt-run"]
    assert gpt.code == "own_result_used"


def test_an_operator_run_is_used_by_an_llm_plan_only() -> None:
    """An ops result sets an LLM step's kernel rates on its GPU (any precision); an image
    plan counts it with the other workloads; on CPU it predicts no GPU."""
    ops = {"workload": "ops", "precision": None, "throughput": float("nan"),
           "throughput_unit": "TFLOP/s", "gpu_name": "H200-SXM"}  # fmt: skip
    on_cpu = {**ops, "device": "cpu", "gpu_name": None}
    table = pd.DataFrame([_own(id="ops-run", **ops), _own(id="ops-cpu", **on_cpu)])
    by_id = {n.values.get("id"): n for n in own_result_notes(table, LLM, "fp8")}
    assert by_id["ops-run"].code == "own_result_used"
    assert by_id["ops-cpu"]["reason"] == "cpu_run"
    assert note_text(by_id["ops-run"]) == (
        "own result ops-run used: the operator benchmark on H200-SXM sets the LLM step's "
        "GEMM, attention and memory rates on that GPU"
    )
    image = own_result_notes(table, RESNET, "fp16")
    assert [n.code for n in image] == ["own_results_elsewhere"]


def test_a_plan_says_its_cpu_run_was_skipped() -> None:
    cpu = pd.DataFrame([_own(id="cpu-run", device="cpu", gpu_name=None, precision="fp16")])
    table = pd.concat([RESULTS, cpu], ignore_index=True)
    plan = make_plan(PlanRequest(RESNET, max_gpus=8), CLOUD, table)
    (skipped,) = plan.notes_of("own_result_skipped")
    assert skipped["id"] == "cpu-run" and skipped["reason"] == "cpu_run"
    clean = make_plan(PlanRequest(RESNET, max_gpus=8), CLOUD, RESULTS)
    assert clean.rows["hours_to_train"].tolist() == plan.rows["hours_to_train"].tolist()


def test_the_onprem_schema_holds_defaults_sources_and_ranges() -> None:
    schema = OnPremConfig.model_json_schema()["properties"]
    assert schema["pue"]["minimum"] == 1 and schema["pue"]["maximum"] == 5
    assert schema["utilization"]["minimum"] == 1e-6 and schema["utilization"]["maximum"] == 1
    assert "Uptime Institute" in schema["pue"]["source"]
    assert DEFAULTS["pue"].value == OnPremConfig().pue == 1.58
    assert OnPremConfig(servers=2).with_utilization(0.5) == OnPremConfig(servers=2, utilization=0.5)
