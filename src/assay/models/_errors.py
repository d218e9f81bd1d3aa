"""How a failed model call is classified.

    ModelInfraError (InfraError)      the backend could not be used: never the subject's fault
        kind: connect | dns | timeout | auth | quota | rate_limit | server | not_found | protocol
    ModelResponseError (SubjectError) the backend answered, but refused or garbled this request
                                      (bad request, context too long, content filtered)

``retryable`` marks the errors worth another try (429, 5xx, dropped connections); the retry loop in
:mod:`assay.models._retry` gives up after its budget and raises the last one as is.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from assay.errors import InfraError, SubjectError

__all__ = [
    "ModelInfraError",
    "ModelResponseError",
    "classify_http_error",
    "classify_transport_error",
    "parse_reset_time",
    "parse_retry_after",
]

_QUOTA_WORDS = ("insufficient_quota", "quota", "billing", "credit balance", "credits", "payment")


class ModelInfraError(InfraError):
    """The model backend was unreachable, rejected our credentials, is out of quota or kept failing."""

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        kind: str,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
        resets_at: datetime | None = None,
    ) -> None:
        when = f"; the provider says it resets at {resets_at:%Y-%m-%d %H:%M:%S} UTC" if resets_at else ""
        super().__init__(f"{provider}: {message}{when}")
        self.provider = provider
        self.kind = kind
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after
        #: when a quota or rate limit is lifted, where the provider said so (UTC)
        self.resets_at = resets_at


class ModelResponseError(SubjectError):
    """The backend answered but refused this request (e.g. 400 context too long): the subject's failure."""

    def __init__(self, message: str, *, provider: str, status: int | None = None, body: str = "") -> None:
        super().__init__(f"{provider}: {message}")
        self.provider = provider
        self.status = status
        self.body = body


def parse_retry_after(headers: httpx.Headers | dict[str, str]) -> float | None:
    """Seconds to wait from ``Retry-After`` (seconds or HTTP date) or ``retry-after-ms``; None if absent."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    import datetime as _dt

    now = _dt.datetime.now(when.tzinfo or _dt.UTC)
    return max(0.0, (when - now).total_seconds())


#: headers that say when a limit is lifted: RFC 3339 times (Anthropic) or durations like ``6m0s`` (OpenAI)
_RESET_HEADERS = (
    "anthropic-ratelimit-requests-reset",
    "anthropic-ratelimit-tokens-reset",
    "anthropic-ratelimit-input-tokens-reset",
    "x-ratelimit-reset-requests",
    "x-ratelimit-reset-tokens",
    "x-ratelimit-reset",
)
_DURATION = re.compile(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+)ms)?")


def _reset_value(value: str, now: datetime) -> datetime | None:
    value = value.strip()
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
        return when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)
    except ValueError:
        pass
    try:
        seconds = float(value)
    except ValueError:
        m = _DURATION.fullmatch(value)
        if not m or not any(m.groups()):
            return None
        h, mi, sec, ms = (float(g) if g else 0.0 for g in m.groups())
        seconds = h * 3600 + mi * 60 + sec + ms / 1000
    if seconds > 1e9:  # an epoch timestamp
        return datetime.fromtimestamp(seconds, UTC)
    return now + timedelta(seconds=seconds)


def parse_reset_time(headers: httpx.Headers | dict[str, str]) -> datetime | None:
    """When the provider says a quota or rate limit resets (the latest of its reset headers), or None."""
    now = datetime.now(UTC)
    found = [w for h in _RESET_HEADERS if (v := headers.get(h)) and (w := _reset_value(v, now)) is not None]
    if not found and (after := parse_retry_after(headers)) is not None:
        found.append(now + timedelta(seconds=after))
    return max(found) if found else None


def _error_text(body: str) -> str:
    """The human part of an error body on one line (OpenAI and Anthropic nest it under ``error.message``)."""
    return " ".join(_error_text_raw(body).split())


def _error_text_raw(body: str) -> str:
    try:
        data: Any = json.loads(body)
    except (ValueError, TypeError):
        return body.strip()[:300]
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            msg = err.get("message") or err.get("detail") or err.get("type")
            code = err.get("code") or err.get("type")
            if msg and code and str(code) not in str(msg):
                return f"{msg} ({code})"
            if msg:
                return str(msg)
        elif isinstance(err, str):
            return err
        if "detail" in data:
            return str(data["detail"])[:300]
    return body.strip()[:300]


def classify_http_error(
    provider: str,
    status: int,
    body: str,
    headers: httpx.Headers | dict[str, str],
    *,
    url: str = "",
    key_hint: str = "",
) -> ModelInfraError | ModelResponseError:
    """Map an HTTP error answer to the error assay raises for it."""
    text = _error_text(body)
    lowered = body.lower()
    where = f" at {url}" if url else ""
    if status == 402 or (status in (400, 403, 429) and any(w in lowered for w in _QUOTA_WORDS)):
        return ModelInfraError(
            f"out of quota or billing problem (HTTP {status}): {text}",
            provider=provider,
            kind="quota",
            status=status,
            resets_at=parse_reset_time(headers),
        )
    if status in (401, 403):
        hint = f"; check {key_hint}" if key_hint else ""
        return ModelInfraError(
            f"credentials rejected (HTTP {status}){where}: {text}{hint}",
            provider=provider,
            kind="auth",
            status=status,
        )
    if status == 404:
        return ModelInfraError(
            f"model or endpoint not found (HTTP 404){where}: {text}",
            provider=provider,
            kind="not_found",
            status=404,
        )
    if status == 429:
        return ModelInfraError(
            f"rate limited (HTTP 429): {text}",
            provider=provider,
            kind="rate_limit",
            status=status,
            retryable=True,
            retry_after=parse_retry_after(headers),
        )
    if status >= 500 or status in (408, 409):
        return ModelInfraError(
            f"server error (HTTP {status}){where}: {text}",
            provider=provider,
            kind="server",
            status=status,
            retryable=True,
            retry_after=parse_retry_after(headers),
        )
    if status == 400 and "model" in lowered and ("not found" in lowered or "does not exist" in lowered):
        return ModelInfraError(f"model not found: {text}", provider=provider, kind="not_found", status=status)
    return ModelResponseError(
        f"request refused (HTTP {status}): {text}", provider=provider, status=status, body=body
    )


def classify_transport_error(provider: str, exc: Exception, *, url: str = "") -> ModelInfraError:
    """Map a transport failure (refused, DNS, timeout, dropped stream) to a :class:`ModelInfraError`."""
    where = f" {url}" if url else ""
    text = str(exc) or type(exc).__name__
    lowered = text.lower()
    if isinstance(exc, httpx.ConnectError):
        dns = any(
            w in lowered
            for w in ("name or service not known", "nodename nor servname", "getaddrinfo", "name resolution")
        )
        if dns:
            return ModelInfraError(f"cannot resolve host of{where}: {text}", provider=provider, kind="dns")
        return ModelInfraError(
            f"cannot connect to{where}: {text}", provider=provider, kind="connect", retryable=True
        )
    if isinstance(exc, httpx.TimeoutException):
        return ModelInfraError(
            f"timed out talking to{where}: {text}", provider=provider, kind="timeout", retryable=True
        )
    return ModelInfraError(
        f"connection to{where} failed: {type(exc).__name__}: {text}",
        provider=provider,
        kind="protocol",
        retryable=True,
    )
