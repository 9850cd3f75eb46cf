"""Provider tiers and retired sizes: one documented table each, applied by default."""

from __future__ import annotations

import datetime as dt
import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from pricing.catalog import bundled_snapshot_dir, filter_offers, load_offers, read_manifest
from pricing.retired import RETIRED, retired_mask, retired_reason
from pricing.tiers import DEFAULT_TIERS, PROVIDER_TIERS, TIERS, tier_of

runner = CliRunner()


def show(*args: str) -> pd.DataFrame:
    done = runner.invoke(app, ["pricing", "show", "--format", "json", *args])
    assert done.exit_code == 0, done.output
    return pd.DataFrame(json.loads(done.stdout))


def test_every_bundled_provider_has_a_tier_and_every_offer_carries_it() -> None:
    for info in read_manifest(bundled_snapshot_dir()):
        assert info.provider in PROVIDER_TIERS
    offers = load_offers()
    assert set(offers["tier"]) <= set(TIERS)
    assert (offers.loc[offers["provider"] == "vast", "tier"] == "marketplace").all()
    assert tier_of("aws") == "hyperscaler" and tier_of("lambda") == "neocloud"
    assert tier_of("indus-gpu") == "custom"  # a user's own list is weighed by default
    assert "marketplace" not in DEFAULT_TIERS and "custom" in DEFAULT_TIERS


def test_show_leaves_marketplace_hosts_and_retired_sizes_out_by_default() -> None:
    default = show()
    assert "vast" not in set(default["provider"])
    assert not default["instance_type"].str.contains("_Promo").any()
    assert "Standard_NC6" not in set(default["instance_type"])
    assert set(default["tier"]) == {"hyperscaler", "neocloud"}
    everything = show("--include-retired", "--tier", "marketplace", "--tier", "hyperscaler")
    assert {"Standard_NC6_Promo", "Standard_NC6"} <= set(everything["instance_type"])
    assert "vast" in set(everything["provider"])
    assert "lambda" not in set(everything["provider"])


def test_naming_a_provider_weighs_it_whatever_its_tier() -> None:
    assert set(show("--provider", "vast")["provider"]) == {"vast"}


def test_an_unknown_tier_names_the_closest() -> None:
    done = runner.invoke(app, ["pricing", "show", "--tier", "neocloude"])
    assert done.exit_code == 2
    assert "did you mean 'neocloud'" in done.output and "Traceback" not in done.output


def test_a_retirement_applies_from_its_date() -> None:
    before = dt.date(2023, 9, 5)
    after = dt.date(2023, 9, 7)
    assert retired_reason("azure", "Standard_NC6_Promo", before) is None
    entry = retired_reason("azure", "Standard_NC6_Promo", after)
    assert entry is not None and "K80" in entry.reason
    assert retired_reason("azure", "Standard_NC6s_v3", after) is None  # retired 2025-09-30
    assert retired_reason("azure", "Standard_NC6s_v3", dt.date(2025, 10, 1)) is not None
    assert retired_reason("azure", "Standard_NC24ads_A100_v4", after) is None
    assert retired_reason("aws", "p2.xlarge") is not None
    assert retired_reason("aws", "p3.2xlarge") is None


@pytest.mark.parametrize("entry", RETIRED, ids=lambda e: f"{e.provider}:{e.pattern}")
def test_every_retirement_is_dated_and_sourced(entry: object) -> None:
    dt.date.fromisoformat(entry.retired_on)  # type: ignore[attr-defined]
    assert "." in entry.source and entry.reason  # type: ignore[attr-defined]


def test_filter_offers_masks_retired_per_offer() -> None:
    offers = load_offers()
    azure = offers.loc[offers["provider"] == "azure"]
    mask = retired_mask(azure, dt.date(2026, 11, 30))
    assert mask.sum() > 0
    kept = filter_offers(azure, ["azure"], today=dt.date(2026, 11, 30))
    assert len(kept) == len(azure) - mask.sum()
