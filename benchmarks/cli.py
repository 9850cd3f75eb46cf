"""`gpuplan bench`: run standard training benchmarks and look at their results.

This module imports no torch at import time: `gpuplan --help` and `bench list` work
without it; `bench run` imports the harness when it runs. Every console here has emoji
codes off and prints text from outside (ids, paths, result fields, a run's output) as
rich Text, so `:b:` or `[red]` in it prints as written.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple

import typer
from rich.console import Console
from rich.text import Text

# Light modules only (`gpuplan --help` loads no pandas): commands import results and intake.
from benchmarks.folders import default_results_dir
from benchmarks.safe_paths import UnsafeInputError, check_result_id, path_under, shorten
from edge.console import abort, error, warn, warn_lines
from edge.options import Format, Wide
from edge.output import FORMATS
from edge.spreadsheet import csv_text

if TYPE_CHECKING:
    from benchmarks.harness import RunOptions

# Above this coefficient of variation of the per-step throughput (5%), a result is noisy:
# other load, thermal throttling or too few steps; `bench run` warns.
HIGH_CV = 0.05

app = typer.Typer(help="Training benchmarks: run, list and show results.", no_args_is_help=True)


# One way to name a results folder in every command: --results DIR (as plan, estimate-llm
# and bench calibrate take it); the older spellings (--dir, --out, bench list's positional
# folder) still work.
RESULTS_HELP = "results folder (default $GPUPLAN_RESULTS_DIR or ./results; --dir: old name)"
RESULTS_OLD_HELP = "results folder (default $GPUPLAN_RESULTS_DIR or ./results; --out: old name)"

LIST_COLUMNS = ("id", "workload", "size", "precision", "device", "world", "throughput", "source")


def _console(stderr: bool = False, width: int | None = None) -> Console:
    """A console that turns no `:name:` into an emoji and highlights nothing."""
    return Console(stderr=stderr, width=width, emoji=False, highlight=False)


@app.command("list")
def list_results(
    folder: Annotated[
        Path | None,
        typer.Argument(
            help="deprecated: the results folder as an argument; give --results DIR",
            show_default=False,
        ),
    ] = None,
    results: Annotated[
        Path | None,
        typer.Option(
            "--results", help="results folder (default $GPUPLAN_RESULTS_DIR or ./results)"
        ),
    ] = None,
    fmt: Format = "table",
    wide: Wide = False,
) -> None:
    """One line per result in a folder (default $GPUPLAN_RESULTS_DIR or ./results).

    Entries that cannot be read (invalid, a folder named *.json, a dangling link, too
    large or too deep) are named on stderr as `warning: ...` and left out.
    """
    from benchmarks.results import load_results, results_frame

    if fmt not in FORMATS:
        abort(f"--format: {shorten(fmt)!r} is not one of {', '.join(FORMATS)}")
    if folder is not None and results is not None and folder != results:
        abort(f"two results folders ({shorten(folder)}, {shorten(results)}): give --results DIR")
    directory = results or folder or default_results_dir()
    loaded, problems = load_results(directory)
    ordered = sorted(loaded, key=lambda r: r.started_at)
    if fmt == "json":
        print(json.dumps([r.model_dump() for r in ordered], indent=2))
    elif fmt == "csv":
        sys.stdout.write(csv_text(results_frame(ordered)))
    else:
        from benchmarks.tables import print_results

        print_results(results_frame(ordered), f"{len(loaded)} results in {directory}", wide=wide)
    sys.stdout.flush()
    warn_lines([f"skipped: {p}" for p in problems], limit=1000)


@app.command("show")
def show(
    result: Annotated[str, typer.Argument(help="result id or path to a result file")],
    directory: Annotated[Path | None, typer.Option("--results", "--dir", help=RESULTS_HELP)] = None,
    fmt: Format = "table",
) -> None:
    """One result file in full (validated): a field/value table, JSON or one CSV row."""
    from benchmarks.results import ResultFileError, read_result

    if fmt not in FORMATS:
        abort(f"--format: {shorten(fmt)!r} is not one of {', '.join(FORMATS)}")
    if not result.strip():
        abort("give a result id (gpuplan bench list shows them) or a path to a result file")
    path = Path(result)
    try:
        given_as_path = path.exists() or path.is_symlink()
    except OSError:  # a name too long to be a path: treat it as an id (refused below)
        given_as_path = False
    if not given_as_path:
        folder = directory or default_results_dir()
        try:
            path = path_under(folder, f"{check_result_id(result)}.json")
        except UnsafeInputError as exc:
            abort(f"{exc}; give a result id or a path to a result file")
    try:
        loaded = read_result(path)
    except FileNotFoundError:
        abort(f"no result {shorten(result)!r} (looked for {shorten(path)})")
    except ResultFileError as exc:
        abort(str(exc))
    record = loaded.model_dump()
    if fmt == "json":
        print(json.dumps(record, indent=2))
    elif fmt == "csv":
        import pandas as pd

        flat = {k: json.dumps(v) if isinstance(v, dict | list) else v for k, v in record.items()}
        sys.stdout.write(csv_text(pd.DataFrame([flat])))
    else:
        from benchmarks.tables import print_result

        print_result(record)


@app.command("add")
def add(
    files: Annotated[list[Path], typer.Argument(help="result JSON files to add")],
    directory: Annotated[Path | None, typer.Option("--results", "--dir", help=RESULTS_HELP)] = None,
) -> None:
    """Add result files to the results folder: all checked first, then all written or none.

    The same checks as the app's upload: at most 2 MiB per file, JSON nested at most 64
    deep, finite numbers, the result schema and its id pattern. A different result with
    the same id is never overwritten. Exit 2 names each bad file; nothing is written.
    """
    from benchmarks.intake import check_file, conflicts, save_all

    folder = directory or default_results_dir()
    checked = [check_file(path) for path in files]
    problems = [c.error for c in checked if c.error] or conflicts(checked, folder)
    if problems:
        for problem in problems:
            error(problem)
        abort("nothing was added: fix or leave out the file(s) above")
    try:
        written = save_all(checked, folder)
    except (OSError, UnsafeInputError) as exc:
        abort(f"cannot write into {shorten(folder)}: {exc}; nothing was added", 1)
    console = _console()
    for path in written:
        console.print(Text(f"added {path}"))
    kept = len(checked) - len(written)
    if kept:
        console.print(Text(f"{kept} file(s) already in {folder} (same id, same content)"))


def _check_out_dir(out_dir: Path) -> None:
    """Exit 2 when the results folder given is an existing file (or a dangling link)."""
    if (out_dir.exists() and not out_dir.is_dir()) or (
        out_dir.is_symlink() and not out_dir.exists()
    ):
        abort(f"--results {shorten(out_dir)}: not a folder; give a folder for the result files")


def parse_series(flag: str, text: str, what: str) -> list[int]:
    """'4' -> [4]; '1,2,4,8' -> [1, 2, 4, 8]; ValueError naming `flag`, the bad part and
    `what` a valid value is."""
    values = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or int(part) < 1:
            raise ValueError(f"{flag}: {part!r} is not {what}")
        values.append(int(part))
    return values


def parse_world_sizes(text: str) -> list[int]:
    """--world-size N | a series 1,2,4,8."""
    return parse_series(
        "--world-size", text, "a positive whole number (give N or a list like 1,2,4,8)"
    )


def parse_batch(text: str | None) -> tuple[list[int | None], bool]:
    """--batch N | a series 16,32,64 | auto -> (the per-device batches, auto?); [None]: the
    model's default batch."""
    if text is None:
        return [None], False
    if text.strip().lower() == "auto":
        return [None], True
    if "auto" in text.lower():
        raise ValueError(f"--batch {text!r}: auto finds one batch; give it alone, or a series")
    what = "a positive whole number or 'auto' (give N, a series like 16,32,64, or auto)"
    return list(parse_series("--batch", text, what)), False


RUN_TABLE = (
    ("world", "world_size", "{:d}"),
    ("batch/dev", "batch_size_per_device", "{:g}"),
    ("throughput", "throughput", "{:,.1f}"),
    ("unit", "throughput_unit", "{}"),
    ("p10-p90", None, ""),
    ("CV", "throughput_cv", "{:.1%}"),
    ("step p50 s", "step_time_s_p50", "{:.4f}"),
    ("TFLOP/s/dev", "achieved_tflops", "{:.3f}"),
    ("MFU", "mfu", "{:.1%}"),
    ("peak GiB", "peak_memory_gib", "{:.2f}"),
    ("power W", "mean_power_w", "{:.0f}"),
)
# Left out where the terminal is too narrow, the first first (--format json has them).
RUN_OPTIONAL = ("power W", "TFLOP/s/dev", "step p50 s", "peak GiB", "CV", "batch/dev")


def _print_results(written: list[tuple[Any, Path]], fmt: str) -> None:
    if fmt == "json":
        print(json.dumps([r.model_dump() for r, _ in written], indent=2))
        _warn_noisy([r for r, _ in written])
        return
    from benchmarks.tables import print_cells

    rows = []
    for result, _ in written:
        cells = []
        for _, name, spec in RUN_TABLE:
            if name is None:
                low, high = result.throughput_p10, result.throughput_p90
                cells.append("-" if low is None or high is None else f"{low:,.0f}-{high:,.0f}")
                continue
            value = getattr(result, name)
            cells.append("-" if value is None else spec.format(value))
        rows.append(cells)
    headers = [h for h, _, _ in RUN_TABLE]
    print_cells(headers, rows, f"{len(written)} result(s) written", RUN_OPTIONAL)
    console = _console()
    for result, path in written:
        console.print(Text(f"{result.id}: {path}"))
        if result.mean_power_w is None:
            console.print(Text(f"  power and energy {result.power_source}"))
    _warn_noisy([r for r, _ in written])


def noisy_warnings(results: list[Any], limit: float = HIGH_CV) -> list[str]:
    """One warning per result whose throughput's coefficient of variation exceeds `limit`."""
    out = []
    for result in results:
        cv = getattr(result, "throughput_cv", None)
        if cv is not None and cv > limit:
            out.append(
                f"{result.id}: throughput varied {cv:.1%} between steps (coefficient of "
                f"variation, above {limit:.0%}): other load on the machine, thermal "
                "throttling or too few steps; rerun with more --steps on an idle machine"
            )
    return out


def _warn_noisy(results: list[Any]) -> None:
    for line in noisy_warnings(results):
        warn(line)


@dataclass(frozen=True)
class RunFlags:
    """The options of one `gpuplan bench run` as given, by parameter name (None: not given)."""

    workload: str
    size: str | None
    precision: str | None
    device: str
    world_size: str
    batch: str | None
    steps: int
    warmup: int
    compile_model: bool
    channels_last: bool
    peak_tflops: float | None
    max_batch: int | None
    memory_budget_gib: float | None
    seed: int
    out: Path | None
    fmt: str


class CheckedRun(NamedTuple):
    """What `bench run` checked before importing torch: the canonical size, the world
    sizes to run, and the per-device batches (None: the model's default) or auto."""

    size: str
    world_sizes: list[int]
    batch_sizes: list[int | None]
    batch_auto: bool


# The options are declared in the signature, as typer reads them; the body hands them on.
@app.command("run")
def run(
    workload: Annotated[
        str,
        typer.Option(
            "--workload", "-w", help="resnet50 | bert | gpt | ops (GEMM, attention, memory rates)"
        ),
    ],
    size: Annotated[
        str | None,
        typer.Option(
            help="resnet50: tiny|full; bert: tiny|base|large; gpt: tiny|124m|350m|1.3b; "
            "ops: tiny|full (default full / large / 124m / full)"
        ),
    ] = None,
    precision: Annotated[
        str | None,
        typer.Option(
            help="fp32 | tf32 | fp16 | bf16 (default bf16 on CUDA, fp32 on CPU); ops: also fp8, "
            "default all the device has"
        ),
    ] = None,
    device: Annotated[str, typer.Option(help="cpu | cuda | auto")] = "auto",
    world_size: Annotated[
        str, typer.Option("--world-size", help="processes (GPUs): N, or a series 1,2,4,8")
    ] = "1",
    batch: Annotated[
        str | None, typer.Option("--batch", help="per-device batch N, a series 16,32,64, or auto")
    ] = None,
    steps: Annotated[int, typer.Option(help="timed steps")] = 50,
    warmup: Annotated[int, typer.Option(help="untimed warm-up steps")] = 10,
    compile_model: Annotated[bool, typer.Option("--compile", help="torch.compile")] = False,
    channels_last: Annotated[
        bool, typer.Option("--channels-last/--no-channels-last", help="CNN memory format")
    ] = True,
    peak_tflops: Annotated[
        float | None,
        typer.Option("--peak-tflops", help="per-device peak TFLOP/s at this precision (MFU)"),
    ] = None,
    max_batch: Annotated[
        int | None, typer.Option("--max-batch", help="cap for --batch auto")
    ] = None,
    memory_budget_gib: Annotated[
        float | None,
        typer.Option("--memory-budget-gib", help="CPU --batch auto: memory per process"),
    ] = None,
    seed: Annotated[int, typer.Option(help="random seed of weights and data")] = 0,
    out: Annotated[Path | None, typer.Option("--results", "--out", help=RESULTS_OLD_HELP)] = None,
    fmt: Annotated[str, typer.Option("--format", help="table | json")] = "table",
) -> None:
    """Measure training throughput of a standard model; one result file per world size and
    batch."""
    flags = RunFlags(**locals())  # first statement: locals() is exactly the options above
    checked = _check_run_flags(flags)
    options = _run_options(flags, checked)
    _check_visible_gpus(options, checked.world_sizes)
    out_dir = flags.out or default_results_dir()
    _check_out_dir(out_dir)
    if options.workload == "ops":
        written = _run_ops(options, checked.world_sizes, out_dir, flags.fmt)
    else:
        written = []
        for batch_size in checked.batch_sizes:  # a batch series: every world size per batch
            at_batch = dataclasses.replace(options, batch_size=batch_size)
            written += _run_world_sizes(at_batch, checked.world_sizes, out_dir, checked.batch_auto)
    _print_results(written, flags.fmt)


def _check_run_flags(flags: RunFlags) -> CheckedRun:
    """The size made canonical, the world sizes and the batch; exit 2 naming the first bad
    option."""
    try:
        from benchmarks.models import check_size

        size = check_size(flags.workload, flags.size)
        sizes = parse_world_sizes(flags.world_size)
        batch_sizes, batch_auto = parse_batch(flags.batch)
        if flags.fmt not in ("table", "json"):
            raise ValueError(f"--format: {flags.fmt!r} is not one of table, json")
        if flags.device not in ("cpu", "cuda", "auto"):
            raise ValueError(f"--device: {flags.device!r} is not one of cpu, cuda, auto")
        for flag, value in (
            ("--peak-tflops", flags.peak_tflops),
            ("--memory-budget-gib", flags.memory_budget_gib),
        ):
            if value is not None and not (math.isfinite(value) and 0 < value <= 1e6):
                raise ValueError(
                    f"{flag} {value:g}: must be a finite number greater than 0 and at most 1e+06"
                )
    except ValueError as exc:
        abort(str(exc))
    return CheckedRun(size, sizes, batch_sizes, batch_auto)


def _require_torch() -> None:
    """Exit 2 saying how to install torch when the harness cannot be imported."""
    try:
        import torch  # noqa: F401

        from benchmarks import harness  # noqa: F401
        from benchmarks.runners.local import RunFailed, run_local  # noqa: F401
    except ImportError as exc:
        abort(
            f"running benchmarks needs torch ({exc}); install it with "
            "pip install -c constraints/cpu.txt -e '.[bench]'"
        )


def _run_options(flags: RunFlags, checked: CheckedRun) -> RunOptions:
    """The harness's RunOptions (device auto: cuda where torch sees one; precision by
    default bf16 on cuda, fp32 on cpu), checked; exit 2 naming what the harness refuses."""
    _require_torch()
    import torch

    from benchmarks import harness

    device = flags.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    options = harness.RunOptions(
        workload=flags.workload,
        size=checked.size,
        precision=flags.precision or harness.default_precision(flags.workload, device),
        device=device,
        batch_size=checked.batch_sizes[0],
        batch_auto=checked.batch_auto,
        steps=flags.steps,
        warmup=flags.warmup,
        compile=flags.compile_model,
        channels_last=flags.channels_last,
        peak_tflops=flags.peak_tflops,
        max_batch=flags.max_batch,
        memory_budget_gib=flags.memory_budget_gib,
        seed=flags.seed,
    )
    try:
        return options.checked()
    except harness.BenchmarkError as exc:
        abort(str(exc))


def _check_visible_gpus(options: RunOptions, sizes: list[int]) -> None:
    """Exit 2 when a cuda run asks for more processes than torch sees GPUs."""
    import torch

    if options.device == "cuda" and max(sizes) > torch.cuda.device_count():
        abort(f"--world-size {max(sizes)}: only {torch.cuda.device_count()} CUDA GPU(s) visible")


def _run_world_sizes(
    options: RunOptions, sizes: list[int], out_dir: Path, batch_auto: bool
) -> list[tuple[Any, Path]]:
    """Each world size run in turn on this machine, its output and a progress bar on
    stderr, each result read back as written; exit at the first failure (130 on Ctrl-C,
    the finished results kept)."""
    from benchmarks import harness
    from benchmarks.models import WORKLOADS
    from benchmarks.progress import StepProgress, progress_bar
    from benchmarks.results import read_result
    from benchmarks.runners.local import RunFailed, run_local

    err = _console(stderr=True)

    def say(line: str) -> None:
        """One line of a run's own output, as written."""
        err.print(Text(line), soft_wrap=True)

    written: list[tuple[Any, Path]] = []
    for n in sizes:
        label = f"{options.workload} {options.size} {options.precision} {options.device} x{n}"
        per_device = (
            options.batch_size or WORKLOADS[options.workload]["default_batch"][options.size]
        )
        say(
            f"running {label}: batch {'auto' if batch_auto else per_device} per device, "
            f"{options.warmup} warm-up + {options.steps} timed steps"
        )
        bar = progress_bar(err)
        try:
            with bar:
                path = run_local(options, n, out_dir, StepProgress(bar, label), say)
        except KeyboardInterrupt:
            kept = f"; the {len(written)} finished result(s) are kept" if written else ""
            abort(f"interrupted: no result written for {label}{kept}", 130)
        except RunFailed as exc:
            abort(str(exc), 1)
        except harness.StepFailed as exc:
            abort(f"{label}: {exc}; no result written", 1)
        except harness.BenchmarkError as exc:
            abort(f"{label}: {exc}", 2)
        written.append((read_result(path), path))
    return written


def _run_ops(
    options: RunOptions, sizes: list[int], out_dir: Path, fmt: str
) -> list[tuple[Any, Path]]:
    """The operator benchmark (benchmarks.ops) on one device, its progress on stderr and,
    for a table, its figures per op and precision; exit 2 for more than one process or
    what the device lacks, 130 on Ctrl-C (nothing written)."""
    from benchmarks import harness, ops
    from benchmarks.op_figures import SUMMARY_COLUMNS, summary_rows
    from benchmarks.progress import StepProgress, progress_bar
    from benchmarks.results import read_result

    if sizes != [1]:
        abort("--world-size: ops times one device; leave it out (or give 1)")
    err = _console(stderr=True)
    label = f"ops {options.size} {options.precision} {options.device}"
    budget = ops.grid_for(options.device, str(options.size)).budget_s
    err.print(Text(f"running {label}: GEMM, attention and memory, a {budget:.0f} s time bound"))
    try:
        with progress_bar(err) as bar:
            path = ops.run_to_file(options, out_dir, StepProgress(bar, label))
    except KeyboardInterrupt:
        abort(f"interrupted: no result written for {label}", 130)
    except harness.BenchmarkError as exc:
        abort(f"{label}: {exc}", 2)
    result = read_result(path)
    if fmt == "table":
        from benchmarks.tables import print_cells

        rows = [list(r) for r in summary_rows(result.op_figures or [])]
        print_cells(list(SUMMARY_COLUMNS), rows, f"{result.id}: median rate per call")
    return [(result, path)]


@app.command("pipeline")
def pipeline(
    workers: Annotated[
        str | None,
        typer.Option(help="DataLoader workers: N or a series 0,1,2 (default: usable cores)"),
    ] = None,
    batch: Annotated[int, typer.Option("--batch", help="images per batch")] = 64,
    batches: Annotated[int, typer.Option(help="timed batches")] = 30,
    warmup: Annotated[int, typer.Option(help="untimed batches (worker start-up)")] = 5,
    images: Annotated[int, typer.Option(help="distinct JPEGs generated in memory")] = 256,
    out: Annotated[Path | None, typer.Option("--results", "--out", help=RESULTS_OLD_HELP)] = None,
) -> None:
    """Measure JPEG decode + augment throughput (images/s per CPU core); one result each."""
    try:
        from benchmarks.env import usable_cores

        counts = (
            [usable_cores()]
            if workers is None
            else [int(w) for w in (p.strip() for p in workers.split(",")) if w.isdigit()]
        )
        if workers is not None and len(counts) != len(workers.split(",")):
            raise ValueError(f"--workers: {workers!r} is not N or a list like 0,1,2")
        if batch < 1 or batches < 1 or warmup < 0 or images < 1:
            raise ValueError("--batch, --batches and --images must be >= 1, --warmup >= 0")
    except ValueError as exc:
        abort(str(exc))
    try:
        from benchmarks.pipeline import PipelineOptions, run_pipeline
        from benchmarks.results import write_result
        from benchmarks.summary import new_run_id, utc_now
        from benchmarks.workload_names import PIPELINE_WORKLOAD
    except ImportError as exc:
        abort(f"the input-pipeline benchmark needs torch and Pillow ({exc})")
    out_dir = out or default_results_dir()
    _check_out_dir(out_dir)
    console = _console()
    for count in counts:
        options = PipelineOptions(
            workers=count, batch_size=batch, batches=batches, warmup_batches=warmup, images=images
        )
        run_id = new_run_id(PIPELINE_WORKLOAD, f"w{count}", "jpeg", "cpu", 1)
        try:
            result = run_pipeline(options, run_id, utc_now())
        except KeyboardInterrupt:
            abort("interrupted: no result written", 130)
        try:
            path = write_result(result, out_dir)
        except (OSError, ValueError) as exc:
            abort(f"cannot write the result into {shorten(out_dir)}: {exc}", 1)
        console.print(
            Text(
                f"{count} worker(s): {result.throughput:,.0f} images/s, "
                f"{result.samples_per_s_per_core:,.0f} images/s per core -> {path}"
            )
        )
