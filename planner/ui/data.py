"""Cached data loading for the app: offers, results, price status and fitted models.

Data tables are st.cache_data (each caller gets its own copy); fitted models are
st.cache_resource (one shared, read-only object). After a results file is added,
`clear_results()` drops what was computed from the results folder.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from planner.onprem.tco import LoadedConfig, load_onprem_config
from planner.plan import Plan, make_plan
from planner.request import PlanRequest
from planner.throughput import own_and_published_results, throughput_model_for_model
from planner.throughput.estimate import ThroughputModel
from pricing.catalog import SnapshotInfo, load_offers, read_manifest

# The example on-prem configuration (4 x DGX H100), shipped with the package; shown as
# examples/onprem-dgx-h100.toml (the same file is in the repository's examples/).
EXAMPLE_ONPREM = Path(__file__).resolve().parents[1] / "data" / "examples" / "onprem-dgx-h100.toml"


# Results folders whose answers are kept at once (the app reads one: $GPUPLAN_RESULTS_DIR).
MAX_FOLDERS = 4


def results_dir() -> str:
    """The results folder: $GPUPLAN_RESULTS_DIR, else ./results (as `gpuplan bench`)."""
    return os.environ.get("GPUPLAN_RESULTS_DIR", "results")


@st.cache_data(show_spinner=False, max_entries=1)  # no argument: one answer
def offers() -> pd.DataFrame:
    """The Offer table from the snapshot in use."""
    return load_offers()


@st.cache_data(show_spinner=False, max_entries=1)  # no argument: one answer
def manifest() -> list[SnapshotInfo]:
    """Manifest entries (provider, date, source) of the snapshot in use."""
    return read_manifest()


@st.cache_data(show_spinner=False, max_entries=1, ttl=3600)  # no argument: one answer
def price_status() -> pd.DataFrame:
    """Each price source's date, age and staleness (pricing.status.status_frame)."""
    from pricing.status import status_frame

    return status_frame()


@st.cache_data(show_spinner=False, max_entries=MAX_FOLDERS)
def results(results_dir: str) -> tuple[pd.DataFrame, list[str]]:
    """Own (bundled + `results_dir`) and published results, and rejected-file messages."""
    return own_and_published_results([results_dir])


@st.cache_data(show_spinner=False, max_entries=MAX_FOLDERS)
def reference(results_dir: str) -> pd.DataFrame:
    """Every non-LLM result as estimator reference rows (planner.throughput)."""
    from planner.throughput import reference_from_results

    table, _ = results(results_dir)
    return reference_from_results(table)


@st.cache_resource(show_spinner="Fitting scaling laws ...", max_entries=16)
def throughput_model(results_dir: str, model_name: str) -> ThroughputModel:
    """Scaling fits and spec regression for a benchmark model (fitted once, shared)."""
    table, _ = results(results_dir)
    return throughput_model_for_model(table, model_name)


@st.cache_data(show_spinner=False, max_entries=1)  # no argument: one answer
def onprem_example() -> LoadedConfig:
    """examples/onprem-dgx-h100.toml (OnPremConfigError when missing or invalid)."""
    loaded = load_onprem_config(EXAMPLE_ONPREM)
    return replace(loaded, path=str(EXAMPLE_ONPREM.relative_to(EXAMPLE_ONPREM.parents[1])))


@st.cache_data(show_spinner="Planning ...", max_entries=64, ttl=3600)
def plan(results_dir: str, request: PlanRequest) -> Plan:
    """planner.plan.make_plan of `request` on the snapshot in use and the results of
    `results_dir`.

    Kept an hour at most (prices age; the stale-price note is dated when planned).
    Raises what make_plan raises (planner.llm.records.LLMMemoryError); errors are not cached.
    """
    from planner.render.llm import with_llm_details

    table, _ = results(results_dir)
    return with_llm_details(make_plan(request, offers(), table))


@st.cache_resource(show_spinner=False, max_entries=16, ttl=3600)
def plan_chart(results_dir: str, request: PlanRequest) -> go.Figure:
    """The Plan page's time-vs-cost figure of `plan(results_dir, request)`, built once per
    plan and shared read-only: building it (planner.ui.plan_view.plan_figure, a trace per
    provider with hover text per row) is most of a warm Plan page run (~0.3 s of ~0.35 s)."""
    from planner.ui.plan_view import plan_figure

    return plan_figure(plan(results_dir, request))


@st.cache_data(show_spinner=False, max_entries=64, ttl=3600)
def plan_table(results_dir: str, request: PlanRequest) -> pd.DataFrame:
    """The Plan page's ranked table (planner.ui.plan_view.ranked_table) of
    `plan(results_dir, request)`, worded once per plan."""
    from planner.ui.plan_view import ranked_table

    return ranked_table(plan(results_dir, request))


@st.cache_data(show_spinner=False, max_entries=64, ttl=3600)
def plan_candidates(results_dir: str, request: PlanRequest) -> pd.DataFrame:
    """The options the Plan page's Compare view offers (planner.ui.compare.candidates) of
    `plan(results_dir, request)`, labelled once per plan."""
    from planner.ui.compare import candidates

    return candidates(plan(results_dir, request))


MAX_LISTED = 20  # skipped results-folder entries named one by one


def warn_skipped(problems: list[str]) -> None:
    """An inline warning naming each results-folder entry that was skipped (as text)."""
    if not problems:
        return
    from planner.ui.text import md_text

    more = len(problems) - MAX_LISTED
    st.warning(
        f"{len(problems)} file(s) in the results folder were skipped:\n\n"
        + "\n".join(f"- {md_text(p, 500)}" for p in problems[:MAX_LISTED])
        + (f"\n- ... and {more} more" if more > 0 else ""),
        icon=":material/warning:",
    )


# Caches of answers computed from the results folder, defined on the pages
# (`@data.from_results` above their st.cache_data / st.cache_resource): cleared with it.
_FROM_RESULTS: list[Any] = []
Cached = TypeVar("Cached")


def from_results(cached: Cached) -> Cached:
    """Register a cached function whose answers come from the results folder, so that
    clear_results() forgets them too."""
    _FROM_RESULTS.append(cached)
    return cached


def clear_results() -> None:
    """Forget the cached results and what was computed from them (a file was added)."""
    results.clear()
    reference.clear()
    throughput_model.clear()
    plan.clear()
    plan_chart.clear()
    plan_table.clear()
    plan_candidates.clear()
    for cached in _FROM_RESULTS:
        cached.clear()
