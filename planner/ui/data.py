"""Cached data loading for the app: offers, results and manifest are read once."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from planner.throughput import own_and_published_results
from pricing.catalog import SnapshotInfo, load_offers, read_manifest


@st.cache_data(show_spinner=False)
def offers() -> pd.DataFrame:
    """The Offer table from the snapshot in use."""
    return load_offers()


@st.cache_data(show_spinner=False)
def manifest() -> list[SnapshotInfo]:
    """Manifest entries (provider, date, source) of the snapshot in use."""
    return read_manifest()


@st.cache_data(show_spinner=False)
def results(results_dir: str) -> tuple[pd.DataFrame, list[str]]:
    """Own (bundled + `results_dir`) and published results, and rejected-file messages."""
    return own_and_published_results([results_dir])
