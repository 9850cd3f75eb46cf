"""Price source status: date, age, staleness and integrity of each snapshot in use."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from pricing.catalog import SnapshotInfo, bundled_snapshot_dir, file_sha256, read_manifest
from pricing.status import STATUS_COLUMNS, stale_text, status_frame


def info(directory: Path, provider: str, priced_at: str, text: str = "x\n") -> SnapshotInfo:
    path = directory / f"{provider}.csv"
    path.write_text(text)
    return SnapshotInfo(
        provider=provider,
        file=path.name,
        priced_at=priced_at,
        source=f"{provider} test",
        rows=1,
        sha256=file_sha256(path),
        directory=str(directory),
    )


def test_age_staleness_and_integrity(tmp_path: Path) -> None:
    fresh = info(tmp_path, "aws", "2026-11-20")
    old = info(tmp_path, "gcp", "2026-10-01")
    edited = info(tmp_path, "azure", "2026-11-29")
    (tmp_path / "azure.csv").write_text("changed\n")
    gone = info(tmp_path, "lambda", "2026-11-29")
    (tmp_path / "lambda.csv").unlink()
    frame = status_frame([fresh, old, edited, gone], today=dt.date(2026, 11, 30)).set_index(
        "provider"
    )
    assert list(frame.reset_index().columns) == list(STATUS_COLUMNS)
    assert frame.loc["aws", ["age_days", "stale", "integrity"]].tolist() == [10, "no", "ok"]
    assert frame.loc["gcp", ["age_days", "stale"]].tolist() == [60, "yes"]
    assert frame.loc["azure", "integrity"] == "changed since written"
    assert frame.loc["lambda", "integrity"] == "file missing"
    assert frame.loc["aws", "origin"] == "user"
    assert stale_text(frame.reset_index()) == "gcp (60 d)"


def test_thirty_days_is_not_yet_stale(tmp_path: Path) -> None:
    frame = status_frame([info(tmp_path, "aws", "2026-10-31")], today=dt.date(2026, 11, 30))
    assert frame["age_days"].iloc[0] == 30
    assert stale_text(frame) == ""


def test_the_bundled_manifest_is_the_default() -> None:
    frame = status_frame(today=dt.date(2026, 11, 30))
    assert set(frame["provider"]) == {i.provider for i in read_manifest(bundled_snapshot_dir())}
    assert (frame["origin"] == "bundled").all() and (frame["integrity"] == "ok").all()
