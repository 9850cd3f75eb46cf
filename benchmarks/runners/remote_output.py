"""What a remote machine prints, made safe to keep and to show: bounded and plain text.

A remote is not trusted: it can print hundreds of megabytes without a newline, or
terminal escape sequences (window title, clipboard writes, clear screen) that would act
on the user's terminal. `LineReader` turns a stream of bytes into lines of at most
MAX_LINE_CHARS printable characters, keeping a tail of TAIL_LINES lines, so what is held
is bounded whatever comes in. Escape sequences and control characters are removed
(ECMA-48: CSI `ESC [ ... final`, OSC `ESC ] ... BEL|ST`, two-byte `ESC x`, C0 and C1
controls); a carriage return ends a line, as a progress bar means it.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Callable

TAIL_LINES = 20
MAX_LINE_CHARS = 1000  # of one line shown or kept; the rest of that line is cut
MAX_KEPT_CHARS = 2000  # of one message written into a state file (an error, a reason)
CHUNK_BYTES = 64 * 1024  # read from a pipe at a time

_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, clear screen
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: window title, clipboard (OSC 52), links
    r"|\x1b[P^_X][^\x1b]*(?:\x1b\\)?"  # DCS, PM, APC, SOS strings
    r"|\x1b[@-Z\\-_]?"  # other two-byte escapes, or a lone ESC
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
)
_CONTROLS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def plain(text: str, limit: int = MAX_LINE_CHARS) -> str:
    """`text` without escape sequences or control characters (tabs kept), cut at `limit`."""
    cleaned = _CONTROLS.sub("", _ESCAPES.sub("", text))
    if len(cleaned) > limit:
        return cleaned[:limit] + f"… ({len(cleaned) - limit:,} characters cut)"
    return cleaned


def plain_lines(text: str, limit: int = MAX_LINE_CHARS) -> str:
    """Each line of `text` made plain (see `plain`), the line breaks kept."""
    return "\n".join(plain(line, limit) for line in text.splitlines())


def kept(text: str, limit: int = MAX_KEPT_CHARS) -> str:
    """A message for a state file: its last `limit` characters (an error ends with its cause)."""
    if len(text) <= limit:
        return text
    return f"…({len(text) - limit:,} characters cut) " + text[-limit:]


class LineReader:
    """Splits bytes into plain, bounded lines; `feed` them, then `close`.

    Each complete line goes to `on_line` and into `tail` (the last TAIL_LINES lines).
    A line longer than MAX_LINE_CHARS bytes is cut there and the rest of it dropped,
    so memory stays within about MAX_LINE_CHARS x (TAIL_LINES + 1) characters.
    """

    def __init__(self, on_line: Callable[[str], None] | None = None) -> None:
        self.on_line = on_line
        self.tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self._partial = bytearray()
        self._dropped = 0  # bytes of the current line past MAX_LINE_CHARS
        self.bytes_seen = 0

    def feed(self, chunk: bytes) -> None:
        self.bytes_seen += len(chunk)
        start = 0
        for match in re.finditer(rb"\r\n|\r|\n", chunk):
            self._add(chunk[start : match.start()])
            self._emit()
            start = match.end()
        self._add(chunk[start:])

    def close(self) -> None:
        if self._partial or self._dropped:
            self._emit()

    def _add(self, piece: bytes) -> None:
        room = MAX_LINE_CHARS - len(self._partial)
        if room > 0:
            self._partial += piece[:room]
        self._dropped += max(0, len(piece) - max(room, 0))

    def _emit(self) -> None:
        text = plain(self._partial.decode("utf-8", errors="replace"))
        if self._dropped:
            text += f"… ({self._dropped:,} bytes cut)"
        self._partial.clear()
        self._dropped = 0
        self.tail.append(text)
        if self.on_line:
            self.on_line(text)


def cut_at_word(line: str, limit: int) -> str:
    """`line` cut to at most `limit` characters at a word boundary, "…" marking the cut."""
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip() + "…"


def why_lines(text: str, tail: int = 3, width: int = 100) -> str:
    """A failure as a status cell shows it: its first line (what failed), then its last
    `tail` lines (the failing step's own last words), each cut at a word boundary to
    `width` characters, never a cut from the middle of a word."""
    lines = [plain(line).strip() for line in text.splitlines()]
    lines = [line for line in lines if line]
    if len(lines) > tail + 1:
        lines = [lines[0], *lines[-tail:]]
    return "\n".join(cut_at_word(line, width) for line in lines)
