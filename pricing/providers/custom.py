"""A user's own price list, as a CSV: neoclouds, regional GPU clouds, negotiated prices.

One row per offer, in the snapshot columns (pricing.catalog.OFFER_COLUMNS):

  required  provider, region, instance_type, gpu_name (canonical: `gpuplan pricing show`
            lists them), gpu_count (fractions for GPU slices), usd_per_hour, priced_at
            (YYYY-MM-DD: when the price holds)
  optional  spot_usd_per_hour, reserved_1y_usd_per_hour, reserved_3y_usd_per_hour,
            gpu_memory_gib, vcpus, memory_gib, interconnect (nvlink | pcie | none;
            blank: nvlink for multi-GPU SXM parts, else pcie), source (blank: the file)

A price may be blank (unknown) but each row needs at least one. fetch_custom (reading the
file) is the only I/O; parse_custom validates like any snapshot and names the file, line
and field of the first problem, with the closest valid choice.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Collection
from pathlib import Path
from stat import S_ISREG

import numpy as np
import pandas as pd

from pricing.catalog import (
    OFFER_COLUMNS,
    PRICE_COLUMNS,
    REQUIRED_COLUMNS,
    SnapshotError,
    read_text_table,
    require_columns,
    validate_offers,
)
from pricing.gpus import did_you_mean
from pricing.providers.common import ParsedCatalog, fixes_frame, interconnects

MAX_FILE_BYTES = 32 * 1024 * 1024  # read whole; a list of 100,000 offers is ~15 MB
# A snapshot's required columns but `source`, which defaults to the file.
REQUIRED = tuple(c for c in REQUIRED_COLUMNS if c != "source")


# A provider name becomes part of file names, manifest keys and CLI filters.
PROVIDER_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")


def _provider_fix(name: str) -> str:
    """A valid provider name close to `name`: lower case, other characters as '-'."""
    fixed = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-._")[:64]
    return f"; e.g. {fixed!r}" if fixed and PROVIDER_PATTERN.fullmatch(fixed) else ""


def fetch_custom(path: Path) -> pd.DataFrame:
    """Read the user's CSV as text cells (blank = missing); SnapshotError if it is not one."""
    try:
        if path.is_dir():
            raise SnapshotError(path, "is a folder; give the CSV file itself")
        stat = path.stat()
        if not S_ISREG(stat.st_mode):
            # A device or pipe (/dev/zero, a FIFO) has no size and may never end.
            raise SnapshotError(path, "is not a regular file (a device or pipe); give a CSV file")
        if stat.st_size > MAX_FILE_BYTES:
            raise SnapshotError(
                path,
                f"is {stat.st_size:,} bytes, larger than the {MAX_FILE_BYTES:,} allowed for a "
                "price list; split it into several lists",
            )
        frame = read_text_table(path, skipinitialspace=True)
    except FileNotFoundError:
        raise SnapshotError(path, "no such file") from None
    except csv.Error as exc:
        raise SnapshotError(path, f"not a readable CSV: {exc}") from None
    except OSError as exc:
        raise SnapshotError(path, f"cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise SnapshotError(path, f"not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    return frame.replace("", np.nan)


def parse_custom(
    frame: pd.DataFrame,
    file: str | Path,
    taken_providers: Collection[str] = (),
) -> ParsedCatalog:
    """Validated offers from a custom price list.

    Refuses (SnapshotError with file, line and field): unknown or missing columns, any
    value validate_offers refuses, a row with no price at all, a provider name that is
    not PROVIDER_PATTERN (1-64 of a-z 0-9 . _ -), and a provider name
    that another price source already uses (`taken_providers`): name negotiated AWS
    prices e.g. "aws-negotiated" so both rows stay apart.
    """
    name = Path(file).name
    unknown = [c for c in frame.columns if c not in OFFER_COLUMNS]
    if unknown:
        fix = did_you_mean(unknown[0], OFFER_COLUMNS)
        raise SnapshotError(
            file,
            f"unknown column {unknown[0]!r}{fix} Columns: {', '.join(OFFER_COLUMNS)}",
            line=1,
            field=unknown[0],
        )
    require_columns(frame, file, REQUIRED, "a custom price list")
    if frame.empty:
        raise SnapshotError(file, "has no rows", line=2)
    out = frame.copy()
    source = out["source"] if "source" in out else pd.Series(np.nan, out.index)
    out["source"] = source.astype(object).where(source.notna(), f"custom price list {name}")
    offers = validate_offers(out, file)
    bad = ~offers["provider"].map(lambda p: bool(PROVIDER_PATTERN.fullmatch(p))).astype(bool)
    if bad.any():
        line = int(np.flatnonzero(bad.to_numpy())[0]) + 2
        provider = str(offers.loc[bad, "provider"].iloc[0])
        shown = provider if len(provider) <= 80 else provider[:77] + "..."
        raise SnapshotError(
            file,
            f"provider {shown!r} is not a provider name: use 1 to 64 lower-case letters, "
            f"digits, '.', '_' or '-', starting with a letter or digit{_provider_fix(provider)}",
            line=line,
            field="provider",
        )
    no_price = offers.loc[:, list(PRICE_COLUMNS)].isna().all(axis=1)
    if no_price.any():
        line = int(np.flatnonzero(no_price.to_numpy())[0]) + 2
        raise SnapshotError(
            file,
            "has no price: fill usd_per_hour (or a spot/reserved price) in USD per hour",
            line=line,
            field="usd_per_hour",
        )
    taken = offers["provider"].isin([p.lower() for p in taken_providers])
    if taken.any():
        line = int(np.flatnonzero(taken.to_numpy())[0]) + 2
        provider = offers.loc[taken, "provider"].iloc[0]
        raise SnapshotError(
            file,
            f"provider {provider!r} already comes from another price source; give these "
            f"prices a provider name of their own, e.g. '{provider}-negotiated'",
            line=line,
            field="provider",
        )
    given = frame["interconnect"] if "interconnect" in frame else pd.Series(np.nan, frame.index)
    blank = given.isna().to_numpy()
    derived = interconnects(offers["gpu_name"], offers["gpu_count"])
    offers["interconnect"] = offers["interconnect"].where(~blank, derived)
    return ParsedCatalog(offers, fixes_frame([]), f"custom price list {name}")
