"""Bounded retries with exponential backoff for the plain-HTTP sources' `fetch_*`
functions (Azure, SkyPilot, AWS public price list); the SDK sources (AWS, GCP) hand the
same RetryPolicy's figures to their SDK's own retry and check a RefreshClock between pages.

Throttling, server errors and timeouts are retried a few times; anything else, and the
last failure, becomes a FetchError whose message says what failed and what to do. The
sleep is injectable so that tests of the retry path take milliseconds.
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


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a fetch retries one request.

    `timeout_s` bounds each wait for data (a page that never comes fails after it, and
    is retried), `deadline_s` bounds each request as a whole (a server that drips bytes
    fails at it, and is not retried), `attempts` bounds the tries per request, and the
    wait before try n+1 is `delay_s(n)`, less a random part of up to `jitter` of it.

    The SDK sources (AWS, GCP) hand `attempts` and `timeout_s` to the SDK's own retry
    (botocore's `sdk_mode` "standard" or "adaptive"; google-api-core's Retry) and stop a
    whole refresh once it has run `refresh_deadline_s` (checked between pages, RefreshClock).
    """

    attempts: int = 5
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0
    timeout_s: float = 60.0
    deadline_s: float = 300.0
    jitter: float = 0.25
    sdk_mode: str = "standard"
    refresh_deadline_s: float = 1800.0
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)
    random: Callable[[], float] = field(default=random.random, compare=False)
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)

    def refresh_clock(self) -> RefreshClock:
        """A RefreshClock started now, for one refresh."""
        return RefreshClock(self.refresh_deadline_s, self.clock, self.clock())

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
    """The whole-refresh deadline of an SDK source: `check` between pages."""

    deadline_s: float
    clock: Callable[[], float]
    started: float

    def check(self, what: str) -> None:
        """FetchError naming `what` once `deadline_s` seconds have passed since `started`."""
        elapsed = self.clock() - self.started
        if elapsed > self.deadline_s:
            raise FetchError(
                f"{what}: the refresh has run {elapsed:.0f} s, past its deadline of "
                f"{self.deadline_s:.0f} s; try again later, or ask for fewer regions"
            )


def call_with_retries(
    call: Callable[[], T],
    *,
    policy: RetryPolicy,
    retryable: Callable[[BaseException], bool],
    what: str,
    retry_after_s: Callable[[BaseException], float | None] | None = None,
) -> T:
    """`call()`, retried while `retryable(error)`, at most `policy.attempts` tries.

    Raises FetchError naming `what` once the tries are spent; a non-retryable error is
    raised as is, for the caller to explain.
    """
    for attempt in range(1, policy.attempts + 1):
        try:
            return call()
        except Exception as exc:
            if not retryable(exc):
                raise
            if attempt == policy.attempts:
                raise FetchError(
                    f"{what}: still failing after {policy.attempts} tries "
                    f"({describe(exc)}); try again later"
                ) from exc
            hint = retry_after_s(exc) if retry_after_s else None
            policy.sleep(policy.wait_s(attempt, hint))
    raise AssertionError("unreachable")  # pragma: no cover


def describe(exc: BaseException) -> str:
    """A one-line description of an exception: its type and first line."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
