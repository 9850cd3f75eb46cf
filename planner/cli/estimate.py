"""`gpuplan estimate` and `gpuplan estimate-llm`: predictions for a file of queries (Q).

estimate fits the throughput model to a reference file and predicts each query;
estimate-llm searches each LLM query's fastest parallel layout. Both write Q plus the
predictions to stdout (--format) or to --output as spreadsheet-safe CSV. The engine is
imported when a command runs: `gpuplan --help` loads no pandas.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from edge.console import abort, text_console, warn, working
from edge.output import emit
from planner.cli.options import (
    Attention,
    DPOverlap,
    Eager,
    Format,
    Fp8Recipe,
    FP32Reduce,
    MoEOverlap,
    Output,
    TPOverlap,
    abort_on_value_error,
    check_format,
)
from planner.io.validate import check_flags, check_output_path, shorten
from planner.llm.frameworks import DEFAULT_FRAMEWORK

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import Console

    from planner.llm.estimate import LLMQuery
    from planner.settings import LLMSettings
    from planner.throughput.estimate import ThroughputModel
    from planner.throughput.reference_io import Reference

ESTIMATE_COLUMNS = ("predicted_throughput", "predicted_low", "predicted_high", "method")
# predicted column <- the column of planner.throughput.estimate.predict_throughput's answer
PREDICTED_FROM = {
    "predicted_throughput": "throughput",
    "predicted_low": "throughput_low",
    "predicted_high": "throughput_high",
    "method": "throughput_source",
    "method_detail": "throughput_detail",
}
LLM_TABLE_COLUMNS = (
    "params",
    "active_params",  # the query file's own columns, where it has them
    "seq_len",
    "num_gpus",
    "gpu_model",
    "precision",
    "framework",
    "eager",  # the query file's own, where it has one
    "mode",
    "tokens_per_s",
    "p10_p90",
    "mfu",
    "layout",
    "fits",
    "method",
)


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
    output: Output = None,
    network_gbps: Annotated[
        float, typer.Option(help="network bandwidth per node in Gb/s, beyond one node")
    ] = 400.0,
    gpus_per_node: Annotated[int, typer.Option(help="GPUs per node (NVLink/PCIe domain)")] = 8,
    overlap: Annotated[
        float, typer.Option(help="fraction of compute time that hides communication, 0-1")
    ] = 0.0,
    fmt: Format = "table",
) -> None:
    """Predict throughput for any GPU, count, model and precision from a reference file.

    Counts present in REF for that GPU use the figure; other counts use the scaling law
    fitted to that GPU; GPUs absent from REF use the spec regression. Only REF and the
    bundled spec table are used. Output: Q plus predicted_throughput, predicted_low,
    predicted_high (80% band), method (measured | scaled | estimated), method_detail.
    """
    from planner.io.examples import input_path
    from planner.settings import CommModel
    from planner.throughput.estimate import fit_throughput_model, predict_throughput
    from planner.throughput.reference_io import read_queries, read_reference

    with abort_on_value_error():  # an InputFileError names the file, line and field
        flags = {"--network-gbps": network_gbps, "--gpus-per-node": gpus_per_node}
        _check_output_flags(fmt, output, {**flags, "--overlap": overlap})
        comm = CommModel(
            network_gbps_per_node=network_gbps, gpus_per_node=gpus_per_node, overlap=overlap
        )
        ref = read_reference(input_path(reference))
        raw, rows = read_queries(input_path(queries), ref)
    with working(f"fitting the throughput model to {len(ref.rows):,} reference rows"):
        model = fit_throughput_model(ref.rows, comm=comm)
        predicted = predict_throughput(model, rows, numbers=True)
    result = raw.copy()
    for column, source in PREDICTED_FROM.items():
        result[column] = predicted[source].to_numpy()
    result["method_detail"] = _with_step_words(result["method_detail"], predicted, rows)
    if output:
        _write_csv(output, result)
    else:
        title = f"{len(result)} predictions from {len(ref.rows)} reference rows"
        columns = ("gpu_model", "num_gpus", "model", "precision", *ESTIMATE_COLUMNS)
        _emit(result, fmt, title, columns)
    _estimate_notes(model, ref, result, output)


def _with_step_words(details: pd.Series, predicted: pd.DataFrame, rows: pd.DataFrame) -> list[str]:
    """Each row's detail plus the step model's small-batch penalty and exposed all-reduce."""
    from planner.render.explain import explain_step

    steps = predicted.assign(total_gpus=rows["total_gpus"].to_numpy(float))
    out = []
    for detail, row in zip(details, steps.to_dict(orient="records"), strict=True):
        words = explain_step(row)
        out.append(f"{detail}; {words}" if words else str(detail))
    return out


def estimate_llm(
    queries: Annotated[
        str,
        typer.Option(
            "--queries",
            help="CSV: params, seq_len, num_gpus, gpu_model, precision [, n_layer, d_model, "
            "ffn, heads, kv_heads, vocab, mlp, embeddings, global_batch_tokens, "
            "gpus_per_node, network_gbps, mode, framework, eager, fp8_recipe, attention; MoE: "
            "active_params, experts, top_k, shared_experts, expert_ffn, moe_overlap; dp_overlap, "
            "tp_overlap, fp32_reduce; board_gpus (a switchless board's GPUs, as a 4-GPU HGX "
            "server's); your own "
            "layout: tp, "
            "pp, cp, ep, etp, dp, vpp, mbs, zero, recompute]; other columns are refused",
        ),
    ],
    output: Output = None,
    network_gbps: Annotated[
        float, typer.Option(help="network Gb/s per node where a row gives none")
    ] = 400.0,
    gpus_per_node: Annotated[
        int, typer.Option(help="GPUs per node (NVLink/PCIe domain) where a row gives none")
    ] = 8,
    recompute: Annotated[
        str, typer.Option(help="auto | none | selective | per-op | full")
    ] = "auto",
    zero: Annotated[
        str, typer.Option(help="auto | zero0 (plain data parallelism) | zero1 | zero3")
    ] = "auto",
    framework: Annotated[
        str,
        typer.Option(
            help="training stack where a row gives none: megatron | fsdp | fsdp2 | deepspeed | "
            "nanotron "
            f"(not given: {DEFAULT_FRAMEWORK}, and the band also "
            "spans the other stacks)"
        ),
    ] = "",
    flash_attention: Annotated[
        bool, typer.Option(help="attention without stored scores (Dao et al. 2022)")
    ] = True,
    eager: Eager = False,
    fp8_recipe: Fp8Recipe = "auto",
    moe_overlap: MoEOverlap = False,
    dp_overlap: DPOverlap = True,
    tp_overlap: TPOverlap = False,
    fp32_reduce: FP32Reduce = None,
    attention: Attention = "auto",
    results: Annotated[
        list[str] | None,
        typer.Option(
            "--results",
            help="folder of own benchmark results: operator-benchmark runs give measured kernels "
            "and GPT runs calibrate them on their GPUs; repeatable (default: none, only Q and "
            "the spec table)",
        ),
    ] = None,
    fmt: Format = "table",
) -> None:
    """Predict LLM training tokens/s: the fastest tensor/context/pipeline/data-parallel layout
    that fits, timed operator by operator (GEMMs, attention, memory-bound, communication).

    Output: Q plus tokens_per_s (all GPUs), tokens_per_s_low, tokens_per_s_high (80% band),
    mfu, layout (e.g. tp8 pp2 dp4 zero1 mb1), fits, method (scaled | estimated | none),
    method_detail. Uses only Q and the bundled spec table, and --results where given.
    """
    from planner.io.examples import input_path
    from planner.llm.estimate import read_llm_queries
    from planner.settings import LLMSettings

    with abort_on_value_error():  # an LLMQueryError names the file, line and field
        _check_output_flags(
            fmt, output, {"--network-gbps": network_gbps, "--gpus-per-node": gpus_per_node}
        )
        settings = LLMSettings(
            recompute=recompute, zero=zero, flash_attention=flash_attention,
            framework=framework or DEFAULT_FRAMEWORK, framework_stated=bool(framework),
            eager=eager, fp8_recipe=fp8_recipe, moe_overlap=moe_overlap,
            dp_overlap=dp_overlap, tp_overlap=tp_overlap, fp32_reduce=fp32_reduce,
            attention=attention,
        )  # fmt: skip
        raw, rows = read_llm_queries(input_path(queries), settings)
        figures, problems, table = _own_figures(results, rows)
    from planner.llm.estimate import LLMQueryError

    try:
        with working(f"searching layouts for {len(rows)} LLM queries"):
            result = _llm_predictions(
                raw, rows, gpus_per_node, network_gbps, settings, figures, table
            )
    except LLMQueryError as exc:  # a row's own layout that only timing refuses
        abort(f"{queries}, {exc}")
    for line in problems:
        warn(line)
    if output:
        _write_csv(output, result)
        fits = int(result["fits"].sum())
        text_console(stderr=True).print(
            Text(f"wrote {output}: {len(result)} rows ({fits} fit, {len(result) - fits} do not)")
        )
        return
    title = f"{len(result)} LLM predictions (tokens/s over all GPUs; layout search)"
    _emit(_llm_table_cells(result) if fmt == "table" else result, fmt, title, LLM_TABLE_COLUMNS)


def _check_output_flags(fmt: str, output: str | None, flags: dict[str, float | int | None]) -> None:
    """--format one of the formats, each flag in its range, --output a file that can be
    written (ValueError naming the flag)."""
    check_format(fmt)
    check_flags(flags)
    if output:
        check_output_path(output)


def _own_figures(
    results: list[str] | None, rows: list[LLMQuery]
) -> tuple[dict[str, pd.DataFrame], list[str], pd.DataFrame | None]:
    """Per precision asked, the MFU figures of own GPT runs in `results` (none when no
    folder is given), the problems met reading them, and the results table (whose operator
    benchmark runs give measured kernels; None without a folder)."""
    from planner.llm.throughput import gpt_mfu_figures
    from planner.throughput import own_and_published_results

    if not results:
        return {}, [], None
    table, problems = own_and_published_results(results)
    figures = {q.precision: gpt_mfu_figures(table, q.precision)[0] for q in rows}
    return figures, problems, table


def _llm_predictions(
    raw: pd.DataFrame,
    rows: list[LLMQuery],
    gpus_per_node: int,
    network_gbps: float,
    settings: LLMSettings,
    figures: dict[str, pd.DataFrame],
    ops: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Q as read plus each row's prediction, its details worded in method_detail."""
    import pandas as pd

    from planner.llm.estimate import DETAIL_COLUMNS, LAYOUT_OUTPUT_COLUMNS, estimate_llm
    from planner.render.llm import estimate_detail, user_layout_text

    predicted = estimate_llm(rows, gpus_per_node, network_gbps, settings, figures, ops)
    # Each row whole: the words name its layout and MFU too, not only DETAIL_COLUMNS; a row
    # at its own layout says how it compares with the best one found.
    records = predicted.to_dict(orient="records")
    words = [
        user_layout_text(r["user_layout"], str(r["precision"]))
        if r["user_layout"] is not None
        else estimate_detail(r)
        for r in records
    ]
    own = any(q.layout is not None for q in rows)
    dropped = [*DETAIL_COLUMNS, "user_layout", *(() if own else LAYOUT_OUTPUT_COLUMNS)]
    predicted = predicted.drop(columns=dropped).assign(method_detail=words)
    if own:  # the best layout's columns after method_detail
        predicted = predicted[[c for c in predicted if c not in LAYOUT_OUTPUT_COLUMNS]
                              + list(LAYOUT_OUTPUT_COLUMNS)]  # fmt: skip
    return pd.concat([raw.reset_index(drop=True), predicted], axis=1)


def _llm_table_cells(result: pd.DataFrame) -> pd.DataFrame:
    """`result` for the terminal: tokens/s as whole numbers with their 80% band, MFU as a
    percentage, and a row that does not fit says why where its layout would be."""
    shown = result.copy()
    shown["tokens_per_s"] = [
        f"{v:,.0f}" if math.isfinite(v) else "-" for v in shown["tokens_per_s"]
    ]
    shown["p10_p90"] = [
        f"{low:,.0f}-{high:,.0f}" if math.isfinite(low) and math.isfinite(high) else "-"
        for low, high in zip(result["tokens_per_s_low"], result["tokens_per_s_high"], strict=True)
    ]
    shown["mfu"] = [f"{v:.0%}" if math.isfinite(v) else "-" for v in shown["mfu"]]
    shown["layout"] = [
        layout if fits else _why_not(str(detail))
        for layout, fits, detail in zip(
            shown["layout"], shown["fits"], shown["method_detail"], strict=True
        )
    ]
    return shown


def _why_not(detail: str) -> str:
    """A row's reason for not fitting, short: 'does not fit (least 815.4 GB per GPU of 72.0
    usable)', or the detail's first clause (--format csv has it whole)."""
    least = re.search(r"\(least [^)]*\)", detail)
    if detail.startswith("does not fit") and least:
        return f"does not fit {least.group(0)}"
    return shorten(detail.split(";")[0], 80)


# Left out of a table too wide for the terminal (the first first); --format csv has them.
OPTIONAL_COLUMNS = (
    "fits", "eager", "seq_len", "mode", "active_params", "precision", "framework", "p10_p90",
)  # fmt: skip


def _emit(frame: pd.DataFrame, fmt: str, title: str, table_columns: tuple[str, ...]) -> None:
    """`frame` on stdout as `fmt` (csv is spreadsheet-safe: edge.output.emit)."""
    emit(
        frame,
        fmt,
        title=title,
        table_columns=table_columns,
        beneath=("layout",),
        optional=OPTIONAL_COLUMNS,
    )


def _write_csv(output: str, frame: pd.DataFrame) -> None:
    """`frame` into the file `output` as spreadsheet-safe CSV (edge.spreadsheet),
    through a temporary file and a rename; exit 1 when it cannot be written."""
    from pathlib import Path

    from edge.spreadsheet import csv_text
    from pricing.catalog import atomic_write_text

    try:
        atomic_write_text(Path(output), csv_text(frame))
    except OSError as exc:
        abort(f"--output {shorten(output)}: cannot be written ({exc.strerror or exc})", 1)


def _estimate_notes(
    model: ThroughputModel, ref: Reference, result: pd.DataFrame, output: str | None
) -> None:
    """On stderr: what was written, how the scaling law was chosen, the spec regression's
    held-out error, REF rows skipped and queries left without a prediction."""
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
    _print_estimator_error(model, console)
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


def _print_estimator_error(model: ThroughputModel, console: Console) -> None:
    """The spec regression's pooled leave-one-GPU-out error, where it was measured."""
    if model.estimator is None:
        return
    cv = model.estimator.bands.set_index("kind")
    pooled = cv.loc[model.estimator.bands["model"].eq("").to_numpy()]
    if "logo" in pooled.index:
        console.print(
            f"[dim]estimates:[/] spec regression, leave-one-GPU-out error "
            f"{pooled.loc['logo', 'mape']:.1%} MAPE",
            highlight=False,
        )
