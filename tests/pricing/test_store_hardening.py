"""The snapshot store under crashes, races and hostile files (issue 13: numbers, clean-up,
locks): stale temp files go, only the manifest lists snapshots, checks happen under the
lock, and no number outside its range gets in."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from pricing import catalog, refresh, store
from pricing.catalog import SnapshotError, read_manifest, user_snapshot_dir, validate_offers
from pricing.providers.common import finish_offers
from pricing.store import commit_snapshot, history, resolve_reference
from tests.pricing.conftest import tree_bytes

runner = CliRunner()
HEADER = "provider,region,instance_type,gpu_name,gpu_count,usd_per_hour,priced_at"


def offer_rows(price: float = 2.0, count: float = 8) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "provider": "aws",
                "region": "us-east-1",
                "instance_type": "p5.48xlarge",
                "gpu_name": "H100-SXM",
                "gpu_count": count,
                "usd_per_hour": price,
                "source": "test",
                "priced_at": "2026-11-30",
            }
        ]
    )


# A column's values that are infinite, not a number or past its range.
OUT_OF_RANGE = {
    "usd_per_hour": ("inf", "1e309", "1e400", "20000"),
    "gpu_count": ("inf", "1e309", "5000"),
    "spot_usd_per_hour": ("-inf",),
    "vcpus": ("nan",),
}


@pytest.mark.parametrize(
    ("column", "value"), [(column, v) for column, values in OUT_OF_RANGE.items() for v in values]
)
def test_a_custom_list_with_an_infinite_or_huge_number_is_refused_naming_the_range(
    tmp_path: Path, column: str, value: str
) -> None:
    path = tmp_path / "prices.csv"
    header = HEADER + ("" if column in HEADER else f",{column}")
    row = "acme,x,h100-8x,H100-SXM,8,24.5,2026-11-15" + ("" if column in HEADER else ",1")
    cells = dict(zip(header.split(","), row.split(","), strict=True))
    cells[column] = value
    path.write_text(header + "\n" + ",".join(cells.values()) + "\n")
    result = runner.invoke(app, ["pricing", "add-custom", str(path)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert f"{path}, line 2, field '{column}'" in " ".join(result.output.split())
    assert any(w in result.output for w in ("finite", "not a number", "negative"))
    assert tree_bytes(user_snapshot_dir()) == {}


def test_an_api_answer_with_an_infinite_price_is_dropped_on_record_not_committed() -> None:
    frame = pd.concat(
        [
            offer_rows(float("inf")),
            offer_rows(3.0).assign(instance_type="p4d.24xlarge", gpu_name="A100-SXM-40GB"),
            offer_rows(3.0, count=float("inf")).assign(instance_type="p9.huge"),
        ]
    )
    fixes: list[dict[str, str]] = []
    offers = finish_offers(frame, "aws", fixes)
    assert offers["instance_type"].tolist() == ["p4d.24xlarge"]
    reasons = {(f["instance_type"], f["field"], f["action"]) for f in fixes}
    assert ("p5.48xlarge", "usd_per_hour", "set missing") in reasons
    assert ("p5.48xlarge", "usd_per_hour", "dropped") in reasons
    assert ("p9.huge", "gpu_count", "dropped") in reasons


def test_a_writer_removes_temp_files_a_killed_writer_left() -> None:
    folder = user_snapshot_dir()
    folder.mkdir(parents=True)
    stale = folder / ".aws-2026-11-30.csv.abc123.tmp"
    stale.write_text("half a snapshot")
    keep = folder / "notes.txt"
    keep.write_text("mine")
    commit_snapshot(
        "aws", validate_offers(offer_rows()), source="t", priced_at="2026-11-30", date_basis="t"
    )
    assert not stale.exists() and keep.read_text() == "mine"
    assert not list(folder.glob(".*.tmp"))


def test_a_csv_that_was_never_committed_is_not_a_snapshot_for_diff() -> None:
    commit_snapshot(
        "aws", validate_offers(offer_rows()), source="t", priced_at="2026-11-30", date_basis="t"
    )
    # A killed refresh wrote its CSV but never reached the manifest swap.
    orphan = user_snapshot_dir() / "aws-2026-12-01.csv"
    orphan.write_text(catalog.offers_to_csv(validate_offers(offer_rows(99.0))))
    assert "2026-12-01" not in [day for day, _ in history("aws")]
    result = runner.invoke(app, ["pricing", "diff", "aws@2026-11-30", "aws@2026-12-01"])
    assert result.exit_code == 2 and "no aws snapshot dated 2026-12-01" in result.output
    # Superseded snapshots stay listed (in the manifest's history) for diff.
    commit_snapshot(
        "aws",
        validate_offers(offer_rows(5.0)).assign(priced_at="2026-12-02"),
        source="t",
        priced_at="2026-12-02",
        date_basis="t",
    )
    old, _ = resolve_reference("aws@2026-11-30")
    assert old["usd_per_hour"].tolist() == [2.0]


@pytest.mark.parametrize(
    "entry",
    [
        {"file": "../../etc/passwd.csv"},
        {"file": "/tmp/x.csv"},
        {"rows": "many"},
        {"priced_at": "yesterday"},
        {"fixes_file": "../x.csv"},
    ],
)
def test_a_manifest_naming_a_path_outside_its_folder_or_odd_values_is_refused(
    entry: dict[str, object],
) -> None:
    folder = user_snapshot_dir()
    folder.mkdir(parents=True)
    good = {
        "provider": "aws",
        "file": "aws-2026-11-30.csv",
        "priced_at": "2026-11-30",
        "source": "t",
        "rows": 1,
        "sha256": "0",
    }
    (folder / "MANIFEST.json").write_text(json.dumps({"snapshots": [{**good, **entry}]}))
    with pytest.raises(SnapshotError, match=str(folder / "MANIFEST.json")):
        read_manifest()
    result = runner.invoke(app, ["pricing", "show"])
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_a_deeply_nested_manifest_is_an_error_not_a_traceback() -> None:
    folder = user_snapshot_dir()
    folder.mkdir(parents=True)
    (folder / "MANIFEST.json").write_text("[" * 100_000 + "]" * 100_000)
    result = runner.invoke(app, ["pricing", "status"])
    assert result.exit_code == 2, result.output
    assert "MANIFEST.json" in result.output and "Traceback" not in result.output


def test_two_lists_for_one_provider_cannot_both_land(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The 'provider already used' check runs under the lock: a second list for the same
    provider, added while the first is being written, is refused."""
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    for path in (first, second):
        path.write_text(HEADER + "\nacme,x,h100-8x,H100-SXM,8,24.5,2026-11-15\n")
    slow_write = store.atomic_write_text

    def slow(path: Path, text: str) -> None:
        time.sleep(0.3)
        slow_write(path, text)

    monkeypatch.setattr(store, "atomic_write_text", slow)
    outcomes: dict[str, str] = {}

    def add(path: Path) -> None:
        try:
            refresh.add_custom(path)
            outcomes[path.stem] = "added"
        except SnapshotError as exc:
            outcomes[path.stem] = str(exc)

    threads = [threading.Thread(target=add, args=(p,)) for p in (first, second)]
    threads[0].start()
    time.sleep(0.1)
    threads[1].start()
    for thread in threads:
        thread.join(10)
    assert sorted(outcomes) == ["first", "second"]
    assert list(outcomes.values()).count("added") == 1, outcomes
    assert "already comes from another price source" in outcomes["second"]
    providers = [i.provider for i in read_manifest() if i.provider.startswith("custom-")]
    assert providers == ["custom-first"]
