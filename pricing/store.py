"""The user's snapshot folder: add dated snapshots atomically, find old ones by reference.

A new snapshot is written under a new name (`aws-2026-11-30.csv`, `-2` etc. on the same
day), read back and validated, and only then is the folder's MANIFEST.json replaced
(temp file + rename): the manifest swap is the commit point. A failure before it removes
the new files and leaves every existing file byte for byte as it was. A writer killed
before it (kill -9, power loss) cannot clean up: it has listed the files it was about
to write in UNCOMMITTED_NAME first, and the next writer removes every listed file the
manifest does not name. Old snapshots stay in the folder so that `gpuplan pricing diff`
can compare them.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from pricing.catalog import (
    MANIFEST_NAME,
    SnapshotError,
    SnapshotInfo,
    atomic_write_text,
    bundled_snapshot_dir,
    file_sha256,
    offers_to_csv,
    read_history,
    read_manifest,
    read_snapshot,
    user_snapshot_dir,
    write_manifest,
)
from pricing.gpus import did_you_mean

_DATED = re.compile(r"^(?P<provider>.+)-(?P<date>\d{4}-\d{2}-\d{2})(?:-(?P<n>\d+))?\.csv$")
# A snapshot's detail table beside it: aws-2026-11-30.fixes.csv, aws-2026-11-30-2.spot-zones.csv.
_DETAIL = re.compile(r"^[^/\\]+-\d{4}-\d{2}-\d{2}(?:-\d+)?\.[a-z-]+\.csv$")
# The files a writer is about to add, listed before it writes them; gone once committed.
UNCOMMITTED_NAME = ".uncommitted.json"
MAX_UNCOMMITTED_BYTES = 1024 * 1024


def snapshot_name(directory: Path, provider: str, day: str, taken: Collection[str] = ()) -> str:
    """A new snapshot file name for `provider` on `day`, not yet used in `directory`
    nor in `taken` (names already chosen for the same commit)."""
    name = f"{provider}-{day}.csv"
    n = 1
    while (directory / name).exists() or name in taken:
        n += 1
        name = f"{provider}-{day}-{n}.csv"
    return name


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """Hold an advisory lock on the folder while its manifest is read and replaced.

    Whoever holds it first removes the temp files and the uncommitted snapshot files a
    killed writer left behind (remove_stale_temp_files, remove_uncommitted_files): no
    other writer can be between its first write and its manifest swap then.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no concurrent-refresh guard
        yield
        return
    with open(directory / ".lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            remove_stale_temp_files(directory)
            remove_uncommitted_files(directory)
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def remove_stale_temp_files(directory: Path) -> list[str]:
    """Remove the temp files (`.NAME.*.tmp`, from atomic_write_text) a killed writer left.

    Called under the folder's lock only. Returns the names removed.
    """
    removed = []
    for path in directory.glob(".*.tmp"):
        if path.is_file() and not path.is_symlink():
            path.unlink(missing_ok=True)
            removed.append(path.name)
    return removed


def _committed_names(directory: Path) -> set[str]:
    """Every file the folder's manifest names (in use or history, with detail tables)."""
    if not (directory / MANIFEST_NAME).exists():
        return set()
    names: set[str] = set()
    for info in [*read_manifest(directory), *read_history(directory)]:
        names |= {info.file, info.spot_zones_file, info.fixes_file} - {""}
    return names


def _listed_uncommitted(journal: Path) -> list[str]:
    """The plain snapshot file names a writer listed in `journal`; [] if it is not a list
    of them (only names of the snapshot patterns are ever removed)."""
    try:
        if journal.stat().st_size > MAX_UNCOMMITTED_BYTES:
            return []
        names = json.loads(journal.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return []
    if not isinstance(names, list):
        return []
    return [
        name
        for name in names
        if isinstance(name, str)
        and "/" not in name
        and "\\" not in name
        and not name.startswith(".")
        and (_DATED.match(name) or _DETAIL.match(name))
    ]


def remove_uncommitted_files(directory: Path) -> list[str]:
    """Remove the snapshot files a killed writer wrote but never committed.

    A writer lists the files it is about to add in UNCOMMITTED_NAME before writing
    them and removes that list after its manifest swap; a list still there means the
    writer died in between, so every listed file the manifest does not name is an
    orphan. Called under the folder's lock only; never touches a file the writer did
    not list (a user's own CSV in the folder stays). Returns the names removed.
    """
    journal = directory / UNCOMMITTED_NAME
    if not journal.is_file() or journal.is_symlink():
        return []
    try:
        committed = _committed_names(directory)
    except SnapshotError:
        return []  # a broken manifest: remove nothing until it is readable again
    removed = []
    for name in _listed_uncommitted(journal):
        path = directory / name
        if name not in committed and path.is_file() and not path.is_symlink():
            path.unlink(missing_ok=True)
            removed.append(name)
    journal.unlink(missing_ok=True)
    return removed


@dataclass(frozen=True)
class NewSnapshot:
    """One provider's offers to commit, with where they came from and their date."""

    provider: str
    offers: pd.DataFrame
    source: str
    priced_at: str
    date_basis: str
    retrieved_at: str = ""
    details: Mapping[str, pd.DataFrame] = field(default_factory=dict)
    source_commit: str = ""
    date_bound: str = ""


def commit_snapshot(
    provider: str,
    offers: pd.DataFrame,
    *,
    source: str,
    priced_at: str,
    date_basis: str,
    retrieved_at: str = "",
    details: Mapping[str, pd.DataFrame] | None = None,
    directory: Path | None = None,
    check: Callable[[], None] | None = None,
) -> SnapshotInfo:
    """Add `offers` as `provider`'s snapshot in the user's folder and make it the one in use.

    `details` are extra tables written beside it ("spot-zones", "fixes") and named in
    the manifest entry. `check` runs under the folder's lock before anything is
    written (a check-then-write, such as "is this provider name free?", must not race
    another writer); it raises to stop the commit. Returns the new manifest entry.
    """
    new = NewSnapshot(
        provider, offers, source, priced_at, date_basis, retrieved_at, dict(details or {})
    )
    return commit_snapshots([new], directory=directory, check=check)[0]


def commit_snapshots(
    snapshots: Sequence[NewSnapshot],
    *,
    directory: Path | None = None,
    check: Callable[[], None] | None = None,
) -> list[SnapshotInfo]:
    """Add several providers' snapshots with one manifest swap: all land, or none.

    See commit_snapshot; returns the new manifest entries in order.
    """
    directory = directory or user_snapshot_dir()
    directory.mkdir(parents=True, exist_ok=True)
    with _locked(directory):
        if check is not None:
            check()
        existing = read_manifest(directory) if (directory / MANIFEST_NAME).exists() else []
        kept_history = read_history(directory)
        names = _new_names(directory, snapshots)
        journal = directory / UNCOMMITTED_NAME
        written: list[Path] = []
        try:
            atomic_write_text(
                journal, json.dumps([n for files in names for n in files.values()]) + "\n"
            )
            infos = [
                _write_one(directory, new, files, written)
                for new, files in zip(snapshots, names, strict=True)
            ]
            providers = {new.provider for new in snapshots}
            kept = [i for i in existing if i.provider not in providers]
            replaced = [i for i in existing if i.provider in providers]
            write_manifest(directory, [*kept, *infos], [*kept_history, *replaced])
        except BaseException:
            for done in written:
                done.unlink(missing_ok=True)
            journal.unlink(missing_ok=True)
            raise
        journal.unlink(missing_ok=True)
    return infos


def _new_names(directory: Path, snapshots: Sequence[NewSnapshot]) -> list[dict[str, str]]:
    """For each new snapshot, its file names: "" -> the snapshot CSV, kind -> detail CSV."""
    taken: set[str] = set()
    names = []
    for new in snapshots:
        name = snapshot_name(directory, new.provider, new.priced_at, taken)
        taken.add(name)
        stem = name.removesuffix(".csv")
        names.append({"": name, **{kind: f"{stem}.{kind}.csv" for kind in new.details}})
    return names


def _write_one(
    directory: Path, new: NewSnapshot, files: Mapping[str, str], written: list[Path]
) -> SnapshotInfo:
    """Write one snapshot and its detail tables as `files` (see _new_names), read it
    back, and return its manifest entry; each file written is appended to `written`."""
    path = directory / files[""]
    atomic_write_text(path, offers_to_csv(new.offers))
    written.append(path)
    read_snapshot(path, expected_rows=len(new.offers))
    for kind, frame in new.details.items():
        detail = directory / files[kind]
        atomic_write_text(detail, frame.to_csv(index=False, lineterminator="\n"))
        written.append(detail)
    return SnapshotInfo(
        provider=new.provider,
        file=files[""],
        priced_at=new.priced_at,
        source=new.source,
        rows=len(new.offers),
        sha256=file_sha256(path),
        date_basis=new.date_basis,
        source_commit=new.source_commit,
        retrieved_at=new.retrieved_at,
        spot_zones_file=files.get("spot-zones", ""),
        fixes_file=files.get("fixes", ""),
        date_bound=new.date_bound,
        directory=str(directory),
    )


def remove_snapshot(provider: str, directory: Path | None = None) -> SnapshotInfo:
    """Stop using the user's snapshot of `provider`; the bundled one, if any, is used again.

    The files stay in the folder (for `diff`); only the manifest entry goes.
    """
    directory = directory or user_snapshot_dir()
    manifest = directory / MANIFEST_NAME
    infos = read_manifest(directory) if manifest.exists() else []
    if provider not in {i.provider for i in infos}:
        names = ", ".join(i.provider for i in infos) or "none"
        fix = did_you_mean(provider, [i.provider for i in infos])
        raise ValueError(f"no user snapshot {provider!r}{fix} User snapshots: {names}")
    with _locked(directory):
        infos = read_manifest(directory)
        removed = [i for i in infos if i.provider == provider]
        if not removed:
            raise ValueError(f"no user snapshot {provider!r}")
        write_manifest(
            directory,
            [i for i in infos if i.provider != provider],
            [*read_history(directory), *removed],
        )
    return removed[0]


def history(provider: str) -> list[tuple[str, Path]]:
    """(date, file) of every snapshot of `provider` kept, bundled and user's, oldest first.

    Only files a manifest lists (in use or in its history) count: a CSV that a killed
    refresh wrote but never committed is not a snapshot.
    """
    found: list[tuple[str, int, int, Path]] = []
    for rank, directory in enumerate((bundled_snapshot_dir(), user_snapshot_dir())):
        if not (directory / MANIFEST_NAME).is_file():
            continue
        for info in [*read_manifest(directory), *read_history(directory)]:
            match = _DATED.match(info.file)
            if info.provider == provider and match:
                found.append((match["date"], rank, int(match["n"] or 1), info.path))
    return [(day, path) for day, _, _, path in sorted(set(found))]


def resolve_reference(reference: str) -> tuple[pd.DataFrame, str]:
    """A snapshot's offers and a label, from a CSV path or a provider reference.

    References: PROVIDER (the snapshot in use), PROVIDER@bundled, PROVIDER@YYYY-MM-DD
    (the last snapshot of that day, the user's before the bundled one).
    """
    path = Path(reference).expanduser()
    if path.suffix == ".csv" or path.exists():
        if not path.is_file():
            raise SnapshotError(path, "no such snapshot file")
        return read_snapshot(path), str(path)
    provider, _, which = reference.partition("@")
    in_use = {info.provider: info for info in read_manifest()}
    known = sorted(set(in_use) | {i.provider for i in read_manifest(bundled_snapshot_dir())})
    if provider not in known:
        fix = did_you_mean(provider, known)
        raise ValueError(
            f"no snapshot file or provider {provider!r}{fix} Use a CSV path, PROVIDER, "
            f"PROVIDER@bundled or PROVIDER@YYYY-MM-DD (providers: {', '.join(known)})"
        )
    if which in ("", "current"):
        info = in_use[provider]
        return read_snapshot(info.path, info.rows), f"{provider}@{info.priced_at} ({info.origin})"
    if which == "bundled":
        bundled = {i.provider: i for i in read_manifest(bundled_snapshot_dir())}
        if provider not in bundled:
            raise ValueError(f"{provider!r} has no bundled snapshot; it was added by the user")
        info = bundled[provider]
        return read_snapshot(info.path, info.rows), f"{provider}@{info.priced_at} (bundled)"
    try:
        dt.date.fromisoformat(which)
    except ValueError:
        raise ValueError(
            f"{reference!r}: after '@' comes 'bundled' or a date YYYY-MM-DD, not {which!r}"
        ) from None
    dated = [(day, p) for day, p in history(provider) if day == which]
    if not dated:
        days = sorted({day for day, _ in history(provider)})
        raise ValueError(
            f"no {provider} snapshot dated {which}; kept dates: {', '.join(days) or 'none'}"
        )
    return read_snapshot(dated[-1][1]), f"{provider}@{which} ({dated[-1][1].name})"
