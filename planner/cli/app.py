"""`gpuplan app`: the web app (Streamlit) served from this terminal."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Annotated

import typer

from edge.console import abort

APP_EXTRA_HINT = "pip install 'gpuplan[app]'"


def serve_app(
    ctx: typer.Context,
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port to listen on (0 < port < 65536)")] = 8501,
) -> None:
    """Start the web app (Streamlit) in this terminal; needs pip install 'gpuplan\\[app]'.

    Other options go to `streamlit run` as written, e.g. --server.headless true.
    """
    import importlib.util
    import os
    from importlib.resources import files

    missing = [name for name in ("streamlit", "plotly") if importlib.util.find_spec(name) is None]
    if missing:
        abort(
            f"the app needs {' and '.join(missing)}, which are not installed: {APP_EXTRA_HINT}",
            code=1,
        )
    if not 0 < port < 65536:
        abort(f"--port {port}: it must be between 1 and 65535")
    script = files("planner.ui").joinpath("app_main.py")
    command = streamlit_argv(str(script), host, port, ctx.args)
    sys.stdout.flush()
    # Replace this process: Ctrl-C and signals reach the server directly.
    os.execv(sys.executable, command)


def streamlit_argv(script: str, host: str, port: int, extra: Sequence[str] = ()) -> list[str]:
    """The `python -m streamlit run` command line `gpuplan app` runs: `script` served on
    `host`:`port`, uploads refused above planner.ui.uploads.MAX_UPLOAD_MB megabytes (the
    intake's per-file limit, rounded up to Streamlit's whole MB of 1024 x 1024 bytes) by
    Streamlit itself, before a file is held in memory; `extra` goes last, as written."""
    from planner.ui.uploads import MAX_UPLOAD_MB

    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        script,
        "--server.address",
        host,
        "--server.port",
        str(port),
        "--server.maxUploadSize",
        str(MAX_UPLOAD_MB),
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--client.toolbarMode",
        "minimal",
        *extra,
    ]
