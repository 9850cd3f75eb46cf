"""Run benchmarks on this machine: in this process (1 device) or N through torchrun.

`run_local` runs one benchmark at one world size and writes its one result. World size
1 runs the harness here. N > 1 starts `python -m torch.distributed.run --standalone
--nproc_per_node=N -m benchmarks.runners.local ...`: each worker runs the harness
under DDP (NCCL on GPUs, gloo on CPU) and rank 0 alone writes the one result, with
global throughput; rank 0 reports progress to the launcher as lines on stdout. On
Ctrl-C (or any error) the launcher stops torchrun, which stops its workers, and removes
anything the run wrote: an interrupted run leaves no result.

This module imports torch only where a benchmark actually runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

PROGRESS_PREFIX = "@gpuplan-progress "
RESULT_PREFIX = "@gpuplan-result "
STOP_GRACE_S = 40.0  # torchrun gives its workers 30 s after a signal, then kills them
STDERR_TAIL_LINES = 60  # of a failed run's stderr, shown to the user
PORT_TAKEN = "EADDRINUSE"  # in c10d's DistNetworkError when a store cannot listen
# What a gloo worker prints when it aborts on a thread left running (seen rarely on CPU
# runs, whatever the barrier before destroy_process_group): the run itself was sound.
GLOO_ABORT = "terminate called without an active exception"
RETRYABLE = {
    PORT_TAKEN: "a rendezvous port was taken by another process",
    GLOO_ABORT: "a gloo worker aborted on exit",
}


def torchrun_command(
    world_size: int, options: dict[str, Any], run_id: str, started_at: str, out_dir: Path
) -> list[str]:
    """The torchrun command line for one N-process run."""
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc_per_node={world_size}",
        "-m",
        "benchmarks.runners.local",
        "--options",
        json.dumps(options),
        "--run-id",
        run_id,
        "--started-at",
        started_at,
        "--out",
        str(out_dir),
    ]


def child_env(device: str, world_size: int, cores: int) -> dict[str, str]:
    """The workers' environment: an equal share of CPU threads each, unbuffered output."""
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", str(max(1, cores // world_size)))
    env["PYTHONUNBUFFERED"] = "1"
    if device == "cpu":  # standalone = one host: gloo over loopback
        env.setdefault("GLOO_SOCKET_IFNAME", "lo")
    return env


def _remove_run_files(out_dir: Path, run_id: str) -> None:
    for path in [out_dir / f"{run_id}.json", *out_dir.glob(f".{run_id}.json.*.tmp")]:
        path.unlink(missing_ok=True)


def _stop(proc: subprocess.Popen[str]) -> None:
    """Stop torchrun as Ctrl-C would (it signals its workers), then harder if it hangs."""
    for send, grace in ((signal.SIGINT, STOP_GRACE_S), (signal.SIGTERM, 10.0)):
        if proc.poll() is not None:
            return
        proc.send_signal(send)
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue
    proc.kill()
    proc.wait()


def launch(
    world_size: int,
    options: dict[str, Any],
    run_id: str,
    started_at: str,
    out_dir: Path,
    cores: int,
    on_progress: Callable[[str, int, int], None] | None = None,
    on_output: Callable[[str], None] | None = None,
) -> tuple[Path | None, list[str]]:
    """Run one N-process benchmark: (the result's path, []) or (None, its stderr's tail).

    KeyboardInterrupt stops the workers, removes anything written, and propagates.
    """
    cmd = torchrun_command(world_size, options, run_id, started_at, out_dir)
    env = child_env(str(options["device"]), world_size, cores)
    # torchrun's and the workers' stderr is kept aside and shown only if the run fails.
    with tempfile.TemporaryFile("w+") as errors:
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=errors, text=True, env=env, bufsize=1
        )
        written: Path | None = None
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                if line.startswith(PROGRESS_PREFIX):
                    phase, done, total = line[len(PROGRESS_PREFIX) :].rsplit(" ", 2)
                    if on_progress:
                        on_progress(phase, int(done), int(total))
                elif line.startswith(RESULT_PREFIX):
                    written = Path(line[len(RESULT_PREFIX) :].strip())
                elif on_output:
                    on_output(line.rstrip("\n"))
            code = proc.wait()
        except BaseException:
            _stop(proc)
            _remove_run_files(out_dir, run_id)
            raise
        if code == 0 and written is not None:
            return written, []
        _remove_run_files(out_dir, run_id)
        errors.seek(0)
        return None, errors.read().splitlines()[-STDERR_TAIL_LINES:]


class RunFailed(RuntimeError):
    """An N-process run exited non-zero (its output says why); nothing was written."""


def run_local(
    options: Any,
    world_size: int,
    out_dir: Path,
    progress: Callable[[str, int, int], None] | None = None,
    on_output: Callable[[str], None] | None = None,
) -> Path:
    """Run checked RunOptions at `world_size` processes; the path of the written result.

    Raises BenchmarkError / StepFailed (world size 1), RunFailed (N > 1) or
    KeyboardInterrupt; in every case no result file is left for this run.
    """
    from benchmarks.env import usable_cores
    from benchmarks.summary import new_run_id, utc_now

    run_id = new_run_id(
        options.workload, options.size, options.precision, options.device, world_size
    )
    started_at = utc_now()
    if world_size == 1:
        from benchmarks.harness import run
        from benchmarks.results import write_result
        from benchmarks.summary import make_result

        measurement = run(options, None, progress)
        result = make_result(measurement, run_id, started_at, options.peak_tflops)
        return write_result(result, out_dir)
    cores = usable_cores()
    for attempt in range(2):
        path, failure = launch(
            world_size, options_dict(options), run_id, started_at, out_dir, cores, progress,
            on_output,
        )  # fmt: skip
        if path is not None:
            return path
        # torchrun picks free ports by binding and releasing them; on a busy host another
        # process can take one in between; and a gloo worker can abort on a stray thread.
        # Those, and only those, are worth one more try.
        reason = next(
            (why for mark, why in RETRYABLE.items() if any(mark in line for line in failure)), None
        )
        if attempt == 0 and reason:
            if on_output:
                on_output(f"{reason}; retrying once")
            continue
        break
    if on_output:
        for line in failure:
            on_output(line)
    raise RunFailed(
        f"the {world_size}-process run failed (see its output above); no result written"
    )


def _report_progress(phase: str, done: int, total: int) -> None:
    print(f"{PROGRESS_PREFIX}{phase} {done} {total}", flush=True)


def main(argv: list[str] | None = None) -> int:
    """A torchrun worker: init the process group, run under DDP, rank 0 writes the result."""
    parser = argparse.ArgumentParser(prog="benchmarks.runners.local")
    parser.add_argument("--options", required=True, help="RunOptions as JSON")
    parser.add_argument("--run-id", required=True)
    parser.add_argument("--started-at", required=True)
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args(argv)

    import torch
    import torch.distributed as dist

    from benchmarks.harness import BenchmarkError, DistContext, RunOptions, run
    from benchmarks.results import write_result
    from benchmarks.summary import make_result

    options = RunOptions(**json.loads(args.options))
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    backend = "nccl" if options.device == "cuda" else "gloo"
    if options.device == "cuda":
        torch.cuda.set_device(local_rank)
    dist.init_process_group(backend=backend)
    context = DistContext(rank, local_rank, world_size, backend)
    try:
        measurement = run(options, context, _report_progress if rank == 0 else None)
    except BenchmarkError as exc:
        print(f"error: rank {rank}: {exc}", file=sys.stderr, flush=True)
        return 1
    if rank == 0:
        result = make_result(measurement, args.run_id, args.started_at, options.peak_tflops)
        path = write_result(result, args.out)
        print(f"{RESULT_PREFIX}{path}", flush=True)
    dist.barrier()  # without it, destroy_process_group sometimes aborts a rank mid-exit
    dist.destroy_process_group()
    return 0


def options_dict(options: Any) -> dict[str, Any]:
    """RunOptions as the JSON-ready dict a worker rebuilds them from."""
    return dataclasses.asdict(options)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # the launcher stopped the run: it reports the interruption
        sys.exit(130)
