"""planner.codes.ThroughputSource: one set of source codes, ranked, and one test of what
a published figure is."""

import pandas as pd

from planner.codes import SOURCE_RANK, ThroughputSource, is_published
from planner.throughput.calibration import METHODS
from planner.throughput.estimate import SOURCE_CODES


def test_sources_rank_own_runs_first_and_estimates_last() -> None:
    assert SOURCE_RANK["measured"] < SOURCE_RANK["published"] < SOURCE_RANK["sibling"]
    assert SOURCE_RANK["scaled"] < SOURCE_RANK["estimated"] < SOURCE_RANK["none"]
    assert tuple(SOURCE_RANK) == SOURCE_CODES
    assert set(METHODS) == set(SOURCE_CODES) - {"sibling", "none"}


def test_a_published_source_may_name_its_origin() -> None:
    sources = pd.Series(["published", "published:lambda", "measured", None, "sibling"])
    assert is_published(sources).tolist() == [True, True, False, False, False]
    assert ThroughputSource.PUBLISHED == "published"  # the column holds plain strings
