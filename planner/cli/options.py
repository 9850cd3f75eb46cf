"""What the `gpuplan` commands share: options declared once, the format check, refusals.

Light at import (typer and the console only): `gpuplan --help` loads no pandas
(tests/test_cli_startup.py); pricing.catalog is imported when a command checks a choice.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

import typer

from edge.console import abort
from edge.output import FORMATS

Format = Annotated[str, typer.Option("--format", help="table | json | csv")]
Wide = Annotated[bool, typer.Option("--wide", help="tables: every column, however wide")]
Eager = Annotated[
    bool,
    typer.Option(
        "--eager",
        help="LLM: PyTorch without torch.compile or fused kernels (each operator its own "
        "kernel: twice the memory-bound traffic, and no faster than the host dispatches)",
    ),
]
Fp8Recipe = Annotated[
    str,
    typer.Option(
        "--fp8-recipe",
        help="LLM fp8: auto | tensorwise | delayed | rowwise | rowwise_with_gw_hp | blockwise | "
        "mxfp8 (how the GEMMs scale their operands, timed from measured per-recipe GEMM "
        "rates; auto: the stack's default, delayed for megatron and "
        "deepspeed, tensorwise for fsdp and nanotron; mxfp8 needs Blackwell)",
    ),
]
Attention = Annotated[
    str,
    typer.Option(
        "--attention",
        help="LLM attention kernel: auto | fa2 | fa3 | cudnn (FlashAttention-2; "
        "FlashAttention-3-class: FlashAttention-3, Transformer Engine, cuDNN; PyTorch SDPA "
        "with cuDNN first, FA3-class on Hopper and data-center Blackwell); auto: the stack's, "
        "fa3 on megatron, cudnn on fsdp2, fa2 on fsdp, deepspeed and nanotron",
    ),
]
MoEOverlap = Annotated[
    bool,
    typer.Option(
        "--moe-overlap",
        help="LLM mixture of experts: its all-to-all runs under another micro-batch's compute "
        "and shows only where it outlasts it (DeepSeek-V3's DualPipe, Megatron-Core's "
        "expert-parallel overlap); default: exposed in full, as the fitted runs",
    ),
]
DPOverlap = Annotated[
    bool,
    typer.Option(
        "--dp-overlap/--no-dp-overlap",
        help="LLM ZeRO-0/1: the gradient all-reduce (ZeRO-0) or reduce-scatter and weight "
        "all-gather (ZeRO-1) run under the last micro-batch (Megatron-Core's "
        "--overlap-grad-reduce --overlap-param-gather, on in NVIDIA's recipes); "
        "--no-dp-overlap: after the backward, exposed whole (Megatron-Core's default)",
    ),
]
TPOverlap = Annotated[
    bool,
    typer.Option(
        "--tp-overlap",
        help="LLM: tensor-parallel collectives pipelined with the GEMMs, a 1/tp share showing "
        "(Megatron-Core's --tp-comm-overlap, torchtitan's async tensor parallel; megatron and "
        "fsdp2); default: between the GEMMs, as Megatron-Core's default",
    ),
]
FP32Reduce = Annotated[
    bool | None,
    typer.Option(
        "--fp32-reduce/--no-fp32-reduce",
        help="LLM: data-parallel gradients reduced in fp32, 4 bytes a value (torchtitan's "
        "FSDP2 sets its reduce dtype so; nanotron accumulates in fp32); --no-fp32-reduce: 2 "
        "bytes; default: the stack's own (fp32 on nanotron, else 2 bytes)",
    ),
]
Output = Annotated[
    str | None,
    typer.Option("--output", help="write Q plus predictions here (CSV) instead of stdout"),
]


@contextmanager
def abort_on_value_error() -> Iterator[None]:
    """Run the block; a ValueError raised in it (the engine's and pricing's refusals are
    ValueErrors) ends the command with `error: <its message>` and exit code 2, never a
    traceback."""
    try:
        yield
    except ValueError as exc:
        abort(str(exc))


def check_format(fmt: str) -> None:
    """Exit 2 naming the closest of table, json and csv when `fmt` is none of them."""
    from edge.choices import check_choices

    with abort_on_value_error():
        check_choices([fmt], FORMATS, "format")
