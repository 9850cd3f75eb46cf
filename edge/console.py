"""Terminal output of text from outside (paths, names, cells, remote output) as written.

rich reads `[red]` as markup and `:b:` as an emoji code by default; here neither happens:
the consoles have emoji codes off, and the text from outside goes in as rich Text (or
through rich.markup.escape), so an error quoting `:b: [red]` prints `:b: [red]`.

`warn` and `error` print one `warning: ` / `error: ` line on stderr (never wrapped, the
label coloured at a terminal), `warn_lines` one such line for each of several messages
with their whitespace folded, `abort` the error line and then exits with its code.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NoReturn

from rich.console import Console
from rich.text import Text

REDIRECTED_WIDTH = 200  # columns of a console whose output goes to a file or a pipe
MAX_SHOWN_CHARS = 200  # what of a name or value is echoed back in a message
MAX_WARNING_CHARS = 2000  # what of one warning warn_lines prints


def shorten(text: object, limit: int = MAX_SHOWN_CHARS) -> str:
    """`text` as a string cut to `limit` characters (`...` and the full length added)."""
    value = str(text)
    if len(value) <= limit:
        return value
    return f"{value[:limit]}... ({len(value):,} characters)"


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


def warn_lines(lines: Iterable[str], limit: int = MAX_WARNING_CHARS) -> None:
    """warn() each line with its whitespace folded (newlines too) and cut to `limit`
    characters: one line each, so scripts reading --format json|csv output on stdout
    still see on stderr what was ignored."""
    for line in lines:
        warn(shorten(" ".join(str(line).split()), limit))


def error(message: str) -> None:
    """Print `error: message` to stderr, the message as written (and go on)."""
    text_console(stderr=True).print(labelled("error", "bold red", message), soft_wrap=True)


def abort(message: str, code: int = 2) -> NoReturn:
    """Print `error: message` to stderr, the message as written, and exit with `code`
    (never a traceback)."""
    import typer

    error(message)
    raise typer.Exit(code)
