"""gpuplan's own batch sweeps as a table in the calibration corpus's CNN columns.

    python tools/own_batch_sweeps.py      (rewrites reference/own_runs/cnn_training_throughput.csv)

Every one-process ResNet-50 and BERT result file under reference/own_runs/*/ with a batch
given (not `--batch auto`) becomes a row: the batch, the median samples/s and the run it
came from. planner.throughput.step_calibration fits the per-kernel step floor on these
rows beside FlagPerf's batch pairs; tools/evaluate_cnn.py (h) scores each sweep leaving its
model out.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from planner.throughput.step_calibration import OWN_BERT_MODEL, OWN_CNN_FILE  # noqa: E402
from pricing.gpus import gpu_from_device_name  # noqa: E402

OWN_RUNS = ROOT / "reference" / "own_runs"
# The bench workloads as the calibration table names them (GPUs by the spec table's names:
# pricing.gpus.gpu_from_device_name, as own results are read).
MODEL_NAMES = {("resnet50", "full"): "ResNet-50", ("bert", "large"): OWN_BERT_MODEL}
COLUMNS = ["source", "source_location", "source_date", "framework", "model", "param_count_M",
           "gpu_model", "gpu_detail", "num_gpus", "precision", "memory_format", "img_size",
           "batch_size", "train_samples_per_sec", "train_step_time_ms", "notes"]  # fmt: skip


def row(path: Path) -> dict[str, object] | None:
    """The table row of one result file, or None when it is no fixed-batch CNN/BERT run."""
    result = json.loads(path.read_text())
    model = MODEL_NAMES.get((result["workload"], result["model_size"]))
    config = result["config"]
    if model is None or result["world_size"] != 1 or config.get("batch_auto"):
        return None
    compiled = " + torch.compile" if config.get("compile") else ""
    return {
        "source": "gpuplan own runs",
        "source_location": str(path.relative_to(ROOT)),
        "source_date": result["started_at"][:10],
        "framework": f"gpuplan bench (PyTorch {result['env']['torch']}{compiled})",
        "model": model,
        "param_count_M": round(config["parameters"] / 1e6, 2) if "parameters" in config else "",
        "gpu_model": gpu_from_device_name(result["device_name"]) or result["device_name"],
        "gpu_detail": result["device_name"],
        "num_gpus": 1,
        "precision": result["precision"],
        "memory_format": "NHWC" if config.get("channels_last") else "",
        "img_size": 224 if result["workload"] == "resnet50" else "",
        "batch_size": result["batch_size_per_device"],
        "train_samples_per_sec": round(result["samples_per_s"], 1),
        "train_step_time_ms": round(1e3 * result["step_time_s_p50"], 2),
        "notes": f"measured: median of {len(result['step_times_s'])} timed steps, CV "
        f"{100 * result['throughput_cv']:.1f}%; run {result['id']}",
    }


def table() -> pd.DataFrame:
    rows = [row(p) for p in sorted(OWN_RUNS.glob("*/*.json"))]
    return pd.DataFrame([r for r in rows if r is not None], columns=COLUMNS)


def main() -> None:
    out = table()
    out.to_csv(OWN_CNN_FILE, index=False)
    print(f"{len(out)} rows -> {OWN_CNN_FILE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
