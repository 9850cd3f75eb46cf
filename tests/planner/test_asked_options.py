"""A plan's offers and options are kept in process by the offer table's content and the
request's filters (planner.asked_options): reused across workloads, never across filters,
and every caller gets its own copy of the options."""

from __future__ import annotations

import pandas as pd
import pytest

from planner import asked_options as module
from planner.request import PlanRequest
from planner.workloads.catalog import get_workload
from pricing.catalog import load_offers


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = module.options_for

    def options_for(request: PlanRequest, chosen: pd.DataFrame) -> object:
        calls.append(len(chosen))
        return real(request, chosen)

    monkeypatch.setattr(module, "options_for", options_for)
    module._asked.cache_clear()
    yield calls
    module._asked.cache_clear()


def request(name: str, **fields: object) -> PlanRequest:
    return PlanRequest(get_workload(name), "fp16", "on-demand", **fields)  # type: ignore[arg-type]


def test_options_are_built_once_per_table_and_filters(counted: list[int]) -> None:
    offers = load_offers()
    _, first, _ = module.asked_options(request("resnet50-imagenet-90ep", max_gpus=64), offers)
    _, again, _ = module.asked_options(request("bert-large-squad-2ep", max_gpus=64), offers)
    assert len(counted) == 1  # another workload, the same offers and filters
    pd.testing.assert_frame_equal(first, again)
    _, fewer, _ = module.asked_options(request("resnet50-imagenet-90ep", max_gpus=8), offers)
    assert len(counted) == 2 and fewer["total_gpus"].max() <= 8 < first["total_gpus"].max()
    _, aws, _ = module.asked_options(
        request("resnet50-imagenet-90ep", max_gpus=64, providers=("aws",)), offers
    )
    assert len(counted) == 3 and set(aws["provider"]) == {"aws"}
    changed = offers.assign(usd_per_hour=offers["usd_per_hour"] * 2)  # another table
    _, dearer, _ = module.asked_options(request("resnet50-imagenet-90ep", max_gpus=64), changed)
    assert len(counted) == 4
    assert dearer["usd_per_hour"].sum() == pytest.approx(2 * first["usd_per_hour"].sum())


def test_each_caller_gets_its_own_copy_of_the_options(counted: list[int]) -> None:
    offers = load_offers()
    asked = request("resnet50-imagenet-90ep", max_gpus=16)
    _, opts, notes = module.asked_options(asked, offers)
    opts["usd_per_hour"] = -1.0
    notes.clear()
    _, kept, kept_notes = module.asked_options(asked, offers)
    assert len(counted) == 1
    assert (kept["usd_per_hour"].dropna() > 0).all()
    assert kept_notes  # 16 GPUs leaves out the larger offers, and says so
