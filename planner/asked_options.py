"""The offers a request asks for and their options (every offer x instance count, on-prem
config x GPUs): a plan's first steps (planner.choose.asked.offers_asked_for, then
planner.choose.options.options_for), the same for every workload planned on one offer
table with one set of filters, so kept in process by the table's content and those filters.
"""

from __future__ import annotations

import datetime as dt
from functools import lru_cache

import pandas as pd

from planner.choose.asked import offers_asked_for
from planner.choose.options import options_for
from planner.notes import Note
from planner.request import PlanRequest
from planner.throughput.disk_cache import frame_digest
from planner.throughput.offers import ByKey


def asked_options(
    request: PlanRequest, offers: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame, list[Note]]:
    """The offers within the request's filters, their options and the notes on what was
    left out; the options a copy of the kept table (later steps add columns to it)."""
    filters = (
        request.providers,
        request.regions,
        request.gpus,
        request.tiers,
        request.include_retired,
        request.today or dt.date.today(),
        request.reserved_discount,
        request.pricing,
        request.onprem,
        request.onprem_sources,
        request.gpu_limit,
        request.gpu_count,
    )
    chosen, opts, notes = _asked(ByKey((frame_digest(offers), filters), (request, offers)))
    return chosen, opts.copy(), list(notes)


@lru_cache(maxsize=16)
def _asked(key: ByKey) -> tuple[pd.DataFrame, pd.DataFrame, tuple[Note, ...]]:
    request, offers = key.payload
    chosen = offers_asked_for(request, offers)
    opts, notes = options_for(request, chosen)
    return chosen, opts, tuple(notes)
