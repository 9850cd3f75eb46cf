"""What `gpuplan sweep cleanup` says about each machine the sweeps recorded.

Each cloud machine written in a sweep's state and not confirmed gone gets one verdict
from the cleanup's search by tag (benchmarks.runners.cleanup.CleanupReport):

- DOWN: the cloud lists no such machine any more, or it was terminated and confirmed now;
- UP: the cloud lists it (a dry run), or its termination failed or was not confirmed;
- UNCHECKED: the search itself failed (an API that refused or gave no answer), so
  nobody knows: the reason and the command that checks it by hand are given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchmarks.runners.cleanup import CleanupReport
from benchmarks.runners.machine import Machine
from benchmarks.sweep import state as st

DOWN, UP, UNCHECKED = "confirmed down", "still up", "could not check"


@dataclass(frozen=True)
class Verdict:
    """One recorded machine: its cloud, name, where, and DOWN, UP or UNCHECKED with why."""

    cloud: str
    machine: str
    where: str
    verdict: str
    why: str = ""


def check_command(cloud: str, name: str, where: str) -> str:
    """The command that asks the cloud about one machine by hand."""
    if cloud == "skypilot":
        return f"sky status {name}"
    if cloud == "gcp":
        return f"gcloud compute instances describe {name} --zone {where}"
    return f"aws ec2 describe-instances --region {where} --instance-ids {name}"


def _same(found: Machine, record: dict[str, Any]) -> bool:
    ids = {record.get("instance_id"), record.get("name")} - {None}
    return bool(ids & ({found.instance_id, found.name} - {None}))


def verdicts(
    states: list[dict[str, Any]], reports: list[CleanupReport], dry_run: bool
) -> list[Verdict]:
    """One verdict per cloud machine the states record and no teardown confirmed gone."""
    by_cloud = {report.backend: report for report in reports}
    out = []
    for data in states:
        for t in data.get("targets", []):
            record = t.get("machine") or {}
            cloud = st.machine_cloud(record)
            if not cloud or t.get("terminated_at"):
                continue
            name = str(record.get("instance_id") or record.get("name") or "?")
            where = str(record.get("zone") or record.get("region") or "any")
            report = by_cloud.get(cloud)
            if report is None or report.error:
                why = report.error if report and report.error else "its cloud was not searched"
                how = f"check it with `{check_command(cloud, name, where)}`"
                out.append(Verdict(cloud, name, where, UNCHECKED, f"{why}; {how}"))
                continue
            found = next((m for m in report.found if _same(m, record)), None)
            failed = next((why for m, why in report.failed if _same(m, record)), None)
            if found is not None and found.instance_id:
                name = found.instance_id  # a launch that had not returned: now known
            if found is None:
                out.append(Verdict(cloud, name, where, DOWN, "the cloud no longer lists it"))
            elif failed is not None:
                out.append(Verdict(cloud, name, where, UP, failed))
            elif dry_run:
                out.append(Verdict(cloud, name, where, UP, "would terminate"))
            else:
                out.append(Verdict(cloud, name, where, DOWN, "terminated now"))
    return out
