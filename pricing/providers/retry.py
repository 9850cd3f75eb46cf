"""Bounded retries with exponential backoff for the plain-HTTP sources' `fetch_*`
functions (Azure, SkyPilot, AWS public price list), and the one deadline of a whole
refresh (RefreshClock) that every source, plain-HTTP or SDK (AWS, GCP), keeps.

Throttling, server errors and timeouts are retried a few times; anything else, and the
last failure, becomes a FetchError whose message says what failed and what to do. A
retry whose wait would end past the refresh's deadline is not made. The sleep and the
clock are injectable so that tests of the retry path take milliseconds.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")


class FetchError(RuntimeError):
    """A provider API could not be read: what failed, why, and what to do about it."""


class DeadlineExceeded(FetchError):
    """A refresh that did not finish within its total deadline (RetryPolicy.deadline_s)."""


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a refresh retries, and how long it may take in all.

    `timeout_s` bounds each wait for data (a page that never comes fails after it, and
    is retried), `deadline_s` bounds the whole refresh: every request, page, file, retry
    and wait between retries together (a server that drips bytes, or answers each of
    endless pages just in time, fails at it, and is not retried); `attempts` bounds the
    tries per request, and the wait before try n+1 is `delay_s(n)`, less a random part
    of up to `jitter` of it.

    The SDK sources (AWS, GCP) hand `attempts` and `timeout_s` to the SDK's own retry
    (botocore's `sdk_mode` "standard" or "adaptive"; google-api-core's Retry) and check
    the same deadline between pages (RefreshClock).
    """

    attempts: int = 5
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0
    timeout_s: float = 60.0
    deadline_s: float = 300.0
    jitter: float = 0.25
    sdk_mode: str = "standard"
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)
    random: Callable[[], float] = field(default=random.random, compare=False)
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)

    def refresh_clock(self) -> RefreshClock:
        """A RefreshClock started now, for one refresh of at most deadline_s seconds."""
        return RefreshClock(self.deadline_s, self.clock, self.clock())

    def delay_s(self, attempt: int, hint_s: float | None = None) -> float:
        """Seconds to wait after failed try `attempt` (1-based).

        Exponential backoff, base_delay_s * 2**(attempt - 1), capped at max_delay_s
        (AWS Architecture Blog, "Exponential Backoff and Jitter", 2015). A server's
        Retry-After hint is honoured up to the same cap. wait_s adds the jitter.
        """
        backoff = self.base_delay_s * 2 ** (attempt - 1)
        if hint_s is not None:
            backoff = max(backoff, hint_s)
        return float(min(self.max_delay_s, backoff))

    def wait_s(self, attempt: int, hint_s: float | None = None) -> float:
        """delay_s less up to `jitter` of it at random ("Exponential Backoff and Jitter":
        clients that failed together do not retry together), never below the server's
        Retry-After hint."""
        backoff = self.delay_s(attempt) * (1 - self.jitter * self.random())
        if hint_s is not None:
            backoff = max(backoff, min(hint_s, self.max_delay_s))
        return float(backoff)


@dataclass(frozen=True)
class RefreshClock:
    """The deadline of one whole refresh: `deadline_s` seconds of `clock` from `started`.

    The plain-HTTP sources give each request only the time left (`remaining_s`) and
    make no retry whose wait would end past it; the SDK sources `check` between pages.
    """

    deadline_s: float
    clock: Callable[[], float]
    started: float

    def elapsed_s(self) -> float:
        """Seconds since the refresh started."""
        return self.clock() - self.started

    def remaining_s(self) -> float:
        """Seconds left before the deadline; 0 or less once it has passed."""
        return self.deadline_s - self.elapsed_s()

    def late(self, what: str, why: str = "") -> DeadlineExceeded:
        """The error of a refresh stopped at its deadline while doing `what` (`why`: the
        last failure, if a retry was cut short)."""
        cause = f" ({why})" if why else ""
        return DeadlineExceeded(
            f"{what}{cause}: the refresh did not finish within {self.deadline_s:g} s, its "
            "deadline for every request, page and retry together (the server is too slow, "
            "stalls or its answer does not end); try again later, ask for fewer regions, "
            "or raise --deadline"
        )

    def check(self, what: str) -> None:
        """DeadlineExceeded naming `what` once `deadline_s` seconds have passed."""
        elapsed = self.elapsed_s()
        if elapsed > self.deadline_s:
            raise DeadlineExceeded(
                f"{what}: the refresh has run {elapsed:.0f} s, past its deadline of "
                f"{self.deadline_s:g} s; try again later, ask for fewer regions, "
                "or raise --deadline"
            )


def call_with_retries(
    call: Callable[[], T],
    *,
    policy: RetryPolicy,
    retryable: Callable[[BaseException], bool],
    what: str,
    clock: RefreshClock,
    retry_after_s: Callable[[BaseException], float | None] | None = None,
) -> T:
    """`call()`, retried while `retryable(error)`, at most `policy.attempts` tries, and
    never waiting past the refresh's deadline (`clock`).

    Raises FetchError naming `what` once the tries are spent, DeadlineExceeded when a try
    failed with the deadline passed (a request is given only the time left) or the next
    wait would end past it; a non-retryable error is raised as is, for
    the caller to explain.
    """
    for attempt in range(1, policy.attempts + 1):
        try:
            return call()
        except Exception as exc:
            if not retryable(exc):
                raise
            if clock.remaining_s() <= 0:  # it failed at the deadline it was given
                raise clock.late(what, describe(exc)) from exc
            if attempt == policy.attempts:
                raise FetchError(
                    f"{what}: still failing after {policy.attempts} tries "
                    f"({describe(exc)}); try again later"
                ) from exc
            hint = retry_after_s(exc) if retry_after_s else None
            wait_s = policy.wait_s(attempt, hint)
            if wait_s >= clock.remaining_s():
                why = f"{describe(exc)}; the next try would start too late"
                raise clock.late(what, why) from exc
            policy.sleep(wait_s)
    raise AssertionError("unreachable")  # pragma: no cover


def describe(exc: BaseException) -> str:
    """A one-line description of an exception: its type and first line."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
