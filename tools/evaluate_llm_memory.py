"""The LLM memory model on measured peak memory per GPU, beside the formula it extends.

    python tools/evaluate_llm_memory.py
    (also printed by tools/evaluate_estimator.py as its LLM memory section)

Every run of the Ultra-Scale Playbook's sweep with a result
(reference/calibration/ultrascale_playbook_sweep.csv: nanotron, 1.34B-80B on 1-64 nodes of
H100, the "GPU memory" its interactive figure prints) and every one of gpuplan's own runs
(reference/own_runs/llm_training_throughput.csv, "peak memory ... GiB" in its notes: PyTorch's
max_memory_allocated) is given the memory per GPU planner.llm.layout works out for its own
layout (the figure `plan` and `estimate-llm` print and test against the GPU's memory), and
the same sum with Korthikanti et al. 2022's published activation count (34 s b h a layer,
4 s b V for the loss's logits) in place of the layer's own widths and the stack's logit
bytes (planner.llm.memory). Errors are |predicted / measured - 1|; `within_25` is the share
of runs predicted within 25%. Nothing here is fitted: the sweep's runs are not in any fit
of the memory model.
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from planner.llm.corpus import CORPUS_PATH, OWN_RUNS_PATH, CorpusRun, corpus_run  # noqa: E402
from planner.llm.layout import Layout  # noqa: E402
from planner.llm.memory import activation_bytes_per_gpu, state_bytes_per_gpu  # noqa: E402
from planner.llm.stack_fit import predict_run, run_settings  # noqa: E402
from planner.llm.stack_profiles import stack_params  # noqa: E402
from planner.llm.throughput import llm_shape_of  # noqa: E402
from planner.settings import ZERO_STAGES  # noqa: E402

SWEEP_PATH = ROOT / "reference" / "calibration" / "ultrascale_playbook_sweep.csv"
SWEEP_SOURCE = "huggingface/nanotron"  # the corpus's name for the Playbook's sweep
GIB = 1024**3 / 1e9  # GB per GiB
OWN_PEAK = re.compile(r"peak memory ([0-9.]+) GiB")
WITHIN = 0.25


def sweep_rows(path: Path = SWEEP_PATH) -> pd.DataFrame:
    """The sweep's runs with a measured memory, as corpus rows (planner.llm.corpus)."""
    sweep = pd.read_csv(path)
    return sweep_rows_of(sweep[sweep["memory_gb"].fillna(0) > 0])


def sweep_rows_of(sweep: pd.DataFrame) -> pd.DataFrame:
    """Sweep runs as corpus rows, their memory as `measured_gb`."""
    rows = pd.DataFrame({
        "source": SWEEP_SOURCE, "framework": "nanotron", "model": sweep["model"],
        "params": sweep["params"], "gpu_model": "H100", "num_gpus": sweep["num_gpus"],
        "gpus_per_node": 8, "tp": sweep["tp"], "pp": sweep["pp"], "dp": sweep["dp"],
        "zero_fsdp": "zero-" + sweep["zero_stage"].astype(str), "mbs": sweep["mbs"],
        "gbs": sweep["gbs"], "tokens_per_s_per_gpu": sweep["tokens_per_s_per_gpu"],
        "measured_gb": sweep["memory_gb"],
    })  # fmt: skip
    columns = pd.read_csv(CORPUS_PATH, nrows=0).columns  # every column corpus_run reads
    return rows.reindex(columns=[*columns, "measured_gb"]).reset_index(drop=True)


def own_rows(path: Path = OWN_RUNS_PATH) -> pd.DataFrame:
    """gpuplan's own runs that state their peak memory, with it in GB."""
    own = pd.read_csv(path)
    peak = own["notes"].astype(str).str.extract(OWN_PEAK)[0].astype(float) * GIB
    own = own.assign(measured_gb=peak)
    return own[own["measured_gb"].notna()].reset_index(drop=True)


def korthikanti_gb(run: CorpusRun, layout: Layout) -> float:
    """The layout's memory per GPU with the published activation count (34 s b h a layer,
    4 s b V for the logits: Korthikanti et al. 2022, eq. 5 and sec. 4.3), GB."""
    settings = run_settings(run, stack_params(run.family))
    shape = llm_shape_of(run.workload)
    one = np.ones(1)
    zero = ZERO_STAGES.get(layout.zero, 0)
    states = state_bytes_per_gpu(
        shape.params, shape.adapter_params, shape.mode, run.precision, one * layout.tp,
        one * layout.pp, one * layout.dp * layout.cp, one * zero,
    )  # fmt: skip
    acts = activation_bytes_per_gpu(
        shape.seq_len, shape.d_model, shape.n_heads, shape.n_layer, shape.vocab_size,
        run.precision, one * layout.tp, one * layout.pp,
        one * layout.micro_batch / layout.cp, one * layout.micro_batches,
        np.array([layout.recompute or "none"]), settings.flash_attention,
        one * layout.interleave,
    )  # fmt: skip
    return float(states[0] + acts[0]) / 1e9


def predicted(rows: pd.DataFrame, source: str) -> pd.DataFrame:
    """Each row's measured and predicted memory per GPU (GB)."""
    out = []
    for index, row in rows.iterrows():
        run = corpus_run(int(index), row)
        if isinstance(run, str):
            continue
        layout = predict_run(run, stack_params(run.family)).layout
        out.append({
            "source": source, "model": run.workload.name, "layout": layout.label,
            "measured_gb": float(row["measured_gb"]), "predicted_gb": layout.memory_per_gpu_gb,
            "korthikanti_gb": korthikanti_gb(run, layout),
        })  # fmt: skip
    return pd.DataFrame(out)


def errors(table: pd.DataFrame) -> pd.DataFrame:
    """MAPE, median ratio and the share within WITHIN, by source and model."""

    def summary(group: pd.DataFrame) -> pd.Series:
        row: dict[str, float] = {"runs": len(group)}
        for name in ("predicted_gb", "korthikanti_gb"):
            ratio = group[name] / group["measured_gb"]
            key = "model" if name == "predicted_gb" else "korthikanti"
            row[f"{key}_mape"] = float((ratio - 1).abs().mean())
            row[f"{key}_median_ratio"] = float(ratio.median())
            row[f"{key}_within_25"] = float(((ratio - 1).abs() <= WITHIN).mean())
        return pd.Series(row)

    by_model = table.groupby(["source", "model"], sort=False).apply(summary, include_groups=False)
    overall = summary(table).to_frame().T.assign(source="all", model="all")
    return pd.concat([by_model.reset_index(), overall], ignore_index=True)


def evaluate_llm_memory() -> pd.DataFrame:
    """The per-run table: the sweep's runs and the own runs."""
    return pd.concat(
        [predicted(sweep_rows(), "Ultra-Scale Playbook sweep"), predicted(own_rows(), "own runs")],
        ignore_index=True,
    )


def print_llm_memory(table: pd.DataFrame) -> pd.DataFrame:
    """Print the LLM memory section of the per-run `table` (tools/evaluate_estimator.py
    calls it) and return its summary (errors)."""
    print(
        "\n(l) LLM memory per GPU on measured peaks (Ultra-Scale Playbook sweep, gpuplan's own "
        "runs): the memory model beside Korthikanti et al. 2022's published count; MAPE, "
        f"median predicted/measured and the share within {WITHIN:.0%}"
    )
    summary = errors(table)
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    return summary


def main() -> None:
    pd.set_option("display.width", 200)
    table = evaluate_llm_memory()
    print_llm_memory(table)
    worst = table.assign(ratio=table["predicted_gb"] / table["measured_gb"])
    if not math.isnan(float(worst["ratio"].min())):
        print("lowest ratio:", worst.loc[worst["ratio"].idxmin()].to_dict())


if __name__ == "__main__":
    main()
