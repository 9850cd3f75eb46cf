"""Fit the throughput models of the bundled data once, into the package (planner/data/fitted).

    python tools/build_fitted_seed.py [--check]

See planner.throughput.fitted_seed: what is fitted and why. With --check it writes
nothing and exits 1 when a file is missing (the committed folder is stale).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from planner.throughput import disk_cache  # noqa: E402
from planner.throughput.fitted_seed import build, missing_files  # noqa: E402


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
