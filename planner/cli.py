"""`gpuplan`: plan GPU training cost and time from measured throughput and dated prices.

Commands: plan, workloads, estimate; `pricing` and `bench` are mounted from their packages.
Every command prints a table by default and takes `--format json|csv`. Bad input
gets `error: ...` with the valid choices and exit code 2, never a traceback.
"""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
import pandas as pd
import typer

from benchmarks.cli import app as bench_app
from benchmarks.cli import default_results_dir
from planner.plan import make_plan
from planner.throughput import own_and_published_results
from planner.workloads import WORKLOADS, get_workload
from pricing.catalog import (
    PRICING_KINDS,
    SnapshotError,
    check_choices,
    load_offers,
    unique_values,
)
from pricing.cli import app as pricing_app
from pricing.gpus import UnknownGPUError
from pricing.output import FORMATS, abort, emit

PRECISIONS = ("fp32", "tf32", "fp16", "bf16")

app = typer.Typer(
    help="gpuplan: which GPUs train this job fastest for the money, and how sure we are.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(pricing_app, name="pricing")
app.add_typer(bench_app, name="bench")

PLAN_TABLE_COLUMNS = (
    "rank",
    "provider",
    "region",
    "instance_type",
    "gpu_name",
    "gpu_count",
    "throughput",
    "throughput_source",
    "hours_to_train",
    "cost_usd",
    "usd_per_hour",
    "price_date",
)


@app.command("plan")
def plan(
    workload: Annotated[
        str,
        typer.Option(
            "--workload", "-w", help="catalog name (gpuplan workloads) or llm-<params>-<tokens>"
        ),
    ],
    precision: Annotated[str, typer.Option(help="fp32 | tf32 | fp16 | bf16")] = "fp16",
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
    """Rank every offer by cost to train a workload, with time and sources."""
    kind = "spot" if spot else pricing
    try:
        check_choices([fmt], FORMATS, "format")
        check_choices([precision], PRECISIONS, "precision")
        check_choices([kind], list(PRICING_KINDS), "pricing")
        chosen = get_workload(workload)
        offers = load_offers()
        check_choices(provider or [], unique_values(offers, "provider"), "provider")
        check_choices(region or [], unique_values(offers, "region"), "region")
        table, problems = own_and_published_results(
            results if results is not None else [str(default_results_dir())]
        )
        result = make_plan(chosen, precision, offers, table, kind, provider, region, gpu)
    except (SnapshotError, UnknownGPUError, ValueError) as exc:
        abort(str(exc))
        return
    rows = result.rows if top is None else result.rows.head(top)
    emit(
        rows,
        fmt,
        title=f"{chosen.name} ({precision}, {kind}): {len(result.rows)} options",
        table_columns=PLAN_TABLE_COLUMNS,
    )
    if fmt == "table":
        _notes(result.assumptions, result.warnings, problems)


def _notes(assumptions: tuple[str, ...], warnings: tuple[str, ...], problems: list[str]) -> None:
    from pricing.output import wide_console

    console = wide_console(stderr=True)
    for line in assumptions:
        console.print(f"[dim]assumption:[/] {line}", highlight=False)
    for line in [*warnings, *problems]:
        console.print(f"[yellow]warning:[/] {line}", highlight=False)


@app.command("workloads")
def workloads(
    fmt: Annotated[str, typer.Option("--format", help="table | json | csv")] = "table",
) -> None:
    """The workload catalog: samples to train and FLOPs per sample."""
    try:
        check_choices([fmt], FORMATS, "format")
    except ValueError as exc:
        abort(str(exc))
    frame = pd.DataFrame(
        [
            {
                "name": w.name,
                "model": w.model,
                "model_size": w.model_size,
                "samples": w.samples,
                "sample_unit": w.sample_unit,
                "flops_per_sample": w.flops_per_sample,
                "description": w.description,
                "source": w.source,
            }
            for w in WORKLOADS.values()
        ]
    )
    emit(
        frame,
        fmt,
        title="Workloads (LLMs: any llm-<params>-<tokens>, e.g. llm-7b-140b)",
        table_columns=("name", "samples", "sample_unit", "flops_per_sample", "description"),
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
            help="CSV of what to predict: gpu_model, num_gpus, model, precision [, spec_gpu_model]",
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
    from pathlib import Path

    from planner.estimate import fit_throughput_model, predict_throughput
    from planner.reference_io import InputFileError, read_queries, read_reference
    from planner.scaling import CommModel
    from pricing.catalog import atomic_write_text

    try:
        check_choices([fmt], FORMATS, "format")
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
        atomic_write_text(Path(output), result.to_csv(index=False, lineterminator="\n"))
    else:
        emit(
            result,
            fmt,
            title=f"{len(result)} predictions from {len(ref.rows)} reference rows",
            table_columns=("gpu_model", "num_gpus", "model", "precision", *ESTIMATE_COLUMNS),
        )
    _estimate_notes(model, ref, result, output)


def _estimate_notes(model: Any, ref: Any, result: pd.DataFrame, output: str | None) -> None:
    from pricing.output import wide_console

    console = wide_console(stderr=True)
    counts = result["method"].value_counts().to_dict()
    done = ", ".join(f"{v} {k}" for k, v in counts.items())
    if output:
        console.print(f"wrote {output}: {len(result)} rows ({done})", highlight=False)
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
        console.print(
            "[yellow]warning:[/] REF GPUs with no spec row, used only for queries naming "
            f"them: {', '.join(ref.unresolved_gpus)}",
            highlight=False,
        )
    missing = int((result["method"] == "none").sum())
    if missing:
        console.print(
            f"[yellow]warning:[/] {missing} queries got no prediction (see method_detail)",
            highlight=False,
        )


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
