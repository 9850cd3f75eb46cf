"""Bounded HTTP GETs for the plain-HTTP price sources (Azure retail, SkyPilot, AWS public).

Every request has three bounds, so that no server can hold a refresh forever or fill
the memory:

- a total deadline (`deadline_s`) for connecting, headers and the whole body; a server
  that sends one byte per second is cut off at the deadline, not kept alive by each
  byte (a watchdog shuts the socket down, which wakes a blocked read);
- a per-read timeout (`read_timeout_s`) for a server that stops sending;
- a maximum body size (`max_bytes`); a longer (or endless) body fails at that size
  and is never held whole in memory.

Pagination (`Pages`) has a page budget and stops on a link it has already followed.
Failures raise HttpStatusError (an error status, with the server's Retry-After) or
FetchError (deadline, size, page loop).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import email.utils
import http.client
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pricing.providers.retry import FetchError

CHUNK_BYTES = 64 * 1024
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_PAGES = 200


class HttpStatusError(Exception):
    """An HTTP error status from the API, with the server's Retry-After hint if any."""

    def __init__(self, status: int, reason: str, retry_after_s: float | None) -> None:
        super().__init__(f"HTTP {status} {reason}")
        self.status = status
        self.retry_after_s = retry_after_s


class DeadlineExceeded(FetchError):
    """A request that did not finish within its total deadline."""


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
    deadline_s: float,
    read_timeout_s: float,
    max_bytes: int = DEFAULT_MAX_BYTES,
    what: str = "",
    headers: dict[str, str] | None = None,
    on_headers: Callable[[dict[str, str]], None] | None = None,
) -> Iterator[bytes]:
    """The body of GET `url` in chunks, within `deadline_s` seconds and `max_bytes` bytes.

    `on_headers` gets the response headers before the body. A body shorter than its
    Content-Length raises http.client.IncompleteRead (retryable: a dropped connection).

    Raises HttpStatusError for an error status, DeadlineExceeded past the deadline,
    FetchError past the size; socket errors (timeouts, resets) pass through for the
    caller's retry policy.
    """
    what = what or url
    watchdog = _Watchdog()
    timer = threading.Timer(deadline_s, watchdog.expire)
    timer.daemon = True
    started = time.monotonic()
    timer.start()

    def late() -> DeadlineExceeded:
        return DeadlineExceeded(
            f"{what}: did not finish within {deadline_s:g} s "
            f"(the server is too slow or stalls); try again later or raise --timeout"
        )

    request = urllib.request.Request(url, headers={"User-Agent": "gpuplan", **(headers or {})})
    try:
        try:
            response = _opener(watchdog).open(request, timeout=min(read_timeout_s, deadline_s))
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
                    f"{what}: the server announces {int(declared):,} bytes, more than the "
                    f"{max_bytes:,} allowed; is the URL right?"
                )
            received = 0
            while True:
                try:
                    chunk = response.read1(CHUNK_BYTES)
                except (OSError, http.client.HTTPException, ValueError) as exc:
                    if watchdog.expired:
                        raise late() from exc
                    raise
                if watchdog.expired or time.monotonic() - started > deadline_s:
                    raise late()
                if not chunk:
                    missing = getattr(response, "length", None)
                    if missing:
                        raise http.client.IncompleteRead(b"", missing)
                    return
                received += len(chunk)
                if received > max_bytes:
                    raise FetchError(
                        f"{what}: the body is larger than the {max_bytes:,} bytes allowed "
                        "(an endless or wrong response); nothing of it was kept"
                    )
                yield chunk
    finally:
        timer.cancel()
        watchdog.expire()  # close any socket still open when the caller stops early


def get(
    url: str,
    *,
    deadline_s: float,
    read_timeout_s: float,
    max_bytes: int = DEFAULT_MAX_BYTES,
    what: str = "",
    headers: dict[str, str] | None = None,
) -> bytes:
    """The whole body of GET `url`, bounded as in `stream`."""
    return b"".join(
        stream(
            url,
            deadline_s=deadline_s,
            read_timeout_s=read_timeout_s,
            max_bytes=max_bytes,
            what=what,
            headers=headers,
        )
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


def retryable(exc: BaseException) -> bool:
    """Throttling (429), server errors (5xx), timeouts and dropped connections; not a
    passed deadline, a body too large, or another status."""
    if isinstance(exc, HttpStatusError):
        return exc.status == 429 or exc.status >= 500
    if isinstance(exc, FetchError):
        return False
    return isinstance(
        exc,
        TimeoutError | ConnectionError | urllib.error.URLError | http.client.HTTPException,
    )
