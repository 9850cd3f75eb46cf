"""Published LLM training runs as the operator model's inputs: the calibration corpus.

Reads reference/calibration/llm_training_throughput.csv (sources, locations and defects in
reference/calibration/README.md) and gpuplan's own runs in the same columns
(reference/own_runs/llm_training_throughput.csv, one more source: load_calibration), and
turns each usable row into what
planner.llm.throughput.predict_layout takes, with the measured tokens/s per GPU. Used by
tools/fit_llm_stacks.py (the fit) and tools/evaluate_llm_corpus.py (the evaluation) only:
the planner itself reads the fitted parameters (planner.llm.stack_profiles), not this.

Rules, each an assumption where the row does not say (codes in `assumed`):
- eager PyTorch (LLMSettings.eager) where the `framework` text says "eager" (gpuplan's own
  runs without --compile, KempnerForge's one run with compile_model=false, and FlagPerf's
  DeepSpeed runs of Hugging Face Transformers models, which nothing compiles). Attention
  without FlashAttention (LLMSettings.flash_attention) where the notes say "no
  FlashAttention" (FlagPerf's Baichuan2-13B runs, whose README says its model code lacks
  it); FlashAttention-3 where the framework text or notes say so (nanochat's FA3 on
  Hopper), else the stack's kernel.
- stack family by the `framework` text (FAMILY_PATTERNS): Megatron-LM/-Core, FlagScale,
  AMD Primus and the Llama 3 4D-parallel stack are megatron; nanotron and picotron are
  nanotron; PyTorch FSDP/FSDP2 stacks (OLMo-core, fms-fsdp, torchao/torchtitan, lit-gpt,
  thunder), compiled PyTorch data parallelism (DDP in modded-nanogpt, nanochat's sharded
  optimizer) and MaxText's JAX FSDP are fsdp; DeepSpeed and PaddleNLP sharding (ZeRO-like)
  are deepspeed.
- ZeRO stage: as stated (`zero_fsdp`): ZeRO-0 or "none" (DDP) is plain data parallelism
  (zero0: nanotron then all-reduces its gradients under the backward and gathers no weights
  after the step), stage 1 and 2 are timed as ZeRO-1, FSDP/HSDP as ZeRO-3; blank, the
  stack's own.
- the model's shape: the row's layers, width, heads, key/value heads, MLP width and
  vocabulary where stated, else the published shape of the model it names (MODEL_SHAPES),
  else a Llama-3-style shape for its parameter count (`shape`); the MLP is GPT's ungated
  one where the model text says GPT or ReLU, else LLaMA's SwiGLU.
- GPU: the spec table's row (MI300 as MI300X, MI355 as MI355X); GPU count missing: 8 for FSDP-style
  per-GPU rates (`gpus`); sequence length missing: 4,096 (`seq`); precision missing or
  "amp": bf16; fp8 in the text: fp8, with the recipe the text names (planner.llm.
  fp8_recipes.recipe_of_text: torchao's tensorwise, rowwise, rowwise_with_gw_hp), else the
  stack's default (Transformer Engine's delayed scaling for megatron, torchao's tensorwise
  for fsdp).
- the measured rate: tokens/s per GPU as stated (the middle of a stated range), else
  TFLOP/s per GPU over the FLOPs per token the stacks count (reported_flops_per_token,
  `tflops`), else MFU x the bf16 peak over them (`mfu`).
- layout: the stated tensor, pipeline and context parallel sizes (or tp1 pp1 where only a
  data-parallel size equal to the GPU count is stated) (`pinned`; the search
  picks the rest, and all of it where the stack cannot run the stated one).
- global batch: gbs sequences x seq where stated (or micro-batch x the gradient accumulation
  steps the notes state x data-parallel ranks), else micro-batch x GPUs for FSDP stacks
  (their benchmarks step every micro-batch) and the planner's default pre-training batch for
  the others (`batch`).
- network: the stated NICs per node ("4 x IB 200Gb/s per node" in the interconnect text),
  else one NIC per GPU at the stated InfiniBand rate ("IB 200Gb/s" in the GPU or
  interconnect text), else one 400 Gb/s NIC per GPU where only InfiniBand NDR is named
  (`network`), else 3,200 Gb/s per node (8 x 400G, `network`), 1,600 for A100, 800 for
  GCP A3.
- mixture-of-experts models: the preset (planner.workloads.moe_presets) the model text
  names, its shape from the model card; its stated expert-parallel size pinned, and its
  expert-tensor-parallel size where the notes state it ("ETP 1": Megatron-Core's MoE
  parallel folding, planner.llm.moe); its all-to-all timed under another micro-batch's
  compute where the notes say it overlapped (A2A_OVERLAP_TEXT).
- gradient reduction: in fp32 where the row says so (FP32_REDUCE_TEXT: KempnerForge's
  FSDP2 MixedPrecisionPolicy), else the stack's own (LLMSettings.fp32_reduce).
- the node's board: where the notes state a node of fewer than 8 NVIDIA GPUs ("4 H200 per
  node": KempnerForge's), a board whose GPUs link directly (BOARD_TEXT; LLMSettings.
  board_gpus), whatever share of it the run used; else the GPU's own platform.
- pipeline schedule: the stated virtual stages (`vp`), else an interleaved schedule of the
  searched v > 1 where the notes say only that it was interleaved (INTERLEAVED_TEXT).
- attention kernel: FlashAttention-3 where the text says so, FlashAttention-2-class where the
  run was published before FlashAttention-3's release (FA3_RELEASED), else the stack's.
- communication overlap: the `comm_overlap` column's (COMM_OVERLAP: the data-parallel
  collectives under compute and the tensor-parallel ones pipelined with the GEMMs, as the
  run's launch configuration states), blank as the stack usually runs (data-parallel
  overlapped, tensor-parallel not).
Rows left out and why (`skipped`): mixture-of-experts models no preset names, no
parameter count, CPU offload, fp32, no GPU count with tensor parallelism,
the framework not stated, and runs their own source says ran degraded (`degraded`:
DEGRADED_TEXT in the notes, which quote the source: near the GPU's memory limit), which the
model cannot time as a healthy run and the fit must not learn from; degraded_runs gives
them for the evaluation to report.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from planner.llm.fp8_recipes import recipe_of_text
from planner.llm.throughput import peak_flops
from planner.settings import StatedLayout
from planner.workloads.catalog import Workload, llm_workload, moe_workload
from planner.workloads.llm_presets import layer_matmul_params
from planner.workloads.moe_presets import MOE_PRESETS, MoEPreset

REFERENCE = Path(__file__).resolve().parents[2] / "reference"
CORPUS_PATH = REFERENCE / "calibration" / "llm_training_throughput.csv"  # published runs
# gpuplan's own runs (reference/own_runs) in the same columns: fitted on beside the
# published ones, and held out as one source like them.
OWN_RUNS_PATH = REFERENCE / "own_runs" / "llm_training_throughput.csv"
# FlashAttention-3-class attention as a row's text names it: FlashAttention-3 itself, or
# cuDNN's fused attention (Transformer Engine's, MaxText's cudnn_flash_te, and PyTorch SDPA's
# cuDNN backend, which SDPA runs on Hopper from torch 2.11 with cuDNN 9.19: gpuplan's own H200
# ops run records it; its rates are within about 10% of FlashAttention-3's, planner.llm.
# kernel_rates).
FA3_TEXT = re.compile(
    r"flashattention-3|flash attention 3|\bfa3\b|cudnn[ _]?(?:attention|flash)", re.IGNORECASE
)
# FlashAttention-3's release (Dao-AILab/flash-attention, 2024-07-11; Shah et al. 2024): a run
# published before it ran FlashAttention-2-class attention whatever its stack's kernel today.
FA3_RELEASED = "2024-07-11"
# The expert-tensor-parallel size a row's notes state (Megatron-Core's
# --expert-tensor-parallel-size; unstated, it is the tensor-parallel size).
EXPERT_TP_TEXT = re.compile(r"\bETP (\d+)")
# A run whose notes say its expert all-to-all ran under another micro-batch's compute
# (Megatron-Core's 1F1B A2A overlap, DeepSeek's DualPipe): timed with LLMSettings.moe_overlap.
# A run whose notes state an interleaved pipeline schedule without its virtual stages
# ("interleaved schedule, V not stated": Llama 3, Dubey et al. 2024 sec. 3.3.2).
INTERLEAVED_TEXT = re.compile(r"interleaved schedule, V not stated", re.IGNORECASE)
FP32_REDUCE_TEXT = re.compile(r"fp32 gradient reduction|reduce_dtype=?\s*float32", re.IGNORECASE)
A2A_OVERLAP_TEXT = re.compile(r"1f1b (a2a )?overlap|a2a overlap|dualpipe", re.IGNORECASE)
DEGRADED_TEXT = re.compile(r"degraded, as its source says", re.IGNORECASE)
# A node of fewer than 8 NVIDIA data-centre GPUs ("4 H200 per node"): a board without
# NVSwitch, its GPUs linked directly (planner.machines.boards).
BOARD_TEXT = re.compile(r"\b([2-7]) (?:A100|H100|H200|B200|B300)\S* per node")
# The `comm_overlap` column: which of Megatron-Core's overlaps the run's launch configuration
# turns on, as (dp_overlap, tp_overlap) (LLMSettings); blank: the stack's usual (dp on, tp off).
COMM_OVERLAP = {"": (True, False), "dp": (True, False), "tp": (False, True),
                "dp+tp": (True, True), "none": (False, False)}  # fmt: skip
FAMILY_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"megatron-deepspeed|deepspeed|paddlenlp", "deepspeed"),
    (r"megatron|flagscale|primus|meta internal", "megatron"),
    (r"nanotron|picotron", "nanotron"),
    (
        r"fsdp|olmo-core|maxtext|lit-gpt|thunder|torchtitan|gpuplan bench|pytorch ddp|nanochat",
        "fsdp",
    ),
)
NDR_GBPS = 400.0  # one InfiniBand NDR port (NVIDIA ConnectX-7: 400 Gb/s)
GPU_NAMES = {
    "H100": "H100-SXM",
    "H100-SXM": "H100-SXM",
    "H800": "H800-SXM",
    "H200": "H200-SXM",
    "A100-40GB": "A100-SXM-40GB",
    "MI300X": "MI300X",
    "MI300 (variant not stated)": "MI300X",
    "MI325X": "MI325X",
    "MI355 (variant not stated)": "MI355X",
    "B200": "B200",
}
# (regex on the lower-cased model name without spaces, dashes and dots, shape): layers,
# width, heads, key/value heads, MLP width, vocabulary, parameters. Llama 2 (Touvron et al.
# 2023b), Code Llama 34B's shape for Llama 2 34B, Llama 3 (Dubey et al. 2024, table 3),
# Baichuan 2 (Yang et al. 2023), ChatGLM3-6B (THUDM model card). The Ultra-Scale Playbook
# sweep's four sizes: nanotron scripts/scaling_benchmarks.py @e24d2483, model_configs
# (layers, hidden, heads, intermediate) with key/value heads = heads (NUM_KEY_VALUE_HEADS =
# None), vocabulary 131,072 (VOCAB_SIZES) and embeddings tied below an intermediate of
# 10,000: its estimate_num_params gives exactly the 1.34B, 3.57B, 8.86B and 80.0B the sweep's
# figure labels (SEQUENCE_LENGTHS = [4096], the corpus default).
MODEL_SHAPES: tuple[tuple[str, tuple[int, int, int, int, int, int, float]], ...] = (
    (r"^134bllamastyleultrascale", (16, 2048, 32, 32, 8192, 131072, 1.342e9)),
    (r"^357bllamastyleultrascale", (28, 3072, 32, 32, 8192, 131072, 3.574e9)),
    (r"^886bllamastyleultrascale", (32, 4096, 32, 32, 14336, 131072, 8.858e9)),
    (r"^800bllamastyleultrascale", (80, 8192, 64, 64, 28672, 131072, 79.99e9)),
    (r"llama(3|31)8b", (32, 4096, 32, 8, 14336, 128256, 8.03e9)),
    (r"llama(3|31)70b", (80, 8192, 64, 8, 28672, 128256, 70.6e9)),
    (r"llama(1|2)?70b", (80, 8192, 64, 8, 28672, 32000, 69.0e9)),
    (r"llama(1|2)?34b", (48, 8192, 64, 8, 22016, 32000, 33.7e9)),
    (r"llama(1|2)?13b", (40, 5120, 40, 40, 13824, 32000, 13.0e9)),
    (r"llama(1|2)?7b", (32, 4096, 32, 32, 11008, 32000, 6.74e9)),
    (r"olmo11241b", (18, 2048, 16, 16, 5632, 100278, 1.2e9)),  # as OLMo2 1B's row states
    (r"baichuan213b", (40, 5120, 40, 40, 13696, 125696, 13.9e9)),
    (r"chatglm36b", (28, 4096, 32, 2, 13696, 65024, 6.2e9)),
)
DEFAULT_SEQ_LEN = 4096
DEFAULT_GPUS = 8


@dataclass(frozen=True)
class CorpusRun:
    """One published run as the model's inputs, its measured tokens/s per GPU and MFU (of
    the bf16 dense peak, this model's FLOPs per token), and what was assumed."""

    row: int
    source: str
    family: str
    model: str
    workload: Workload
    gpu_name: str
    num_gpus: int
    gpus_per_node: int
    network_gbps: float
    precision: str
    global_batch_tokens: float | None
    micro_batch: int | None
    recompute: str
    zero: str
    tokens_per_gpu: float
    mfu: float
    assumed: str
    pinned: StatedLayout | None = None  # the stated parallel sizes
    eager: bool = False  # the framework text says eager (no torch.compile, LLMSettings.eager)
    flash_attention: bool = True  # False where the notes say the model ran without it
    fp8_recipe: str = "auto"  # the recipe the precision text names (else the stack's default)
    attention_kernel: str = ""  # the kernel the source's text or date says ran ("": stack's)
    moe_overlap: bool = False  # the notes say the expert all-to-all ran under compute
    dp_overlap: bool = True  # ZeRO-0/1's collectives under compute (COMM_OVERLAP)
    tp_overlap: bool = False  # tp collectives pipelined with the GEMMs (COMM_OVERLAP)
    fp32_reduce: bool | None = None  # gradients reduced in fp32 (FP32_REDUCE_TEXT); None: stack's
    board_gpus: int = 0  # GPUs of the run's switchless board (BOARD_TEXT); 0: the GPU's own


def family_of(framework_text: str) -> str | None:
    """The stack family of a corpus `framework` text (FAMILY_PATTERNS), None if none."""
    text = str(framework_text).lower()
    return next((f for pattern, f in FAMILY_PATTERNS if re.search(pattern, text)), None)


def _number(value: object) -> float:
    """The first number in a cell ("3.57B (comment)" -> 3.57e9 with its unit)."""
    match = re.search(r"([\d.]+)\s*([BM]?)", str(value))
    if not match:
        return math.nan
    unit = {"B": 1e9, "M": 1e6}.get(match.group(2), 1.0)
    return float(match.group(1)) * unit


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(float(value))


def _workload(row: pd.Series, seq_len: int, assumed: list[str]) -> Workload:
    """The row's model (module docstring: stated shape, else MODEL_SHAPES, else a
    Llama-3-style shape)."""
    key = re.sub(r"[^a-z0-9]", "", str(row["model"]).lower())
    known = next((shape for pattern, shape in MODEL_SHAPES if re.search(pattern, key)), None)
    params = _number(row["params"])
    stated = {
        "n_layer": row.get("n_layer"), "d_model": row.get("d_model"), "heads": row.get("heads"),
        "kv_heads": row.get("kv_heads"), "ffn": row.get("ffn"), "vocab": row.get("vocab"),
    }  # fmt: skip
    pick = {k: int(v) for k, v in stated.items() if _finite(v)}
    if known is not None:
        layers, width, heads, kv, ffn, vocab, params = known
    else:
        layers, width, heads, kv, ffn, vocab = llama_style_shape(params)
        if len(pick) < len(stated):  # a part of the shape is the Llama-3-style guess
            assumed.append("shape")
    layers, width = pick.get("n_layer", layers), pick.get("d_model", width)
    heads = pick.get("heads", heads)
    kv = pick.get("kv_heads", kv if "heads" not in pick or known else pick["heads"])
    # GPT's ungated 4 h MLP (GELU, or ReLU^2 in modded-nanogpt and nanochat); every other
    # model is SwiGLU (LLaMA's)
    gpt = "GPT" in str(row["model"]) or "relu" in str(row["model"]).lower()
    if "ffn" in pick:
        ffn = pick["ffn"]
    elif gpt:
        ffn = 4 * width
    vocab = pick.get("vocab", vocab)
    base = llm_workload(params, 1e9, seq_len=seq_len, n_layer=layers, d_model=width)
    kv = kv if heads % max(kv, 1) == 0 else heads
    return dataclasses.replace(
        base, n_heads=heads, n_kv_heads=kv, ffn_dim=ffn, vocab_size=vocab, gated_mlp=not gpt
    )


def reported_flops_per_token(workload: Workload) -> float:
    """Training FLOPs per token as the stacks report them (Megatron-LM's and nanotron's
    TFLOP/s and MFU, counted from the shape): 6 x the weights that multiply - each layer's
    q, k, v, o and MLP matrices and the output layer's V h, tied to the input embedding or
    not (the input embedding is a lookup) - + 12 L s h for attention (Narayanan et al. 2021,
    app. A; Chowdhery et al. 2022, app. B; nanotron models/llama.py get_flops). MoE: 6 x the
    active parameters less the input embedding."""
    layers, width = float(workload.n_layer or 0), float(workload.d_model or 0)
    vocab, seq = float(workload.vocab_size or 0), float(workload.seq_len or 0)
    attention = 12.0 * layers * seq * width
    if workload.is_moe:
        return 6.0 * (float(workload.active_params or 0) - vocab * width) + attention
    heads = int(workload.n_heads or 1)
    layer = layer_matmul_params(
        int(width), heads, int(workload.n_kv_heads or heads), int(workload.ffn_dim or 4 * width),
        workload.mlp_gated,
    )  # fmt: skip
    return 6.0 * (layers * layer + vocab * width) + attention


def _pinned(row: pd.Series) -> StatedLayout | None:
    """The stated tp, pp and cp (1 where one is stated and the other not) with the stated
    virtual pipeline (or only that it interleaved: INTERLEAVED_TEXT), expert-parallel and
    expert-tensor-parallel (EXPERT_TP_TEXT) sizes (else searched); pure data parallelism
    where only a data-parallel size equal to the GPU count is stated; None when nothing
    is."""
    stated = {k: int(row[k]) for k in ("tp", "pp", "cp", "vp", "ep") if _finite(row.get(k))}
    if not ({"tp", "pp"} & stated.keys()):
        pure_dp = _finite(row["dp"]) and _finite(row["num_gpus"])
        return StatedLayout() if pure_dp and int(row["dp"]) == int(row["num_gpus"]) else None
    notes = str(row.get("notes", ""))
    etp = EXPERT_TP_TEXT.search(notes)
    return StatedLayout(
        tp=stated.get("tp", 1), pp=stated.get("pp", 1), cp=stated.get("cp", 1),
        vpp=stated.get("vp", 0), ep=stated.get("ep", 0), etp=int(etp.group(1)) if etp else 0,
        interleaved=bool(INTERLEAVED_TEXT.search(notes)),
    )  # fmt: skip


def _stated_global_batch(row: pd.Series, gpus: int) -> float | None:
    """Sequences per optimizer step: the stated global batch, else micro-batch x gradient
    accumulation steps (a "GAS N" or "accumulate=N" in the notes) x data-parallel ranks
    (stated, else the GPUs over tp x pp x cp); None when neither is stated."""
    if _finite(row["gbs"]):
        return float(row["gbs"])
    steps = re.search(r"\b(?:GAS|accumulate)\s*=?\s*(\d+)", str(row.get("notes", "")))
    if steps is None or not _finite(row["mbs"]):
        return None
    ranks = row["dp"] if _finite(row["dp"]) else gpus / math.prod(
        float(row[k]) if _finite(row[k]) else 1.0 for k in ("tp", "pp", "cp")
    )  # fmt: skip
    return float(row["mbs"]) * int(steps.group(1)) * max(1.0, float(ranks))


def llama_style_shape(params: float) -> tuple[int, int, int, int, int, int]:
    """(layers, width, heads, key/value heads, MLP width, vocabulary) of a Llama-3-style
    model of `params` parameters: the catalog's width for that size (planner.workloads
    .catalog.llm_shape) rounded to a multiple of 1,024 (heads of 128, a multiple of 8, so
    tensor parallelism up to 8 divides them), 8 key/value heads, a SwiGLU MLP of 3.5 x the
    width (rounded to 256), Llama 3's 128,256-token vocabulary untied, and the layers that
    give `params` (an assumption for models named only by size)."""
    width = max(1024, round(int(llm_workload(params, 1e9).d_model or 1024) / 1024) * 1024)
    ffn = int(round(3.5 * width / 256) * 256)
    vocab = 128256
    per_layer = 2 * width * width + 2 * width * 8 * 128 + 3 * width * ffn
    layers = max(1, round((params - 2 * vocab * width) / per_layer))
    return layers, width, width // 128, 8, ffn, vocab


def _precision(text: object) -> str | None:
    text = str(text).lower()
    if "fp8" in text or "float8" in text:
        return "fp8"
    if text.startswith("fp32"):
        return None
    return "bf16"


def _zero(text: object) -> str:
    text = str(text).lower()
    if any(k in text for k in ("zero-3", "fsdp", "hsdp")):
        return "zero3"
    if any(k in text for k in ("zero-0", "none")):  # plain data parallelism (DDP)
        return "zero0"
    if any(k in text for k in ("zero-1", "stage1", "stage2")):
        return "zero1"
    return "auto"


def _megatron_zero(text: object) -> str:
    """Megatron-style stacks: ZeRO-3 only where stated; Llama 3's "FSDP-style" data
    parallelism keeps the weights gathered after the forward pass (Dubey et al. 2024, sec.
    3.3.2), which this model times as ZeRO-1."""
    text = str(text).lower()
    return "zero1" if "dp stands for fsdp" in text else _zero(text)


def _recompute(text: object) -> str:
    text = str(text).lower()
    if text.startswith("full"):
        return "full"
    if "per-op" in text:  # torchtitan's per-operator policy (planner.llm.per_op_recompute)
        return "per-op"
    if any(k in text for k in ("selective", "sac", "minimal")):
        return "selective"
    if text == "none":
        return "none"
    return "auto"


def moe_preset_named(model: object) -> MoEPreset | None:
    """The MoE preset (planner.workloads.moe_presets) whose title the model text names
    ("Mixtral 8x7B (MoE)" -> mixtral-8x7b), None if none does."""
    key = re.sub(r"[^a-z0-9]", "", str(model).lower())
    titles = {re.sub(r"[^a-z0-9]", "", p.title.lower()): p for p in MOE_PRESETS.values()}
    return next((p for title, p in titles.items() if title in key), None)


def _is_moe(row: pd.Series) -> bool:
    return "moe" in str(row["model"]).lower() or "moe" in str(row["params"]).lower()


def _attention_kernel(row: pd.Series) -> str:
    """ "fa3" where the row's text says FlashAttention-3-class attention ran (FA3_TEXT), "fa2"
    where it was published before FlashAttention-3 existed (FA3_RELEASED, the first date in
    source_date), else "" (the stack's kernel: planner.llm.stack_profiles.ATTENTION_KERNEL)."""
    if FA3_TEXT.search(f"{row['framework']} {row['notes']}"):
        return "fa3"
    published = re.search(r"\d{4}-\d{2}-\d{2}", str(row.get("source_date", "")))
    return "fa2" if published and published.group(0) < FA3_RELEASED else ""


def _comm_overlap(index: int, row: pd.Series) -> tuple[bool, bool]:
    """(dp_overlap, tp_overlap) of a row's `comm_overlap` (COMM_OVERLAP); ValueError naming
    the row and the valid values for any other."""
    value = row.get("comm_overlap")
    text = str(value).strip().lower() if isinstance(value, str) else ""
    if text not in COMM_OVERLAP:
        raise ValueError(
            f"corpus row {index}: comm_overlap {value!r}: valid are "
            f"{', '.join(k for k in COMM_OVERLAP if k)} or blank"
        )
    return COMM_OVERLAP[text]


def corpus_run(index: int, row: pd.Series, degraded_too: bool = False) -> CorpusRun | str:
    """The CorpusRun of one corpus row, or the code of why it is left out (a run its source
    says ran degraded is built only when `degraded_too`)."""
    if not degraded_too and DEGRADED_TEXT.search(str(row["notes"])):
        return "degraded"
    family = family_of(row["framework"])
    moe = None
    if _is_moe(row):
        moe = moe_preset_named(row["model"])
        if moe is None:
            return "moe"
    if family is None:
        return "no_framework"
    if "offload" in str(row["framework"]).lower():
        return "offload"
    if moe is None and not math.isfinite(_number(row["params"])):
        return "no_params"
    precision = _precision(row["precision"])
    if precision is None:
        return "fp32"
    gpu = GPU_NAMES.get(str(row["gpu_model"]))
    if gpu is None:
        return "no_gpu"
    overlap = _comm_overlap(index, row)
    assumed: list[str] = []
    gpus = row["num_gpus"]
    if not _finite(gpus):
        if _finite(row["tp"]) or not _finite(row["tokens_per_s_per_gpu"]):
            return "no_count"
        gpus = DEFAULT_GPUS
        assumed.append("gpus")
    gpus = int(gpus)
    seq = row["seq_len"]
    if not _finite(seq):
        seq = DEFAULT_SEQ_LEN
        assumed.append("seq")
    seq = int(seq)
    workload = (
        moe_workload(moe.params, moe.active_params, 1e9, seq_len=seq)
        if moe is not None
        else _workload(row, seq, assumed)
    )
    per_token = float(workload.flops_per_sample)
    reported = reported_flops_per_token(workload)
    peak = peak_flops(gpu, "bf16")
    if _finite(row["tokens_per_s_per_gpu"]):
        high = row["tokens_per_s_per_gpu_max"]
        tokens = float(row["tokens_per_s_per_gpu"])
        tokens = (tokens + float(high)) / 2.0 if _finite(high) else tokens
    elif _finite(row["tflops_per_gpu"]):
        tokens = float(row["tflops_per_gpu"]) * 1e12 / reported
        assumed.append("tflops")
    elif _finite(row["mfu_pct"]):
        tokens = float(row["mfu_pct"]) / 100.0 * peak / reported
        assumed.append("mfu")
    else:
        return "no_rate"
    mbs = int(row["mbs"]) if _finite(row["mbs"]) else None
    batch: float | None = None
    stated_gbs = _stated_global_batch(row, gpus)
    if stated_gbs is not None:
        batch = stated_gbs * seq
    elif family == "fsdp":  # FSDP benchmarks step each micro-batch (no accumulation)
        batch = float((mbs or 1) * gpus * seq)
        assumed.append("batch")
    else:  # the planner's default pre-training batch
        assumed.append("batch")
    per_node = int(row["gpus_per_node"]) if _finite(row["gpus_per_node"]) else min(8, gpus)
    interconnect = str(row.get("interconnect", ""))
    stated_nic = re.search(r"IB\s*(\d+)\s*Gb/s", f"{interconnect} {row.get('gpu_detail', '')}")
    counted = re.search(r"(\d+)\s*x\s*IB\s*(\d+)\s*Gb/s per node", interconnect)
    network = 1600.0 if gpu.startswith("A100") else 3200.0
    if counted:  # a stated count of NICs per node
        network = float(counted.group(1)) * float(counted.group(2))
    elif stated_nic:  # one NIC per GPU, as in the DGX/HGX nodes these runs name
        network = float(stated_nic.group(1)) * per_node
    elif "A3" in interconnect:  # GCP a3-highgpu: 4 x 200 Gb/s NICs per node
        network = 800.0
    elif "NDR" in interconnect:  # InfiniBand NDR, its count of NICs not stated: one per GPU
        network = NDR_GBPS * per_node
        assumed.append("network")
    else:
        assumed.append("network")
    return CorpusRun(
        row=index,
        source=str(row["source"]),
        family=family,
        model=str(row["model"]),
        workload=workload,
        gpu_name=gpu,
        num_gpus=gpus,
        gpus_per_node=max(1, min(per_node, gpus)),
        network_gbps=network,
        precision=precision,
        global_batch_tokens=batch,
        micro_batch=mbs,
        recompute=_recompute(row["recompute"]),
        zero=_zero(row["zero_fsdp"]) if family != "megatron" else _megatron_zero(row["zero_fsdp"]),
        tokens_per_gpu=tokens,
        mfu=tokens * per_token / peak,
        assumed=" ".join(assumed),
        pinned=_pinned(row),
        eager=bool(re.search(r"\beager\b", str(row["framework"]).lower())),
        flash_attention=not re.search(r"no flashattention", str(row["notes"]).lower()),
        fp8_recipe=recipe_of_text(row["precision"]) or "auto",
        attention_kernel=_attention_kernel(row),
        moe_overlap=moe is not None and bool(A2A_OVERLAP_TEXT.search(str(row["notes"]))),
        dp_overlap=overlap[0],
        tp_overlap=overlap[1],
        fp32_reduce=bool(FP32_REDUCE_TEXT.search(f"{row['precision']} {row['notes']}")) or None,
        board_gpus=int(board.group(1)) if (board := BOARD_TEXT.search(str(row["notes"]))) else 0,
    )


def load_calibration() -> tuple[list[CorpusRun], dict[str, str]]:
    """The runs the stack fit rests on: the published corpus's and gpuplan's own, and by
    file and row (`calibration:12`, `own_runs:3`), why the others are left out."""
    runs, skipped = [], {}
    for path in (CORPUS_PATH, OWN_RUNS_PATH):
        found, left_out = load_corpus(path)
        runs += found
        skipped.update({f"{path.parent.name}:{row}": why for row, why in left_out.items()})
    return runs, skipped


def load_corpus(path: Path = CORPUS_PATH) -> tuple[list[CorpusRun], dict[int, str]]:
    """The usable runs of the corpus and, by row, why the others are left out."""
    table = pd.read_csv(path)
    runs, skipped = [], {}
    for index, row in table.iterrows():
        found = corpus_run(int(index), row)
        if isinstance(found, str):
            skipped[int(index)] = found
        else:
            runs.append(found)
    return runs, skipped


def degraded_runs(path: Path = CORPUS_PATH) -> list[CorpusRun]:
    """The runs of the corpus their own source says ran degraded (DEGRADED_TEXT), built as
    any other run: left out of the fit and the held-out table, reported beside them."""
    table = pd.read_csv(path)
    found = (
        corpus_run(int(index), row, degraded_too=True)
        for index, row in table.iterrows()
        if DEGRADED_TEXT.search(str(row["notes"]))
    )
    return [run for run in found if not isinstance(run, str)]
