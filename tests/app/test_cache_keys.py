"""The app's shared caches: keyed by the whole request (two different requests never share
an answer; each cached answer equals the uncached one) and bounded (max_entries, enforced).

The cached functions are called as the pages call them, outside a script run (Streamlit's
caches work in bare mode), on the bundled data.
"""

from __future__ import annotations

import importlib
import pickle
import pkgutil
from pathlib import Path

import pandas as pd
import pytest
from streamlit.runtime.caching.cache_utils import CachedFunc

import planner.ui
from planner.onprem.compare import compared_offers
from planner.plan import make_plan
from planner.request import PlanRequest
from planner.settings import CommModel
from planner.throughput import scaling_report
from planner.ui import (
    benchmarks_page,
    data,
    onprem_page,
    plan_view,
    prices_page,
    scaling_page,
    tables,
)
from planner.ui.compare import candidates
from planner.workloads.catalog import WORKLOADS
from pricing.catalog import load_offers


def cached_functions() -> dict[str, CachedFunc]:
    """Every st.cache_data / st.cache_resource function of planner.ui, by qualified name."""
    found = {}
    for module in pkgutil.iter_modules(planner.ui.__path__):
        if module.name == "pages":
            continue
        loaded = importlib.import_module(f"planner.ui.{module.name}")
        for name, value in vars(loaded).items():
            if isinstance(value, CachedFunc) and value.__module__ == loaded.__name__:
                found[f"{loaded.__name__}.{name}"] = value
    return found


def test_every_cache_of_the_app_is_bounded() -> None:
    found = cached_functions()
    assert {"planner.ui.data.plan", "planner.ui.scaling_page.view_of"} <= set(found)
    unbounded = [name for name, cached in found.items() if not cached._info.max_entries]
    assert unbounded == []


def test_a_full_cache_forgets_its_oldest_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past MAX_FITTED distinct tables, the first one's widths are measured again."""
    measured: list[int] = []

    def counting(frame: pd.DataFrame, config: dict) -> dict:
        measured.append(int(frame.iloc[0, 0]))
        return {"n": {"width": 1}}

    monkeypatch.setattr(tables, "fitted", counting)
    tables._fitted_once.clear()
    frames = [pd.DataFrame({"n": [i]}) for i in range(tables.MAX_FITTED + 1)]

    def ask(frame: pd.DataFrame) -> None:
        tables._fitted_once(pickle.dumps(frame), {})

    ask(frames[0])
    ask(frames[0])
    assert measured == [0]  # the same table: measured once
    for frame in frames[1:]:
        ask(frame)
    ask(frames[0])
    assert measured == [*range(tables.MAX_FITTED + 1), 0]
    tables._fitted_once.clear()


@pytest.mark.parametrize(
    ("first", "second"),
    [([1, 2], ["1", "2"]), ([None, "a"], ["None", "a"]), (["x"], ["x "])],
    ids=["int-vs-text", "none-vs-text", "trailing-space"],
)
def test_table_widths_are_never_shared_between_tables_that_differ(
    first: list[object], second: list[object]
) -> None:
    """pandas' row hash reads an object column as text (1 and "1" hash alike): the widths are
    keyed by the table's exact bytes instead."""
    config = {"c": {"label": "c", "type_config": {"format": "%.2f"}}}
    one, two = (pd.DataFrame({"c": pd.Series(v, dtype=object)}) for v in (first, second))
    tables._fitted_once.clear()
    widths = [tables._fitted_once(pickle.dumps(f), config)["c"]["width"] for f in (one, two)]
    assert widths == [tables.fitted(f, config)["c"]["width"] for f in (one, two)]
    assert widths[0] != widths[1]


@pytest.fixture(scope="module")
def plans(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[PlanRequest]]:
    """Two plan requests that differ in one field only (the precision)."""
    directory = str(tmp_path_factory.mktemp("results"))
    workload = WORKLOADS["resnet50-imagenet-90ep"]
    requests = [
        PlanRequest(workload=workload, precision=p, pricing="on-demand", providers=("aws",))
        for p in ("fp16", "fp32")
    ]
    return directory, requests


def test_two_plan_requests_never_share_a_table_or_options(
    plans: tuple[str, list[PlanRequest]],
) -> None:
    directory, requests = plans
    table, _ = data.results(directory)
    tables_shown = [data.plan_table(directory, r) for r in requests]
    options = [data.plan_candidates(directory, r) for r in requests]
    for request, shown, offered in zip(requests, tables_shown, options, strict=True):
        plan = make_plan(request, load_offers(), table)
        pd.testing.assert_frame_equal(shown, plan_view.ranked_table(plan))
        assert offered["label"].tolist() == candidates(plan)["label"].tolist()
    assert not tables_shown[0].equals(tables_shown[1])
    # asked again (another session): the same answers
    pd.testing.assert_frame_equal(data.plan_table(directory, requests[0]), tables_shown[0])


def test_two_scaling_views_never_share_an_answer(tmp_path: Path) -> None:
    directory = str(tmp_path)
    asked = [
        ("resnet50", "fp16", "H100-SXM", CommModel(), 8192.0),
        ("resnet50", "fp16", "H100-SXM", CommModel(network_gbps_per_node=10.0), 8192.0),
        ("resnet50", "fp16", "A100-SXM-40GB", CommModel(), 8192.0),
    ]
    views = [scaling_page.view_of(directory, *a) for a in asked]
    model = data.throughput_model(directory, "resnet50")
    for (name, precision, gpu, comm, batch), view in zip(asked, views, strict=True):
        counts = scaling_report.extrapolation_counts(
            scaling_report.EXTRAPOLATION_MAX_GPUS, comm.gpus_per_node
        )
        expected = scaling_report.extrapolation(model, gpu, name, precision, counts, comm, batch)
        pd.testing.assert_frame_equal(view.curve, expected)
        figures = scaling_page.figures_of(directory, name, precision, gpu, comm, batch)
        assert figures.throughput.layout.title.text.endswith(view.title)
    curves = [v.curve["throughput"].tolist() for v in views]
    assert curves[0] != curves[1] and curves[0] != curves[2]


def test_two_llm_scaling_questions_never_share_rows() -> None:
    rows = [
        scaling_page._llm_rows("6.7b", "H100-SXM", CommModel(), framework)
        for framework in ("megatron", "fsdp")
    ]
    assert not rows[0].equals(rows[1])
    other_gpu = scaling_page._llm_rows("6.7b", "A100-SXM-40GB", CommModel(), "megatron")
    assert not rows[0].equals(other_gpu)


def test_two_tco_questions_never_share_offers_or_charts() -> None:
    tiers = ("hyperscaler", "neocloud")
    refs, labels, default = onprem_page._offer_choices("H100-SXM", "on-demand", tiers)
    spot_refs, spot_labels, _ = onprem_page._offer_choices("H100-SXM", "spot", tiers)
    assert set(default) <= set(refs) and set(labels) == set(refs)
    assert (refs, labels) != (spot_refs, spot_labels)  # spot prices differ
    chosen = [tuple(default[:1]), tuple(default[:2])]
    compared = [onprem_page._compared("H100-SXM", c, "on-demand", tiers) for c in chosen]
    for refs_chosen, frame in zip(chosen, compared, strict=True):
        expected = compared_offers(load_offers(), "H100-SXM", list(refs_chosen), "on-demand",
                                   list(tiers))  # fmt: skip
        pd.testing.assert_frame_equal(frame, expected)
    assert len(compared[0]) == 1 and len(compared[1]) == 2
    configs = [onprem_page.config_from_inputs({"servers": n}) for n in (2, 3)]
    figures = [
        onprem_page._figures(c.config, compared[1], tuple(c.defaulted), None, None, "on-demand")
        for c in configs
    ]
    names = [f[0].data[0].name for f in figures]
    assert names == [f"on-prem {c.config.gpus} x H100-SXM (amortized)" for c in configs]


def test_two_offer_filters_never_share_a_table_or_chart() -> None:
    aws = (("aws",), (), (), ("hyperscaler", "neocloud"), False)
    gcp = (("gcp",), (), (), ("hyperscaler", "neocloud"), False)
    shown = [prices_page._table(*chosen) for chosen in (aws, gcp)]
    assert set(shown[0]["provider"]) == {"aws"} and set(shown[1]["provider"]) == {"gcp"}
    expected = prices_page.offers_table(load_offers(), ["aws"], [], [], ["hyperscaler", "neocloud"])
    pd.testing.assert_frame_equal(shown[0], expected)
    charts = [prices_page._chart_of(chosen, "on-demand", 5) for chosen in (aws, gcp)]
    assert all("aws " in y for y in charts[0].data[0].y)
    assert all("gcp " in y for y in charts[1].data[0].y)


def test_two_benchmark_views_never_share_figures(tmp_path: Path) -> None:
    directory = str(tmp_path)
    asked = [
        ("resnet50 full", "fp16", (), "all", True),
        ("resnet50 full", "fp16", (), "published", True),
        ("resnet50 full", "fp32", (), "all", True),
    ]
    shown = [benchmarks_page._by_gpu_shown(directory, *a) for a in asked]
    assert set(shown[1]["origin"]) == {"published"}
    assert not shown[0].equals(shown[2])
    table, _ = data.results(directory)
    expected = benchmarks_page._by_gpu(table, "resnet50 full", "fp32")
    pd.testing.assert_frame_equal(shown[2], expected)


def test_adding_a_result_forgets_every_answer_computed_from_the_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert {scaling_page.view_of, scaling_page.figures_of, scaling_page._gpu_choices,
            benchmarks_page._chart_shown} <= set(data._FROM_RESULTS)  # fmt: skip
    computed: list[str] = []
    by_gpu = benchmarks_page._by_gpu

    def counting(table: pd.DataFrame, model: str, precision: str) -> pd.DataFrame:
        computed.append(precision)
        return by_gpu(table, model, precision)

    monkeypatch.setattr(benchmarks_page, "_by_gpu", counting)
    asked = (str(tmp_path), "resnet50 full", "fp16", (), "all", True)
    benchmarks_page._by_gpu_shown(*asked)
    benchmarks_page._by_gpu_shown(*asked)
    assert computed == ["fp16"]  # asked twice, computed once
    data.clear_results()  # what the page does after saving a result file
    benchmarks_page._by_gpu_shown(*asked)
    assert computed == ["fp16", "fp16"]
