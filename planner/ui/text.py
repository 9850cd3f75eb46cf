"""Outside text (URL parameters, file names, upload contents, messages quoting them) made
safe to put into Streamlit's Markdown: shown as the characters it is, never as a link,
an image, HTML, emphasis, an emoji or icon code or a colour directive, and cut to a
readable length.

Backslash escapes alone do not stop GitHub-style autolinks: Streamlit's Markdown
(remark-gfm) finds `www.`, `http://` and `name@host.tld` in the text after escapes are
read. So a WORD JOINER (U+2060: invisible, zero width, no line break) goes where one of
those could form, and nowhere else: before every `@`, before a `.` that follows a `w`,
before the `:` of a URL scheme (`https://`), before the closing `:` of an emoji or icon
code (`:b:`, `:material/home:`), before a `.`, `:` or `@` that starts the text (what
comes before it is not known here), and after a `w` that ends it (a message's own `.` may
follow: values "w" "w" "w" side by side, or one ending "-www", would make `www.`).
Ordinary text ("Prices as of: aws") and names copied from the page (an instance type, a
region) stay exactly as written; the messages that put a value in never go on with a host
name right after it.
"""

from __future__ import annotations

import re
import string

MAX_SHOWN_CHARS = 200  # of one outside value, where a message echoes it
WORD_JOINER = "\u2060"
_PUNCTUATION = frozenset(string.punctuation)
# Positions a WORD_JOINER goes before (the match's end): a URL scheme's ':', an emoji or
# icon code's closing ':', every '@', a '.' after a 'w'.
_JOINS = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*(?=://)|:[A-Za-z0-9_+/-]+(?=:)|(?=@)|[wW](?=\.)")


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
    joins = {match.end() for match in _JOINS.finditer(value)}
    if value[:1] in (".", ":", "@"):
        joins.add(0)
    out = []
    for i, ch in enumerate(value):
        if i in joins:
            out.append(WORD_JOINER)
        if ch in _PUNCTUATION:
            out.append("\\" + ch)
        elif ch in "\r\n\t\f\v" or (ord(ch) < 32) or ord(ch) == 127:
            out.append(" ")
        else:
            out.append(ch)
    if value[-1:] in ("w", "W"):  # the `.` after it is not known here (module docstring)
        out.append(WORD_JOINER)
    return "".join(out)
