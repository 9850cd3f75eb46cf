"""Fit the throughput models of the bundled data once, into the package (planner/data/fitted).

    python tools/build_fitted_seed.py [--check]

A first `gpuplan plan` after install reads the spec regression and the scaling laws from
these files instead of fitting them (seconds on a small machine), and the throughput
curves of each bundled workload's default plan on the bundled prices (`gpuplan plan
--workload W`) instead of evaluating them. They are the files planner.throughput.
disk_cache writes to the user's cache, keyed by the bundled results' digest, the package
version, the fitting code and the numpy/pandas major versions: when any of those changes,
the files are simply not found and the fit runs as before. `make fitted` runs this;
tests/planner/throughput/test_fitted_seed.py fails while they are stale. With --check it writes
nothing and exits 1 when a file is missing (the committed folder is stale).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # last: an installed gpuplan is the one fitted when there is one

from planner.throughput import disk_cache, offers  # noqa: E402
from planner.workloads.catalog import WORKLOADS, Workload  # noqa: E402


def seeded_workloads() -> list[Workload]:
    """The bundled non-LLM workloads: their models and default plans are seeded."""
    return [w for w in WORKLOADS.values() if not w.is_llm]


def seeded_models() -> list[str]:
    """The benchmark models whose fits ship with the package (Lambda's names): those of
    every seeded workload (resnet50, the Scaling page's default, among them)."""
    return sorted({offers.model_key(w) for w in seeded_workloads()})


def fit_into(folder: Path) -> list[str]:
    """Fit every seeded model and evaluate every default plan's curves into `folder`
    (nothing else read: disk_cache.fitting_into); the file names written."""
    from planner.plan import make_plan
    from planner.request import PlanRequest
    from planner.throughput import bundled

    offers.clear_caches()
    try:
        with disk_cache.fitting_into(folder):
            results, _ = offers.own_and_published_results([])
            for model in seeded_models():
                offers.throughput_model_for_model(results, model)
            bundled.load_cpu_offers()
            with _bundled_snapshots_only():
                prices = bundled.load_offers()
            for workload in seeded_workloads():
                make_plan(PlanRequest(workload=workload), prices, results)
    finally:
        offers.clear_caches()
    return sorted(p.name for p in folder.glob("*.pkl"))


@contextmanager
def _bundled_snapshots_only() -> Iterator[None]:
    """While inside, the price manifest in use is the bundled one (the user's refreshed
    snapshots left out), as on a new install."""
    from pricing.catalog import bundled_snapshot_dir

    saved = os.environ.get("GPUPLAN_SNAPSHOT_DIR")
    os.environ["GPUPLAN_SNAPSHOT_DIR"] = str(bundled_snapshot_dir())
    try:
        yield
    finally:
        if saved is None:
            del os.environ["GPUPLAN_SNAPSHOT_DIR"]
        else:
            os.environ["GPUPLAN_SNAPSHOT_DIR"] = saved


def expected_files() -> list[str]:
    """The file names the seed folder must hold for the bundled data and this code
    (found by fitting them: seconds)."""
    with tempfile.TemporaryDirectory() as scratch:
        return fit_into(Path(scratch))


def missing_files(folder: Path | None = None) -> list[Path]:
    """The expected files that `folder` (default: the package's seed folder) lacks."""
    folder = folder or disk_cache.SEED_DIR
    return [folder / n for n in expected_files() if not (folder / n).is_file()]


def build(target: Path) -> list[str]:
    """Fit everything seeded afresh, then replace `target`'s files with it; the names."""
    with tempfile.TemporaryDirectory() as scratch:
        written = fit_into(Path(scratch))
        target.mkdir(parents=True, exist_ok=True)
        for old in target.glob("*.pkl"):
            old.unlink()
        for name in written:
            shutil.copyfile(Path(scratch) / name, target / name)
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the folder is stale")
    args = parser.parse_args()
    target = disk_cache.SEED_DIR
    if args.check:
        missing = missing_files(target)
        for path in missing:
            print(f"missing {path}")
        print("stale: run `make fitted`" if missing else f"{target} is up to date")
        return 1 if missing else 0
    written = build(target)
    size = sum((target / n).stat().st_size for n in written)
    print(f"wrote {len(written)} files ({size / 1024:.0f} KiB) to {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
