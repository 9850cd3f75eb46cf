"""Page inputs that live in the URL, so that a link reproduces the view.

Every page creates its widgets through a PageState and calls `sync()` last:

    ps = PageState("scaling")
    gpu = ps.selectbox("GPU", gpus, name="gpu", default="H100-SXM")
    nodes = ps.number_input("GPUs per node", name="gpus_per_node", default=8, min_value=1)
    ...
    ps.sync()          # the URL now holds ?gpu=H100-SXM&gpus_per_node=8
    ps.share_box()     # optional: the link to copy

- Widget keys are "<page>.<name>" (stable: tests find widgets by them); URL parameters
  are "<name>". Widgets take no value/index/default argument: the value is seeded into
  st.session_state before the widget is drawn.
- A widget starts from, in order: its live value, the URL parameter, the value last
  used on this page in this session (kept across page switches), the default.
- A URL value that is not valid (not a choice, not a number, out of range) is ignored
  with an inline warning naming the parameter and the closest valid choice. A value is
  echoed as plain text (never Markdown: a link or image in it stays text) and cut to 200
  characters; a value longer than MAX_PARAM_CHARS is not parsed at all, only named.
- `sync()` replaces the query string with this page's inputs (every input, defaults
  included, so a link keeps its meaning when a default changes).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import partialmethod
from typing import Any
from urllib.parse import urlencode

import streamlit as st

from planner.ui.text import cut, md_text
from pricing.gpus import did_you_mean

MAX_PARAM_CHARS = 500  # longer URL values are ignored (a real one is under 100)
MAX_PARAM_VALUES = 100  # values of one repeated parameter (?p=a&p=b...) that are read
_REMEMBERED = "_gpuplan_remembered"
_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


class ParamError(ValueError):
    """A URL parameter value that cannot be used for its widget."""


def check_length(name: str, raw: str) -> str:
    """`raw` unless it is longer than MAX_PARAM_CHARS (ParamError, without the value)."""
    if len(raw) > MAX_PARAM_CHARS:
        raise ParamError(
            f"URL parameter {name} is {len(raw):,} characters long (at most "
            f"{MAX_PARAM_CHARS:,}): ignored"
        )
    return raw


def warn(text: str) -> None:
    """An inline warning whose text is shown as is (never read as Markdown)."""
    st.warning(md_text(text), icon=":material/warning:")


def encode_number(value: float | int) -> str:
    """A number as a short exact string: 8 -> '8', 0.7 -> '0.7', 199000.0 -> '199000'."""
    if isinstance(value, bool):
        raise TypeError("a bool is not a number here")
    if isinstance(value, int) or float(value).is_integer():
        return str(int(value))
    return repr(float(value))


def parse_number(
    name: str,
    raw: str,
    integer: bool,
    min_value: float | None,
    max_value: float | None,
) -> float | int:
    """A URL number, range-checked; ParamError names the parameter and the valid range."""
    check_length(name, raw)
    raw = cut(raw)
    try:
        number = float(raw)
    except ValueError:
        raise ParamError(f"URL parameter {name}={raw!r} is not a number") from None
    if not math.isfinite(number):
        raise ParamError(f"URL parameter {name}={raw!r} is not a finite number")
    if integer and not number.is_integer():
        raise ParamError(f"URL parameter {name}={raw!r} is not a whole number")
    low = -math.inf if min_value is None else min_value
    high = math.inf if max_value is None else max_value
    if not low <= number <= high:
        raise ParamError(
            f"URL parameter {name}={raw!r} is out of range; valid: {low:g} to {high:g}"
        )
    return int(number) if integer else number


def parse_choice(name: str, raw: str, options: Sequence[Any]) -> Any:
    """The option whose text is `raw`; ParamError names the closest choice."""
    check_length(name, raw)
    texts = [str(o) for o in options]
    if raw in texts:
        return options[texts.index(raw)]
    raw = cut(raw)
    fix = did_you_mean(raw, texts)
    shown = ", ".join(texts[:12]) + (", ..." if len(texts) > 12 else "")
    raise ParamError(f"URL parameter {name}={raw!r} is not a choice{fix} Valid: {shown}")


def parse_bool(name: str, raw: str) -> bool:
    """true/false (also 1/0, yes/no, on/off)."""
    check_length(name, raw)
    raw = cut(raw)
    if raw.lower() in _TRUE:
        return True
    if raw.lower() in _FALSE:
        return False
    raise ParamError(f"URL parameter {name}={raw!r} is not true or false")


def remembered_inputs(page: str) -> dict[str, Any]:
    """The inputs last used on `page` in this session (name -> value); {} if never drawn."""
    prefix = f"{page}."
    return {
        key[len(prefix) :]: value
        for key, value in st.session_state.get(_REMEMBERED, {}).items()
        if key.startswith(prefix) and not key.endswith("@depends_on")
    }


class PageState:
    """The URL-backed inputs of one page (see the module docstring)."""

    def __init__(self, page: str) -> None:
        self.page = page
        self.encoded: dict[str, str | list[str]] = {}
        self.problems: list[str] = []

    def key(self, name: str) -> str:
        """The widget key of input `name` on this page."""
        return f"{self.page}.{name}"

    # ------------------------------------------------------------------ seeding

    def _remembered(self) -> dict[str, Any]:
        if _REMEMBERED not in st.session_state:
            st.session_state[_REMEMBERED] = {}
        return st.session_state[_REMEMBERED]

    def _seed(
        self,
        name: str,
        default: Any,
        parse: Callable[[], Any],
        valid: Callable[[Any], bool],
        depends_on: Any = None,
    ) -> None:
        """Put the starting value into session state unless the widget already has one.

        `depends_on`: what the choices depend on (another input); when it changes, the
        widget goes back to its default (new choices, new default).
        """
        key = self.key(name)
        remembered = self._remembered()
        context_key = f"{key}@depends_on"
        changed = context_key in remembered and remembered[context_key] != depends_on
        remembered[context_key] = depends_on
        if key in st.session_state:
            if changed or not valid(st.session_state[key]):
                st.session_state[key] = default
            return
        value = default
        if name in st.query_params:
            try:
                value = parse()
            except ParamError as exc:
                self.problems.append(str(exc))
                warn(f"{exc}; using {cut(repr(default))}.")
        elif key in remembered and not changed and valid(remembered[key]):
            value = remembered[key]
        st.session_state[key] = value

    def _done(self, name: str, value: Any, encoded: str | list[str] | None) -> Any:
        self._remembered()[self.key(name)] = value
        if encoded is None:
            self.encoded.pop(name, None)
        else:
            self.encoded[name] = encoded
        return value

    # ------------------------------------------------------------------ widgets

    def _choice(
        self,
        widget: Callable[..., Any],
        label: str,
        options: Sequence[Any],
        name: str,
        default: Any = None,
        depends_on: Any = None,
        **kwargs: Any,
    ) -> Any:
        """`widget` (st.selectbox, st.radio) of `options` bound to URL parameter `name`;
        it starts at `default` when that is an option, else at the first option."""
        options = list(options)
        if default not in options:
            default = options[0] if options else None
        self._seed(
            name,
            default,
            lambda: parse_choice(name, st.query_params[name], options),
            lambda v: v in options,
            depends_on,
        )
        value = widget(label, options, key=self.key(name), **kwargs)
        return self._done(name, value, None if value is None else str(value))

    # ps.selectbox(label, options, name, default=None, depends_on=None, **st.selectbox's
    # keywords), and ps.radio the same way: one choice bound to URL parameter `name`.
    selectbox = partialmethod(_choice, st.selectbox)
    radio = partialmethod(_choice, st.radio)

    def multiselect(
        self,
        label: str,
        options: Sequence[Any],
        name: str,
        default: Sequence[Any] = (),
        depends_on: Any = None,
        **kwargs: Any,
    ) -> list[Any]:
        """st.multiselect bound to URL parameter `name` (repeated: ?p=a&p=b)."""
        options = list(options)
        default = [v for v in default if v in options]

        def parse() -> list[Any]:
            chosen, bad = [], []
            given = st.query_params.get_all(name)
            if len(given) > MAX_PARAM_VALUES:
                bad.append(
                    f"URL parameter {name} is given {len(given):,} times (at most "
                    f"{MAX_PARAM_VALUES}): the rest ignored"
                )
            for raw in given[:MAX_PARAM_VALUES]:
                try:
                    chosen.append(parse_choice(name, raw, options))
                except ParamError as exc:
                    bad.append(str(exc))
            if bad:
                self.problems.extend(bad)
                warn("; ".join(bad[:5]) + ("; ..." if len(bad) > 5 else "") + "; left out.")
            return chosen

        key = self.key(name)
        if key in st.session_state:
            # Options changed (another GPU, another pricing kind): keep what is still
            # valid; when nothing is, start again from the default.
            current = list(st.session_state[key])
            kept = [v for v in current if v in options]
            if kept != current:
                st.session_state[key] = kept if kept or not current else list(default)
        self._seed(name, default, parse, lambda v: all(x in options for x in v), depends_on)
        value = list(st.multiselect(label, options, key=key, **kwargs))
        return self._done(name, value, [str(v) for v in value])

    def number_input(
        self,
        label: str,
        name: str,
        default: float | int | None,
        min_value: float | int | None = None,
        max_value: float | int | None = None,
        **kwargs: Any,
    ) -> Any:
        """st.number_input bound to URL parameter `name`; None (empty) when default is None
        and nothing was entered. Whole numbers when default and step are ints."""
        step = kwargs.get("step")
        integer = isinstance(default, int) and (step is None or isinstance(step, int))

        def valid(v: Any) -> bool:
            if v is None:
                return default is None
            low = -math.inf if min_value is None else min_value
            high = math.inf if max_value is None else max_value
            return bool(low <= v <= high)

        self._seed(
            name,
            default,
            lambda: parse_number(name, st.query_params[name], integer, min_value, max_value),
            valid,
        )
        extra = {"value": None} if default is None else {}
        widget: Any = st.number_input  # one call for int, float and optional values
        value = widget(
            label,
            min_value=min_value,
            max_value=max_value,
            key=self.key(name),
            **extra,
            **kwargs,
        )
        return self._done(name, value, None if value is None else encode_number(value))

    def slider(
        self,
        label: str,
        name: str,
        default: float | int,
        min_value: float | int,
        max_value: float | int,
        **kwargs: Any,
    ) -> Any:
        """st.slider (one value) bound to URL parameter `name`."""
        integer = isinstance(default, int) and isinstance(kwargs.get("step", 1), int)
        self._seed(
            name,
            default,
            lambda: parse_number(name, st.query_params[name], integer, min_value, max_value),
            lambda v: min_value <= v <= max_value,
        )
        value = st.slider(
            label, min_value=min_value, max_value=max_value, key=self.key(name), **kwargs
        )
        return self._done(name, value, encode_number(value))

    def toggle(self, label: str, name: str, default: bool = False, **kwargs: Any) -> bool:
        """st.toggle bound to URL parameter `name` (true/false)."""
        self._seed(
            name,
            default,
            lambda: parse_bool(name, st.query_params[name]),
            lambda v: isinstance(v, bool),
        )
        value = bool(st.toggle(label, key=self.key(name), **kwargs))
        return self._done(name, value, "true" if value else "false")

    def text_input(self, label: str, name: str, default: str = "", **kwargs: Any) -> str:
        """st.text_input bound to URL parameter `name` (the text as typed, at most 200
        characters; empty: left out of the URL)."""
        self._seed(
            name,
            default,
            lambda: str(st.query_params[name])[:200],
            lambda v: isinstance(v, str),
        )
        value = str(st.text_input(label, key=self.key(name), max_chars=200, **kwargs) or "")
        return self._done(name, value, value or None)

    # ------------------------------------------------------------------ the URL

    def query_string(self) -> str:
        """This page's inputs as a query string ('gpu=H100-SXM&providers=aws&providers=gcp')."""
        return urlencode(self.encoded, doseq=True)

    def sync(self) -> None:
        """Make the URL's query string exactly this page's inputs."""
        st.query_params.from_dict(self.encoded)

    def link(self) -> str:
        """The URL of this view: the page's address (when the browser told it) + query."""
        base = ""
        try:
            base = (st.context.url or "").split("?")[0]
        except Exception:  # no browser context (a bare script, an older Streamlit)
            base = ""
        query = self.query_string()
        return f"{base}?{query}" if query else base

    def share_box(self) -> None:
        """An expander with the link to this view (inputs in the query string)."""
        with st.expander("Share this view"):
            st.caption("The link holds every input on this page; opening it shows this view.")
            # A plain text box: a code block would load a syntax highlighter (a quarter of
            # a second of the browser's first render) for one line of text.
            st.text_input("Link (select and copy)", value=self.link() or "(no inputs)")
