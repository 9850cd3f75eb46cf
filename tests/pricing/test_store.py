"""The user's snapshot folder (atomic commits, history, references) and snapshot diffs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pricing import catalog, store
from pricing.catalog import (
    SnapshotError,
    bundled_snapshot_dir,
    load_offers,
    read_manifest,
    read_snapshot,
    user_snapshot_dir,
    validate_offers,
)
from pricing.diff import diff_offers, summarize
from pricing.store import commit_snapshot, history, remove_snapshot, resolve_reference
from tests.pricing.conftest import tree_bytes


def offers(**prices: float) -> pd.DataFrame:
    rows = [
        {
            "provider": "aws",
            "region": "us-east-1",
            "instance_type": name,
            "gpu_name": "H100-SXM",
            "gpu_count": 8,
            "usd_per_hour": price,
            "source": "test",
            "priced_at": "2026-11-30",
        }
        for name, price in prices.items()
    ]
    return validate_offers(pd.DataFrame(rows))


def commit(frame: pd.DataFrame, day: str = "2026-11-30") -> catalog.SnapshotInfo:
    return commit_snapshot(
        "aws", frame.assign(priced_at=day), source="test", priced_at=day, date_basis="test"
    )


def test_commits_get_new_names_and_the_manifest_points_at_the_last() -> None:
    first = commit(offers(a=1.0))
    second = commit(offers(a=2.0))
    assert (first.file, second.file) == ("aws-2026-11-30.csv", "aws-2026-11-30-2.csv")
    in_use = {i.provider: i for i in read_manifest()}["aws"]
    assert in_use.file == second.file and in_use.sha256 == catalog.file_sha256(second.path)
    assert load_offers().query("provider == 'aws'")["usd_per_hour"].tolist() == [2.0]
    days = [(d, p.name) for d, p in history("aws")]
    assert days == [
        ("2025-06-01", "aws-2025-06-01.csv"),
        ("2026-11-30", "aws-2026-11-30.csv"),
        ("2026-11-30", "aws-2026-11-30-2.csv"),
    ]


def test_a_failure_before_the_manifest_swap_leaves_every_file_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    commit(offers(a=1.0))
    before = tree_bytes(user_snapshot_dir())

    def disk_full(*_: object) -> None:
        raise OSError("No space left on device")

    monkeypatch.setattr(store, "write_manifest", disk_full)
    with pytest.raises(OSError, match="No space left"):
        commit_snapshot(
            "aws",
            offers(a=3.0),
            source="test",
            priced_at="2026-11-30",
            date_basis="test",
            details={"fixes": pd.DataFrame({"reason": ["x"]})},
        )
    assert tree_bytes(user_snapshot_dir()) == before
    assert load_offers().query("provider == 'aws'")["usd_per_hour"].tolist() == [1.0]


def test_a_crash_inside_the_atomic_write_leaves_no_temp_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    commit(offers(a=1.0))
    before = tree_bytes(user_snapshot_dir())
    real_replace = catalog.os.replace

    def fail_on_manifest(src: str, dst: str) -> None:
        if str(dst).endswith("MANIFEST.json"):
            raise OSError("power cut")
        real_replace(src, dst)

    monkeypatch.setattr(catalog.os, "replace", fail_on_manifest)
    with pytest.raises(OSError, match="power cut"):
        commit(offers(a=5.0))
    assert tree_bytes(user_snapshot_dir()) == before
    assert not [p for p in user_snapshot_dir().iterdir() if p.suffix == ".tmp"]


def test_remove_goes_back_to_the_bundled_snapshot_and_keeps_the_file() -> None:
    info = commit(offers(a=1.0))
    removed = remove_snapshot("aws")
    assert removed.file == info.file and info.path.exists()
    assert {i.provider: i for i in read_manifest()}["aws"].origin == "bundled"
    with pytest.raises(ValueError, match="no user snapshot 'aws'"):
        remove_snapshot("aws")


def test_references_resolve_to_paths_providers_bundled_and_dates(tmp_path: Path) -> None:
    commit(offers(a=1.0))
    frame, label = resolve_reference("aws")
    assert frame["usd_per_hour"].tolist() == [1.0] and "(user)" in label
    bundled, label = resolve_reference("aws@bundled")
    assert len(bundled) == 92 and "(bundled)" in label
    dated, _ = resolve_reference("aws@2025-06-01")
    assert dated.equals(bundled)
    path = bundled_snapshot_dir() / "gcp-2025-01-01.csv"
    by_path, label = resolve_reference(str(path))
    assert by_path.equals(read_snapshot(path)) and label == str(path)
    with pytest.raises(ValueError, match="did you mean 'azure'"):
        resolve_reference("azur")
    with pytest.raises(ValueError, match="kept dates: 2025-06-01, 2026-11-30"):
        resolve_reference("aws@2026-01-01")
    with pytest.raises(ValueError, match="after '@' comes 'bundled' or a date"):
        resolve_reference("aws@latest")
    with pytest.raises(SnapshotError, match="no such snapshot file"):
        resolve_reference(str(tmp_path / "missing.csv"))


def test_a_broken_user_manifest_is_named_not_ignored() -> None:
    user_snapshot_dir().mkdir(parents=True)
    (user_snapshot_dir() / "MANIFEST.json").write_text("{")
    with pytest.raises(SnapshotError, match=r"MANIFEST\.json.*not valid JSON"):
        load_offers()


def test_diff_lists_added_removed_and_changed_prices() -> None:
    old = offers(a=10.0, b=20.0, c=30.0)
    new = offers(a=10.0, b=18.0, d=40.0)
    new.loc[new["instance_type"] == "a", "spot_usd_per_hour"] = 4.0
    changes = diff_offers(old, new)
    by = {(r.change, r.instance_type, r.pricing): r for r in changes.itertuples()}
    assert set(by) == {
        ("added", "d", "on-demand"),
        ("removed", "c", "on-demand"),
        ("price", "b", "on-demand"),
        ("price", "a", "spot"),
    }
    assert by[("price", "b", "on-demand")].change_pct == pytest.approx(-10.0)
    assert np.isnan(by[("price", "a", "spot")].change_pct)  # appeared: no percentage
    assert by[("added", "d", "on-demand")].new_usd_per_hour == 40.0
    assert summarize(changes) == (
        "1 added, 1 removed, 2 price changes (1 down, 0 up), 0 shape changes"
    )


def test_diff_of_a_snapshot_with_itself_is_empty_and_shapes_are_compared() -> None:
    bundled = load_offers(bundled_snapshot_dir())
    assert diff_offers(bundled, bundled).empty
    old = offers(a=1.0)
    new = old.assign(gpu_count=4.0)
    shape = diff_offers(old, new)
    assert shape["change"].tolist() == ["shape"]
    assert shape["detail"].tolist() == ["8 x H100-SXM -> 4 x H100-SXM"]
