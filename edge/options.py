"""The output options every CLI shares, declared once for typer: `--format` and `--wide`."""

from __future__ import annotations

from typing import Annotated

import typer

Format = Annotated[str, typer.Option("--format", help="table | json | csv")]
Wide = Annotated[bool, typer.Option("--wide", help="tables: every column, however wide")]
