"""Terminal output of text from outside (paths, names, cells, remote output) as written.

rich reads `[red]` as markup and `:b:` as an emoji code by default; here neither happens:
the consoles have emoji codes off, and the text from outside goes in as rich Text (or
through rich.markup.escape), so an error quoting `:b: [red]` prints `:b: [red]`.

`warn` and `error` print a `warning: ` / `error: ` message on stderr (the label coloured at
a terminal), wrapped at words to $COLUMNS or the terminal's width, and as one line when
stderr goes to a file or a pipe without $COLUMNS (what scripts read); `warn_lines` one
such message for each of several, their whitespace folded; `abort` the error line and then
exits with its code.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractContextManager, nullcontext
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


def asked_width(stderr: bool = False) -> int | None:
    """$COLUMNS where set (over 20), else the terminal's width, else None (redirected)."""
    import os

    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 20:
        return int(columns)
    probe = Console(stderr=stderr)
    return probe.width if probe.is_terminal else None


def text_console(stderr: bool = False) -> Console:
    """A console as wide as $COLUMNS or the terminal (REDIRECTED_WIDTH when redirected)
    that never turns `:name:` into an emoji and highlights nothing; markup in a str still
    applies, so print outside text as Text or through rich.markup.escape."""
    return Console(
        stderr=stderr,
        width=asked_width(stderr) or REDIRECTED_WIDTH,
        emoji=False,
        highlight=False,
    )


def _say(text: Text) -> None:
    """`text` on stderr, wrapped at words to the asked width, or one line when redirected."""
    text_console(stderr=True).print(text, soft_wrap=asked_width(stderr=True) is None)


def labelled(label: str, style: str, message: str) -> Text:
    """`label: message` with the label styled and the message as literal text."""
    return Text.assemble((f"{label}:", style), " ", message)


def warn(message: str) -> None:
    """Print `warning: message` to stderr, the message as written."""
    _say(labelled("warning", "yellow", message))


def note(message: str) -> None:
    """Print `note: message` to stderr, whitespace folded to one line: a result beside the
    output (not a warning)."""
    _say(labelled("note", "cyan", " ".join(message.split())))


def warn_lines(lines: Iterable[str], limit: int = MAX_WARNING_CHARS) -> None:
    """warn() each line with its whitespace folded (newlines too) and cut to `limit`
    characters: one message each (one line each when redirected), so scripts reading
    --format json|csv output on stdout still see on stderr what was ignored."""
    for line in lines:
        warn(shorten(" ".join(str(line).split()), limit))


def error(message: str) -> None:
    """Print `error: message` to stderr, the message as written (and go on)."""
    _say(labelled("error", "bold red", message))


def abort(message: str, code: int = 2) -> NoReturn:
    """Print `error: message` to stderr, the message as written, and exit with `code`
    (never a traceback)."""
    import typer

    error(message)
    raise typer.Exit(code)


def working(message: str) -> AbstractContextManager[object]:
    """A spinner on stderr saying `message` while slow work runs (plans, fits), only where
    stderr is a terminal: redirected output and scripts see nothing of it. It is drawn
    after SPINNER_DELAY_S, so work that is done sooner shows none."""
    console = Console(stderr=True, emoji=False, highlight=False)
    if not console.is_terminal:
        return nullcontext()
    return _DelayedStatus(console, message)


SPINNER_DELAY_S = 1.0  # work shorter than this shows no spinner


class _DelayedStatus:
    """rich's status (a spinner and a message), started SPINNER_DELAY_S after entry."""

    def __init__(self, console: Console, message: str) -> None:
        import threading

        self._status = console.status(Text(message))
        self._timer = threading.Timer(SPINNER_DELAY_S, self._status.start)
        self._timer.daemon = True

    def __enter__(self) -> _DelayedStatus:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
        self._timer.join()
        self._status.stop()
