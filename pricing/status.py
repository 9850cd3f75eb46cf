"""Each price source in use: its date, age, staleness and integrity (CLI and app share it).

Status table columns (one row per provider in the manifest in use):

  provider, origin (bundled | user), priced_at (ISO date), price_date (the date as
  known: exact, or "catalog extract, not before 2025-06"), age_days (days since
  priced_at: an upper bound where the date is a lower bound), age ("12 d", or "at most
  547 d" for a bounded date), stale ("yes" past STALE_AFTER_DAYS or when the age is
  unknown), rows, integrity (ok | file missing | changed since written), refresh (the
  sources that refresh this provider and what they need), date_basis, file,
  retrieved_at, source
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
    "price_date",
    "age_days",
    "age",
    "stale",
    "rows",
    "integrity",
    "refresh",
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
                "price_date": info.date_label,
                "age_days": info.age_days(today),
                "age": (f"at most {info.age_days(today)} d" if info.date_bound else "")
                or f"{info.age_days(today)} d",
                "stale": "yes"
                if info.age_days(today) > STALE_AFTER_DAYS or info.date_bound
                else "no",
                "rows": info.rows,
                "integrity": integrity(info),
                "refresh": refresh_hint(info.provider),
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
    """'aws (catalog extract, not before 2025-06), lambda (40 d)': the stale sources of a
    status table, '' when none; a bounded date is named as such, not as an exact age."""
    stale = status.loc[status["stale"] == "yes"]
    return ", ".join(
        f"{r.provider} ({r.price_date})"
        if r.price_date != r.priced_at
        else f"{r.provider} ({r.age_days:.0f} d)"
        for r in stale.itertuples()
    )


SOURCE_COLUMNS = ("source", "providers", "credentials", "needs")


def sources_frame() -> pd.DataFrame:
    """Every source `gpuplan pricing refresh` reads: what it prices and what it needs."""
    from pricing.refresh import SOURCES

    return pd.DataFrame(
        [
            {
                "source": name,
                "providers": ", ".join(source.providers),
                "credentials": "no" if source.needs.startswith("nothing") else "yes",
                "needs": source.needs,
            }
            for name, source in SOURCES.items()
        ],
        columns=list(SOURCE_COLUMNS),
    )


def refresh_hint(provider: str) -> str:
    """'skypilot, aws-public (no credentials); aws (credentials)' for a provider, or how a
    custom list is updated."""
    from pricing.refresh import SOURCES

    free = [
        n for n, s in SOURCES.items() if provider in s.providers and s.needs.startswith("nothing")
    ]
    paid = [n for n, s in SOURCES.items() if provider in s.providers and n not in free]
    parts = []
    if free:
        parts.append(f"{', '.join(free)} (no credentials)")
    if paid:
        parts.append(f"{', '.join(paid)} (credentials)")
    return "; ".join(parts) or "pricing add-custom FILE (your own list)"
