"""The throughput layer: results -> fitted model -> throughput per (GPU, count, workload).

Results become figures once (estimate.aggregate_figures, over offers.reference_from_results'
rows); plans, `estimate` and the Scaling page all read those figures.

Modules: offers (results joined to offers and options), estimate (figures, scaling laws and
the spec regression combined), scaling (laws and the communication model), spec_model (the
spec regression), scaling_report (the Scaling page's tables), reference_io (CSV edges of
`gpuplan estimate`), benchmark_compare (own runs against published figures).
"""

from planner.throughput.estimate import predict, predict_throughput
from planner.throughput.offers import (
    SAMPLE_COLUMN,
    SOURCE_RANK,
    bundled_results_dir,
    model_key,
    own_and_published_results,
    reference_from_results,
    throughput_for_offers,
    throughput_for_options,
    throughput_inputs,
    throughput_model_for_model,
    throughput_model_for_results,
    throughput_table,
)

__all__ = [
    "SAMPLE_COLUMN",
    "SOURCE_RANK",
    "bundled_results_dir",
    "model_key",
    "own_and_published_results",
    "predict",
    "predict_throughput",
    "reference_from_results",
    "throughput_for_offers",
    "throughput_for_options",
    "throughput_inputs",
    "throughput_model_for_model",
    "throughput_model_for_results",
    "throughput_table",
]
