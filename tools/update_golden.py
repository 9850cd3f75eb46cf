"""Record the golden CLI outputs that tests/golden/test_golden_cli.py compares against.

    python tools/update_golden.py            # every case
    python tools/update_golden.py NAME ...   # only these cases
    python tools/update_golden.py --list     # the case names and their command lines

Each case (tools/golden_cases.py) is run as a subprocess in an isolated environment;
its normalised stdout goes to tests/golden/data/<name>.<json|csv|txt> and its stderr, when
there is any, to tests/golden/data/<name>.stderr.txt. A command that exits non-zero is
not recorded. Recording every case also deletes recorded files no case names any more.
Review the diff (git diff tests/golden/data) before keeping a new recording: every
changed figure in it is a change in what the CLI prints.
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.golden_cases import CASES, CASES_BY_NAME, DATA, Case, Output, run_case


def record(case: Case, output: Output) -> list[Path]:
    """Write one case's files; the paths written."""
    written = [case.stdout_file]
    case.stdout_file.write_text(output.stdout, encoding="utf-8")
    if output.stderr:
        case.stderr_file.write_text(output.stderr, encoding="utf-8")
        written.append(case.stderr_file)
    else:
        case.stderr_file.unlink(missing_ok=True)
    return written


def stale_files() -> list[Path]:
    """Recorded files in DATA (not its inputs) that no case writes."""
    expected = {p for case in CASES for p in (case.stdout_file, case.stderr_file)}
    return sorted(p for p in DATA.iterdir() if p.is_file() and p not in expected)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="cases to record (default: all)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--jobs", type=int, default=2, help="commands run at once (default 2)")
    args = parser.parse_args(argv)
    if args.list:
        for case in CASES:
            print(f"{case.name}: {case.command_line}")
        return 0
    unknown = [n for n in args.names if n not in CASES_BY_NAME]
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)} (see --list)")
    cases = [CASES_BY_NAME[n] for n in args.names] if args.names else list(CASES)

    DATA.mkdir(parents=True, exist_ok=True)
    failed = 0
    total = 0.0
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for case, output in zip(cases, pool.map(run_case, cases), strict=True):
            total += output.seconds
            if output.returncode != 0:
                failed += 1
                print(f"FAILED {case.name} (exit {output.returncode}): {case.command_line}")
                print(output.stderr, file=sys.stderr)
                continue
            written = record(case, output)
            names = ", ".join(p.name for p in written)
            print(f"{output.seconds:6.2f} s  {case.name}  -> {names}")
    if not args.names and not failed:
        for path in stale_files():
            path.unlink()
            print(f"removed {path.name} (no case writes it)")
    print(f"{len(cases) - failed} of {len(cases)} recorded; {total:.1f} s of commands")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
