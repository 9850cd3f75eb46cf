"""The progress bar of `gpuplan bench run`, drawn so that it does not slow the run.

rich's default refreshes from a background thread 10 times a second. On a small CPU
that thread preempts one of torch's spinning OpenMP threads and stalls whole steps
(measured with benchmarks.fidelity: about 20% slower on 2 cores). Here the bar is
redrawn from the training thread itself, between steps, at most twice a second.
"""

from __future__ import annotations

import time

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TimeElapsedColumn

REDRAW_EVERY_S = 0.5


def progress_bar(console: Console, transient: bool = False) -> Progress:
    """A rich Progress with no refresh thread (StepProgress redraws it)."""
    return Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        auto_refresh=False,
        transient=transient,
    )


class StepProgress:
    """Callable (phase, done, total) that feeds a Progress: one task per phase."""

    def __init__(self, progress: Progress, label: str) -> None:
        self.progress = progress
        self.label = label
        self.phase = ""
        self.task: TaskID | None = None
        self.last_draw = 0.0

    def __call__(self, phase: str, done: int, total: int) -> None:
        if phase != self.phase or self.task is None:
            if self.task is not None:
                self.progress.update(self.task, visible=False)
            self.phase = phase
            self.task = self.progress.add_task(f"{self.label} {phase}", total=total)
        self.progress.update(self.task, completed=done)
        now = time.monotonic()
        if done == total or now - self.last_draw >= REDRAW_EVERY_S:
            self.last_draw = now
            self.progress.refresh()
