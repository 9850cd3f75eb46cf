"""A quick benchmark on this machine from the app: `gpuplan bench run` in a subprocess.

The app never imports torch: the run happens in a child process
(`python -m planner.cli.main bench run ... --format json`), whose rich progress bar is read
from its stderr (forced to draw as on a terminal) to drive a progress bar in the page.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# "resnet50 tiny fp32 cpu x1 measure ━━━━━━━━━━━  12/30 0:00:01" (benchmarks.progress)
PROGRESS = re.compile(r"(batch search|warm-up|measure)\D*?(\d+)/(\d+)")
QUICK_WORKLOADS = ("resnet50", "bert", "gpt")


def torch_installed() -> bool:
    """Whether torch can be imported here (checked without importing it)."""
    return importlib.util.find_spec("torch") is not None


def bench_run_command_exists() -> bool:
    """Whether this gpuplan has `gpuplan bench run` (the benchmark harness)."""
    from benchmarks.cli import app

    names = {c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands}
    return "run" in names


def available() -> bool:
    """A quick benchmark can run here: torch installed and `bench run` present."""
    return torch_installed() and bench_run_command_exists()


def command(workload: str, steps: int, warmup: int, out_dir: str | Path) -> list[str]:
    """The `gpuplan bench run` command line of a quick CPU benchmark (tiny model)."""
    return [
        sys.executable, "-m", "planner.cli.main", "bench", "run",
        "--workload", workload, "--size", "tiny", "--device", "cpu",
        "--steps", str(steps), "--warmup", str(warmup),
        "--out", str(out_dir), "--format", "json",
    ]  # fmt: skip


def last_progress(text: str) -> tuple[str, int, int] | None:
    """The last (phase, done, total) the progress bar drew in `text`; None before any."""
    matches = PROGRESS.findall(text)
    if not matches:
        return None
    phase, done, total = matches[-1]
    return phase, int(done), int(total)


def overall_fraction(progress: tuple[str, int, int] | None, warmup: int, steps: int) -> float:
    """Share of the run done: warm-up steps, then timed steps, out of warmup + steps."""
    if progress is None:
        return 0.0
    phase, done, _ = progress
    whole = max(warmup + steps, 1)
    if phase == "warm-up":
        return min(done, warmup) / whole
    if phase == "measure":
        return (warmup + min(done, steps)) / whole
    return 0.0


@dataclass(frozen=True)
class BenchOutcome:
    """How a run ended: exit code, the results it wrote (parsed JSON), its messages."""

    returncode: int
    results: list[dict]
    stderr: str
    timed_out: bool = False

    def error_text(self) -> str:
        """The last lines of stderr without the progress bar's redraws."""
        lines = [ln for ln in re.split(r"[\r\n]+", self.stderr) if ln.strip()]
        lines = [re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", ln) for ln in lines]
        return "\n".join(ln for ln in lines[-6:] if not PROGRESS.search(ln))


def run(
    argv: list[str],
    on_progress: Callable[[tuple[str, int, int] | None], None],
    timeout_s: float = 600.0,
    poll_s: float = 0.25,
) -> BenchOutcome:
    """Run a benchmark command, calling `on_progress` as its bar advances."""
    env = {**os.environ, "TTY_COMPATIBLE": "1", "TTY_INTERACTIVE": "1", "NO_COLOR": "1"}
    env["COLUMNS"] = "160"
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True, bufsize=1
    )
    chunks: list[str] = []
    out: list[str] = []

    def read_stderr() -> None:
        assert proc.stderr is not None
        while True:
            piece = proc.stderr.read(256)
            if not piece:
                return
            chunks.append(piece)

    def read_stdout() -> None:
        assert proc.stdout is not None
        out.append(proc.stdout.read())

    readers = [threading.Thread(target=read_stderr), threading.Thread(target=read_stdout)]
    for reader in readers:
        reader.daemon = True
        reader.start()
    deadline = time.monotonic() + timeout_s
    seen: tuple[str, int, int] | None = None
    timed_out = False
    while proc.poll() is None:
        if time.monotonic() > deadline:
            proc.kill()
            timed_out = True
            break
        now = last_progress("".join(chunks[-8:]))
        if now is not None and now != seen:
            seen = now
            on_progress(now)
        time.sleep(poll_s)
    proc.wait()
    for reader in readers:
        reader.join(timeout=5)
    on_progress(last_progress("".join(chunks[-8:])))
    results: list[dict] = []
    if proc.returncode == 0:
        try:
            parsed = json.loads("".join(out) or "[]")
            results = parsed if isinstance(parsed, list) else [parsed]
        except json.JSONDecodeError:
            results = []
    return BenchOutcome(proc.returncode, results, "".join(chunks), timed_out)
