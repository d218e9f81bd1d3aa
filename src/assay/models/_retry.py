"""Retries with backoff and adaptive per-provider concurrency.

Every call goes through a :class:`AdaptiveLimiter` shared by all models that talk to the same backend
(keyed by provider and base URL) within one event loop. It starts at ``max_concurrency`` slots; a rate
limit halves the slots (down to 1), and a run of successes adds one back (additive increase,
multiplicative decrease), so a run slows down instead of hammering a throttled API.
"""

from __future__ import annotations

import asyncio
import random
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

__all__ = ["AdaptiveLimiter", "RetryPolicy", "get_limiter"]


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait before retrying a retryable failure."""

    max_retries: int = 3
    backoff_s: float = 0.5
    max_backoff_s: float = 30.0
    jitter: float = 0.1

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based); ``Retry-After`` wins when given."""
        if retry_after is not None:
            return min(retry_after, self.max_backoff_s * 4)
        base = min(self.backoff_s * (2**attempt), self.max_backoff_s)
        return base * (1.0 + self.jitter * random.random())


class AdaptiveLimiter:
    """A semaphore whose size shrinks on rate limits and grows back on success."""

    def __init__(self, max_concurrency: int, *, increase_after: int = 10) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        self.max_concurrency = max_concurrency
        self.limit = max_concurrency
        self.in_flight = 0
        self.rate_limited = 0
        self._increase_after = increase_after
        self._successes = 0
        self._cond = asyncio.Condition()

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        async with self._cond:
            await self._cond.wait_for(lambda: self.in_flight < self.limit)
            self.in_flight += 1
        try:
            yield
        finally:
            async with self._cond:
                self.in_flight -= 1
                self._cond.notify_all()

    def on_success(self) -> None:
        self._successes += 1
        if self.limit < self.max_concurrency and self._successes >= self._increase_after:
            self.limit += 1
            self._successes = 0

    def on_rate_limit(self) -> None:
        self.rate_limited += 1
        self._successes = 0
        self.limit = max(1, self.limit // 2)


_LIMITERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, AdaptiveLimiter]] = (
    weakref.WeakKeyDictionary()
)


def get_limiter(key: str, max_concurrency: int) -> AdaptiveLimiter:
    """The limiter of ``key`` in the running event loop (created with ``max_concurrency`` on first use)."""
    loop = asyncio.get_running_loop()
    per_loop = _LIMITERS.setdefault(loop, {})
    limiter = per_loop.get(key)
    if limiter is None:
        limiter = per_loop[key] = AdaptiveLimiter(max_concurrency)
    return limiter
