"""`gpuplan`: plan GPU training cost and time from measured throughput and dated prices.

Commands: plan, workloads, estimate, estimate-llm, tco, app; `pricing`, `bench` and `sweep`
are mounted from their packages; `--version` prints the version.
Every command prints a table by default and takes `--format json|csv`. Bad input
gets `error: ...` with the valid choices and exit code 2, never a traceback.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

# Only light modules at the top: `gpuplan --help` and `--version` must not load pandas,
# numpy or scipy (tests/test_cli_startup.py); commands import the engine when they run.
from benchmarks.cli import app as bench_app
from benchmarks.cli import default_results_dir
from benchmarks.sweep.cli import make_app as make_sweep_app
from edge.console import abort, text_console, warn
from planner.defaults import (
    DEFAULT_CHECKPOINT_HOURS,
    DEFAULT_DRAWS,
    DEFAULT_MAX_GPUS,
    DEFAULT_RESTART_HOURS,
)
from planner.io.validate import check_flags, check_output_path, shorten, warn_lines
from pricing.cli import app as pricing_app
from pricing.cli import tier_option_help
from pricing.output import FORMATS, emit

if TYPE_CHECKING:
    import pandas as pd

    from planner.costs.overheads import JobOverheads
    from planner.onprem.tco import OnPremConfig
    from planner.plan import Plan

# The flag that sets each PlanRequest field, to name it in errors.
REQUEST_FLAGS = {
    "deadline_hours": "--deadline-hours",
    "budget_usd": "--budget-usd",
    "max_gpus": "--max-gpus",
    "draws": "--draws",
    "seed": "--seed",
    "checkpoint_hours": "--checkpoint-minutes",
    "restart_hours": "--restart-minutes",
    "interruption_rates": "--interruption-rate",
    "precision": "--precision",
    "pricing": "--pricing",
    "tiers": "--tier",
    "reserved_discount": "--reserved-discount",
}

app = typer.Typer(
    help="gpuplan: which GPUs train this job fastest for the money, and how sure we are.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(pricing_app, name="pricing")
app.add_typer(bench_app, name="bench")


def package_version() -> str:
    """The installed gpuplan's version (importlib.metadata), or 'unknown' from a bare checkout."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gpuplan")
    except PackageNotFoundError:
        return "unknown (not installed: pip install -e .)"


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"gpuplan {package_version()}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="print the version and exit"
        ),
    ] = False,
) -> None:
    """gpuplan: which GPUs train this job fastest for the money, and how sure we are."""


def _sweep_data() -> Any:
    from planner.io.sweep_data import CatalogSweepData

    return CatalogSweepData()


app.add_typer(make_sweep_app(_sweep_data), name="sweep")


@app.command("plan")
def plan(
    workload: Annotated[
        str,
        typer.Option(
            "--workload",
            "-w",
            help="catalog name (gpuplan workloads) or llm-<params>[-finetune|-lora|-qlora]"
            "-<tokens>",
        ),
    ],
    precision: Annotated[
        str, typer.Option(help="fp32 | tf32 | fp16 | bf16 | fp8 (LLMs on fp8 GPUs)")
    ] = "fp16",
    provider: Annotated[
        list[str] | None,
        typer.Option("--provider", help="aws, gcp, azure, lambda, ...; repeatable"),
    ] = None,
    region: Annotated[list[str] | None, typer.Option("--region", help="repeatable")] = None,
    gpu: Annotated[
        list[str] | None, typer.Option("--gpu", help="GPU name or family; repeatable")
    ] = None,
    spot: Annotated[bool, typer.Option("--spot", help="price at spot (= --pricing spot)")] = False,
    pricing: Annotated[
        str, typer.Option(help="on-demand | spot | reserved-1y | reserved-3y")
    ] = "on-demand",
    tier: Annotated[list[str] | None, typer.Option("--tier", help=tier_option_help())] = None,
    include_retired: Annotated[
        bool,
        typer.Option("--include-retired", help="also weigh sizes the provider no longer sells"),
    ] = False,
    reserved_discount: Annotated[
        float | None,
        typer.Option(
            help="reserved pricing: where no reserved price is listed, assume on-demand less "
            "this fraction (0.35 = 35%; labelled an assumption in every row it touches)"
        ),
    ] = None,
    deadline_hours: Annotated[
        float | None, typer.Option("--deadline-hours", help="finish within this many hours")
    ] = None,
    budget_usd: Annotated[
        float | None, typer.Option("--budget-usd", help="spend at most this many USD")
    ] = None,
    max_gpus: Annotated[
        int, typer.Option("--max-gpus", help="most GPUs one option may use (all instances)")
    ] = DEFAULT_MAX_GPUS,
    onprem: Annotated[
        list[str] | None,
        typer.Option(
            "--onprem",
            help="on-prem config TOML (examples/onprem-dgx-h100.toml) to weigh as options; "
            "repeatable",
        ),
    ] = None,
    interruption_rate: Annotated[
        list[str] | None,
        typer.Option(
            "--interruption-rate",
            help="PROVIDER=RATE spot interruptions per instance-hour (e.g. aws=0.01), "
            "instead of the documented default; repeatable",
        ),
    ] = None,
    checkpoint_minutes: Annotated[
        float, typer.Option(help="minutes to write one checkpoint (spot)")
    ] = DEFAULT_CHECKPOINT_HOURS * 60,
    restart_minutes: Annotated[
        float, typer.Option(help="minutes to restart after an interruption (spot)")
    ] = DEFAULT_RESTART_HOURS * 60,
    startup_minutes: Annotated[
        float | None,
        typer.Option(
            help="minutes from request to training: provisioning + environment start "
            "(default: per provider, see README)"
        ),
    ] = None,
    staging_gbps: Annotated[
        float | None,
        typer.Option(help="Gb/s to copy the dataset to each instance; 0 = already there"),
    ] = None,
    checkpoint_every_hours: Annotated[
        float, typer.Option(help="hours between checkpoint writes; 0 = none")
    ] = 1.0,
    seed: Annotated[int, typer.Option(help="Monte Carlo seed (same seed, same figures)")] = 0,
    draws: Annotated[int, typer.Option(help="Monte Carlo draws for spot rows")] = DEFAULT_DRAWS,
    recompute: Annotated[
        str, typer.Option(help="LLM activation recomputation: auto | none | selective | full")
    ] = "auto",
    global_batch_tokens: Annotated[
        float | None,
        typer.Option(
            help="LLM tokens per optimizer step, all GPUs (default 4,194,304 for pre-training, "
            "262,144 for fine-tuning)"
        ),
    ] = None,
    seq_len: Annotated[
        int | None, typer.Option(help="LLM sequence length in tokens (default 2048)")
    ] = None,
    n_layer: Annotated[
        int | None, typer.Option(help="LLM layers (default: the preset's or GPT-3-like)")
    ] = None,
    d_model: Annotated[
        int | None, typer.Option(help="LLM width (default: the preset's or GPT-3-like)")
    ] = None,
    view: Annotated[
        str,
        typer.Option(
            help="what to print: rows (picks, binding constraints, one row per offer) | "
            "picks | frontier | options (every count) | constraints"
        ),
    ] = "rows",
    wide: Annotated[
        bool, typer.Option("--wide", help="tables: every column, however wide")
    ] = False,
    explain: Annotated[
        bool,
        typer.Option("--explain", help="every assumption, own result and warning in full"),
    ] = False,
    top: Annotated[int | None, typer.Option(help="show the N best rows")] = None,
    results: Annotated[
        list[str] | None,
        typer.Option(
            "--results",
            help="folder of own benchmark results (default $GPUPLAN_RESULTS_DIR "
            "or ./results); repeatable",
        ),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="table | json | csv")] = "table",
) -> None:
    """Plan a training run: every offer at its best GPU count, the time/cost frontier and picks.

    Each offer (and --onprem config) is weighed at 1, 2, 4, ... instances up to --max-gpus;
    its row is the count that meets --deadline-hours at the least cost. Rows say where the
    throughput came from and carry P10-P90 hours and cost; * marks the Pareto frontier.
    """
    from planner.choose.constraints import parse_rates
    from planner.llm.throughput import LLMMemoryError, LLMSettings
    from planner.onprem.tco import OnPremConfigError, load_onprem_config
    from planner.plan import make_plan
    from planner.render.llm import no_fit_text, with_llm_details
    from planner.render.notes import notes_text
    from planner.render.plan_tables import VIEWS
    from planner.render.plan_words import worded_picks, worded_status
    from planner.render.rows import worded_rows
    from planner.request import PRECISIONS, PlanRequest, RequestError
    from planner.throughput import own_and_published_results
    from planner.workloads.catalog import get_workload, reshape_llm
    from pricing.catalog import (
        PRICING_KINDS,
        SnapshotError,
        check_choices,
        load_offers,
        unique_values,
    )
    from pricing.gpus import UnknownGPUError

    kind = "spot" if spot else pricing
    try:
        check_choices([fmt], FORMATS, "format")
        check_choices([view], VIEWS, "view")
        check_choices([precision], PRECISIONS, "precision")
        check_choices([kind], list(PRICING_KINDS), "pricing")
        if top is not None and top < 1:
            raise ValueError(f"--top {top}: it must be >= 1")
        check_flags(
            {
                "--checkpoint-minutes": checkpoint_minutes,
                "--restart-minutes": restart_minutes,
                "--global-batch-tokens": global_batch_tokens,
                "--seq-len": seq_len,
                "--n-layer": n_layer,
                "--d-model": d_model,
            }
        )
        settings = LLMSettings(recompute=recompute, global_batch_tokens=global_batch_tokens)
        chosen = get_workload(workload)
        shaped = seq_len is not None or n_layer is not None or d_model is not None
        if shaped:
            chosen = reshape_llm(chosen, seq_len, n_layer, d_model)
        offers = load_offers()
        check_choices(provider or [], unique_values(offers, "provider"), "provider")
        check_choices(region or [], unique_values(offers, "region"), "region")
        try:
            rates = parse_rates(interruption_rate or [], unique_values(offers, "provider"))
        except ValueError as exc:
            raise ValueError(f"--interruption-rate {exc}") from None
        loaded = [load_onprem_config(path) for path in onprem or []]
        table, problems = own_and_published_results(
            results if results is not None else [str(default_results_dir())]
        )
        request = PlanRequest(
            workload=chosen,
            precision=precision,
            pricing=kind,
            providers=tuple(provider or ()),
            regions=tuple(region or ()),
            gpus=tuple(gpu or ()),
            deadline_hours=deadline_hours,
            budget_usd=budget_usd,
            max_gpus=max_gpus,
            onprem=tuple(c.config for c in loaded),
            onprem_sources=tuple(c.path for c in loaded),
            seed=seed,
            draws=draws,
            interruption_rates=tuple(rates.items()),
            checkpoint_hours=checkpoint_minutes / 60,
            restart_hours=restart_minutes / 60,
            llm=settings,
            tiers=tuple(tier or ()),
            include_retired=include_retired,
            reserved_discount=reserved_discount,
            overheads=_overheads(startup_minutes, staging_gbps, checkpoint_every_hours),
        )
        result = with_llm_details(make_plan(request, offers, table))
    except RequestError as exc:
        abort(f"{REQUEST_FLAGS.get(exc.field, exc.field)}: {exc.message}")
        return
    except LLMMemoryError as exc:
        abort(no_fit_text(exc))
        return
    except (OnPremConfigError, SnapshotError, UnknownGPUError, ValueError) as exc:
        abort(str(exc))
        return
    if precision == "fp8" and result.rows.empty:
        abort(
            "--precision fp8: none of the GPUs offered has fp8 tensor cores (no fp8 peak in "
            "planner/data/gpu_specs.csv; fp8 needs Hopper, Ada, Blackwell, MI300 or Gaudi); "
            "use bf16, or choose such GPUs with --gpu"
        )
        return
    if fmt != "table":
        warn_lines([*notes_text(result.notes), *problems])
        chosen_view = {
            "rows": worded_rows(result.rows if top is None else result.rows.head(top)),
            "picks": worded_picks(result),
            "frontier": worded_rows(result.frontier),
            "options": result.options,
            "constraints": worded_status(result),
        }[view]
        emit(chosen_view, fmt)
        return
    from planner.render.plan_tables import print_plan

    print_plan(
        result,
        view,
        top,
        wide=wide,
        explain=explain,
        problems=problems,
        explanations=_explanations(result),
    )


def _overheads(
    startup_minutes: float | None, staging_gbps: float | None, checkpoint_every_hours: float
) -> JobOverheads:
    """The job-overhead overrides, each refused with its flag when negative."""
    from planner.costs.overheads import JobOverheads

    for flag, value in (
        ("--startup-minutes", startup_minutes),
        ("--staging-gbps", staging_gbps),
        ("--checkpoint-every-hours", checkpoint_every_hours),
    ):
        if value is not None and not value >= 0:
            raise ValueError(f"{flag} {value:g}: it must be >= 0")
    return JobOverheads(startup_minutes, staging_gbps, checkpoint_every_hours)


def _explanations(result: Plan) -> list[str]:
    """Words for the picks' time split and for shown rows whose throughput a limit caps."""
    from planner.render.plan_tables import PICK_LABELS
    from planner.throughput.explain import explain_limit, explain_time

    unit = result.workload.throughput_unit
    lines = []
    for row in result.picks.to_dict(orient="records") if len(result.picks) else []:
        name = PICK_LABELS.get(str(row["pick"]), str(row["pick"]))
        what = f"{row['provider']} {row['instance_type']} x{row['instances']:g}"
        lines.append(f"{name} ({what}): {explain_time(row)}")
        limit = explain_limit(row, unit)
        if limit:
            lines.append(f"  {limit}")
    bound = result.rows.loc[result.rows["limit_code"] == "cpu-bound"]
    for row in bound.head(5).to_dict(orient="records"):
        lines.append(f"rank {row['rank']} {row['instance_type']}: {explain_limit(row, unit)}")
    if len(bound) > 5:
        lines.append(f"... and {len(bound) - 5} more CPU-bound rows (limit_code in --format csv)")
    return lines


@app.command("workloads")
def workloads(
    fmt: Annotated[str, typer.Option("--format", help="table | json | csv")] = "table",
) -> None:
    """The workload catalog: samples to train and FLOPs per sample."""
    import pandas as pd

    from planner.workloads.catalog import WORKLOADS
    from pricing.catalog import check_choices

    try:
        check_choices([fmt], FORMATS, "format")
    except ValueError as exc:
        abort(str(exc))
    frame = pd.DataFrame(
        [
            {
                "name": w.name,
                "kind": w.kind,
                "target": w.target,
                "global_batch_cap": w.global_batch_cap,
                "model": w.model,
                "model_size": w.model_size,
                "samples": w.samples,
                "sample_unit": w.sample_unit,
                "flops_per_sample": w.flops_per_sample,
                "mode": w.llm_mode if w.is_llm else "",
                "params": w.params if w.is_llm else None,
                "description": w.description,
                "source": w.source,
            }
            for w in WORKLOADS.values()
        ]
    )
    emit(
        frame,
        fmt,
        title="Workloads (LLMs: any llm-<params>[-finetune|-lora|-qlora]-<tokens>, e.g. "
        "llm-7b-140b, llm-69b-lora-1b; presets are named by their true size)",
        table_columns=(
            "name",
            "kind",
            "mode",
            "samples",
            "sample_unit",
            "flops_per_sample",
            "description",
        ),
    )


ESTIMATE_COLUMNS = ("predicted_throughput", "predicted_low", "predicted_high", "method")


@app.command("estimate")
def estimate(
    reference: Annotated[
        str,
        typer.Option(
            "--reference",
            help="CSV of measured figures: gpu_model, num_gpus, model, precision, throughput "
            "(rows with a non-empty flag are skipped)",
        ),
    ],
    queries: Annotated[
        str,
        typer.Option(
            "--queries",
            help="CSV of what to predict: gpu_model, num_gpus, model, precision [, spec_gpu_model, "
            "gpus_per_node, network_gbps, global_batch: per-row overrides]",
        ),
    ],
    output: Annotated[
        str | None,
        typer.Option("--output", help="write Q plus predictions here (CSV) instead of stdout"),
    ] = None,
    network_gbps: Annotated[
        float, typer.Option(help="network bandwidth per node in Gb/s, beyond one node")
    ] = 400.0,
    gpus_per_node: Annotated[int, typer.Option(help="GPUs per node (NVLink/PCIe domain)")] = 8,
    overlap: Annotated[
        float, typer.Option(help="fraction of compute time that hides communication, 0-1")
    ] = 0.0,
    fmt: Annotated[str, typer.Option("--format", help="table | json | csv")] = "table",
) -> None:
    """Predict throughput for any GPU, count, model and precision from a reference file.

    Counts present in REF for that GPU use the figure; other counts use the scaling law
    fitted to that GPU; GPUs absent from REF use the spec regression. Only REF and the
    bundled spec table are used. Output: Q plus predicted_throughput, predicted_low,
    predicted_high (80% band), method (measured | scaled | estimated), method_detail.
    """
    from planner.throughput.estimate import fit_throughput_model, predict_throughput
    from planner.throughput.reference_io import InputFileError, read_queries, read_reference
    from planner.throughput.scaling import CommModel
    from pricing.catalog import check_choices

    try:
        check_choices([fmt], FORMATS, "format")
        check_flags(
            {
                "--network-gbps": network_gbps,
                "--gpus-per-node": gpus_per_node,
                "--overlap": overlap,
            }
        )
        if output:
            check_output_path(output)
        comm = CommModel(
            network_gbps_per_node=network_gbps, gpus_per_node=gpus_per_node, overlap=overlap
        )
        ref = read_reference(reference)
        raw, rows = read_queries(queries, ref)
    except (InputFileError, ValueError) as exc:
        abort(str(exc))
        return
    model = fit_throughput_model(ref.rows, comm=comm)
    predicted = predict_throughput(model, rows)
    result = raw.copy()
    result["predicted_throughput"] = predicted["throughput"].to_numpy()
    result["predicted_low"] = predicted["throughput_low"].to_numpy()
    result["predicted_high"] = predicted["throughput_high"].to_numpy()
    result["method"] = predicted["throughput_source"].to_numpy()
    result["method_detail"] = predicted["throughput_detail"].to_numpy()
    if output:
        _write_csv(output, result)
    else:
        emit(
            _for_format(result, fmt),
            fmt,
            title=f"{len(result)} predictions from {len(ref.rows)} reference rows",
            table_columns=("gpu_model", "num_gpus", "model", "precision", *ESTIMATE_COLUMNS),
        )
    _estimate_notes(model, ref, result, output)


def _write_csv(output: str, frame: pd.DataFrame) -> None:
    """`frame` into the file `output` as spreadsheet-safe CSV (planner.render.spreadsheet),
    through a temporary file and a rename; exit 1 when it cannot be written."""
    from pathlib import Path

    from planner.render.spreadsheet import csv_text
    from pricing.catalog import atomic_write_text

    try:
        atomic_write_text(Path(output), csv_text(frame))
    except OSError as exc:
        abort(f"--output {shorten(output)}: cannot be written ({exc.strerror or exc})", 1)


def _for_format(frame: pd.DataFrame, fmt: str) -> pd.DataFrame:
    """`frame` to emit as `fmt`: for csv, spreadsheet-safe (planner.render.spreadsheet)."""
    if fmt != "csv":
        return frame
    from planner.render.spreadsheet import spreadsheet_safe

    return spreadsheet_safe(frame)


def _estimate_notes(model: Any, ref: Any, result: pd.DataFrame, output: str | None) -> None:
    import numpy as np

    console = text_console(stderr=True)
    counts = result["method"].value_counts().to_dict()
    done = ", ".join(f"{v} {k}" for k, v in counts.items())
    if output:
        console.print(Text(f"wrote {output}: {len(result)} rows ({done})"))
    glob = model.scaling.global_chosen
    if np.isfinite(glob["heldout_mape"]):
        console.print(
            f"[dim]scaling:[/] {glob['law']} law chosen by held-out error "
            f"({glob['heldout_mape']:.1%} MAPE predicting each GPU's largest count)",
            highlight=False,
        )
    else:
        console.print(
            "[dim]scaling:[/] no GPU has three counts to hold one out: "
            f"{glob['law']} law by default",
            highlight=False,
        )
    if model.estimator is not None:
        cv = model.estimator.bands.set_index("kind")
        pooled = cv.loc[model.estimator.bands["model"].eq("").to_numpy()]
        if "logo" in pooled.index:
            console.print(
                f"[dim]estimates:[/] spec regression, leave-one-GPU-out error "
                f"{pooled.loc['logo', 'mape']:.1%} MAPE",
                highlight=False,
            )
    if ref.skipped_flagged:
        console.print(f"[dim]skipped:[/] {ref.skipped_flagged} flagged REF rows", highlight=False)
    if ref.unresolved_gpus:
        warn(
            "REF GPUs with no spec row, used only for queries naming them: "
            + shorten(", ".join(ref.unresolved_gpus), 1000)
        )
    missing = int((result["method"] == "none").sum())
    if missing:
        warn(f"{missing} queries got no prediction (see method_detail)")


@app.command("estimate-llm")
def estimate_llm(
    queries: Annotated[
        str,
        typer.Option(
            "--queries",
            help="CSV: params, seq_len, num_gpus, gpu_model, precision [, n_layer, d_model, "
            "global_batch_tokens, gpus_per_node, network_gbps, mode]",
        ),
    ],
    output: Annotated[
        str | None,
        typer.Option("--output", help="write Q plus predictions here (CSV) instead of stdout"),
    ] = None,
    network_gbps: Annotated[
        float, typer.Option(help="network Gb/s per node where a row gives none")
    ] = 400.0,
    gpus_per_node: Annotated[
        int, typer.Option(help="GPUs per node (NVLink/PCIe domain) where a row gives none")
    ] = 8,
    recompute: Annotated[str, typer.Option(help="auto | none | selective | full")] = "auto",
    zero: Annotated[str, typer.Option(help="auto | zero1 | zero3")] = "auto",
    flash_attention: Annotated[
        bool, typer.Option(help="attention without stored scores (Dao et al. 2022)")
    ] = True,
    results: Annotated[
        list[str] | None,
        typer.Option(
            "--results",
            help="folder of own benchmark results whose GPT runs' MFU replaces the literature "
            "prior on their GPUs; repeatable (default: none, only Q and the spec table)",
        ),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="table | json | csv")] = "table",
) -> None:
    """Predict LLM training tokens/s: the fastest tensor/pipeline/data-parallel layout that fits.

    Output: Q plus tokens_per_s (all GPUs), tokens_per_s_low, tokens_per_s_high (80% band),
    mfu, layout (e.g. tp8 pp2 dp4 zero1 mb1), fits, method (scaled | estimated | none),
    method_detail. Uses only Q and the bundled spec table, and --results where given.
    """
    import pandas as pd

    from planner.llm.estimate import (
        DETAIL_COLUMNS,
        LLMQueryError,
        estimate_llm,
        read_llm_queries,
    )
    from planner.llm.throughput import LLMSettings, gpt_mfu_figures
    from planner.render.llm import estimate_detail
    from planner.throughput import own_and_published_results
    from pricing.catalog import check_choices

    try:
        check_choices([fmt], FORMATS, "format")
        check_flags({"--network-gbps": network_gbps, "--gpus-per-node": gpus_per_node})
        if output:
            check_output_path(output)
        settings = LLMSettings(recompute=recompute, zero=zero, flash_attention=flash_attention)
        raw, rows = read_llm_queries(queries)
        figures: dict[str, pd.DataFrame] = {}
        problems: list[str] = []
        if results:
            table, problems = own_and_published_results(results)
            figures = {q.precision: gpt_mfu_figures(table, q.precision)[0] for q in rows}
    except (LLMQueryError, ValueError) as exc:
        abort(str(exc))
        return
    predicted = estimate_llm(rows, gpus_per_node, network_gbps, settings, figures)
    # Each row whole: the words name its layout and MFU too, not only DETAIL_COLUMNS.
    records = predicted.to_dict(orient="records")
    predicted = predicted.drop(columns=list(DETAIL_COLUMNS)).assign(
        method_detail=[estimate_detail(r) for r in records]
    )
    for line in problems:
        warn(line)
    result = pd.concat([raw.reset_index(drop=True), predicted], axis=1)
    if output:
        _write_csv(output, result)
        fits = int(result["fits"].sum())
        text_console(stderr=True).print(
            Text(f"wrote {output}: {len(result)} rows ({fits} fit, {len(result) - fits} do not)")
        )
        return
    shown = result.copy()
    if fmt == "table":
        shown["tokens_per_s"] = [
            f"{v:,.0f}" if math.isfinite(v) else "-" for v in shown["tokens_per_s"]
        ]
        shown["mfu"] = [f"{v:.0%}" if math.isfinite(v) else "-" for v in shown["mfu"]]
    emit(
        _for_format(shown, fmt),
        fmt,
        title=f"{len(result)} LLM predictions (tokens/s over all GPUs; layout search)",
        table_columns=(
            "params",
            "seq_len",
            "num_gpus",
            "gpu_model",
            "precision",
            "tokens_per_s",
            "mfu",
            "layout",
            "fits",
            "method",
        ),
    )


TCO_COMPARE_COLUMNS = ("ref", "gpu_name", "pricing", "usd_per_gpu_hour", "cheaper")


@app.command("tco")
def tco(
    config: Annotated[
        str, typer.Option("--config", "-c", help="on-prem TOML (examples/onprem-dgx-h100.toml)")
    ],
    compare: Annotated[
        list[str] | None,
        typer.Option(
            "--compare",
            help="provider:region:instance_type, provider:instance_type (cheapest region) or a "
            "GPU name (its cheapest offer); repeatable. Default: the cheapest offer of the "
            "config's GPU from each provider",
        ),
    ] = None,
    pricing: Annotated[
        str, typer.Option(help="cloud price: on-demand | spot | reserved-1y | reserved-3y")
    ] = "on-demand",
    reserved_discount: Annotated[
        float | None,
        typer.Option(
            help="reserved pricing: where no reserved price is listed, assume on-demand less "
            "this fraction (0.35 = 35%; labelled an assumption)"
        ),
    ] = None,
    utilization: Annotated[
        float | None, typer.Option(help="0 < U <= 1; overrides the config's utilization")
    ] = None,
    monthly_gpu_hours: Annotated[
        float | None,
        typer.Option(help="demand for break-even months (default: capacity x utilization)"),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="table | json | csv")] = "table",
    wide: Annotated[
        bool, typer.Option("--wide", help="tables: every column, however wide")
    ] = False,
    explain: Annotated[
        bool, typer.Option("--explain", help="every assumption and defaulted field in full")
    ] = False,
) -> None:
    """On-prem amortized $/GPU-hour, and break-even utilization and months against cloud offers."""
    from planner.onprem.tco import OnPremConfigError, check_value, load_onprem_config, tco_table
    from pricing.catalog import PRICING_KINDS, SnapshotError, check_choices, load_offers
    from pricing.gpus import UnknownGPUError
    from pricing.refs import OfferRefError, cheapest_per_provider, resolve_offer_refs
    from pricing.reserved import (
        RESERVED_KINDS,
        has_kind_price,
        no_reserved_message,
        with_reserved_discount,
    )

    try:
        check_choices([fmt], FORMATS, "format")
        check_choices([pricing], list(PRICING_KINDS), "pricing")
    except ValueError as exc:
        abort(str(exc))
    if utilization is not None:
        try:
            check_value("utilization", utilization)
        except OnPremConfigError as exc:
            abort(f"--utilization {utilization:g}: {exc.message}")
    try:
        check_flags({"--monthly-gpu-hours": monthly_gpu_hours})
    except ValueError as exc:
        abort(str(exc))
    try:
        loaded = load_onprem_config(config)
        onprem = loaded.config
        if utilization is not None:
            onprem = onprem.with_utilization(utilization)
        offers = load_offers()
        if reserved_discount is not None:
            offers = with_reserved_discount(offers, pricing, reserved_discount)
        elif pricing in RESERVED_KINDS and not has_kind_price(offers, pricing):
            raise ValueError(no_reserved_message(pricing))
        if compare:
            chosen = resolve_offer_refs(offers, compare, pricing)
        else:
            chosen = cheapest_per_provider(offers, onprem.gpu_name, pricing)
            if chosen.empty:
                raise ValueError(
                    f"no {pricing} price for {onprem.gpu_name} in the snapshot to compare with; "
                    "try --pricing on-demand, or name offers with --compare"
                )
        rows = tco_table(onprem, chosen, monthly_gpu_hours, source=str(config))
    except OnPremConfigError as exc:
        if exc.field == "monthly_gpu_hours":
            abort(f"--monthly-gpu-hours {monthly_gpu_hours:g}: {exc.message}")
        abort(str(exc))
        return
    except (OfferRefError, SnapshotError, UnknownGPUError, ValueError) as exc:
        abort(str(exc))
        return
    warnings = [
        f"{ref} has {gpu}, not {onprem.gpu_name}: its price per GPU-hour buys different work"
        for ref, gpu in zip(rows["ref"].iloc[1:], rows["gpu_name"].iloc[1:], strict=True)
        if gpu != onprem.gpu_name
    ]
    if pricing == "spot":
        warnings.append(
            "spot prices are per hour of capacity: interruptions add lost work and restarts "
            "(planner.costs.spot overhead factor), not included here"
        )
    if fmt != "table":
        from planner.render.tco_tables import worded_tco

        emit(worded_tco(rows), fmt)
        warn_lines(warnings)
        return
    from planner.render.tco_tables import print_tco

    print_tco(
        onprem,
        rows,
        _tco_assumptions(onprem),
        loaded.defaulted_notes(),
        warnings,
        wide=wide,
        explain=explain,
    )


def _tco_assumptions(onprem: OnPremConfig) -> list[str]:
    from planner.onprem.tco import COMPONENTS

    return [
        f"Power: {onprem.power_basis}.",
        "Capex straight-line over the lifetime, no salvage value, no cost of capital; "
        f"components: {', '.join(COMPONENTS)}; a year is 8760 h, a month 730 h.",
        "Break-even utilization: where amortized on-prem $/GPU-h equals the cloud's; "
        "break-even months: when cumulative cloud spend for the demand exceeds capex plus "
        "cumulative running cost.",
    ]


APP_EXTRA_HINT = "pip install 'gpuplan[app]'"


@app.command(
    "app",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def serve_app(
    ctx: typer.Context,
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port to listen on (0 < port < 65536)")] = 8501,
) -> None:
    """Start the web app (Streamlit) in this terminal; needs pip install 'gpuplan\\[app]'.

    Other options go to `streamlit run` as written, e.g. --server.headless true.
    """
    import importlib.util
    import os
    from importlib.resources import files

    missing = [name for name in ("streamlit", "plotly") if importlib.util.find_spec(name) is None]
    if missing:
        abort(
            f"the app needs {' and '.join(missing)}, which are not installed: {APP_EXTRA_HINT}",
            code=1,
        )
    if not 0 < port < 65536:
        abort(f"--port {port}: it must be between 1 and 65535")
    script = files("planner.ui").joinpath("app_main.py")
    command = streamlit_argv(str(script), host, port, ctx.args)
    sys.stdout.flush()
    # Replace this process: Ctrl-C and signals reach the server directly.
    os.execv(sys.executable, command)


def streamlit_argv(script: str, host: str, port: int, extra: Sequence[str] = ()) -> list[str]:
    """The `python -m streamlit run` command line `gpuplan app` runs: `script` served on
    `host`:`port`, uploads refused above planner.ui.uploads.MAX_UPLOAD_MB megabytes (the
    intake's per-file limit, rounded up to Streamlit's whole MB of 1024 x 1024 bytes) by
    Streamlit itself, before a file is held in memory; `extra` goes last, as written."""
    from planner.ui.uploads import MAX_UPLOAD_MB

    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        script,
        "--server.address",
        host,
        "--server.port",
        str(port),
        "--server.maxUploadSize",
        str(MAX_UPLOAD_MB),
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--client.toolbarMode",
        "minimal",
        *extra,
    ]


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
