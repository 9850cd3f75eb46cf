"""Names a result file and the planner share, in a module that loads nothing else (the
planner reads them on every start-up; benchmarks.results, with its pydantic schema, loads
only when results are read)."""

# Workloads that train nothing (so have no precision): the data-loading benchmark and the
# operator benchmark (its figures carry their own precisions).
OP_WORKLOAD = "ops"
PIPELINE_WORKLOAD = "input-pipeline"
NON_TRAINING_WORKLOADS = (PIPELINE_WORKLOAD, OP_WORKLOAD)
# results_frame() adds this column, one OpFigures per row (None for other results), when
# any result is an op result; tables of training results keep RESULT_COLUMNS alone.
OP_FIGURES_COLUMN = "op_figures"
