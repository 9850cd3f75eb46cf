"""The LLM step model on published training runs and gpuplan's own, leave-one-source-out,
beside two naive rules.

    python tools/evaluate_llm_corpus.py [--json OUT.json]
    (also printed by tools/evaluate_estimator.py as its LLM corpus section)

Every run of reference/calibration/llm_training_throughput.csv and of gpuplan's own runs
(reference/own_runs/llm_training_throughput.csv, one source) that planner.llm.corpus can
use is predicted by the operator model (planner.llm.throughput) with stack parameters
fitted on the other sources' runs only (planner.llm.stack_fit.leave_one_source_out), and by

  flat 40%: 40% MFU of the bf16 dense peak, for every run;
  stack median: the median MFU of the same stack's runs from the other sources (all other
    sources' runs where the stack has none).

Errors are |predicted / measured - 1| (MAPE over a cell's runs), by stack (framework),
precision, GPU, size band and kind (dense or mixture of experts). A run's 80% band is its
stack's 10-90% quantiles of log(predicted / measured) over the other sources' held-out runs
(pooled over all stacks where the stack has fewer than MIN_BAND_RUNS of them), widened to
the same quantiles over every stack's held-out runs where those are wider (a source's own
bias is what the held-out error of other sources shows, whatever their stack); an fp8 run's
band is widened to at least +/- the FP8_BAND_QUANTILE quantile of |log(predicted /
measured)| over the other sources' fp8 runs (fp8_band_of: what an fp8 step gains depends on
the stack's casts and recipe, and the held-out fp8 errors are whole sources' biases of
either sign); `covered` says whether the measured rate is inside. Runs their own source says
ran degraded (planner.llm.corpus.degraded_runs: near the GPU's memory limit) are in no fold
and no cell: printed apart, each timed by the fit on every run against what it measured.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from planner.llm.corpus import (  # noqa: E402
    OWN_RUNS_PATH,
    CorpusRun,
    degraded_runs,
    load_calibration,
    load_corpus,
)
from planner.llm.stack_fit import (  # noqa: E402
    Fit,
    HeldOut,
    fit_stacks,
    leave_one_source_out,
    predict_run,
)

FLAT_MFU = 0.40
OWN_SOURCE = "gpuplan own runs"  # the source column of reference/own_runs' rows
MIN_BAND_RUNS = 8
BAND_QUANTILES = (0.10, 0.90)
FP8_BAND_QUANTILE = 0.80  # a +/- w band holds 80% of runs when 80% of |errors| are <= w
SIZE_BANDS = ((0.0, 3e9, "<3B"), (3e9, 15e9, "3-15B"), (15e9, 100e9, "15-100B"),
              (100e9, math.inf, ">100B"))  # fmt: skip


def size_band(params: float) -> str:
    """The SIZE_BANDS label of a parameter count."""
    return next(label for low, high, label in SIZE_BANDS if low <= params < high)


def stack_median_mfu(run: CorpusRun, runs: list[CorpusRun]) -> float:
    """The median MFU of `run`'s stack's runs from other sources (all other sources' runs
    where the stack has none)."""
    others = [r for r in runs if r.source != run.source]
    same = [r.mfu for r in others if r.family == run.family]
    return float(np.median(same or [r.mfu for r in others]))


def band_of(residuals: pd.DataFrame, family: str, source: str) -> tuple[float, float]:
    """10-90% quantiles of log(predicted / measured) of `family`'s held-out runs from sources
    other than `source` (pooled over stacks when fewer than MIN_BAND_RUNS), widened to the
    pooled quantiles (module docstring)."""
    others = residuals[residuals["source"] != source]
    return _band(others, family)


def _band(residuals: pd.DataFrame, family: str) -> tuple[float, float]:
    """The union of `family`'s and all stacks' 10-90% log-residual quantiles (the stack's
    own only with MIN_BAND_RUNS runs)."""
    pooled = residuals["log_residual"].dropna()
    own = residuals.loc[residuals["framework"] == family, "log_residual"].dropna()
    low, high = np.quantile(pooled, BAND_QUANTILES)
    if len(own) >= MIN_BAND_RUNS:
        own_low, own_high = np.quantile(own, BAND_QUANTILES)
        low, high = min(low, own_low), max(high, own_high)
    return float(low), float(high)


def fp8_band_of(residuals: pd.DataFrame, source: str | None = None) -> float:
    """Half-width in log of the fp8 band: the FP8_BAND_QUANTILE quantile of |log(predicted /
    measured)| over the fp8 runs of every stack from sources other than `source` (all of
    them without one); NaN with fewer than MIN_BAND_RUNS such runs."""
    fp8 = residuals[(residuals["precision"] == "fp8") & (residuals["source"] != source)]
    errors = fp8["log_residual"].dropna().abs()
    return (
        float(np.quantile(errors, FP8_BAND_QUANTILE)) if len(errors) >= MIN_BAND_RUNS else math.nan
    )


def per_run_table(held: list[HeldOut], runs: list[CorpusRun]) -> pd.DataFrame:
    """One row per run: its keys, the measured and predicted tokens/s per GPU, the errors of
    the model and both naive rules, the model's log residual and band coverage."""
    rows = []
    for h in held:
        r = h.run
        flat = r.tokens_per_gpu * FLAT_MFU / r.mfu
        median = r.tokens_per_gpu * stack_median_mfu(r, runs) / r.mfu
        rows.append(
            {
                "row": r.row, "source": r.source, "framework": r.family,
                "precision": r.precision, "gpu": r.gpu_name, "gpus": r.num_gpus,
                "size": size_band(float(r.workload.params or 0)), "model": r.model,
                "kind": "moe" if r.workload.is_moe else "dense",
                "measured": r.tokens_per_gpu, "predicted": h.predicted,
                "flat": flat, "stack_median": median,
                "model_error": abs(h.predicted / r.tokens_per_gpu - 1.0),
                "flat_error": abs(flat / r.tokens_per_gpu - 1.0),
                "median_error": abs(median / r.tokens_per_gpu - 1.0),
                "log_residual": math.log(h.predicted / r.tokens_per_gpu)
                if h.predicted > 0 else math.nan,
                "layout": h.layout, "assumed": r.assumed,
                "micro_batch_tokens": micro_batch_tokens(h.layout, r.workload.seq_len),
            }
        )  # fmt: skip
    table = pd.DataFrame(rows)
    covered = []
    for row in table.itertuples():
        low, high = band_of(table, row.framework, row.source)
        if row.precision == "fp8" and math.isfinite(width := fp8_band_of(table, row.source)):
            low, high = min(low, -width), max(high, width)
        covered.append(bool(low <= row.log_residual <= high))
    table["covered"] = covered
    return table


def summary_table(table: pd.DataFrame) -> pd.DataFrame:
    """MAPE of the model and the naive rules and band coverage: overall, then by framework,
    precision, GPU, size band (total parameters) and kind (dense or mixture of experts)
    (runs the model could time)."""
    timed = table[np.isfinite(table["predicted"])]
    cells = [("all", "all", timed)]
    for key in ("framework", "precision", "gpu", "size", "kind"):
        cells += [(key, str(value), group) for value, group in timed.groupby(key)]
    rows = []
    for by, value, group in cells:
        model, flat, median = (
            group[c].mean() for c in ("model_error", "flat_error", "median_error")
        )
        rows.append(
            {
                "by": by, "cell": value, "runs": len(group),
                "sources": group["source"].nunique(), "model_mape": model,
                "flat40_mape": flat, "stack_median_mape": median,
                "band_coverage": group["covered"].mean(),
                "beats_both": bool(model < flat and model < median),
            }
        )  # fmt: skip
    return pd.DataFrame(rows)


def stack_bands(table: pd.DataFrame) -> dict[str, tuple[float, float]]:
    """Per framework the 10-90% quantiles of its held-out log residuals widened to all
    stacks' (_band): the band planner.llm.stack_profiles keeps."""
    return {str(family): _band(table, str(family)) for family in table["framework"].unique()}


def evaluate_llm_corpus() -> dict[str, object]:
    """Held-out predictions of the corpus: the per-run table, the summary, the runs left
    out (row -> reason), the folds' fitted parameters, the fit on every run (what
    tools/fit_llm_stacks.py writes) and its in-sample error (in_sample_error)."""
    runs, skipped = load_calibration()
    held, folds = leave_one_source_out(runs)
    table = per_run_table(held, runs)
    fit = fit_stacks(runs)
    return {
        "runs": table, "summary": summary_table(table), "skipped": skipped, "folds": folds,
        "fit": fit, "in_sample": in_sample_error(runs, fit),
    }  # fmt: skip


def own_runs_check(result: dict[str, object]) -> pd.DataFrame:
    """gpuplan's own runs (reference/own_runs) held out: predicted from the fit without them
    (`result`'s fold) with its kernel rates, and again with the rates the operator benchmark
    measured on the same GPU (the ops results of reference/own_runs, as `gpuplan plan
    --results` takes them), beside flat 40% MFU: one row per run."""
    from planner.throughput.offers import own_and_published_results

    runs, _ = load_corpus(OWN_RUNS_PATH)
    folds = result["folds"]
    assert isinstance(folds, dict)
    folders = sorted(str(p) for p in OWN_RUNS_PATH.parent.iterdir() if p.is_dir())
    results, _ = own_and_published_results(folders)
    rows = []
    for r in runs:
        stack = folds[OWN_SOURCE].for_run(r)
        held, own_ops = (
            predict_run(r, stack, ops).tokens_per_s / r.num_gpus for ops in (None, results)
        )
        flat = r.tokens_per_gpu * FLAT_MFU / r.mfu
        rows.append(
            {
                "model": r.model.split(" (")[0], "gpu": r.gpu_name, "gpus": r.num_gpus,
                "framework": r.family, "measured": r.tokens_per_gpu, "mfu": r.mfu,
                "predicted": held, "with_own_ops": own_ops,
                "model_error": abs(held / r.tokens_per_gpu - 1.0),
                "own_ops_error": abs(own_ops / r.tokens_per_gpu - 1.0),
                "flat_error": abs(flat / r.tokens_per_gpu - 1.0),
            }
        )  # fmt: skip
    return pd.DataFrame(rows)


def published_only(table: pd.DataFrame) -> dict[str, float]:
    """MAPE of the model and both naive rules over the published runs alone (gpuplan's own
    runs left out of the average, not of the fits)."""
    timed = table[np.isfinite(table["predicted"]) & (table["source"] != OWN_SOURCE)]
    columns = {"model": "model_error", "flat40": "flat_error", "stack_median": "median_error"}
    return {"runs": len(timed), **{k: float(timed[c].mean()) for k, c in columns.items()}}


def within_source_error(table: pd.DataFrame) -> dict[str, float]:
    """MAPE of the model and of flat 40% after removing each source's mean log error: what
    is left once a source's own level (its cluster, software release, tuning) is known. The
    gap to the held-out MAPE is the part no model fitted on other sources can see."""
    timed = table[np.isfinite(table["predicted"])]
    out = {}
    for name, column in (("model", "predicted"), ("flat40", "flat")):
        log_error = np.log(timed[column] / timed["measured"])
        within = log_error - log_error.groupby(timed["source"]).transform("mean")
        out[name] = float((np.exp(within.abs()) - 1.0).mean())
    return out


def micro_batch_tokens(layout: str, seq_len: int) -> float:
    """Tokens one GPU runs per micro-batch in a layout label ("... cp2 ... mb4"): mb x seq
    / cp (NaN where the label has no micro-batch: no layout fits)."""
    mb, cp = re.search(r"\bmb(\d+)", layout), re.search(r"\bcp(\d+)", layout)
    if mb is None:
        return math.nan
    return int(mb.group(1)) * seq_len / (int(cp.group(1)) if cp else 1)


def micro_batch_trend(table: pd.DataFrame) -> dict[str, float]:
    """How the model's held-out log error moves with the tokens per micro-batch within each
    source (each source's means removed, sources whose runs all share one micro-batch size
    left out): the least-squares slope per doubling, its correlation, runs and sources. A
    step model that times per-micro-batch costs right has no trend (slope ~0)."""
    timed = table[np.isfinite(table["log_residual"]) & np.isfinite(table["micro_batch_tokens"])]
    doublings = np.log2(timed["micro_batch_tokens"].astype(float))
    varied = doublings.groupby(timed["source"]).transform("nunique") > 1
    x = (doublings - doublings.groupby(timed["source"]).transform("mean"))[varied]
    y = (timed["log_residual"] - timed.groupby("source")["log_residual"].transform("mean"))[varied]
    slope = float((x * y).sum() / (x * x).sum()) if (x * x).sum() > 0 else math.nan
    return {
        "slope_per_doubling": slope,
        "correlation": float(np.corrcoef(x, y)[0, 1]) if len(x) > 2 else math.nan,
        "runs": float(len(x)),
        "sources": float(timed.loc[varied, "source"].nunique()),
    }


def in_sample_error(runs: list[CorpusRun], fit: Fit) -> dict[str, float]:
    """MAPE of `fit`, fitted on every run, predicting those same runs, overall and by stack:
    what the model's parameters cannot fit away. Held out, the error is rarely below it, so
    a goal under it asks for a different model or more data, not another fit."""
    errors: dict[str, list[float]] = {"all": []}
    for run in runs:
        found = predict_run(run, fit.for_run(run))
        if not found.layout.fits:
            continue
        error = abs(found.tokens_per_s / run.num_gpus / run.tokens_per_gpu - 1.0)
        errors["all"].append(error)
        errors.setdefault(run.family, []).append(error)
    return {cell: float(np.mean(values)) for cell, values in sorted(errors.items())}


def notes(summary: pd.DataFrame, table: pd.DataFrame) -> list[str]:
    """Why a cell (framework, precision, GPU, size or kind) does not beat both naive rules:
    its sources and their largest held-out errors."""
    out = []
    for row in summary[(summary["by"] != "all") & ~summary["beats_both"]].itertuples():
        own = table[(table[row.by].astype(str) == row.cell) & np.isfinite(table["predicted"])]
        worst = own.groupby("source")["model_error"].agg(["mean", "size"])
        worst = worst.sort_values("mean", ascending=False).head(2)
        where = ", ".join(
            f"{name} {v['mean']:.0%} over {int(v['size'])} runs" for name, v in worst.iterrows()
        )
        out.append(
            f"{row.by} {row.cell}: does not beat both naive rules ({row.model_mape:.1%} vs "
            f"flat {row.flat40_mape:.1%}, stack median {row.stack_median_mape:.1%}); "
            f"{own['source'].nunique()} source(s), each predicted from a fit without it (a "
            f"stack none of the others ran takes the pooled fit); largest held-out errors: "
            f"{where}"
        )
    no_time = table[~np.isfinite(table["predicted"])]
    for row in no_time.itertuples():
        out.append(f"row {row.row} ({row.model}, {row.gpus} x {row.gpu}): no layout fits")
    return out


def degraded_lines(result: dict[str, object]) -> list[str]:
    """One line per run its source says ran degraded: what the fit on every run times it at
    against what it measured (planner.llm.corpus.degraded_runs)."""
    fit = result["fit"]
    assert isinstance(fit, Fit)
    out = []
    for run in degraded_runs():
        timed = predict_run(run, fit.for_run(run)).tokens_per_s / run.num_gpus
        out.append(
            f"row {run.row} ({run.model.split(' (')[0]}, {run.num_gpus} x {run.gpu_name}, "
            f"{run.family}), left out as its source says it ran degraded: measured "
            f"{run.tokens_per_gpu:,.0f} tokens/s per GPU, timed at {timed:,.0f} "
            f"({timed / run.tokens_per_gpu:.2f}x)"
        )
    return out


def print_llm_corpus(result: dict[str, object] | None = None) -> dict[str, object]:
    """Print the LLM corpus section (tools/evaluate_estimator.py calls it)."""
    result = result or evaluate_llm_corpus()
    table, summary = result["runs"], result["summary"]
    assert isinstance(table, pd.DataFrame) and isinstance(summary, pd.DataFrame)
    print(
        "\n(k) LLM training throughput on published runs (reference/calibration) and "
        "gpuplan's own (reference/own_runs), each "
        "source predicted from a fit without it (leave-one-source-out), beside flat 40% MFU "
        "and the stack's median MFU on the other sources; MAPE and 80%-band coverage"
    )
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    skipped = result["skipped"]
    assert isinstance(skipped, dict)
    reasons = pd.Series(list(skipped.values()), dtype=str).value_counts().to_dict()
    print("left out of the corpus:", json.dumps(reasons))
    for line in degraded_lines(result):
        print("degraded:", line)
    for line in notes(summary, table):
        print("note:", line)
    within = within_source_error(table)
    print(
        "within-source error (each source's mean log error removed; the rest of the "
        f"held-out error is between sources): model {within['model']:.1%}, "
        f"flat 40% {within['flat40']:.1%}"
    )
    trend = micro_batch_trend(table)
    print(
        "error against the tokens a GPU runs per micro-batch, within each source: the "
        f"model's log error moves {trend['slope_per_doubling']:+.3f} per doubling "
        f"(correlation {trend['correlation']:+.2f}, {int(trend['runs'])} runs of "
        f"{int(trend['sources'])} sources): below zero, runs of small micro-batches are "
        "timed too fast and of large ones too slow (docs/model.md, known gaps)"
    )
    in_sample = result["in_sample"]
    assert isinstance(in_sample, dict)
    by_stack = ", ".join(f"{k} {v:.1%}" for k, v in in_sample.items() if k != "all")
    print(
        "in-sample (one fit on every source predicting its own runs: what the parameters "
        f"cannot fit away): model {in_sample['all']:.1%}; {by_stack}"
    )
    published = published_only(table)
    print(
        f"published runs only ({published['runs']}): model {published['model']:.1%}, "
        f"flat 40% {published['flat40']:.1%}, stack median {published['stack_median']:.1%}"
    )
    own = own_runs_check(result)
    print(
        "own runs (reference/own_runs), held out (a fit without them): "
        f"model {own['model_error'].mean():.1%}, with the GPU's own operator rates "
        f"{own['own_ops_error'].mean():.1%}, flat 40% {own['flat_error'].mean():.1%}"
    )
    print(own.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the per-run table here")
    parser.add_argument("--runs", action="store_true", help="print every run's prediction")
    args = parser.parse_args()
    pd.set_option("display.width", 200)
    result = print_llm_corpus()
    table = result["runs"]
    assert isinstance(table, pd.DataFrame)
    if args.runs:
        print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if args.json:
        args.json.write_text(table.to_json(orient="records", indent=1) + "\n")


if __name__ == "__main__":
    main()
