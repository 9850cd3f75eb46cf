"""Bounded HTTP GETs for the plain-HTTP price sources (Azure retail, SkyPilot, AWS public).

Every request has three bounds, so that no server can hold a refresh forever or fill
the memory:

- the time left of the refresh's one total deadline (a RefreshClock, --deadline) for
  connecting, headers and the whole body; a server that sends one byte per second, or
  answers each of endless pages just in time, is cut off at the deadline, not kept alive
  by each byte or page (a watchdog shuts the socket down, which wakes a blocked read);
- a per-read timeout (`read_timeout_s`) for a server that stops sending;
- a maximum body size (`max_bytes`); a longer (or endless) body fails at that size
  and is never held whole in memory. `lines` splits a streamed body into lines of at
  most a given length, so that a parser holds one line at a time.

Pagination (`Pages`) has a page budget and stops on a link it has already followed.
Failures raise HttpStatusError (an error status, with the server's Retry-After) or
FetchError (deadline, size, page loop). `with_retries` (and `get_with_retries` for one
whole body) retries throttling, server errors and timeouts within the same deadline and
turns every other failure into a FetchError that names what was being read.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import email.utils
import functools
import http.client
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypedDict, TypeVar, Unpack

from pricing.providers.retry import (
    DeadlineExceeded,
    FetchError,
    RefreshClock,
    RetryPolicy,
    call_with_retries,
    describe,
)

__all__ = [
    "Bounds",
    "DeadlineExceeded",
    "FetchError",
    "HttpStatusError",
    "Pages",
    "get",
    "get_with_retries",
    "lines",
    "retry_after_seconds",
    "retryable",
    "stream",
    "with_retries",
]

CHUNK_BYTES = 64 * 1024
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_PAGES = 200
T = TypeVar("T")


class HttpStatusError(Exception):
    """An HTTP error status from the API, with the server's Retry-After hint if any."""

    def __init__(self, status: int, reason: str, retry_after_s: float | None) -> None:
        super().__init__(f"HTTP {status} {reason}")
        self.status = status
        self.retry_after_s = retry_after_s


def retry_after_seconds(value: str | None, now: dt.datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP-date (RFC 9110
    section 10.2.3); None when absent or unreadable; never negative."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    now = now or dt.datetime.now(dt.UTC)
    return max(0.0, (when - now).total_seconds())


@dataclass
class _Watchdog:
    """Shuts down every socket a request opened once its deadline passes."""

    sockets: list[socket.socket] = field(default_factory=list)
    expired: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def track(self, sock: socket.socket) -> None:
        with self.lock:
            self.sockets.append(sock)
            if self.expired:
                _shutdown(sock)

    def expire(self) -> None:
        with self.lock:
            self.expired = True
            for sock in self.sockets:
                _shutdown(sock)


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _opener(watchdog: _Watchdog) -> urllib.request.OpenerDirector:
    """A urllib opener (proxies, redirects, TLS as usual) whose sockets the watchdog holds."""

    def tracked(base: type[http.client.HTTPConnection]) -> Any:
        class Tracked(base):  # type: ignore[valid-type,misc]
            def connect(self) -> None:
                super().connect()
                watchdog.track(self.sock)

        return Tracked

    class Http(urllib.request.HTTPHandler):
        def http_open(self, req: urllib.request.Request) -> Any:
            return self.do_open(tracked(http.client.HTTPConnection), req)

    class Https(urllib.request.HTTPSHandler):
        def https_open(self, req: urllib.request.Request) -> Any:
            return self.do_open(
                tracked(http.client.HTTPSConnection),
                req,
                context=self._context,  # type: ignore[attr-defined]
            )

    return urllib.request.build_opener(Http, Https)


def stream(
    url: str,
    *,
    clock: RefreshClock,
    read_timeout_s: float,
    max_bytes: int = DEFAULT_MAX_BYTES,
    what: str = "",
    headers: dict[str, str] | None = None,
    on_headers: Callable[[dict[str, str]], None] | None = None,
) -> Iterator[bytes]:
    """The body of GET `url` in chunks, within the refresh's time left and `max_bytes` bytes.

    `clock` is the refresh's deadline: this request gets what is left of it.
    `on_headers` gets the response headers before the body. A body shorter than its
    Content-Length raises http.client.IncompleteRead (retryable: a dropped connection).

    Raises HttpStatusError for an error status, DeadlineExceeded past the deadline,
    FetchError past the size; socket errors (timeouts, resets) pass through for the
    caller's retry policy.
    """
    what = what or url
    left_s = clock.remaining_s()
    if left_s <= 0:
        raise clock.late(what)
    watchdog = _Watchdog()
    timer = threading.Timer(left_s, watchdog.expire)
    timer.daemon = True
    started = time.monotonic()
    timer.start()

    def late() -> DeadlineExceeded:
        return clock.late(what)

    request = urllib.request.Request(url, headers={"User-Agent": "gpuplan", **(headers or {})})
    try:
        try:
            response = _opener(watchdog).open(request, timeout=min(read_timeout_s, left_s))
        except urllib.error.HTTPError as exc:
            hint = retry_after_seconds(exc.headers.get("Retry-After") if exc.headers else None)
            raise HttpStatusError(exc.code, str(exc.reason), hint) from None
        except (OSError, http.client.HTTPException) as exc:
            if watchdog.expired:
                raise late() from exc
            raise
        with response:
            if on_headers is not None:
                on_headers(dict(response.headers.items()))
            declared = response.headers.get("Content-Length")
            if declared and declared.isdigit() and int(declared) > max_bytes:
                raise FetchError(
                    f"{what}: {url} announces {int(declared):,} bytes, more than the "
                    f"{max_bytes:,} allowed (real answers are far smaller); is the URL right?"
                )
            received = 0
            while True:
                try:
                    chunk = response.read1(CHUNK_BYTES)
                except (OSError, http.client.HTTPException, ValueError) as exc:
                    if watchdog.expired:
                        raise late() from exc
                    raise
                if watchdog.expired or time.monotonic() - started > left_s:
                    raise late()
                if not chunk:
                    missing = getattr(response, "length", None)
                    if missing:
                        raise http.client.IncompleteRead(b"", missing)
                    return
                received += len(chunk)
                if received > max_bytes:
                    raise FetchError(
                        f"{what}: the body of {url} is larger than the {max_bytes:,} bytes "
                        "allowed (an endless or wrong response; real answers are far "
                        "smaller); nothing of it was kept: check the URL"
                    )
                yield chunk
    finally:
        timer.cancel()
        watchdog.expire()  # close any socket still open when the caller stops early


class Bounds(TypedDict, total=False):
    """The optional size bound, headers and header hook of one GET (as in `stream`)."""

    max_bytes: int
    headers: dict[str, str] | None
    on_headers: Callable[[dict[str, str]], None] | None


def get(
    url: str,
    *,
    clock: RefreshClock,
    read_timeout_s: float,
    what: str = "",
    **bounds: Unpack[Bounds],
) -> bytes:
    """The whole body of GET `url` (at most `max_bytes` bytes held), bounded as in `stream`."""
    body = bytearray()
    for chunk in stream(url, clock=clock, read_timeout_s=read_timeout_s, what=what, **bounds):
        body += chunk
    return bytes(body)


def with_retries(
    call: Callable[[], T],
    *,
    retry: RetryPolicy,
    clock: RefreshClock,
    what: str,
    passes: tuple[type[Exception], ...] = (FetchError,),
) -> T:
    """`call()` (bounded GETs and what reads them), retried while `retryable` says so,
    after the server's Retry-After where it gives one, at most retry.attempts tries and
    never past the refresh's deadline (`clock`; retry.call_with_retries).

    A FetchError (and any other of `passes`) is raised as is; any other failure becomes
    a FetchError naming `what` and saying to check the URL and the network.
    """
    try:
        return call_with_retries(
            call,
            policy=retry,
            retryable=retryable,
            what=what,
            clock=clock,
            retry_after_s=lambda exc: getattr(exc, "retry_after_s", None),
        )
    except passes:
        raise
    except Exception as exc:
        raise FetchError(f"{what}: {describe(exc)}; check the URL and the network") from exc


def get_with_retries(
    url: str, *, retry: RetryPolicy, clock: RefreshClock, what: str, **bounds: Unpack[Bounds]
) -> bytes:
    """The whole body of GET `url` (`get`, each try given retry.timeout_s per read),
    retried as in `with_retries`."""
    return with_retries(
        functools.partial(
            get, url, clock=clock, read_timeout_s=retry.timeout_s, what=what, **bounds
        ),
        retry=retry,
        clock=clock,
        what=what,
    )


def lines(chunks: Iterable[bytes], *, max_line_bytes: int, what: str) -> Iterator[bytes]:
    """The lines (each with its newline; a last one without) of a streamed body.

    Memory holds one chunk and one unfinished line: a line longer than `max_line_bytes`
    (a body with no newlines, say) raises FetchError naming `what`, rather than grow.
    """
    rest = b""
    for chunk in chunks:
        parts = (rest + chunk).split(b"\n")
        rest = parts.pop()
        for part in parts:
            if len(part) >= max_line_bytes:
                raise _line_too_long(what, max_line_bytes)
            yield part + b"\n"
        if len(rest) > max_line_bytes:
            raise _line_too_long(what, max_line_bytes)
    if rest:
        yield rest


def _line_too_long(what: str, max_line_bytes: int) -> FetchError:
    return FetchError(
        f"{what}: a line longer than {max_line_bytes:,} bytes (no real file has one: a "
        "wrong or endless response); nothing of it was kept: check the URL"
    )


@dataclass
class Pages:
    """A page budget for a paginated API: at most `max_pages`, and no link twice."""

    what: str
    max_pages: int = DEFAULT_MAX_PAGES
    seen: set[str] = field(default_factory=set)

    def follow(self, url: str) -> int:
        """Record that `url` is fetched next; the page number. FetchError on a loop."""
        if url in self.seen:
            raise FetchError(
                f"{self.what}: page {len(self.seen) + 1} links back to a page already read "
                "(a pagination loop in the API's answer); try again later"
            )
        if len(self.seen) >= self.max_pages:
            raise FetchError(
                f"{self.what}: more than {self.max_pages} pages; the answer does not end"
            )
        self.seen.add(url)
        return len(self.seen)


def refused(exc: BaseException) -> bool:
    """A connection refused: nothing listens at that address (no retry changes that)."""
    reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    return isinstance(reason, ConnectionRefusedError)


def retryable(exc: BaseException) -> bool:
    """Throttling (429), server errors (5xx), timeouts and dropped connections; not a
    passed deadline, a body too large, a refused connection (it cost 14 s of silent
    retries), or another status."""
    if refused(exc):
        return False
    if isinstance(exc, HttpStatusError):
        return exc.status == 429 or exc.status >= 500
    if isinstance(exc, FetchError):
        return False
    return isinstance(
        exc,
        TimeoutError | ConnectionError | urllib.error.URLError | http.client.HTTPException,
    )
