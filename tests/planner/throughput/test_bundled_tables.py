"""The tables a plan reads from files, kept parsed and validated in the disk cache
(planner.throughput.bundled): the same tables as reading the files, read from the
package's seed on a first run, and a tampered file still refused."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

import benchmarks.published
import benchmarks.results
import pricing.catalog
import pricing.cpu_offers
from planner.io.result_physics import split_physical
from planner.throughput import bundled, own_and_published_results, result_tables
from planner.throughput.offers import bundled_results_dir
from pricing.catalog import SnapshotError, bundled_snapshot_dir


def _parsed_published() -> pd.DataFrame:
    versions = benchmarks.published.read_published_table().set_index("id")["benchmark_version"]
    frame = benchmarks.published.published_frame()
    return frame.assign(benchmark_version=frame["id"].map(versions))


def test_each_cached_table_is_the_table_read_from_its_files(empty_user_cache: Path) -> None:
    for cached, parsed in (
        (bundled.load_offers, pricing.catalog.load_offers),
        (bundled.load_cpu_offers, pricing.cpu_offers.load_cpu_offers),
        (bundled.published_results, _parsed_published),
    ):
        pd.testing.assert_frame_equal(cached(), parsed())
        pd.testing.assert_frame_equal(cached(), parsed())  # the stored copy, read back


def test_a_first_run_reads_the_bundled_tables_from_the_seed_without_parsing(
    empty_user_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def parsed(*args: object) -> pd.DataFrame:
        raise AssertionError("a bundled table was parsed: the seed is stale (make fitted)")

    monkeypatch.setattr(pricing.catalog, "load_offers", parsed)
    monkeypatch.setattr(pricing.cpu_offers, "load_cpu_offers", parsed)
    monkeypatch.setattr(benchmarks.published, "published_frame", parsed)
    monkeypatch.setattr(benchmarks.results, "load_results", parsed)
    assert len(bundled.load_offers()) and len(bundled.load_cpu_offers())
    assert len(bundled.published_results())
    assert len(result_tables.sample_table(bundled_results_dir())[0])
    assert not empty_user_cache.exists()  # nothing had to be stored


def test_a_tampered_snapshot_is_refused_though_its_table_was_cached(
    empty_user_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "snapshots"
    shutil.copytree(bundled_snapshot_dir(), user, ignore=shutil.ignore_patterns("cpu"))
    monkeypatch.setenv("GPUPLAN_SNAPSHOT_DIR", str(user))
    assert len(bundled.load_offers()) == len(pricing.catalog.load_offers())  # now cached
    snapshot = next(user.glob("aws-*.csv"))
    header, first, *rest = snapshot.read_text().splitlines()
    price = header.split(",").index("usd_per_hour")
    cells = first.split(",")
    cells[price] = "-" + cells[price]
    snapshot.write_text("\n".join([header, ",".join(cells), *rest]) + "\n")
    with pytest.raises(SnapshotError, match=r"usd_per_hour.*negative"):
        bundled.load_offers()


def test_the_digest_follows_every_file_and_the_code(tmp_path: Path) -> None:
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("x\n1\n")
    b.write_text("x\n2\n")
    digest = bundled.files_digest([a, b], bundled.OFFER_CODE)
    assert bundled.files_digest([a, b], bundled.OFFER_CODE) == digest
    assert bundled.files_digest([a], bundled.OFFER_CODE) != digest
    assert bundled.files_digest([a, b], bundled.CPU_OFFER_CODE) != digest
    b.write_text("x\n3\n")
    assert bundled.files_digest([a, b], bundled.OFFER_CODE) != digest
    b.unlink()
    assert bundled.files_digest([a, b], bundled.OFFER_CODE) != digest


def test_the_sample_table_is_the_folders_results_and_a_bad_file_is_named(
    empty_user_cache: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "results"
    shutil.copytree(bundled_results_dir(), folder)
    expected, bad = split_physical(benchmarks.results.load_results(folder)[0], str(folder))
    assert bad == []
    for _ in range(2):  # read, then read back from the cache
        table, problems = result_tables.sample_table(str(folder))
        pd.testing.assert_frame_equal(table, result_tables.results_with_generation(expected))
        assert problems == []
    assert len(table) == len(expected)
    victim = sorted(folder.rglob("*.json"))[0]
    victim.write_text(victim.read_text().replace('"throughput"', '"throughput_x"', 1))
    table, problems = result_tables.sample_table(str(folder))
    assert len(table) == len(expected) - 1
    assert len(problems) == 1 and victim.name in problems[0]


def test_a_plan_with_no_results_of_its_own_loads_no_result_schema(
    empty_user_cache: Path, tmp_path: Path
) -> None:
    """The cold path: a missing or empty results folder and the seeded samples need no
    pydantic (benchmarks.results); a folder with a file does."""
    import subprocess
    import sys

    empty, missing = tmp_path / "empty", str(tmp_path / "none")
    empty.mkdir()
    script = (
        "import sys; from planner.throughput import own_and_published_results; "
        f"table, problems = own_and_published_results([{str(empty)!r}, {missing!r}]); "
        "assert table['sample'].sum() > 0 and problems == [], problems; "
        "print('benchmarks.results' in sys.modules, 'pydantic' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["False", "False"]
    (empty / "x.json").write_text("{}")
    _, problems = own_and_published_results([str(empty)])
    assert len(problems) == 1 and "x.json" in problems[0]
