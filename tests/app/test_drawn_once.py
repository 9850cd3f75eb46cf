"""A page's outputs are drawn once per request for every session (planner.ui.cache.drawn):
a later session asking the same is shown the very same elements, replayed without drawing
them again; a different request, or an added result, draws them anew."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from planner.request import PlanRequest
from planner.ui import (
    benchmarks_page,
    data,
    onprem_page,
    plan_page,
    prices_page,
    scaling_page,
)
from planner.ui.cache import fingerprint
from planner.workloads.catalog import WORKLOADS
from tests.app.conftest import run_page


def counted(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[int]:
    """Replace module.name with a wrapper counting its calls (the list's length)."""
    calls: list[int] = []
    original: Callable[..., Any] = getattr(module, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapper)
    return calls


def shown(at: AppTest) -> tuple[Any, ...]:
    """What a Plan page run shows: texts, metrics, tables, chart specs, captions."""
    return (
        [m.value for m in at.markdown],
        [(m.label, m.value) for m in at.metric],
        [d.value.to_json() for d in at.dataframe],
        [c.proto.spec for c in at.get("plotly_chart")],
        [c.value for c in at.caption],
        [w.value for w in at.warning],
    )


def session(page: str, query: dict[str, str] | None = None) -> AppTest:
    """A fresh session that ran `page` once, with `query` as its address's parameters."""
    return run_page(page, query, timeout=120)


def test_every_session_asking_the_same_plan_is_shown_the_first_ones_elements(
    results_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    heads = counted(monkeypatch, plan_page, "_head")
    bodies = counted(monkeypatch, plan_page, "_body")
    notes = counted(monkeypatch, plan_page, "_notes")
    sessions = [session("plan") for _ in range(3)]
    assert (len(heads), len(bodies), len(notes)) == (1, 1, 1)  # drawn by the first only
    first = shown(sessions[0])
    assert len(first[2]) >= 1 and len(first[3]) == 1  # the ranked table and the chart
    assert len(first[1]) == 3  # the three picks
    assert shown(sessions[1]) == first and shown(sessions[2]) == first


def test_a_different_request_is_drawn_anew(
    results_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bodies = counted(monkeypatch, plan_page, "_body")
    fp16 = shown(session("plan", {"precision": "fp16"}))
    fp32 = shown(session("plan", {"precision": "fp32"}))
    assert len(bodies) == 2
    assert fp16[2] != fp32[2]  # the ranked tables differ
    assert shown(session("plan", {"precision": "fp16"})) == fp16
    assert len(bodies) == 2


def test_an_added_result_forgets_what_was_drawn(
    results_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bodies = counted(monkeypatch, plan_page, "_body")
    session("plan")
    data.clear_results()  # what the Benchmarks page does after saving a result file
    session("plan")
    assert len(bodies) == 2


def test_every_session_asking_the_same_tco_is_shown_the_same_answer(
    results_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = counted(monkeypatch, onprem_page, "_answer_drawn")
    first, second = session("onprem"), session("onprem")
    assert len(answers) == 1
    assert len(shown(first)[3]) == 2  # the break-even curve and the tornado
    assert shown(second) == shown(first)
    busier = session("onprem", {"utilization": "0.9"})
    assert len(answers) == 2
    assert [m.value for m in busier.metric] != [m.value for m in first.metric]


def test_every_session_asking_the_same_scaling_view_is_shown_the_same(
    results_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    views = counted(monkeypatch, scaling_page, "_view_drawn")
    llms = counted(monkeypatch, scaling_page, "_llm_drawn")
    sessions = [session("scaling") for _ in range(2)]
    assert (len(views), len(llms)) == (1, 1)
    assert shown(sessions[1]) == shown(sessions[0])
    assert len(shown(sessions[0])[3]) >= 3  # throughput, efficiency, the LLM's step parts
    sessions[1].toggle(key="scaling.every_count").set_value(True).run()
    every, powers = (len(s.dataframe[2].value) for s in sessions[::-1])
    assert every > powers  # the extrapolation at every count computed, drawn for that choice
    assert len(views) == 1


def test_every_session_asking_the_same_results_view_is_shown_the_same(
    results_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    views = counted(monkeypatch, benchmarks_page, "_results_drawn")
    sessions = [session("benchmarks", query) for query in ({}, {}, {"precision": "fp32"})]
    assert len(views) == 2  # the fp16 view once, then the fp32 one
    assert shown(sessions[1]) == shown(sessions[0])
    assert shown(sessions[2])[2] != shown(sessions[0])[2]  # other results listed


def test_every_session_asking_the_same_offers_is_shown_the_same(
    results_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    views = counted(monkeypatch, prices_page, "_offers_drawn")
    sessions = [session("prices", query) for query in ({}, {}, {"providers": "aws"})]
    assert len(views) == 2
    assert shown(sessions[1]) == shown(sessions[0])
    every, aws = (len(s.dataframe[0].value) for s in (sessions[0], sessions[2]))
    assert every > aws > 0  # the offers of every default provider, then AWS's only


def test_a_fingerprint_tells_two_requests_apart() -> None:
    def request(**changed: Any) -> PlanRequest:
        asked = {"precision": "fp16", "pricing": "on-demand", "providers": ("aws",)}
        return PlanRequest(workload=WORKLOADS["resnet50-imagenet-90ep"], **(asked | changed))

    same = {fingerprint(request()), fingerprint(request())}
    assert len(same) == 1
    others = [request(precision="fp32"), request(deadline_hours=3.0), request(providers=("gcp",))]
    assert len({fingerprint(r) for r in others} | same) == 4
