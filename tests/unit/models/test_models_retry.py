"""Retry delays, Retry-After parsing and the adaptive concurrency limiter."""

from __future__ import annotations

import asyncio
import email.utils
import time

import pytest

from assay.models import AdaptiveLimiter, RetryPolicy
from assay.models._errors import classify_http_error, parse_retry_after


def test_backoff_grows_and_retry_after_wins() -> None:
    policy = RetryPolicy(max_retries=5, backoff_s=1.0, max_backoff_s=4.0, jitter=0.0)
    assert [policy.delay(i, None) for i in range(4)] == [1.0, 2.0, 4.0, 4.0]
    assert policy.delay(0, 0.25) == 0.25


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "7"}) == 7.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= (parse_retry_after({"retry-after": when}) or 0) <= 31
    assert parse_retry_after({}) is None
    assert parse_retry_after({"retry-after": "soon"}) is None


def test_classification_table() -> None:
    def kind(status: int, body: str = "{}") -> str:
        err = classify_http_error("p", status, body, {})
        return getattr(err, "kind", "subject")

    assert kind(401) == "auth"
    assert kind(403) == "auth"
    assert kind(402) == "quota"
    assert kind(429, '{"error": {"code": "insufficient_quota"}}') == "quota"
    assert kind(429) == "rate_limit"
    assert kind(500) == "server"
    assert kind(529) == "server"
    assert kind(404) == "not_found"
    assert kind(400, '{"error": {"message": "model \'x\' not found"}}') == "not_found"
    assert kind(400) == "subject"
    assert kind(422) == "subject"


async def test_limiter_bounds_concurrency_and_adapts() -> None:
    limiter = AdaptiveLimiter(4, increase_after=2)
    peak = 0

    async def job() -> None:
        nonlocal peak
        async with limiter.slot():
            peak = max(peak, limiter.in_flight)
            await asyncio.sleep(0.01)

    await asyncio.gather(*(job() for _ in range(12)))
    assert peak == 4
    limiter.on_rate_limit()
    limiter.on_rate_limit()
    assert limiter.limit == 1
    peak = 0
    await asyncio.gather(*(job() for _ in range(5)))
    assert peak == 1
    for _ in range(4):
        limiter.on_success()
    assert limiter.limit == 3
    with pytest.raises(ValueError):
        AdaptiveLimiter(0)


def test_error_text_is_one_line() -> None:
    err = classify_http_error("p", 502, "<html>\n<body>Bad gateway\n</body></html>", {}, url="http://h/v1")
    assert "\n" not in str(err) and "Bad gateway" in str(err)
