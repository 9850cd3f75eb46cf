"""What an LLM plan's rows and refusals carry, apart from the model that fills them: the
detail columns of each option and the error for a model that fits on no option (light:
the plan and the pages import these for every workload, the LLM model only for LLMs)."""

from __future__ import annotations

from dataclasses import dataclass

# Per option, the figures planner.render.llm words into a row's throughput detail: the
# step's time in seconds and its shares (compute, and within it GEMMs, attention,
# memory-bound operators and recomputation; pipeline bubble; exposed tensor-, context-,
# pipeline- and data-parallel communication, and what the dp communication hidden under
# compute still costs; the optimizer), usable memory, the framework, the GPUs of a
# switchless board the collectives were timed on (0: switched),
# and what the compute rate rests on (mfu_source: a planner.llm.ops kernels_* code, or own
# GPT results, with their calibration factor; for own results the anchor MFU, run id, run
# count, size, GPU count and decades of size between the run and the target; kernels_run_id:
# the operator-benchmark run whose rates the step used, "" when none).
LLM_DETAIL_COLUMNS = (
    "step_s", "compute_share", "gemm_share", "attention_share", "memory_share",
    "recompute_share", "bubble_share", "tp_comm_share", "cp_comm_share", "pp_comm_share",
    "dp_comm_share", "dp_overlap_share", "optimizer_share", "cast_share", "fp8_recipe",
    "a2a_share", "grouped_gemm_share",
    "usable_gb", "framework", "calibration", "stack_spread", "moe_factor", "moe_overlap",
    "dp_overlap", "tp_overlap", "fp32_reduce", "board_gpus",
    "mfu_anchor", "mfu_source", "mfu_band_widened", "mfu_run_id", "mfu_runs",
    "mfu_model_size", "mfu_world_size", "mfu_size_decades", "kernels_run_id",
)  # fmt: skip


@dataclass(frozen=True)
class Shortfall:
    """One GPU model where no layout fits: at its largest count offered, the least memory
    any layout needs per GPU, the usable memory, and the fewest GPUs (a power of two) that
    would hold the model (None: none up to 131,072)."""

    gpu_name: str
    gpus: int
    need_gb: float
    usable_gb: float
    fewest_gpus: int | None


class LLMMemoryError(ValueError):
    """An LLM that fits on no option (reason code "no_layout_fits").

    Carries the figures, not words (planner.render.llm words them): the workload's name,
    mode and sequence length, the Shortfall per GPU model, the GPU cap of the request (and
    which field set it: the most GPUs per option, or an exact GPU count), the
    training stack asked for and the other stacks under which a layout fits the largest
    option (their parallel dimensions differ: fsdp has no pipeline or context parallelism),
    and whether some counts were stopped by the global batch instead (more data-parallel
    ranks than sequences).
    """

    code = "no_layout_fits"

    def __init__(
        self,
        workload: str,
        mode: str,
        seq_len: int,
        shortfalls: tuple[Shortfall, ...] = (),
        max_gpus: float | None = None,
        framework: str = "",
        frameworks_that_fit: tuple[str, ...] = (),
        batch_limited: bool = False,
        cap_field: str = "max_gpus",
    ) -> None:
        super().__init__(self.code)
        self.workload = workload
        self.mode = mode
        self.seq_len = seq_len
        self.shortfalls = shortfalls
        self.max_gpus = max_gpus
        self.framework = framework
        self.frameworks_that_fit = frameworks_that_fit
        self.batch_limited = batch_limited
        self.cap_field = cap_field  # the request field that set max_gpus: max_gpus or gpu_count
