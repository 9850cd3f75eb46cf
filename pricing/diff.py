"""What changed between two snapshots: offers added and removed, prices and shapes changed.

Offers are matched on (provider, region, instance_type). DIFF_COLUMNS, one row per change:

  change          "added", "removed", "price" (a price changed, appeared or went away)
                  or "shape" (GPU name or count changed)
  provider, region, instance_type, gpu_name, gpu_count   (the new row's, else the old's)
  pricing         on-demand | spot | reserved-1y | reserved-3y ("on-demand" for added/removed)
  old_usd_per_hour, new_usd_per_hour   NaN where absent
  change_pct      100 * (new - old) / old; NaN unless both prices exist
  detail          for "shape": old -> new
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pricing.catalog import OFFER_HEAD_COLUMNS, PRICING_KINDS

KEY = ["provider", "region", "instance_type"]
DIFF_COLUMNS = (
    "change", *OFFER_HEAD_COLUMNS, "pricing", "old_usd_per_hour", "new_usd_per_hour",
    "change_pct", "detail",
)  # fmt: skip


def diff_offers(old: pd.DataFrame, new: pd.DataFrame, tolerance: float = 1e-9) -> pd.DataFrame:
    """Changes from `old` to `new` (DIFF_COLUMNS), added first, then removed, then changed.

    Prices within `tolerance` USD/h count as unchanged (float noise from CSV rounding).
    """
    old = old.drop_duplicates(KEY, keep="last")
    new = new.drop_duplicates(KEY, keep="last")
    both = old.merge(new, on=KEY, how="outer", suffixes=("_old", "_new"), indicator=True)
    common = both.loc[both["_merge"] == "both"]
    frames = [
        *_added_and_removed(both),
        *_price_changes(common, tolerance),
        _shape_changes(common, tolerance),
    ]
    return _diff_table([f for f in frames if not f.empty])


def _changes(change: str, rows: pd.DataFrame, side: str, **columns: object) -> pd.DataFrame:
    """Rows of one `change`: the KEY, the GPU name and count of `side` ("old" or "new")
    and `columns`, from an old-new merge (columns suffixed _old and _new)."""
    return pd.DataFrame(
        {
            "change": change,
            **{k: rows[k] for k in KEY},
            "gpu_name": rows[f"gpu_name_{side}"],
            "gpu_count": rows[f"gpu_count_{side}"],
            **columns,
        }
    )


def _added_and_removed(both: pd.DataFrame) -> list[pd.DataFrame]:
    """Offers only in the new snapshot ("added") and only in the old ("removed"), with
    their on-demand USD/h."""
    frames = []
    for change, merged, side in (("added", "right_only", "new"), ("removed", "left_only", "old")):
        rows = both.loc[both["_merge"] == merged]
        frames.append(
            _changes(
                change,
                rows,
                side,
                pricing="on-demand",
                old_usd_per_hour=rows["usd_per_hour_old"],
                new_usd_per_hour=rows["usd_per_hour_new"],
            )
        )
    return frames


def _price_changes(common: pd.DataFrame, tolerance: float) -> list[pd.DataFrame]:
    """Per pricing kind, the offers in both snapshots whose USD/h moved by more than
    `tolerance`, appeared or went away."""
    frames = []
    for kind, column in PRICING_KINDS.items():
        before, after = common[f"{column}_old"], common[f"{column}_new"]
        moved = (before - after).abs() > tolerance
        appeared_or_went = before.isna() != after.isna()
        rows = common.loc[moved | appeared_or_went]
        frames.append(
            _changes(
                "price",
                rows,
                "new",
                pricing=kind,
                old_usd_per_hour=rows[f"{column}_old"],
                new_usd_per_hour=rows[f"{column}_new"],
            )
        )
    return frames


def _shape_changes(common: pd.DataFrame, tolerance: float) -> pd.DataFrame:
    """The offers in both snapshots whose GPU name or count changed, with old -> new."""
    reshaped = common.loc[
        (common["gpu_name_old"] != common["gpu_name_new"])
        | ((common["gpu_count_old"] - common["gpu_count_new"]).abs() > tolerance)
    ]
    detail = [
        f"{a:g} x {b} -> {c:g} x {d}"
        for a, b, c, d in zip(
            reshaped["gpu_count_old"],
            reshaped["gpu_name_old"],
            reshaped["gpu_count_new"],
            reshaped["gpu_name_new"],
            strict=True,
        )
    ]
    return _changes("shape", reshaped, "new", detail=detail)


def _diff_table(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """The change rows as one DIFF_COLUMNS table, with change_pct (percent, for price
    changes with both prices) and '' where a change has no detail."""
    if not frames:
        frames = [pd.DataFrame(columns=list(DIFF_COLUMNS))]
    out = pd.concat(frames, ignore_index=True)
    for column in DIFF_COLUMNS:
        if column not in out:
            out[column] = np.nan if column.endswith(("usd_per_hour", "pct")) else ""
    out["old_usd_per_hour"] = out["old_usd_per_hour"].astype(float)
    out["new_usd_per_hour"] = out["new_usd_per_hour"].astype(float)
    out["change_pct"] = (
        100
        * (out["new_usd_per_hour"] - out["old_usd_per_hour"])
        / out["old_usd_per_hour"].where(out["change"] == "price")
    )
    out["detail"] = out["detail"].fillna("")
    return out.loc[:, list(DIFF_COLUMNS)].reset_index(drop=True)


def summarize(changes: pd.DataFrame) -> str:
    """'3 added, 1 removed, 12 price changes (9 down, 3 up), 0 shape changes'."""
    counts = changes["change"].value_counts()
    prices = changes.loc[changes["change"] == "price", "change_pct"]
    return (
        f"{counts.get('added', 0)} added, {counts.get('removed', 0)} removed, "
        f"{counts.get('price', 0)} price changes ({int((prices < 0).sum())} down, "
        f"{int((prices > 0).sum())} up), {counts.get('shape', 0)} shape changes"
    )
