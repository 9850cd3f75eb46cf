"""Answers the app computes once for every session that asks the same thing.

A page's heavy answer (the TCO Monte Carlo and its sensitivity) is st.cache_data keyed by
the request itself (the on-prem config, the offers compared, the work, the trend): twenty
users asking the same question, or one user whose rerun changed nothing, cost one
computation. Bounded: MAX_ENTRIES answers per function, each kept at most TTL_S (prices
age). Plans and fitted models are cached the same way in planner.ui.data.

`drawn` goes one step further for a page's outputs (charts, tables, metrics, text): the
elements a section draws are kept, keyed by the section and its request, and replayed as
they are (Streamlit's cached-element replay) to every later session that asks the same:
no figure turned into JSON, no table into Arrow, no answer copied out of a cache again.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable, Collection, Hashable
from typing import Any, TypeVar, cast

import pandas as pd
import streamlit as st

from planner.onprem.answer import tco_answer as compute_tco_answer
from planner.onprem.config import OnPremConfig
from planner.onprem.sensitivity import sensitivity as compute_sensitivity
from planner.ui import data

MAX_ENTRIES = 64  # answers kept per function: a TCO answer is ~100 kB
MAX_FIGURES = 16  # plotly figures kept per function (shared objects, ~1 MB each at most)
TTL_S = 3600  # prices age: an answer is recomputed after an hour
# Drawn sections kept (their elements: the largest, the Plan page's ranked table and chart,
# are ~0.3 and ~0.15 MB), over all pages and requests.
MAX_DRAWN = 128
Drawn = TypeVar("Drawn")


# planner.onprem.answer.tco_answer, once per distinct request.
tco_answer = st.cache_data(show_spinner=False, max_entries=MAX_ENTRIES, ttl=TTL_S)(
    compute_tco_answer
)


@st.cache_data(show_spinner=False, max_entries=MAX_ENTRIES, ttl=TTL_S)
def sensitivity(config: OnPremConfig, defaulted: Collection[str]) -> pd.DataFrame:
    """planner.onprem.sensitivity.sensitivity, once per distinct config."""
    return compute_sensitivity(config, tuple(defaulted))


def fingerprint(request: object) -> str:
    """A digest of `request`'s pickle: a cheap key for a request hashed by many caches in
    one render (Streamlit hashes a dataclass field by field in Python). Two different
    requests never share it; two equal ones that pickle differently only miss the cache."""
    return hashlib.sha256(pickle.dumps(request, pickle.HIGHEST_PROTOCOL)).hexdigest()


@data.from_results  # a section may show what the results folder holds
@st.cache_resource(show_spinner=False, max_entries=MAX_DRAWN, ttl=TTL_S)
def _drawn(section: str, request: Hashable, _draw: Callable[[], Any]) -> Any:
    """Run `_draw` (not hashed: `section` and `request` name what it draws)."""
    return _draw()


def drawn(section: str, request: Hashable, draw: Callable[[], Drawn]) -> Drawn:
    """Draw `draw()`'s elements once per (`section`, `request`); every later call, from any
    session, replays those elements without running `draw`, and returns what it returned
    then (shared, read-only: a flag, not a table).

    `request` must hold everything the elements show (the page's request, the results
    folder); `draw` may draw outputs only (a widget inside it is refused by Streamlit).
    Forgotten with the results (data.clear_results), after TTL_S, or when MAX_DRAWN are kept.
    """
    return cast(Drawn, _drawn(section, request, draw))
