"""Snapshot validation and the pure query functions, on tiny inline tables."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pricing import catalog
from pricing.catalog import (
    OFFER_COLUMNS,
    SnapshotError,
    atomic_write_text,
    filter_offers,
    load_offers,
    offers_to_csv,
    price_for_kind,
    read_manifest,
    validate_offers,
)
from pricing.gpus import UnknownGPUError


def offer(**overrides: object) -> dict[str, object]:
    row: dict[str, object] = {
        "provider": "aws",
        "region": "us-east-1",
        "instance_type": "p4d.24xlarge",
        "gpu_name": "A100-SXM-40GB",
        "gpu_count": 8,
        "usd_per_hour": 21.96,
        "spot_usd_per_hour": 8.2,
        "source": "test",
        "priced_at": "2026-11-01",
    }
    row.update(overrides)
    return row


def write_snapshot(
    directory: Path, rows: list[dict[str, object]] | str, provider: str = "aws"
) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    text = rows if isinstance(rows, str) else pd.DataFrame(rows).to_csv(index=False)
    path = directory / f"{provider}.csv"
    path.write_text(text)
    n_rows = len(text.strip().splitlines()) - 1
    (directory / "MANIFEST.json").write_text(
        json.dumps(
            {
                "snapshots": [
                    {
                        "provider": provider,
                        "file": path.name,
                        "priced_at": "2026-11-01",
                        "source": "test",
                        "rows": n_rows,
                        "sha256": catalog.file_sha256(path),
                    }
                ]
            }
        )
    )
    return path


def test_valid_table_gets_all_columns_and_missing_stays_missing() -> None:
    out = validate_offers(pd.DataFrame([offer(spot_usd_per_hour=None)]))
    assert list(out.columns) == list(OFFER_COLUMNS)
    assert np.isnan(out.loc[0, "spot_usd_per_hour"])
    assert np.isnan(out.loc[0, "reserved_1y_usd_per_hour"])
    assert out.loc[0, "interconnect"] == "none"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("usd_per_hour", -1.0, "negative"),
        ("usd_per_hour", 0.0, "placeholder"),
        ("spot_usd_per_hour", 0, "placeholder"),
        ("gpu_count", 0, "must be > 0"),
        ("usd_per_hour", "cheap", "not a number"),
        ("priced_at", "last week", "ISO date"),
        ("region", "", "blank"),
        ("interconnect", "infiniband", "not one of"),
    ],
)
def test_bad_value_names_file_line_and_field(field: str, value: object, message: str) -> None:
    rows = [offer(), offer(), offer(**{field: value})]
    with pytest.raises(SnapshotError, match=message) as info:
        validate_offers(pd.DataFrame(rows), "snap.csv")
    assert info.value.file == "snap.csv"
    assert info.value.line == 4  # header is line 1; the bad row is the third data row
    assert info.value.field == field
    assert "np." not in str(info.value)  # values print as the user wrote them


def test_unknown_gpu_suggests_the_closest_name() -> None:
    with pytest.raises(SnapshotError, match=r"unknown GPU 'H100-SMX'.*did you mean 'H100-SXM'"):
        validate_offers(pd.DataFrame([offer(gpu_name="H100-SMX")]), "snap.csv")


def test_missing_column_is_named(tmp_path: Path) -> None:
    text = pd.DataFrame([offer()]).drop(columns="usd_per_hour").to_csv(index=False)
    path = write_snapshot(tmp_path, text)
    with pytest.raises(SnapshotError) as info:
        load_offers(tmp_path)
    assert str(path) in str(info.value)
    assert info.value.field == "usd_per_hour"
    assert "missing column" in str(info.value)


def test_negative_price_in_a_file_is_rejected_with_file_line_field(tmp_path: Path) -> None:
    path = write_snapshot(tmp_path, [offer(), offer(usd_per_hour=-3)])
    with pytest.raises(SnapshotError) as info:
        load_offers(tmp_path)
    assert str(info.value).startswith(f"{path}, line 3, field 'usd_per_hour'")


def test_truncated_snapshot_is_caught_by_the_manifest_row_count(tmp_path: Path) -> None:
    path = write_snapshot(tmp_path, [offer(), offer(region="us-west-2")])
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(SnapshotError, match="truncated"):
        load_offers(tmp_path)


def test_manifest_errors_are_clear(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match="no manifest"):
        read_manifest(tmp_path)
    (tmp_path / "MANIFEST.json").write_text("{not json")
    with pytest.raises(SnapshotError, match="not valid JSON"):
        read_manifest(tmp_path)


def test_the_user_folder_overlays_the_bundled_snapshot_per_provider(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_snapshot(tmp_path, [offer(usd_per_hour=1.5)])
    monkeypatch.setenv("GPUPLAN_SNAPSHOT_DIR", str(tmp_path))
    offers = load_offers()
    assert offers.loc[offers["provider"] == "aws", "usd_per_hour"].tolist() == [1.5]
    bundled = load_offers(catalog.bundled_snapshot_dir())
    others = bundled.loc[bundled["provider"] != "aws"]
    assert len(offers) == len(others) + 1
    by_provider = {info.provider: info for info in read_manifest()}
    assert by_provider["aws"].origin == "user"
    assert by_provider["gcp"].origin == "bundled"
    assert by_provider["aws"].path == tmp_path / "aws.csv"


def test_the_user_folder_defaults_to_xdg_data_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert catalog.user_snapshot_dir() == tmp_path / "gpuplan" / "snapshots"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert catalog.user_snapshot_dir() == tmp_path / "home/.local/share/gpuplan/snapshots"
    write_snapshot(tmp_path / "home/.local/share/gpuplan/snapshots", [offer(usd_per_hour=2.5)])
    assert load_offers().query("provider == 'aws'")["usd_per_hour"].tolist() == [2.5]


def test_no_user_manifest_means_the_bundled_snapshot() -> None:
    assert read_manifest() == read_manifest(catalog.bundled_snapshot_dir())


def test_csv_round_trip_keeps_missing_prices(tmp_path: Path) -> None:
    offers = validate_offers(pd.DataFrame([offer(spot_usd_per_hour=None), offer(gpu_count=0.25)]))
    write_snapshot(tmp_path, offers_to_csv(offers))
    back = load_offers(tmp_path)
    assert back["spot_usd_per_hour"].isna().tolist() == [True, False]
    assert back["gpu_count"].tolist() == [8.0, 0.25]


def test_filter_by_family_provider_and_region() -> None:
    offers = validate_offers(
        pd.DataFrame(
            [
                offer(gpu_name="H100-SXM"),
                offer(gpu_name="H100-PCIe", provider="lambda"),
                offer(gpu_name="A100-SXM-40GB", region="us-west-2"),
                offer(gpu_name="H200-SXM"),
            ]
        )
    )
    assert sorted(filter_offers(offers, gpus=["H100"])["gpu_name"]) == ["H100-PCIe", "H100-SXM"]
    assert len(filter_offers(offers, providers=["LAMBDA"])) == 1
    assert filter_offers(offers, regions=["us-west-2"])["gpu_name"].tolist() == ["A100-SXM-40GB"]
    with pytest.raises(UnknownGPUError, match="did you mean"):
        filter_offers(offers, gpus=["H10"])


def test_price_for_kind_rejects_unknown_kinds() -> None:
    offers = validate_offers(pd.DataFrame([offer()]))
    assert price_for_kind(offers, "spot").tolist() == [8.2]
    with pytest.raises(ValueError, match="did you mean 'reserved-1y'"):
        price_for_kind(offers, "reserved-1yr")


def test_atomic_write_leaves_the_old_file_when_writing_fails(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "f.csv"
    path.write_text("old\n")

    def explode(*_: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(catalog.os, "replace", explode)
    with pytest.raises(OSError, match="disk full"):
        atomic_write_text(path, "new\n")
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["f.csv"]
