"""Terminal output of text from outside (paths, names, cells, remote output) as written.

rich reads `[red]` as markup and `:b:` as an emoji code by default; here neither happens:
the consoles have emoji codes off, and the text from outside goes in as rich Text (or
through rich.markup.escape), so an error quoting `:b: [red]` prints `:b: [red]`.
"""

from __future__ import annotations

from typing import NoReturn

from rich.console import Console
from rich.text import Text

REDIRECTED_WIDTH = 200  # columns of a console whose output goes to a file or a pipe


def text_console(stderr: bool = False) -> Console:
    """A console as wide as the terminal (REDIRECTED_WIDTH when redirected) that never
    turns `:name:` into an emoji and highlights nothing; markup in a str still applies,
    so print outside text as Text or through rich.markup.escape."""
    probe = Console(stderr=stderr)
    return Console(
        stderr=stderr,
        width=None if probe.is_terminal else REDIRECTED_WIDTH,
        emoji=False,
        highlight=False,
    )


def labelled(label: str, style: str, message: str) -> Text:
    """`label: message` with the label styled and the message as literal text."""
    return Text.assemble((f"{label}:", style), " ", message)


def warn(message: str) -> None:
    """Print `warning: message` to stderr, the message as written."""
    text_console(stderr=True).print(labelled("warning", "yellow", message), soft_wrap=True)


def abort(message: str, code: int = 2) -> NoReturn:
    """Print `error: message` to stderr, the message as written, and exit with `code`
    (never a traceback)."""
    import typer

    text_console(stderr=True).print(labelled("error", "bold red", message), soft_wrap=True)
    raise typer.Exit(code)
