"""FP8 training recipes: how each scales its tensors, and what that costs its GEMMs.

An fp8 GEMM's time depends on how its operands are scaled (the recipe), not only on the
fp8 peak. Each recipe's factor is its GEMM time, quantization included, over the per-tensor
current-scaling ("tensorwise") recipe's, measured on one Llama-style layer (hidden 4,096,
MLP 16,384, 15,872 tokens: forward, input-gradient and weight-gradient GEMMs of QKV, output
projection, MLP up and down) under Transformer Engine's autocast, from NVIDIA/
TransformerEngine docs/examples/gemm_profiling/gemm_profiling.rst @d0067d0d (2026-06-01;
reference/calibration/gemm_achievable.csv, per-layer totals):

  Hopper (H200 NVL), ms: bf16 32.014, tensorwise 20.285, delayed 18.978, blockwise 22.882
  Blackwell (B300), ms:  bf16 12.758, tensorwise 9.147,  delayed 7.802,  mxfp8 8.984

- tensorwise: one scale per tensor from its current amax (Transformer Engine's
  Float8CurrentScaling, torchao float8's default dynamic tensorwise scaling).
- delayed: one scale per tensor from an amax history (Transformer Engine's DelayedScaling,
  Megatron-LM's --fp8-recipe default): no amax pass before the cast.
- blockwise: 1 x 128 and 128 x 128 block scales (DeepSeek-V3's recipe, Transformer Engine's
  Float8BlockScaling); on Blackwell timed as mxfp8 (block scales in the tensor cores) - an
  assumption, the source has no Blackwell blockwise row.
- rowwise: torchao's per-row scales (torch._scaled_mm): no measurement of its own; timed as
  blockwise, the nearest finer-grained recipe measured (an assumption).
- rowwise_with_gw_hp: torchao's rowwise with the weight-gradient GEMM in 16 bits: two of a
  layer's three GEMM passes at rowwise and one at the bf16 time (the passes taken as equal
  in FLOPs, as the source's per-layer totals count them).
- mxfp8: 1 x 32 block scales in the tensor cores (OCP microscaling): Blackwell and later
  only; on an earlier GPU the recipe has no rate (planner.llm.throughput: "no_peak").

GPUs other than Blackwell take Hopper's factors (AMD's CDNA included: an assumption). The
stacks' fitted fp8 GEMM factor (planner.llm.stack_profiles) is relative to tensorwise.
DEFAULT_RECIPE: what each stack runs when the recipe is not named.
"""

from __future__ import annotations

import math
import re

from edge.choices import LAST_RESORT_PREFIX, did_you_mean

RECIPES = ("tensorwise", "delayed", "rowwise", "rowwise_with_gw_hp", "blockwise", "mxfp8")
AUTO = "auto"
# Why an fp8 GPU may have no rate: the words a refusal gives.
UNRUNNABLE = "an fp8 recipe it cannot run: mxfp8 needs Blackwell"
# gpu_specs.csv architectures of the Blackwell generation (planner.llm.ops reads it too).
BLACKWELL = r"^(Blackwell|GB200|GB300)"

# Per-layer GEMM milliseconds (module docstring).
_HOPPER_MS = {"bf16": 32.014, "tensorwise": 20.285, "delayed": 18.978, "blockwise": 22.882}
_BLACKWELL_MS = {"bf16": 12.758, "tensorwise": 9.147, "delayed": 7.802, "mxfp8": 8.984}


def _factors(ms: dict[str, float], block: str) -> dict[str, float]:
    """Each recipe's GEMM time over tensorwise's, `block` standing for the block-scaled
    recipes the table lacks (module docstring)."""
    base = ms["tensorwise"]
    own = {name: value / base for name, value in ms.items()}
    rowwise = own[block]
    factors = {
        "tensorwise": 1.0,
        "delayed": own["delayed"],
        "blockwise": rowwise,
        "rowwise": rowwise,
        "rowwise_with_gw_hp": (2.0 * rowwise + own["bf16"]) / 3.0,
    }
    if "mxfp8" in own:
        factors["mxfp8"] = own["mxfp8"]
    return factors


GEMM_TIME_FACTOR = {
    "hopper": _factors(_HOPPER_MS, "blockwise"),
    "blackwell": _factors(_BLACKWELL_MS, "mxfp8"),
}
DEFAULT_RECIPE = {
    "megatron": "delayed",  # Megatron-LM --fp8-recipe default; Transformer Engine's DelayedScaling
    "deepspeed": "delayed",  # fp8 through Transformer Engine
    "fsdp": "tensorwise",  # torchao Float8LinearConfig's default
    "fsdp2": "tensorwise",
    "nanotron": "tensorwise",  # an assumption
}


def checked_recipe(name: str) -> str:
    """`name` if it is a recipe or "auto" (ValueError naming the closest and the valid ones,
    as every "unknown ..." refusal does)."""
    valid = (AUTO, *RECIPES)
    if name not in valid:
        hint = did_you_mean(name, valid, prefix=LAST_RESORT_PREFIX)
        raise ValueError(f"unknown fp8 recipe {name!r}{hint} Valid: {', '.join(valid)}")
    return name


def resolved_recipe(name: str, framework: str) -> str:
    """The recipe a run uses: `name`, or the stack's DEFAULT_RECIPE for "auto"."""
    return DEFAULT_RECIPE.get(framework, "tensorwise") if name == AUTO else checked_recipe(name)


def gemm_time_factor(recipe: str, architecture: str) -> float:
    """fp8 GEMM time of `recipe` over tensorwise's on a GPU of `architecture`
    (gpu_specs.csv), NaN where the recipe cannot run (mxfp8 before Blackwell)."""
    table = GEMM_TIME_FACTOR["blackwell" if re.search(BLACKWELL, architecture) else "hopper"]
    return table.get(checked_recipe(recipe), math.nan)


# Why mxfp8 runs on Blackwell only, in a refusal's words.
NEEDS_BLACKWELL = "its per-block scales need Blackwell's tensor cores: B200, B300, GB200, GB300"


def runnable_recipes(architecture: str) -> tuple[str, ...]:
    """The RECIPES a GPU of gpu_specs.csv `architecture` can run (a finite GEMM factor)."""
    return tuple(r for r in RECIPES if math.isfinite(gemm_time_factor(r, architecture)))


def recipe_refusal(recipe: str, gpu: str, architecture: str) -> str:
    """Why `gpu` (of gpu_specs.csv `architecture`) cannot run fp8 recipe `recipe` ("" where
    it can): mxfp8's per-block scales need Blackwell's tensor cores."""
    runs = runnable_recipes(architecture)
    if recipe in runs:
        return ""
    return (
        f"{gpu} cannot run the {recipe} fp8 recipe ({NEEDS_BLACKWELL}); use "
        f"{', '.join(runs)}, or a Blackwell GPU"
    )


def recipe_of_text(text: object) -> str | None:
    """The recipe a corpus row's precision text names (None: not stated)."""
    lowered = str(text).lower()
    for recipe in ("rowwise_with_gw_hp", "rowwise", "tensorwise", "blockwise", "mxfp8", "delayed"):
        if recipe in lowered:
            return recipe
    return None
