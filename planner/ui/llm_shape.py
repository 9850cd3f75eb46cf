"""The Plan page's model shape for a described dense LLM: layers, width, MLP width, heads,
key/value heads and vocabulary, and the MLP and output-layer kinds, each left empty to keep
the preset's (or GPT-3's aspect ratio), as `gpuplan plan --n-layer ... --embeddings` takes
them (planner.workloads.catalog.reshape_llm: the shape given is the model)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import streamlit as st

from planner.io.validate import FIELD_RANGES
from planner.ui.inputs import number, worded_radio
from planner.ui.state import PageState
from planner.ui.text import md_text
from planner.workloads.catalog import ShapeSizeError, Workload, reshape_llm
from planner.workloads.llm_presets import EMBEDDING_KINDS, MLP_KINDS


def _count(name: str, label: str, step: int, help: str) -> dict[str, Any]:
    """A whole-number input that starts empty (the preset's value), within the range
    `plan`'s flag and `estimate-llm`'s column of the same name take (FIELD_RANGES)."""
    bounds = FIELD_RANGES[name]
    return {"label": label, "default": None, "min_value": int(bounds.low),
            "max_value": int(bounds.high), "step": step, "help": help,
            "placeholder": "the preset's"}  # fmt: skip


# The shape's number inputs (key: plan.<name>), in reshape_llm's order.
SHAPE_FIELDS: dict[str, dict[str, Any]] = {
    name: _count(name, *spec)
    for name, spec in {
        "n_layer": ("Layers", 1, "Decoder layers."),
        "d_model": ("Width (d_model)", 128, "Hidden size."),
        "ffn": ("MLP width", 256, "The MLP's inner width (Llama 3.1 8B: 14336)."),
        "heads": ("Attention heads", 1, "Query heads."),
        "kv_heads": ("Key/value heads", 1, "Grouped-query attention's key/value heads."),
        "vocab": ("Vocabulary", 1024, "Tokens in the vocabulary (Llama 3: 128256)."),
    }.items()
}
MLP_WORDS = {"auto": "by its width", "gelu": "GELU (2 matrices)", "swiglu": "SwiGLU (3)"}
EMBEDDING_WORDS = {"auto": "by the MLP", "tied": "tied", "untied": "untied"}
SHAPE_HELP = (
    "The shape given is the model: parameters and FLOPs are counted from it, and a shape "
    "more than 10% from the size above is refused with both counts. Empty fields keep the "
    "preset's (or GPT-3's aspect ratio). MLP: by its width takes an MLP of 4 x width as "
    "GPT's GELU, any other as SwiGLU; embeddings: by the MLP ties them for GELU models only. "
    "Llama 3.2 1B (16 x 2048, 32 heads, 8 kv, MLP 8192, 128256 tokens) says SwiGLU and tied."
)


@dataclass(frozen=True)
class ShapeInputs:
    """The shape as asked: each count None where left empty, the kinds "auto" where not
    said."""

    n_layer: int | None = None
    d_model: int | None = None
    ffn: int | None = None
    heads: int | None = None
    kv_heads: int | None = None
    vocab: int | None = None
    mlp: str = "auto"
    embeddings: str = "auto"

    @property
    def given(self) -> bool:
        """Whether anything of the shape was given."""
        return any(getattr(self, f.name) not in (None, "auto") for f in fields(self))


def shape_inputs(ps: PageState) -> ShapeInputs:
    """The Model shape expander of the described dense LLM."""
    with st.expander("Model shape (optional)"):
        st.caption(SHAPE_HELP)
        counts = {name: number(ps, name, spec) for name, spec in SHAPE_FIELDS.items()}
        mlp = worded_radio(ps, "MLP", MLP_WORDS, name="mlp", default="auto", horizontal=True)
        tied = worded_radio(
            ps, "Embeddings", EMBEDDING_WORDS, name="embeddings", default="auto", horizontal=True
        )
    whole = {name: None if value is None else int(value) for name, value in counts.items()}
    return ShapeInputs(**whole, mlp=str(mlp), embeddings=str(tied))


def reshaped(workload: Workload, shape: ShapeInputs) -> Workload | None:
    """`workload` with `shape` (unchanged when none is given); None after an inline error
    naming the inputs and the fix."""
    if not shape.given:
        return workload
    gated = None if shape.mlp == "auto" else MLP_KINDS[shape.mlp]
    tied = None if shape.embeddings == "auto" else EMBEDDING_KINDS[shape.embeddings]
    counts = (shape.n_layer, shape.d_model, shape.ffn, shape.heads, shape.kv_heads, shape.vocab)
    try:
        return reshape_llm(workload, None, *counts, gated, tied)
    except ShapeSizeError as exc:
        st.error(
            f"**Model shape**: {md_text(exc)}. Set **Parameters (billions)** to the shape's "
            f"size ({exc.size}), or give the rest of the shape (MLP width, heads, key/value "
            "heads, vocabulary, MLP and embeddings).",
            icon=":material/error:",
        )
    except ValueError as exc:
        st.error(f"**Model shape**: {md_text(exc)}. Change it, or clear it.",
                 icon=":material/error:")  # fmt: skip
    return None
