"""The benchmark models: resnet50, bert, gpt, each in sizes, with analytic FLOPs; and the
operator benchmark `ops` (OP_BENCHMARKS), which `bench run` also runs.

This module imports no torch: names and sizes are checked here, and `load` imports a
model's module (and torch) only when a run needs it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from edge.choices import did_you_mean

# workload -> (module, sizes, default size, unit of one sample, default batch per size)
WORKLOADS: dict[str, dict[str, Any]] = {
    "resnet50": {
        "module": "benchmarks.models.resnet",
        "sizes": ("tiny", "full"),
        "default_size": "full",
        "sample_unit": "images",
        "default_batch": {"tiny": 32, "full": 128},
    },
    "bert": {
        "module": "benchmarks.models.bert",
        "sizes": ("tiny", "base", "large"),
        "default_size": "large",
        "sample_unit": "sequences",
        "default_batch": {"tiny": 16, "base": 32, "large": 16},
    },
    "gpt": {
        "module": "benchmarks.models.gpt",
        "sizes": ("tiny", "124m", "350m", "1.3b"),
        "default_size": "124m",
        "sample_unit": "sequences",
        "default_batch": {"tiny": 16, "124m": 16, "350m": 8, "1.3b": 4},
    },
}
# Other names people use for the same sizes.
SIZE_ALIASES: dict[str, dict[str, str]] = {
    "resnet50": {"50": "full"},
    "bert": {},
    "gpt": {"small": "124m", "gpt2": "124m", "medium": "350m", "gpt2-medium": "350m", "xl": "1.3b"},
}
# Benchmarks that time operators (GEMMs, attention, memory copies), not a model's training
# step: `bench run` hands them to their module's run_to_file. sizes: tiny (a few small
# shapes, seconds anywhere) or full (the device's grid: benchmarks.ops). Not in WORKLOADS,
# which sweeps offer: a sweep tags its results as schema version 3, without op_figures.
OP_BENCHMARKS: dict[str, dict[str, Any]] = {
    "ops": {"module": "benchmarks.ops", "sizes": ("tiny", "full"), "default_size": "full"},
}


def _closest(name: str, choices: list[str]) -> str:
    return did_you_mean(name, choices)


def check_workload(workload: str) -> str:
    """The workload name, or ValueError naming the valid ones and the closest."""
    if workload in WORKLOADS or workload in OP_BENCHMARKS:
        return workload
    valid = [*WORKLOADS, *OP_BENCHMARKS]
    raise ValueError(
        f"unknown workload {workload!r}{_closest(workload, valid)} Valid: {', '.join(valid)}"
    )


def check_size(workload: str, size: str | None) -> str:
    """The canonical size name (default when None), or ValueError with the valid ones."""
    entry = {**WORKLOADS, **OP_BENCHMARKS}[check_workload(workload)]
    if size is None:
        return str(entry["default_size"])
    size = SIZE_ALIASES.get(workload, {}).get(size.lower(), size.lower())
    if size in entry["sizes"]:
        return size
    raise ValueError(
        f"unknown size {size!r} for {workload}{_closest(size, list(entry['sizes']))} "
        f"Valid: {', '.join(entry['sizes'])}"
    )


@dataclass(frozen=True)
class Benchmark:
    """One model at one size: how to build it, feed it and count its work.

    `build()` returns a freshly initialised torch module; `make_batch(n, device,
    generator)` synthetic inputs generated on the device; `loss(model, batch)` the
    training loss. FLOPs are per sample (image or sequence), training (forward +
    backward); `tokens_per_sample` is set for the LLM (tokens/s = samples/s x it).
    """

    workload: str
    size: str
    config: Any
    build: Callable[[], Any]
    make_batch: Callable[..., tuple[Any, ...]]
    loss: Callable[[Any, tuple[Any, ...]], Any]
    flops_per_sample: float
    flops_formula: str
    sample_unit: str
    default_batch: int
    is_cnn: bool
    tokens_per_sample: int | None


FORMULAS = {
    "resnet50": "3 x 2 x forward MACs (conv + fc; He et al. 2016; backward = 2 x forward)",
    "bert": "seq_len x (6 N_matmul + 12 n_layer n_ctx d_model) (PaLM appendix B)",
    "gpt": "seq_len x (6 N_matmul + 12 n_layer n_ctx d_model), N_matmul incl. tied LM head "
    "(PaLM appendix B)",
}


def load(workload: str, size: str | None = None) -> Benchmark:
    """The Benchmark for a workload and size (imports torch)."""
    workload = check_workload(workload)
    if workload in OP_BENCHMARKS:
        raise ValueError(f"{workload} times operators, not a model: benchmarks.ops runs it")
    size = check_size(workload, size)
    entry = WORKLOADS[workload]
    module = importlib.import_module(entry["module"])
    cfg = module.CONFIGS[size]
    return Benchmark(
        workload=workload,
        size=size,
        config=cfg,
        build=lambda: module.build(cfg),
        make_batch=lambda n, device, generator: module.make_batch(cfg, n, device, generator),
        loss=module.loss,
        flops_per_sample=module.training_flops_per_sample(cfg),
        flops_formula=FORMULAS[workload],
        sample_unit=entry["sample_unit"],
        default_batch=entry["default_batch"][size],
        is_cnn=workload == "resnet50",
        tokens_per_sample=cfg.seq_len if workload == "gpt" else None,
    )
