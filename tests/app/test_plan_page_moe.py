"""The Plan page with a mixture-of-experts model and the user's own layout; the Scaling page
with a MoE preset."""

from __future__ import annotations

from pathlib import Path

from planner.workloads.catalog import get_workload
from tests.app.conftest import chart, plain
from tests.app.test_plan_page import Open, direct, ranked

QUERY = {"providers": "aws", "gpus": "H100-SXM", "max_gpus": "64", "precision": "bf16"}


def _notes(at) -> list[str]:
    return [plain(m.value) for m in [*at.info, *at.warning, *at.error]]


def test_a_moe_preset_and_a_layout_reach_the_plan(open_page: Open, results_dir: Path) -> None:
    at = open_page(
        "plan", {**QUERY, "job": "catalog", "workload": "mixtral-8x7b-1t", "layout": "tp2 ep4"}
    )
    assert not at.exception and not at.error
    workload = get_workload("mixtral-8x7b-1t")
    plan = direct(results_dir, workload, precision="bf16", providers=("aws",),
                  gpus=("H100-SXM",), max_gpus=64)  # fmt: skip
    table = ranked(at)
    assert sorted(table["throughput"].round()) == sorted(plan.rows["throughput"].round())
    assert "mixtral-8x7b-1t" in chart(at, "plan.chart")["layout"]["title"]["text"]
    said = " ".join(_notes(at))
    assert "Your layout tp2 pp1 cp1 ep4 dp" in said and "best layout found: tp" in said
    assert "on active parameters" in said
    at.text_input(key="plan.layout").set_value("tp2 ep3").run()
    assert not at.exception
    errors = " ".join(plain(e.value) for e in at.error)
    assert "Your layout" in errors and "ep3 must divide the 8 experts" in errors


def test_a_described_moe_llm_counts_its_active_parameters(open_page: Open) -> None:
    at = open_page(
        "plan",
        {**QUERY, "job": "llm", "params_b": "46.7", "active_b": "12.9", "tokens_b": "100"},
    )
    assert not at.exception and not at.error
    assert "mixtral-8x7b-100b" in chart(at, "plan.chart")["layout"]["title"]["text"]
    at.number_input(key="plan.active_b").set_value(60.0).run()
    assert "Active parameters" in " ".join(plain(e.value) for e in at.error)


def test_the_scaling_page_scales_a_moe_preset_with_its_expert_parts(open_page: Open) -> None:
    at = open_page("scaling", {"llm": "mixtral-8x7b"})
    assert not at.exception
    names = {trace["name"] for trace in chart(at, "scaling.llm_chart")["data"]}
    assert {"expert grouped GEMM", "expert all-to-all"} <= names


def test_the_all_to_all_overlap_is_asked_for_moe_only_and_never_slows_the_plan(
    open_page: Open,
) -> None:
    query = {**QUERY, "job": "catalog", "workload": "mixtral-8x7b-1t", "gpu_count": "32"}
    at = open_page("plan", query)
    assert not at.exception and not at.error
    exposed = ranked(at).set_index(["provider", "instance_type"])["throughput"]
    at.toggle(key="plan.moe_overlap").set_value(True).run()
    assert not at.exception and not at.error
    overlapped = ranked(at).set_index(["provider", "instance_type"])["throughput"]
    assert set(overlapped.index) == set(exposed.index)  # the same options, 32 GPUs each
    assert (overlapped >= exposed.reindex(overlapped.index)).all()
    assert (overlapped > exposed.reindex(overlapped.index)).any()
    assert "DualPipe-style overlap" in " ".join(ranked(at)["throughput_detail"].astype(str))
    dense = open_page("plan", {**QUERY, "job": "catalog", "workload": "llm-6.7b-134b"})
    assert "plan.moe_overlap" not in [t.key for t in dense.toggle]
