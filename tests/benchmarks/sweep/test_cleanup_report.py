"""`sweep cleanup`'s verdict per recorded machine: confirmed down, still up, could not check."""

from __future__ import annotations

from typing import Any

from benchmarks.runners.cleanup import CleanupReport
from benchmarks.runners.machine import Machine
from benchmarks.sweep.cleanup_report import DOWN, UNCHECKED, UP, verdicts


def state(*machines: dict[str, Any]) -> dict[str, Any]:
    return {"targets": [{"index": i, "machine": m, "terminated_at": m.pop("gone", None)}
                        for i, m in enumerate(machines)]}  # fmt: skip


def aws(instance_id: str | None, name: str, **extra: Any) -> dict[str, Any]:
    return {"backend": "aws", "cloud": "aws", "region": "us-east-1", "instance_id": instance_id,
            "name": name, **extra}  # fmt: skip


def found(instance_id: str, name: str) -> Machine:
    return Machine("aws", "", cloud="aws", region="us-east-1", instance_id=instance_id, name=name)


def test_each_recorded_machine_gets_one_verdict_with_its_reason() -> None:
    states = [state(aws("i-1", "n-1"), aws(None, "n-2"), aws("i-3", "n-3"),
                    aws("i-4", "n-4", gone="2026-12-01T00:00:00Z"),
                    {"backend": "ssh", "host": "box"})]  # fmt: skip
    report = CleanupReport("aws", ["us-east-1"], "s", False)
    report.found = [found("i-2", "n-2"), found("i-3", "n-3")]
    report.terminated = [report.found[0]]
    report.failed = [(report.found[1], "termination not confirmed 120 s after the request")]
    got = {(v.machine, v.verdict, v.why) for v in verdicts(states, [report], dry_run=False)}
    assert got == {
        ("i-1", DOWN, "the cloud no longer lists it"),
        ("i-2", DOWN, "terminated now"),  # its launch had not returned: found by name
        ("i-3", UP, "termination not confirmed 120 s after the request"),
    }  # the one confirmed gone before, and the ssh server, are not recorded cloud machines
    dry = CleanupReport("aws", ["us-east-1"], "s", True, found=[found("i-3", "n-3")])
    (one,) = [v for v in verdicts(states, [dry], dry_run=True) if v.machine == "i-3"]
    assert (one.verdict, one.why) == (UP, "would terminate")


def test_a_failed_search_leaves_every_machine_of_that_cloud_unchecked_with_how_to_check() -> None:
    states = [state(aws("i-1", "n-1"))]
    report = CleanupReport("aws", ["us-east-1"], "s", True, error="UnauthorizedOperation")
    (v,) = verdicts(states, [report], dry_run=True)
    assert v.verdict == UNCHECKED
    assert v.why == (
        "UnauthorizedOperation; check it with "
        "`aws ec2 describe-instances --region us-east-1 --instance-ids i-1`"
    )
