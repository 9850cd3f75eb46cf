"""The on-disk cache of fitted models: where it lives, what it keys on, bad files."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pandas as pd
import pytest

from planner.throughput import disk_cache, offers


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("GPUPLAN_CACHE_DIR", str(folder))
    monkeypatch.setattr(disk_cache, "SEED_DIR", tmp_path / "no-seed")  # fit, not read
    offers.clear_caches()
    return folder


def test_the_folder_follows_gpuplan_cache_dir_then_xdg(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUPLAN_CACHE_DIR", "/x/explicit")
    assert disk_cache.cache_dir() == Path("/x/explicit")
    monkeypatch.delenv("GPUPLAN_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "/x/xdg")
    assert disk_cache.cache_dir() == Path("/x/xdg/gpuplan")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert disk_cache.cache_dir() == Path.home() / ".cache" / "gpuplan"


def test_tests_never_use_the_real_home_cache() -> None:
    assert not str(disk_cache.cache_dir()).startswith(str(Path.home() / ".cache"))


def test_a_stored_value_comes_back_and_other_keys_miss(cache: Path) -> None:
    disk_cache.store("kind", "abc", {"a": 1})
    assert disk_cache.load("kind", "abc", dict) == {"a": 1}
    assert disk_cache.load("kind", "abd", dict) is None
    assert disk_cache.load("other", "abc", dict) is None
    assert disk_cache.load("kind", "abc", list) is None  # another type is a miss


@pytest.mark.parametrize(
    "content",
    [b"", b"not a cache file", b"gpuplan-cache 2\nWRONGKEY\nx\x9cjunk"],
    ids=["empty", "foreign", "wrong-key"],
)
def test_corrupt_or_foreign_files_are_ignored_and_rebuilt(cache: Path, content: bytes) -> None:
    disk_cache.store("kind", "abc", [1, 2])
    (path,) = cache.glob("*.pkl")
    path.write_bytes(content)
    assert disk_cache.load("kind", "abc", list) is None
    built = disk_cache.load_or_build("kind", "abc", list, lambda: [3])
    assert built == [3]
    assert disk_cache.load("kind", "abc", list) == [3]


def test_a_truncated_pickle_with_the_right_header_is_a_miss(cache: Path) -> None:
    disk_cache.store("kind", "abc", list(range(1000)))
    (path,) = cache.glob("*.pkl")
    path.write_bytes(path.read_bytes()[:-50])
    assert disk_cache.load("kind", "abc", list) is None


def test_an_unwritable_folder_only_costs_the_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("GPUPLAN_CACHE_DIR", str(blocker / "sub"))
    assert disk_cache.load_or_build("kind", "abc", list, lambda: [7]) == [7]


def test_fitted_models_are_read_back_from_disk_and_refit_when_results_change(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results, _ = offers.own_and_published_results([])
    tables = set(cache.glob("*.pkl"))  # the published table (planner.throughput.bundled)
    first = offers.throughput_model_for_model(results, "resnet50")
    files = sorted(set(cache.glob("*.pkl")) - tables)
    assert len(files) == 2  # the spec regression and the resnet50 model

    calls: list[str] = []
    real_fit = offers.fit_throughput_model

    def counting_fit(*args: object, **kwargs: object) -> object:
        calls.append("fit")
        return real_fit(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(offers, "fit_throughput_model", counting_fit)
    offers.clear_caches()
    again = offers.throughput_model_for_model(results, "resnet50")
    assert calls == []
    pd.testing.assert_frame_equal(again.figures, first.figures)
    assert again is not first

    changed = results.copy()
    published = changed["source"].astype(str).str.startswith("published")
    first_row = changed.index[published][0]
    changed.loc[first_row, "throughput"] = float(changed.loc[first_row, "throughput"]) * 1.5
    offers.throughput_model_for_model(changed, "resnet50")
    assert calls == ["fit"]
    assert len(set(cache.glob("*.pkl")) - tables) == 4


def test_concurrent_callers_share_one_fit(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results, _ = offers.own_and_published_results([])
    models: list[object] = []
    threads = [
        threading.Thread(
            target=lambda: models.append(offers.throughput_model_for_model(results, "ssd"))
        )
        for _ in range(3)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(models) == 3 and all(m is models[0] for m in models)
    assert not [p for p in os.listdir(cache) if p.endswith(".tmp")]
