"""The fitted models shipped in planner/data/fitted: present for this code and data, read
on a first run instead of fitting, and the same as a fresh fit."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from planner.throughput import disk_cache, offers
from planner.throughput.estimate import predict_throughput
from tools import build_fitted_seed as fitted_seed


def test_the_shipped_folder_holds_every_model_for_this_code_and_data() -> None:
    missing = fitted_seed.missing_files()
    assert not missing, (
        f"planner/data/fitted is stale ({len(missing)} files missing): the fitting code or "
        "the bundled data changed; run `make fitted` and commit planner/data/fitted"
    )
    assert {"resnet50", "bert_large_squad"} <= set(fitted_seed.seeded_models())


SEED_PROBE = """
import json, pickle, sys, zlib
started = set(sys.modules)  # what the interpreter loads before any import (site, .pth files)
from planner.throughput import disk_cache
for path in sorted(disk_cache.SEED_DIR.glob("*.pkl")):
    header = disk_cache.MAGIC + path.stem.encode() + b"\\n"
    pickle.loads(zlib.decompress(path.read_bytes()[len(header):]))
print(json.dumps(sorted({m.split(".")[0] for m in set(sys.modules) - started})))
"""


def _installed_closure(names: set[str]) -> set[str]:
    """The distributions `names` require, theirs included (this environment's metadata),
    lower-cased with '-' for '_'."""
    import importlib.metadata

    from packaging.requirements import Requirement

    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop().lower().replace("_", "-")
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for text in requires:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return seen


def test_the_seed_needs_only_declared_dependencies() -> None:
    """Loading the shipped seed imports only the standard library, gpuplan's packages and
    what its declared dependencies bring: a table that needs an undeclared package (pandas'
    pyarrow strings) fails to load on a plain `pip install`, and every first plan refits."""
    import importlib.metadata
    import json
    import subprocess
    import sys
    import tomllib

    from packaging.requirements import Requirement

    from tests.conftest import ROOT

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    declared = {Requirement(r).name for r in pyproject["project"]["dependencies"]}
    allowed = _installed_closure(declared)
    done = subprocess.run(
        [sys.executable, "-c", SEED_PROBE], capture_output=True, text=True, check=True, cwd=ROOT
    )
    modules = set(json.loads(done.stdout)) - set(sys.stdlib_module_names)
    owners = importlib.metadata.packages_distributions()
    needed = {
        dist.lower().replace("_", "-")
        for module in modules
        for dist in owners.get(module, [])
        if dist.lower() != "gpuplan"
    }
    assert "pyarrow" in needed  # the seed's tables hold pyarrow strings
    assert needed <= allowed, f"the seed needs undeclared {sorted(needed - allowed)}"


def test_a_first_run_reads_the_shipped_models_and_fits_nothing(
    empty_user_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_fit(*args: object, **kwargs: object) -> object:
        raise AssertionError("fitted although the package ships this model")

    monkeypatch.setattr(offers, "fit_throughput_model", no_fit)
    monkeypatch.setattr(offers, "fit_figures_estimator", no_fit)
    results, _ = offers.own_and_published_results([])
    model = offers.throughput_model_for_model(results, "resnet50")
    assert model.digest.endswith(":resnet50") and len(model.figures)
    assert not list(empty_user_cache.glob("*.pkl"))  # nothing copied into the user's cache


def test_the_shipped_model_predicts_what_a_fresh_fit_does(
    empty_user_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results, _ = offers.own_and_published_results([])
    shipped = offers.throughput_model_for_model(results, "resnet50")
    monkeypatch.setattr(disk_cache, "SEED_DIR", tmp_path / "no-seed")
    offers.clear_caches()
    fresh = offers.throughput_model_for_model(results, "resnet50")
    assert fresh is not shipped
    queries = pd.DataFrame(
        {
            "gpu_name": ["A100-SXM-80GB", "H100-SXM", "L4", "T4", "B200", "RTX-4090"],
            "total_gpus": [8.0, 64.0, 1.0, 4.0, 8.0, 2.0],
            "model": "resnet50",
            "precision": ["fp16", "fp16", "fp16", "fp32", "fp16", "fp16"],
        }
    )
    got = predict_throughput(shipped, queries)
    want = predict_throughput(fresh, queries)
    assert got["throughput"].notna().all()
    pd.testing.assert_frame_equal(got, want)


def test_building_writes_the_expected_files_and_leaves_the_settings_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build neither reads nor writes the user's cache, and changes no environment."""
    import os

    monkeypatch.setenv("GPUPLAN_CACHE_DIR", str(tmp_path / "user"))
    environment = dict(os.environ)
    target = tmp_path / "fitted"
    target.mkdir()
    (target / "old.pkl").write_bytes(b"stale")
    written = fitted_seed.build(target)
    assert sorted(written) == sorted(fitted_seed.expected_files())
    assert not (target / "old.pkl").exists()
    assert fitted_seed.missing_files(target) == []
    assert disk_cache.cache_dir() == tmp_path / "user"
    assert not (tmp_path / "user").exists()  # nothing written into the user's cache
    assert dict(os.environ) == environment
    package = Path(disk_cache.__file__).resolve().parents[1]
    assert package / "data" / "fitted" == disk_cache.SEED_DIR
