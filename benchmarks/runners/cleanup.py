"""Find every machine a sweep launched and terminate those still there (`gpuplan sweep cleanup`).

Works through the `Provisioner` protocol alone, so the same code cleans AWS and GCP:
find by tag/label, terminate each, then confirm each with a describe/get call (polling
up to `confirm_timeout_s`). A machine that could not be terminated or confirmed is
reported with the reason, never silently dropped.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from benchmarks.runners.machine import Machine, Provisioner, ProvisionError


@dataclass
class CleanupReport:
    """What a cleanup found and did, per machine."""

    backend: str
    regions: list[str]
    sweep_id: str | None
    dry_run: bool
    found: list[Machine] = field(default_factory=list)
    terminated: list[Machine] = field(default_factory=list)  # confirmed gone/terminating
    failed: list[tuple[Machine, str]] = field(default_factory=list)  # machine, reason
    error: str | None = None  # the search itself failed (set by callers that catch it)

    @property
    def clean(self) -> bool:
        """True when nothing is left running (a dry run is clean only if nothing was found)."""
        return not self.error and not self.failed and len(self.terminated) == len(self.found)


def terminate_all(
    provisioner: Provisioner,
    regions: list[str],
    sweep_id: str | None = None,
    *,
    dry_run: bool = False,
    confirm_timeout_s: float = 120.0,
    poll_s: float = 5.0,
    sleep: Callable[[float], None] = time.sleep,
) -> CleanupReport:
    """Terminate every not-yet-terminated machine of `sweep_id` (None: of any sweep)
    that `provisioner` finds in `regions` (GCP: zones); `dry_run` only finds them.

    Raises ProvisionError only when the search itself fails (no permission to list, ...);
    per-machine failures are in the report.
    """
    report = CleanupReport(provisioner.backend, list(regions), sweep_id, dry_run)
    report.found = provisioner.find_launched(list(regions), sweep_id)
    if dry_run:
        return report
    pending: list[Machine] = []
    for machine in report.found:
        try:
            provisioner.terminate(machine)
            pending.append(machine)
        except ProvisionError as err:
            report.failed.append((machine, str(err)))
    deadline = time.monotonic() + confirm_timeout_s
    while pending:
        still: list[Machine] = []
        for machine in pending:
            try:
                done = provisioner.is_terminated(machine)
            except ProvisionError as err:
                report.failed.append((machine, str(err)))
                continue
            (report.terminated if done else still).append(machine)
        pending = still
        if pending and time.monotonic() >= deadline:
            for machine in pending:
                report.failed.append(
                    (machine, f"still not terminated {confirm_timeout_s:.0f} s after the request")
                )
            break
        if pending:
            sleep(poll_s)
    return report
