"""Outside text (URL parameters, file names, upload contents, messages quoting them) made
safe to put into Streamlit's Markdown: shown as the characters it is, never as a link,
an image, HTML, emphasis, an emoji or icon code or a colour directive, and cut to a
readable length.

Backslash escapes alone do not stop GitHub-style autolinks: Streamlit's Markdown
(remark-gfm) finds `www.`, `http://` and `name@host.tld` in the text after escapes are
read. So a WORD JOINER (U+2060: invisible, zero width, no line break) goes before every
`:` and `@`, and before a `.` that follows a `w` or starts the text: then `www` + `.`,
`https` + `:` and `x` + `@` never touch, and `:name:` is no emoji code. None is added at
the end, so a name copied from the page (an instance type, a region) is the name itself;
the messages that put a value in never go on with a host name after it.
"""

from __future__ import annotations

import string

MAX_SHOWN_CHARS = 200  # of one outside value, where a message echoes it
WORD_JOINER = "\u2060"
_PUNCTUATION = frozenset(string.punctuation)
_JOINED_BEFORE = frozenset(":@")  # always: URL schemes, e-mail, emoji and icon codes


def cut(text: object, limit: int = MAX_SHOWN_CHARS) -> str:
    """`text` as a string of at most `limit` characters (the full length said)."""
    value = str(text)
    if len(value) <= limit:
        return value
    return f"{value[:limit]}... ({len(value):,} characters)"


def md_text(text: object, limit: int | None = None) -> str:
    """`text` as literal Markdown: every ASCII punctuation character backslash-escaped
    (CommonMark renders each as itself), line breaks and control characters as spaces,
    and a WORD_JOINER wherever an autolink or a `:code:` could form (module docstring).

    No link, autolink (`www.x.com`, `https://x.com`, `x@y.com`), image, HTML tag, emphasis,
    code span, math, emoji code or directive can start in the result, alone or next to
    the text it is put in. `limit` cuts the text first."""
    value = str(text) if limit is None else cut(text, limit)
    out = []
    previous = ""
    for i, ch in enumerate(value):
        if _joined_before(ch, previous, i == 0):
            out.append(WORD_JOINER)
        if ch in _PUNCTUATION:
            out.append("\\" + ch)
        elif ch in "\r\n\t\f\v" or (ord(ch) < 32) or ord(ch) == 127:
            out.append(" ")
        else:
            out.append(ch)
        previous = ch
    return "".join(out)


def _joined_before(ch: str, previous: str, first: bool) -> bool:
    """Whether a WORD_JOINER goes before `ch`: every ':' and '@'; a '.' after a 'w' or
    first in the text (what comes before it is not known here)."""
    if ch in _JOINED_BEFORE:
        return True
    return ch == "." and (first or previous in "wW")
