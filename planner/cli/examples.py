"""`gpuplan examples`: the example files shipped with the package, by the name that
`example:NAME` takes wherever a file is asked for."""

from __future__ import annotations

from edge.output import emit
from planner.cli.options import Format, check_format

EXAMPLES_TITLE = "Examples shipped with gpuplan (pass example:NAME wherever a file is asked for)"


def examples(fmt: Format = "table") -> None:
    """The example files shipped with gpuplan: name, what it is, the commands that take it
    and where it is installed."""
    import pandas as pd

    from planner.io.examples import EXAMPLES, PREFIX

    check_format(fmt)
    frame = pd.DataFrame(
        [
            {
                "name": f"{PREFIX}{e.name}",
                "about": e.about,
                "used_by": e.used_by,
                "path": str(e.path),
            }
            for e in EXAMPLES
        ]
    )
    emit(
        frame,
        fmt,
        title=EXAMPLES_TITLE,
        table_columns=("name", "about", "used_by", "path"),
        beneath=("path",),
    )
