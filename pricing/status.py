"""Each price source in use: its date, age, staleness and integrity (CLI and app share it).

Status table columns (one row per provider in the manifest in use):

  provider, origin (bundled | user), priced_at (ISO date), age_days (days since priced_at),
  stale ("yes" past STALE_AFTER_DAYS), rows, integrity (ok | file missing | changed since
  written), date_basis, file, retrieved_at, source
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import pandas as pd

from pricing.catalog import STALE_AFTER_DAYS, SnapshotInfo, file_sha256, read_manifest

STATUS_COLUMNS: tuple[str, ...] = (
    "provider",
    "origin",
    "priced_at",
    "age_days",
    "stale",
    "rows",
    "integrity",
    "date_basis",
    "file",
    "retrieved_at",
    "source",
)


def integrity(info: SnapshotInfo) -> str:
    """'ok' when the snapshot file still has the manifest's SHA-256, else what is wrong."""
    if not info.path.is_file():
        return "file missing"
    return "ok" if file_sha256(info.path) == info.sha256 else "changed since written"


def status_frame(
    infos: Sequence[SnapshotInfo] | None = None, today: dt.date | None = None
) -> pd.DataFrame:
    """The status table (STATUS_COLUMNS) of `infos`, default the manifest in use."""
    infos = read_manifest() if infos is None else infos
    today = today or dt.date.today()
    return pd.DataFrame(
        [
            {
                "provider": info.provider,
                "origin": info.origin,
                "priced_at": info.priced_at,
                "age_days": info.age_days(today),
                "stale": "yes" if info.age_days(today) > STALE_AFTER_DAYS else "no",
                "rows": info.rows,
                "integrity": integrity(info),
                "date_basis": info.date_basis,
                "file": str(info.path),
                "retrieved_at": info.retrieved_at,
                "source": info.source,
            }
            for info in infos
        ],
        columns=list(STATUS_COLUMNS),
    )


def stale_text(status: pd.DataFrame) -> str:
    """'aws (547 d), gcp (698 d)': the stale sources of a status table, '' when none."""
    stale = status.loc[status["stale"] == "yes"]
    return ", ".join(f"{r.provider} ({r.age_days:.0f} d)" for r in stale.itertuples())
