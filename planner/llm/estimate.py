"""`gpuplan estimate-llm`: read LLM queries, predict the best layout's tokens/s, write rows.

Queries (Q, CSV): params, seq_len, num_gpus, gpu_model, precision; optional n_layer,
d_model, ffn, heads, kv_heads, vocab, mlp (gelu | swiglu), embeddings (tied | untied) (a
dense model's shape: given, the shape is the model, as plan --ffn --heads --kv-heads --vocab
--mlp --embeddings: planner.workloads.catalog.reshape_llm),
global_batch_tokens, gpus_per_node, network_gbps, mode (pretrain | finetune |
lora | qlora; blank: pretrain), framework, eager (true | false; blank: the run's setting),
fp8_recipe (planner.llm.fp8_recipes; blank: the stack's default; fp8 rows only),
attention (planner.llm.frameworks.ATTENTION_CHOICES; blank: the run's --attention).
moe_overlap (true | false; blank: the run's --moe-overlap; mixture-of-experts rows only).
dp_overlap, tp_overlap, fp32_reduce (true | false; blank: the run's --dp-overlap,
--tp-overlap, --fp32-reduce: planner.settings.LLMSettings).
board_gpus (2-64: the GPUs of each node's board where they link directly, without a
switch, as a 4-GPU HGX server's; blank: the GPU's platform, planner.machines.boards).
params is a number (7e9) or a size (7b, 6.7b, 124m). A mixture of experts gives
active_params (a number or a size) and optionally experts, top_k, shared_experts,
expert_ffn (planner.llm.moe; a preset's shape where the counts match one). A row that
gives any of tp, pp, cp, ep, etp, dp, vpp, mbs (or micro_batch), zero, recompute is timed
at exactly that layout (planner.llm.user_layout) beside the best layout found. A column not
named here is refused with the valid ones.
Every number must be within its planner.io.validate.FIELD_RANGES entry, the range the flag
of the same name accepts (gpus_per_node as --gpus-per-node), or its COLUMN_RANGES entry;
the file is bounded as planner.io.validate.read_csv_table says.
Output: Q plus tokens_per_s (all GPUs), tokens_per_s_low, tokens_per_s_high (10-90% band),
mfu, layout, fits, method, method_detail; when Q has layout columns also best_layout
and best_tokens_per_s (the search's best on the same GPUs). Errors name the file, the line
(the header is line 1), the field and the valid range or closest valid value; nothing is
predicted from a bad file.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from planner.io.validate import FIELD_RANGES, Range, read_csv_table, shorten
from planner.llm.fp8_recipes import RECIPES, recipe_refusal, resolved_recipe
from planner.llm.frameworks import ATTENTION_CHOICES, FRAMEWORKS
from planner.llm.throughput import (
    LLM_DETAIL_COLUMNS,
    LLM_PRECISIONS,
    LayoutPrediction,
    has_fp8,
    llm_shape_of,
    predict_layout,
    prediction_record,
    prediction_source,
)
from planner.llm.user_layout import (
    LayoutSpecError,
    UserLayout,
    check_layout,
    compare_layout,
    parse_layout,
)
from planner.machines.specs import gpu_name_hint, load_specs
from planner.settings import LLMSettings
from planner.workloads.catalog import (
    LLM_MODES,
    ShapeSizeError,
    Workload,
    llm_workload,
    moe_workload,
    reshape_llm,
)
from planner.workloads.llm_presets import embeddings_kind_tied, mlp_kind_gated
from pricing.gpus import UnknownGPUError, canonical_gpu, closest_match, did_you_mean

REQUIRED = ("params", "seq_len", "num_gpus", "gpu_model", "precision")
MOE_COLUMNS = ("active_params", "experts", "top_k", "shared_experts", "expert_ffn")
LAYOUT_COLUMNS = (
    "tp", "pp", "cp", "ep", "etp", "dp", "vpp", "mbs", "micro_batch", "zero", "recompute",
)  # fmt: skip
# A dense model's shape beyond n_layer and d_model (ranges: FIELD_RANGES, as plan's flags).
SHAPE_COLUMNS = ("ffn", "heads", "kv_heads", "vocab")
# ... and what its MLP and output layer are (planner.workloads.llm_presets MLP_KINDS and
# EMBEDDING_KINDS), where the width rules would guess wrong.
KIND_COLUMNS = ("mlp", "embeddings")
OPTIONAL = (
    "n_layer", "d_model", *SHAPE_COLUMNS, *KIND_COLUMNS, "global_batch_tokens", "gpus_per_node",
    "network_gbps", "mode", "framework", "eager", "fp8_recipe", "attention", *MOE_COLUMNS,
    "moe_overlap",
    "dp_overlap", "tp_overlap", "fp32_reduce", "board_gpus", *LAYOUT_COLUMNS,
)  # fmt: skip
# The words of a true/false column (eager, moe_overlap, dp_overlap, tp_overlap, fp32_reduce),
# case aside.
SWITCH_WORDS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}
# Ranges of the MoE and layout columns (the others: planner.io.validate.FIELD_RANGES).
COLUMN_RANGES = {
    "active_params": FIELD_RANGES["params"],
    "experts": Range(1, 100_000, integer=True, unit="experts"),
    "top_k": Range(1, 100_000, integer=True, unit="experts per token"),
    "shared_experts": Range(0, 1_000, integer=True, unit="experts"),
    "expert_ffn": Range(1, 1_000_000, integer=True),
    **{c: Range(1, 1_000_000, integer=True) for c in ("tp", "pp", "cp", "ep", "etp", "dp", "vpp")},
    "mbs": Range(1, 100_000, integer=True, unit="sequences"),
    "micro_batch": Range(1, 100_000, integer=True, unit="sequences"),
    "board_gpus": Range(2, 64, integer=True, unit="GPUs"),
}
LAYOUT_OUTPUT_COLUMNS = ("best_layout", "best_tokens_per_s")
OUTPUT_COLUMNS = (
    "tokens_per_s", "tokens_per_s_low", "tokens_per_s_high", "mfu", "layout", "fits", "method",
    "method_detail",
)  # fmt: skip
SIZE = re.compile(r"^([-+]?\d+(?:\.\d+)?)([kmbt])$", re.IGNORECASE)
_SCALE = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}
# The figures and codes method_detail is worded from (planner.render.llm.estimate_detail).
DETAIL_COLUMNS = ("reason", "precision", "memory_per_gpu_gb", *LLM_DETAIL_COLUMNS)


class LLMQueryError(ValueError):
    """A Q file that cannot be used; the message names file, line and field."""


@dataclass(frozen=True)
class LLMQuery:
    """One checked query row."""

    params: float
    seq_len: int
    total_gpus: int  # the file's num_gpus
    gpu_name: str
    precision: str
    n_layer: int | None
    d_model: int | None
    global_batch_tokens: float | None
    gpus_per_node: int
    network_gbps: float
    mode: str
    framework: str = ""  # "" = the run's --framework
    eager: bool | None = None  # None = the run's --eager
    fp8_recipe: str = ""  # "" = the run's recipe (planner.llm.fp8_recipes)
    moe_overlap: bool | None = None  # None = the run's --moe-overlap
    dp_overlap: bool | None = None  # None = the run's --dp-overlap
    tp_overlap: bool | None = None  # None = the run's --tp-overlap
    fp32_reduce: bool | None = None  # None = the run's --fp32-reduce (itself None: the stack's)
    board_gpus: int = 0  # 0 = the GPU's platform (planner.machines.boards)
    attention: str = ""  # "" = the run's --attention
    active_params: float | None = None  # a mixture of experts (with the fields below)
    experts: int | None = None
    top_k: int | None = None
    shared_experts: int | None = None
    expert_ffn: int | None = None
    layout: UserLayout | None = None  # the row's own layout (None: the search's best)
    shape: tuple[tuple[str, int], ...] = ()  # SHAPE_COLUMNS given (a dense model's shape)
    gated_mlp: bool | None = None  # the mlp column (None: the width's rule)
    tied_embeddings: bool | None = None  # the embeddings column (None: the MLP's rule)

    def workload(self) -> Workload:
        """The row's LLM workload (1B tokens: estimate-llm predicts a rate, not a run);
        ValueError where a given shape is far from params (reshape_llm)."""
        if self.active_params is None:
            base = llm_workload(
                self.params, 1e9, seq_len=self.seq_len, n_layer=self.n_layer,
                d_model=self.d_model, mode=self.mode,
            )  # fmt: skip
            if not self.shape and self.gated_mlp is None and self.tied_embeddings is None:
                return base
            given = dict(self.shape)
            return reshape_llm(
                base, n_layer=self.n_layer, d_model=self.d_model, ffn_dim=given.get("ffn"),
                n_heads=given.get("heads"), n_kv_heads=given.get("kv_heads"),
                vocab_size=given.get("vocab"), gated=self.gated_mlp, tied=self.tied_embeddings,
            )  # fmt: skip
        return moe_workload(
            self.params, self.active_params, 1e9, self.seq_len, mode=self.mode,
            experts=self.experts, top_k=self.top_k, shared_experts=self.shared_experts,
            expert_ffn=self.expert_ffn,
        )  # fmt: skip


def _where(path: Path, index: int, field: str) -> str:
    return f"{path}, line {index + 2}, field {field!r}"


def _number(path: Path, index: int, field: str, raw: str) -> float:
    """The cell as a number within FIELD_RANGES[field] (params also as a size: 7b)."""
    valid = FIELD_RANGES[field] if field in FIELD_RANGES else COLUMN_RANGES[field]
    text = raw.strip()
    match = SIZE.match(text) if field in ("params", "active_params") else None
    try:
        value = float(match.group(1)) * _SCALE[match.group(2).lower()] if match else float(text)
    except ValueError:
        value = float("nan")
    shown = repr(shorten(raw, 60))
    if np.isnan(value):
        example = " (e.g. 7e9 or 7b)" if field in ("params", "active_params") else ""
        raise LLMQueryError(
            f"{_where(path, index, field)}: {shown} is not a number{example}; it must be "
            f"{valid.text()}"
        )
    if not valid.holds(value):
        raise LLMQueryError(f"{_where(path, index, field)}: {shown} must be {valid.text()}")
    return value


def read_llm_queries(
    path: str | Path, settings: LLMSettings | None = None
) -> tuple[pd.DataFrame, list[LLMQuery]]:
    """The Q file as read (for the output) and its checked rows; `settings` (the run's, for
    rows that leave framework or eager blank) checks each row's stack can run as asked."""
    path = Path(path)
    frame = read_csv_table(path, "queries", LLMQueryError)
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        hints = [
            f"did you mean {h!r} for {c!r}?"
            for c in missing
            if (h := closest_match(c, [x for x in frame.columns if x not in REQUIRED]))
        ]
        raise LLMQueryError(
            f"{path}: missing column(s) {', '.join(repr(c) for c in missing)}; required: "
            f"{', '.join(REQUIRED)}; optional: {', '.join(OPTIONAL)}"
            + (f"; {'; '.join(hints)}" if hints else "")
        )
    unknown = [c for c in frame.columns if c not in (*REQUIRED, *OPTIONAL)]
    if unknown:
        closest = [
            f"{shorten(c, 40)!r}{did_you_mean(c, [*REQUIRED, *OPTIONAL]).removesuffix('.')}"
            for c in unknown
        ]
        raise LLMQueryError(
            f"{path}: unknown column(s) {', '.join(closest)}: a column gpuplan does not know is "
            f"refused, never ignored. Valid: required {', '.join(REQUIRED)}; optional "
            f"{', '.join(OPTIONAL)}"
        )
    if frame.empty:
        raise LLMQueryError(f"{path}: no query rows")
    records = frame.to_dict(orient="records")
    rows = [_row(path, i, record, settings or LLMSettings()) for i, record in enumerate(records)]
    return frame, rows


def _row(path: Path, i: int, record: dict[str, str], run: LLMSettings) -> LLMQuery:
    value = {k: str(v).strip() for k, v in record.items()}

    def optional(field: str) -> float | None:
        raw = value.get(field, "")
        return _number(path, i, field, raw) if raw else None

    label = value["gpu_model"]
    try:
        gpu = canonical_gpu(label)
    except UnknownGPUError:
        gpu = None
    if gpu is None or gpu not in load_specs().index:
        fix = gpu_name_hint(label)
        raise LLMQueryError(
            f"{_where(path, i, 'gpu_model')}: unknown GPU {label!r}{fix} Use a name from "
            "planner/data/gpu_specs.csv (gpu_name or spec_model) or an alias."
        )
    precision = value["precision"].lower()
    if precision not in LLM_PRECISIONS:
        raise LLMQueryError(
            f"{_where(path, i, 'precision')}: unknown precision {value['precision']!r}"
            f"{did_you_mean(precision, LLM_PRECISIONS)} Valid: {', '.join(LLM_PRECISIONS)}"
        )
    if precision == "fp8" and not has_fp8(gpu):
        raise LLMQueryError(
            f"{_where(path, i, 'precision')}: {gpu} has no fp8 tensor cores (no fp8 peak in "
            "planner/data/gpu_specs.csv; fp8 needs Hopper, Ada, Blackwell, MI300 or Gaudi); "
            "use bf16 or fp16"
        )
    mode = value.get("mode", "").lower() or "pretrain"
    if mode not in LLM_MODES:
        raise LLMQueryError(
            f"{_where(path, i, 'mode')}: unknown mode {value['mode']!r}"
            f"{did_you_mean(mode, LLM_MODES)} Valid: {', '.join(LLM_MODES)}"
        )
    framework = value.get("framework", "").lower()
    if framework and framework not in FRAMEWORKS:
        raise LLMQueryError(
            f"{_where(path, i, 'framework')}: unknown framework {value['framework']!r}"
            f"{did_you_mean(framework, list(FRAMEWORKS))} Valid: {', '.join(FRAMEWORKS)}"
        )
    eager = _switch(path, i, value, "eager")
    recipe = value.get("fp8_recipe", "").strip().lower()
    if recipe and recipe not in RECIPES:
        raise LLMQueryError(
            f"{_where(path, i, 'fp8_recipe')}: unknown fp8 recipe {value['fp8_recipe']!r}"
            f"{did_you_mean(recipe, list(RECIPES))} Valid: {', '.join(RECIPES)}"
        )
    attention = value.get("attention", "").strip().lower()
    if attention and attention not in ATTENTION_CHOICES:
        raise LLMQueryError(
            f"{_where(path, i, 'attention')}: unknown attention kernel {value['attention']!r}"
            f"{did_you_mean(attention, list(ATTENTION_CHOICES))} Valid: "
            f"{', '.join(ATTENTION_CHOICES)}"
        )
    if recipe and precision != "fp8":
        raise LLMQueryError(
            f"{_where(path, i, 'fp8_recipe')}: an fp8 recipe applies to fp8 rows only; "
            f"this row's precision is {precision}: leave fp8_recipe blank or set precision fp8"
        )
    if precision == "fp8":  # the row's recipe, else the run's (its stack's default)
        resolved = resolved_recipe(recipe or run.fp8_recipe, framework or run.framework)
        refusal = recipe_refusal(resolved, gpu, str(load_specs().at[gpu, "architecture"]))
        if refusal:
            column, whose = ("fp8_recipe", "") if recipe else ("precision", " (the run's recipe)")
            raise LLMQueryError(f"{_where(path, i, column)}: {refusal}{whose}")
    num_gpus = int(_number(path, i, "num_gpus", value["num_gpus"]))
    per_node = optional("gpus_per_node")
    n_layer, d_model = optional("n_layer"), optional("d_model")
    moe = {c: optional(c) for c in MOE_COLUMNS}
    if moe["active_params"] is None and any(v is not None for v in moe.values()):
        given = next(c for c, v in moe.items() if v is not None)
        raise LLMQueryError(
            f"{_where(path, i, given)}: a mixture-of-experts row needs active_params (the "
            "parameters each token passes through, e.g. 22b)"
        )
    total = _number(path, i, "params", value["params"])
    if moe["active_params"] is not None and moe["active_params"] > total:
        raise LLMQueryError(
            f"{_where(path, i, 'active_params')}: {value['active_params']} active parameters "
            f"are more than the {value['params']} in all (params): give active_params <= params"
        )
    if moe["top_k"] is not None and moe["experts"] is not None and moe["top_k"] > moe["experts"]:
        raise LLMQueryError(
            f"{_where(path, i, 'top_k')}: top_k {moe['top_k']:g} is more than the "
            f"{moe['experts']:g} experts: each token goes to at most all of them"
        )
    overlap = _switch(path, i, value, "moe_overlap")
    if overlap is not None and moe["active_params"] is None:
        raise LLMQueryError(
            f"{_where(path, i, 'moe_overlap')}: moe_overlap applies to mixture-of-experts rows "
            "(give active_params) and this row is a dense model: leave moe_overlap blank"
        )
    shape = tuple((c, int(v)) for c in SHAPE_COLUMNS if (v := optional(c)) is not None)
    gated = _kind(path, i, value, "mlp", mlp_kind_gated)
    tied = _kind(path, i, value, "embeddings", embeddings_kind_tied)
    kinds = [c for c, v in zip(KIND_COLUMNS, (gated, tied), strict=True) if v is not None]
    if moe["active_params"] is not None and (n_layer or d_model or shape or kinds):
        given = "n_layer" if n_layer else "d_model" if d_model else [*dict(shape), *kinds][0]
        raise LLMQueryError(
            f"{_where(path, i, given)}: a mixture-of-experts row takes its shape from its "
            f"preset or counts; leave n_layer, d_model and "
            f"{', '.join([*SHAPE_COLUMNS, *KIND_COLUMNS])} blank"
        )
    query = LLMQuery(
        params=total,
        seq_len=int(_number(path, i, "seq_len", value["seq_len"])),
        total_gpus=num_gpus,
        gpu_name=gpu,
        precision=precision,
        n_layer=int(n_layer) if n_layer else None,
        d_model=int(d_model) if d_model else None,
        global_batch_tokens=optional("global_batch_tokens"),
        gpus_per_node=int(per_node) if per_node else 0,
        network_gbps=optional("network_gbps") or 0.0,
        mode=mode,
        framework=framework,
        eager=eager,
        fp8_recipe=recipe,
        moe_overlap=overlap,
        dp_overlap=_switch(path, i, value, "dp_overlap"),
        tp_overlap=_switch(path, i, value, "tp_overlap"),
        fp32_reduce=_switch(path, i, value, "fp32_reduce"),
        board_gpus=int(optional("board_gpus") or 0),
        attention=attention,
        active_params=moe["active_params"],
        experts=_whole(moe["experts"]),
        top_k=_whole(moe["top_k"]),
        shared_experts=_whole(moe["shared_experts"]),
        expert_ffn=_whole(moe["expert_ffn"]),
        shape=shape,
        gated_mlp=gated,
        tied_embeddings=tied,
    )
    try:
        workload = query.workload()
    except ShapeSizeError as exc:
        raise LLMQueryError(
            f"{_where(path, i, ', '.join(['params', *dict(shape), *kinds]))}: {exc.described} "
            f"but params is {exc.apart}: set params to {exc.size} or give the rest of the "
            f"shape ({', '.join([*SHAPE_COLUMNS, *KIND_COLUMNS])})"
        ) from None
    except ValueError as exc:
        field = "active_params" if query.active_params is not None else "params"
        field = ", ".join([field, *dict(shape), *kinds]) if shape or kinds else field
        raise LLMQueryError(f"{_where(path, i, field)}: {exc}") from None
    batch = query.global_batch_tokens or run.global_batch_tokens
    seq = int(workload.seq_len or 0)
    if batch is not None and batch < seq:
        whose = "" if query.global_batch_tokens else " (the run's)"
        raise LLMQueryError(
            f"{_where(path, i, 'global_batch_tokens')}: {batch:,.0f} tokens{whose} is less "
            f"than one sequence of {seq:,}; give at least {seq:,}"
        )
    try:
        query_settings(run, query)
    except ValueError as exc:
        field = next((f for f in ("tp_overlap", "eager") if str(exc).startswith(f)), "framework")
        raise LLMQueryError(f"{_where(path, i, field)}: {exc}") from None
    stack = query.framework or run.framework
    return dataclasses.replace(query, layout=_layout(path, i, value, workload, query, stack))


def _kind(
    path: Path, i: int, value: dict[str, str], column: str, named: Callable[[str], bool]
) -> bool | None:
    """A KIND_COLUMNS cell as `named` reads it (mlp: gated; embeddings: tied); None when
    blank (the shape's rule)."""
    text = value.get(column, "").strip()
    if not text:
        return None
    try:
        return named(text)
    except ValueError as exc:
        raise LLMQueryError(f"{_where(path, i, column)}: {exc}") from None


def _switch(path: Path, i: int, value: dict[str, str], column: str) -> bool | None:
    """A true/false cell (SWITCH_WORDS) as a bool; None when blank (the run's setting)."""
    text = value.get(column, "").strip().lower()
    if text and text not in SWITCH_WORDS:
        raise LLMQueryError(
            f"{_where(path, i, column)}: {value[column]!r} is not true or false "
            f"(valid: {', '.join(SWITCH_WORDS)}; blank: the run's setting)"
        )
    return SWITCH_WORDS[text] if text else None


def query_settings(settings: LLMSettings, q: LLMQuery) -> LLMSettings:
    """The run's settings with what the row gives instead (batch, framework, eager, fp8
    recipe, MoE, data- and tensor-parallel overlap, fp32 gradient reduction, attention, a
    switchless board)."""
    return dataclasses.replace(
        settings,
        global_batch_tokens=q.global_batch_tokens or settings.global_batch_tokens,
        framework=q.framework or settings.framework,
        framework_stated=bool(q.framework) or settings.framework_stated,
        eager=settings.eager if q.eager is None else q.eager,
        fp8_recipe=q.fp8_recipe or settings.fp8_recipe,
        moe_overlap=settings.moe_overlap if q.moe_overlap is None else q.moe_overlap,
        dp_overlap=settings.dp_overlap if q.dp_overlap is None else q.dp_overlap,
        tp_overlap=settings.tp_overlap if q.tp_overlap is None else q.tp_overlap,
        fp32_reduce=settings.fp32_reduce if q.fp32_reduce is None else q.fp32_reduce,
        attention=q.attention or settings.attention,
        board_gpus=q.board_gpus or settings.board_gpus,
    )


def _whole(value: float | None) -> int | None:
    return None if value is None else int(value)


def _layout(
    path: Path, i: int, value: dict[str, str], workload: Workload, query: LLMQuery, stack: str
) -> UserLayout | None:
    """The row's own layout from its layout columns (None when it gives none), checked
    against its GPU count, model and training stack."""
    given = {c: value.get(c, "") for c in LAYOUT_COLUMNS if value.get(c, "")}
    if not given:
        return None
    tokens = []
    for column, cell in given.items():
        word = cell.lower()
        if column == "recompute":
            tokens.append(f"recompute={word}")
        elif column == "zero":  # zero1 or 1
            tokens.append(word if word.startswith("zero") else f"zero{word}")
        else:
            size = int(_number(path, i, column, cell))
            tokens.append(f"{'mb' if column in ('mbs', 'micro_batch') else column}{size}")
    field = ", ".join(given)
    try:
        user = parse_layout(" ".join(tokens)).for_gpus(query.total_gpus)
        check_layout(user, llm_shape_of(workload), stack)
    except LayoutSpecError as exc:
        raise LLMQueryError(f"{_where(path, i, field)}: {exc}") from None
    return user


def estimate_llm(
    rows: list[LLMQuery],
    gpus_per_node: int,
    network_gbps: float,
    settings: LLMSettings,
    figures: dict[str, pd.DataFrame] | None = None,
    ops: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """OUTPUT_COLUMNS but method_detail, then DETAIL_COLUMNS (codes and figures the CLI
    words into method_detail), for each query (row defaults fill from the arguments);
    LLMQueryError naming the line where a row's own layout cannot run as given.

    `figures`: own GPT-benchmark MFU per precision (planner.llm.mfu.gpt_mfu_figures), which
    calibrates the kernel rates on its GPU; `ops`: the results table whose operator
    benchmark runs give measured kernels on their GPU (planner.llm.op_efficiency).
    """
    figures = figures or {}
    out = []
    for line, q in enumerate(rows, start=2):  # line 1 is the header
        workload = q.workload()
        row_settings = query_settings(settings, q)
        found = predict_layout(
            workload,
            q.precision,
            q.gpu_name,
            q.total_gpus,
            q.gpus_per_node or gpus_per_node,
            q.network_gbps or network_gbps,
            figures.get(q.precision),
            settings=row_settings,
            ops=ops,
        )
        layout = found.layout
        record = prediction_record(found)
        row = {
            "tokens_per_s": found.tokens_per_s,
            "tokens_per_s_low": found.tokens_per_s_low,
            "tokens_per_s_high": found.tokens_per_s_high,
            "mfu": layout.mfu,
            "layout": layout.label,
            "fits": layout.fits,
            "method": prediction_source(found) or "none",
            **{column: record[column] for column in DETAIL_COLUMNS},
            "best_layout": layout.label,
            "best_tokens_per_s": found.tokens_per_s,
            "user_layout": None,
        }
        if q.layout is not None:
            try:
                row |= _own_layout_row(q, workload, found, row_settings,
                                       figures.get(q.precision), ops, gpus_per_node,
                                       network_gbps)  # fmt: skip
            except LayoutSpecError as exc:  # what only timing shows (vpp and micro-batches)
                raise LLMQueryError(f"line {line}, the layout columns: {exc}") from None
        out.append(row)
    return pd.DataFrame(
        out, columns=[*OUTPUT_COLUMNS[:-1], *DETAIL_COLUMNS, *LAYOUT_OUTPUT_COLUMNS, "user_layout"]
    )


def _own_layout_row(
    q: LLMQuery,
    workload: Workload,
    best: LayoutPrediction,
    settings: LLMSettings,
    figures: pd.DataFrame | None,
    ops: pd.DataFrame | None,
    gpus_per_node: int,
    network_gbps: float,
) -> dict[str, object]:
    """The output cells of a row timed at its own layout: its tokens/s (the best layout's
    band, as a ratio), MFU, layout, fit, and the LayoutComparison planner.render.llm words;
    method "none" where the layout cannot be timed (the best layout's method otherwise)."""
    assert q.layout is not None
    found = compare_layout(best, workload, q.gpu_name, q.layout, settings)
    layout = found.timed.layout
    tokens = layout.tokens_per_s
    low = best.tokens_per_s_low / best.tokens_per_s if best.tokens_per_s > 0 else math.nan
    high = best.tokens_per_s_high / best.tokens_per_s if best.tokens_per_s > 0 else math.nan
    timed = {} if math.isfinite(tokens) and tokens > 0 else {"method": "none"}
    return timed | {
        "tokens_per_s": tokens,
        "tokens_per_s_low": tokens * low,
        "tokens_per_s_high": tokens * high,
        "mfu": layout.mfu,
        "layout": found.timed.user.text,
        "fits": layout.reason == "fits",
        "user_layout": found,
    }
