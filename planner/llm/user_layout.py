"""A user's own parallel layout, timed exactly as given beside the best layout found.

A layout is written as tokens, in any order, each at most once:
"tp4 pp2 cp1 ep8 dp16 mb1 vpp1 zero1 recompute=selective" (LAYOUT_FORM). Left out: tp, pp,
cp, ep, vpp 1; etp tp; mb 1; zero1 (zero0: plain data parallelism); recompute none; dp
the GPU count over tp x pp x cp.
Given dp, tp x pp x cp x dp must be the GPU count. Expert parallelism ep must divide the
experts and dp, each expert split over tp; with etp1 (Megatron-Core's MoE parallel folding,
--expert-tensor-parallel-size 1) ep divides tp x cp x dp and each expert stays whole
(planner.llm.moe). The layout is timed by the same step model as the search
(planner.llm.layout) and its memory per GPU split into MEMORY_TERMS, so that a layout that
does not fit says which term fills the memory.

Reason codes of a timed layout: "fits", "over_memory" (timed all the same), "batch_too_small"
(fewer sequences per step than dp x mb), "no_peak" (no dense peak at the precision).
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass

import numpy as np

from planner.llm.frameworks import per_op_refusal
from planner.llm.layout import (
    MEMORY_TERMS,
    PARTIAL_RECOMPUTE,
    Candidates,
    Hardware,
    Layout,
    LayoutSettings,
    LLMShape,
    layout_at,
    memory_terms,
    stage_times,
    step_times,
)
from planner.llm.memory import usable_bytes
from planner.llm.throughput import LayoutPrediction, layout_settings, llm_shape_of
from planner.settings import RECOMPUTE_CHOICES, ZERO_STAGES, LLMSettings
from planner.workloads.catalog import Workload
from pricing.gpus import did_you_mean

LAYOUT_FORM = (
    "tp<N> pp<N> cp<N> ep<N> etp<1|tp> dp<N> mb<N> vpp<N> zero0|zero1|zero3 "
    "recompute=none|selective|per-op|full|partial-25|partial-50|partial-75 "
    '(e.g. "tp4 pp2 ep8 dp16 mb1 zero1 recompute=selective")'
)
RECOMPUTES = (*RECOMPUTE_CHOICES, *PARTIAL_RECOMPUTE)
ZEROS = tuple(ZERO_STAGES)
_COUNTS = {"tp": "tp", "pp": "pp", "cp": "cp", "ep": "ep", "etp": "etp", "dp": "dp", "mb": "mb",
           "mbs": "mb", "vpp": "vpp"}  # fmt: skip
_TOKEN = re.compile(r"^([a-z]+)[=:]?(\d+)$")
USER_REASONS = ("fits", "over_memory", "batch_too_small", "no_peak")


class LayoutSpecError(ValueError):
    """A layout that cannot be read or does not suit the GPUs or the model; the message
    names the token and the valid form."""


@dataclass(frozen=True)
class UserLayout:
    """A layout as the user gave it (dp None: inferred from the GPU count)."""

    tp: int = 1
    pp: int = 1
    cp: int = 1
    ep: int = 1
    dp: int | None = None
    mb: int = 1
    vpp: int = 1
    zero: str = "zero1"
    recompute: str = "none"
    etp: int | None = None  # the expert-tensor-parallel size: None = tp, 1 = folded

    @property
    def text(self) -> str:
        """The canonical form: "tp4 pp2 cp1 ep8 dp16 mb1 zero1 recompute=selective"."""
        dp = f" dp{self.dp}" if self.dp is not None else ""
        vpp = f" vpp{self.vpp}" if self.vpp > 1 else ""
        etp = f" etp{self.etp}" if self.etp is not None else ""
        return (
            f"tp{self.tp} pp{self.pp}{vpp} cp{self.cp} ep{self.ep}{etp}{dp} mb{self.mb} "
            f"{self.zero} recompute={self.recompute}"
        )

    @property
    def gpus(self) -> int | None:
        """tp x pp x cp x dp, the GPUs the layout takes (None when dp is left to the count)."""
        return None if self.dp is None else self.tp * self.pp * self.cp * self.dp

    @property
    def expert_tp(self) -> int:
        """The expert-tensor-parallel size: tp unless etp is given."""
        return self.tp if self.etp is None else self.etp

    def for_gpus(self, total_gpus: int) -> UserLayout:
        """The layout on `total_gpus` GPUs, dp inferred when not given; LayoutSpecError when
        the product is not the GPU count."""
        split = self.tp * self.pp * self.cp
        if self.dp is None:
            if total_gpus % split:
                raise LayoutSpecError(
                    f"layout {self.text!r}: tp x pp x cp = {split} does not divide the "
                    f"{total_gpus} GPUs, so no dp fits; give a layout whose tp x pp x cp "
                    f"divides {total_gpus}"
                )
            return dataclasses.replace(self, dp=total_gpus // split)
        if self.gpus != total_gpus:
            raise LayoutSpecError(
                f"layout {self.text!r}: tp x pp x cp x dp = {self.gpus}, but the option "
                f"has {total_gpus} GPUs; make the product {total_gpus} or leave dp out "
                "(then dp = GPUs / (tp x pp x cp))"
            )
        return self


def parse_layout(text: str) -> UserLayout:
    """The UserLayout of a layout string (module docstring); LayoutSpecError naming the
    token and LAYOUT_FORM otherwise."""
    tokens = [t for t in re.split(r"[\s,]+", str(text).strip().lower()) if t]
    if not tokens:
        raise LayoutSpecError(f"empty layout: write it as {LAYOUT_FORM}")
    fields: dict[str, object] = {}

    def put(name: str, value: object, token: str) -> None:
        if name in fields:
            raise LayoutSpecError(f"layout token {token!r}: {name} is given twice")
        fields[name] = value

    for token in tokens:
        if token in ZEROS:
            put("zero", token, token)
            continue
        if token.startswith("recompute"):
            value = re.sub(r"^recompute[=:\-]?", "", token)
            if value not in RECOMPUTES:
                raise LayoutSpecError(
                    f"layout token {token!r}: recompute{did_you_mean(value, RECOMPUTES)} "
                    f"Valid: recompute={'|'.join(RECOMPUTES)}"
                )
            put("recompute", value, token)
            continue
        match = _TOKEN.match(token)
        if not match or match.group(1) not in _COUNTS:
            name = match.group(1) if match else token
            hint = did_you_mean(name, [*_COUNTS, *ZEROS, "recompute"])
            raise LayoutSpecError(f"layout token {token!r} is not understood{hint} Valid: "
                                  f"{LAYOUT_FORM}")  # fmt: skip
        size = int(match.group(2))
        if size < 1:
            raise LayoutSpecError(f"layout token {token!r}: sizes are whole numbers >= 1")
        put(_COUNTS[match.group(1)], size, token)
    return UserLayout(**fields)  # type: ignore[arg-type]


def check_layout(user: UserLayout, shape: LLMShape, stack: str | None = None) -> None:
    """LayoutSpecError where the layout does not suit the model: tp dividing the heads (a
    tp wider than a node runs, its collectives over the network), ep dividing the experts
    and dp (1 for a dense model), pp and vpp within the layers, cp splitting the sequence
    into 2 cp chunks; per-operator recomputation only on a `stack` that runs it."""
    dp = user.dp or 1
    problems = []
    if user.recompute == "per-op" and stack and (refusal := per_op_refusal(stack)):
        problems.append(f"recompute=per-op is {refusal}")
    if shape.n_heads % user.tp or (user.tp > 1 and shape.n_kv_heads % user.tp):
        problems.append(
            f"tp{user.tp} must divide the {shape.n_heads} attention heads and "
            f"{shape.n_kv_heads} key/value heads"
        )
    if not shape.experts and user.ep > 1:
        problems.append(f"ep{user.ep}: the model is dense (no experts); use ep1")
    if user.expert_tp not in (1, user.tp):
        problems.append(
            f"etp{user.etp} must be tp{user.tp} (each expert split over the tensor-parallel "
            "ranks) or 1 (experts whole, folded over tp x cp x dp)"
        )
    elif shape.experts and user.etp == 1:
        folds_over = user.tp * user.cp * dp
        if shape.experts % user.ep or folds_over % user.ep:
            problems.append(
                f"ep{user.ep} must divide the {shape.experts} experts and tp x cp x dp = "
                f"{folds_over} (with etp1 the expert ranks fold over those)"
            )
    elif shape.experts and (shape.experts % user.ep or dp % user.ep):
        problems.append(
            f"ep{user.ep} must divide the {shape.experts} experts and dp{dp} (expert-parallel "
            "ranks come out of the data-parallel ones; with etp1 they fold over tp x cp x dp)"
        )
    if user.pp * user.vpp > shape.n_layer:
        problems.append(f"pp{user.pp} x vpp{user.vpp} exceeds the {shape.n_layer} layers")
    if user.vpp > 1 and user.pp == 1:
        problems.append(f"vpp{user.vpp} needs pipeline stages (pp > 1)")
    if user.cp > 1 and shape.seq_len % (2 * user.cp):
        problems.append(f"cp{user.cp} must split the {shape.seq_len}-token sequence in 2 cp chunks")
    if problems:
        raise LayoutSpecError(f"layout {user.text!r}: " + "; ".join(problems))


@dataclass(frozen=True)
class TimedLayout:
    """A user's layout timed: the Layout record (reason in USER_REASONS; its figures are
    set for "over_memory" too), the layout as resolved, and memory per GPU by MEMORY_TERMS
    (GB) beside the usable GB."""

    layout: Layout
    user: UserLayout
    terms_gb: tuple[tuple[str, float], ...]
    usable_gb: float
    tp_nodes: int = 1  # nodes one tensor-parallel group spans (> 1: tp over the network)

    @property
    def over_terms(self) -> tuple[str, ...]:
        """Where memory goes when it does not fit: the terms, largest first."""
        if self.layout.reason != "over_memory":
            return ()
        return tuple(name for name, gb in sorted(self.terms_gb, key=lambda t: -t[1]) if gb > 0)


def time_layout(
    shape: LLMShape, hw: Hardware, settings: LayoutSettings, user: UserLayout
) -> TimedLayout:
    """Exactly `user` (resolved to hw.total_gpus) timed by the search's step model."""
    user = user.for_gpus(hw.total_gpus)
    check_layout(user, shape, settings.framework)
    dp = int(user.dp or 1)
    tp_nodes = math.ceil(user.tp / max(hw.gpus_per_node, 1))
    one = np.ones(1)
    sequences = max(1, int(settings.global_batch_tokens // shape.seq_len))
    m = math.floor(sequences / (dp * user.mb))
    if user.vpp > 1 and m >= 1 and m % user.pp:
        raise LayoutSpecError(
            f"layout {user.text!r}: vpp{user.vpp} needs the {m} micro-batches per step to be a "
            f"multiple of pp{user.pp}; change mb, pp or the global batch"
        )
    zero = np.array([ZERO_STAGES[user.zero]])
    recompute = np.array([user.recompute])
    arrays = {k: float(v) * one for k, v in
              {"tp": user.tp, "cp": user.cp, "pp": user.pp, "dp": dp, "mb": user.mb,
               "m": max(m, 1), "vpp": user.vpp, "ep": user.ep,
               "etp": user.expert_tp}.items()}  # fmt: skip
    terms = memory_terms(
        shape, settings, arrays["tp"], arrays["cp"], arrays["pp"], arrays["dp"], arrays["mb"],
        arrays["m"], zero, recompute, arrays["vpp"], arrays["ep"], arrays["etp"],
    )  # fmt: skip
    terms_gb = tuple((name, float(terms[name][0]) / 1e9) for name in MEMORY_TERMS)
    memory = terms["states"] + terms["expert_states"] + terms["activations"]
    usable = usable_bytes(hw.memory_gb, settings.memory_reserve_fraction)
    if m < 1 or not (hw.peak_flops > 0 and hw.rates.gemm_flops > 0):
        reason = "batch_too_small" if m < 1 else "no_peak"
        return TimedLayout(Layout(reason), user, terms_gb, usable / 1e9, tp_nodes)
    c = Candidates(
        arrays["tp"], arrays["cp"], arrays["pp"], arrays["dp"], arrays["mb"], arrays["m"],
        zero, recompute, arrays["vpp"], np.asarray(memory, float), usable, arrays["ep"],
        arrays["etp"],
    )  # fmt: skip
    times = step_times(shape, hw, settings, c, stage_times(shape, hw.rates, hw.compute_flops,
                                                             c, settings))  # fmt: skip
    layout = layout_at(shape, hw, c, times, 0)
    if float(memory[0]) > usable:
        layout = dataclasses.replace(layout, reason="over_memory")
    return TimedLayout(layout, user, terms_gb, usable / 1e9, tp_nodes)


@dataclass(frozen=True)
class LayoutComparison:
    """A user's layout and the best layout found, on the same GPUs, model and settings."""

    timed: TimedLayout
    best: LayoutPrediction
    gpu_name: str
    total_gpus: int
    moe: bool = False  # a mixture of experts: MFU counts its active parameters


def compare_layout(
    best: LayoutPrediction,
    workload: Workload,
    gpu_name: str,
    user: UserLayout,
    settings: LLMSettings | None = None,
) -> LayoutComparison:
    """`user` timed with the rates, calibration and links the search used for `best`
    (planner.llm.throughput.predict_layout of `workload` on `gpu_name`, with `settings`),
    beside it."""
    settings = settings or LLMSettings()
    assert best.hardware is not None
    search = layout_settings(settings, settings.batch_tokens(workload), best.precision)
    timed = time_layout(llm_shape_of(workload), best.hardware, search, user)
    return LayoutComparison(timed, best, gpu_name, best.hardware.total_gpus, workload.is_moe)
