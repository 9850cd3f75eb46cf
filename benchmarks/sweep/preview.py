"""What a sweep will take and cost, before it starts.

Per target: minutes to provision (cloud), to install, and for each run
(warm-up + timed steps) x global batch / expected samples per second + a fixed start-up
overhead; the price per hour with its date; expected dollars (expected minutes x price)
and worst-case dollars (max_minutes_per_target x price: the dead-man switch ends every
cloud machine by then). Prices and expected throughput come in as plain data
(`SweepData`), built by the planner from the price catalog and its throughput model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from benchmarks.models import WORKLOADS
from benchmarks.sweep.spec import RunItem, SweepSpec, TargetSpec

# Minutes, from launching instances and installing by hand on AWS/GCP deep-learning
# images (first boot to sshd: 1-4 min; pip install of gpuplan[bench] with torch present:
# 2-5 min). Deliberately on the long side: the preview is an upper-ish guide.
# SkyPilot: its launch provisions and sets up its runtime on the machine (3-6 min on VMs,
# under a minute on a Kubernetes cluster with the image pulled).
PROVISION_MIN = {"aws": 4.0, "gcp": 3.0, "skypilot": 6.0, "ssh": 0.2, "local": 0.0}
INSTALL_MIN_WHEEL = 5.0
INSTALL_MIN_REMOTE_PYTHON = 0.3
TEARDOWN_MIN = {"aws": 1.0, "gcp": 1.0, "skypilot": 2.0, "ssh": 0.0, "local": 0.0}
RUN_OVERHEAD_MIN = 0.5  # interpreter + torch import + model build + data, per run
COMPILE_OVERHEAD_MIN = 3.0  # torch.compile of a transformer on a fresh cache
UNKNOWN_RUN_MIN = 3.0  # a run whose throughput nothing predicts


@dataclass(frozen=True)
class PriceQuote:
    """One catalog price: dollars per hour, its date and where it came from."""

    usd_per_hour: float
    priced_at: str
    source: str
    gpu_name: str | None = None
    gpu_count: float | None = None
    price_date_basis: str = "exact"  # or "not-before": priced_at is only a lower bound


@dataclass(frozen=True)
class ThroughputGuess:
    """Expected global samples per second of one run on one target, and its source."""

    samples_per_s: float
    source: str  # measured / published / scaled / estimated (the planner's words)


class SweepData(Protocol):
    """Prices and expected throughput for a preview (the planner implements it)."""

    def price(self, target: TargetSpec) -> PriceQuote | None: ...

    def throughput(
        self, gpu_name: str, gpu_count: int, run: RunItem, precision: str
    ) -> ThroughputGuess | None: ...

    def known_instances(self, provider: str) -> dict[str, set[str]]:
        """region -> instance types of a provider in the catalog ({} when unknown)."""
        ...

    def predicted_vs_measured(
        self, folder: Path, result_ids: Sequence[str]
    ) -> list[dict[str, str]]:
        """One row of words (header -> cell) per result of `result_ids` in `folder`: what
        the planner predicts for it without it, the measured figure, the error and whether
        it fell inside the 80% band, or why it was not compared ([] when nothing is known)."""
        ...


@dataclass(frozen=True)
class RunPreview:
    key: str
    minutes: float
    how: str  # where the minutes came from


@dataclass(frozen=True)
class TargetPreview:
    label: str
    backend: str
    region: str | None
    instance_type: str | None
    gpu_name: str | None
    gpu_count: int | None
    usd_per_hour: float | None  # None: no price known (cloud: the sweep refuses)
    priced_at: str | None
    price_source: str
    provision_min: float
    install_min: float
    runs: tuple[RunPreview, ...]
    expected_min: float
    expected_usd: float | None
    worst_usd: float | None
    notes: tuple[str, ...] = ()
    price_date_basis: str | None = None  # "exact" | "not-before" (cloud prices)


@dataclass(frozen=True)
class SweepPreview:
    targets: tuple[TargetPreview, ...]
    max_usd: float
    max_minutes_per_target: float
    expected_usd: float | None
    worst_usd: float | None
    problems: tuple[str, ...] = field(default_factory=tuple)

    @property
    def within_cap(self) -> bool:
        return self.worst_usd is not None and self.worst_usd <= self.max_usd + 1e-9


def run_precision(run: RunItem, gpu: bool) -> str:
    """The precision `bench run` picks when none is given (bf16 on CUDA, fp32 on CPU)."""
    return str(run.options.get("precision") or ("bf16" if gpu else "fp32"))


def run_minutes(run: RunItem, guess: ThroughputGuess | None) -> RunPreview:
    """Expected minutes of one run: (warmup + steps) x global batch / samples per s + overhead."""
    o = run.options
    overhead = RUN_OVERHEAD_MIN + (COMPILE_OVERHEAD_MIN if o.get("compile") else 0.0)
    if guess is None or not guess.samples_per_s > 0:
        return RunPreview(run.key, UNKNOWN_RUN_MIN + overhead, "no throughput figure: assumed")
    batch = o.get("batch")
    per_device = (
        batch if isinstance(batch, int) else WORKLOADS[o["workload"]]["default_batch"][o["size"]]
    )
    samples = (o["warmup"] + o["steps"]) * per_device * o["world_size"]
    minutes = samples / guess.samples_per_s / 60.0 + overhead
    return RunPreview(run.key, minutes, f"{guess.source} {guess.samples_per_s:,.0f} samples/s")


def preview_target(spec: SweepSpec, target: TargetSpec, data: SweepData) -> TargetPreview:
    """Expected minutes and dollars of one target (see the module docstring)."""
    notes: list[str] = []
    quote = data.price(target)
    usd: float | None
    priced_at: str | None
    if target.is_cloud and quote is None and target.usd_per_hour is not None:
        usd, priced_at, source = target.usd_per_hour, None, "usd_per_hour in the spec"
    elif target.is_cloud:
        usd = quote.usd_per_hour if quote else None
        priced_at, source = (quote.priced_at, quote.source) if quote else (None, _no_price(target))
    else:
        usd = target.usd_per_hour or 0.0
        priced_at, source = (
            None,
            "usd_per_hour in the spec" if target.usd_per_hour else "on-prem: not priced",
        )
    gpu_name = target.gpu_name or (quote.gpu_name if quote else None)
    gpu_count = target.gpu_count or (int(quote.gpu_count) if quote and quote.gpu_count else None)
    runs = []
    for run in spec.runs:
        guess = None
        if gpu_name and run.options["device"] != "cpu":
            count = int(run.options["world_size"])
            if gpu_count is not None and count > gpu_count:
                notes.append(f"{run.key}: world size {count} > {gpu_count} GPUs on this target")
            guess = data.throughput(gpu_name, count, run, run_precision(run, True))
        runs.append(run_minutes(run, guess))
    provision = PROVISION_MIN[target.backend]
    install = INSTALL_MIN_REMOTE_PYTHON if target.remote_python else INSTALL_MIN_WHEEL
    expected = provision + install + sum(r.minutes for r in runs) + TEARDOWN_MIN[target.backend]
    if expected > spec.max_minutes_per_target:
        notes.append(
            f"expected {expected:.0f} min > max_minutes_per_target "
            f"{spec.max_minutes_per_target:g}: the last runs will be cut off"
        )
    expected_usd = None if usd is None else usd * min(expected, spec.max_minutes_per_target) / 60
    worst_usd = None if usd is None else usd * spec.max_minutes_per_target / 60
    return TargetPreview(
        target.label, target.backend, target.region, target.instance_type, gpu_name, gpu_count,
        usd, priced_at, source, provision, install, tuple(runs), expected, expected_usd,
        worst_usd, tuple(notes), quote.price_date_basis if quote and target.is_cloud else None,
    )  # fmt: skip


def _no_price(target: TargetSpec) -> str:
    """Why a cloud target has no price, and how to give one."""
    if target.backend == "skypilot" and (not target.instance_type or not target.region):
        return "no price: give instance_type and region of a priced cloud, or usd_per_hour"
    return "no price in catalog (or give usd_per_hour)"


def preview_sweep(spec: SweepSpec, data: SweepData) -> SweepPreview:
    """Every target's preview and the totals against max_usd."""
    targets = tuple(preview_target(spec, t, data) for t in spec.targets)
    problems = [
        f"{t.label}: {t.price_source}; the worst case cannot be bounded"
        for t in targets
        if t.worst_usd is None
    ]
    expected = None if problems else math.fsum(t.expected_usd or 0.0 for t in targets)
    worst = None if problems else math.fsum(t.worst_usd or 0.0 for t in targets)
    return SweepPreview(
        targets, spec.max_usd, spec.max_minutes_per_target, expected, worst, tuple(problems)
    )


class NoData:
    """SweepData with no catalog and no throughput model (spec prices only)."""

    def known_instances(self, provider: str) -> dict[str, set[str]]:
        return {}

    def price(self, target: TargetSpec) -> PriceQuote | None:
        return None

    def throughput(
        self, gpu_name: str, gpu_count: int, run: RunItem, precision: str
    ) -> ThroughputGuess | None:
        return None

    def predicted_vs_measured(
        self, folder: Path, result_ids: Sequence[str]
    ) -> list[dict[str, str]]:
        return []
