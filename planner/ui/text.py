"""Outside text (URL parameters, file names, upload contents, messages quoting them) made
safe to put into Streamlit's Markdown: shown as the characters it is, never as a link,
an image, HTML, emphasis or a colour directive, and cut to a readable length.
"""

from __future__ import annotations

import string

MAX_SHOWN_CHARS = 200  # of one outside value, where a message echoes it
_PUNCTUATION = frozenset(string.punctuation)


def cut(text: object, limit: int = MAX_SHOWN_CHARS) -> str:
    """`text` as a string of at most `limit` characters (the full length said)."""
    value = str(text)
    if len(value) <= limit:
        return value
    return f"{value[:limit]}... ({len(value):,} characters)"


def md_text(text: object, limit: int | None = None) -> str:
    """`text` as literal Markdown: every ASCII punctuation character backslash-escaped
    (CommonMark renders each as itself), line breaks and control characters as spaces.

    No link, image, autolink (`http\\://...` is not one), HTML tag, emphasis, code span,
    math or directive can start in the result. `limit` cuts the text first."""
    value = str(text) if limit is None else cut(text, limit)
    out = []
    for ch in value:
        if ch in _PUNCTUATION:
            out.append("\\" + ch)
        elif ch in "\r\n\t\f\v" or (ord(ch) < 32) or ord(ch) == 127:
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)
