"""HTTP plumbing shared by the HTTP providers: one client per event loop, SSE parsing, error mapping."""

from __future__ import annotations

import asyncio
import json
import weakref
from collections.abc import AsyncIterator
from typing import Any

import httpx

from assay.models._errors import (
    ModelInfraError,
    ModelResponseError,
    classify_http_error,
    classify_transport_error,
)

__all__ = ["HttpBackend", "SseEvent", "iter_sse"]


class SseEvent:
    __slots__ = ("data", "event")

    def __init__(self, event: str | None, data: str) -> None:
        self.event = event
        self.data = data

    def json(self) -> Any:
        return json.loads(self.data)


async def iter_sse(response: httpx.Response) -> AsyncIterator[SseEvent]:
    """Server-sent events of ``response``, one per blank-line-terminated block."""
    event: str | None = None
    data: list[str] = []
    async for line in response.aiter_lines():
        if line == "":
            if data:
                yield SseEvent(event, "\n".join(data))
            event, data = None, []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            event = value
        elif field == "data":
            data.append(value)
    if data:
        yield SseEvent(event, "\n".join(data))


class HttpBackend:
    """An HTTP endpoint with headers, a timeout and one pooled client per running event loop."""

    def __init__(
        self,
        provider: str,
        base_url: str,
        headers: dict[str, str],
        *,
        timeout_s: float = 300.0,
        connect_timeout_s: float = 10.0,
        key_hint: str = "",
    ) -> None:
        self.provider = provider
        self.base_url = base_url.rstrip("/")
        self.headers = headers
        self.timeout = httpx.Timeout(timeout_s, connect=connect_timeout_s)
        self.key_hint = key_hint
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
            weakref.WeakKeyDictionary()
        )

    def url(self, path: str) -> str:
        return f"{self.base_url}/{path.lstrip('/')}"

    def client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None or client.is_closed:
            client = httpx.AsyncClient(
                headers=self.headers,
                timeout=self.timeout,
                limits=httpx.Limits(max_connections=None, max_keepalive_connections=64),
            )
            self._clients[loop] = client
        return client

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        client = self._clients.pop(loop, None)
        if client is not None:
            await client.aclose()

    def _raise_for(self, response: httpx.Response, body: str) -> None:
        raise classify_http_error(
            self.provider,
            response.status_code,
            body,
            response.headers,
            url=str(response.url),
            key_hint=self.key_hint,
        )

    async def get_json(self, path: str, *, timeout_s: float | None = None) -> Any:
        url = self.url(path)
        try:
            response = await self.client().get(url, timeout=timeout_s or self.timeout)
        except httpx.HTTPError as exc:
            raise classify_transport_error(self.provider, exc, url=url) from exc
        if response.status_code >= 400:
            self._raise_for(response, response.text)
        return _json_or_error(self.provider, response.text, url)

    async def post_json(self, path: str, payload: dict[str, Any]) -> Any:
        url = self.url(path)
        try:
            response = await self.client().post(url, json=payload)
        except httpx.HTTPError as exc:
            raise classify_transport_error(self.provider, exc, url=url) from exc
        if response.status_code >= 400:
            self._raise_for(response, response.text)
        return _json_or_error(self.provider, response.text, url)

    async def post_sse(self, path: str, payload: dict[str, Any]) -> AsyncIterator[SseEvent]:
        """POST and yield the answer's server-sent events; transport failures become ModelInfraError."""
        url = self.url(path)
        try:
            async with self.client().stream("POST", url, json=payload) as response:
                if response.status_code >= 400:
                    body = (await response.aread()).decode("utf-8", "replace")
                    self._raise_for(response, body)
                async for event in iter_sse(response):
                    yield event
        except httpx.HTTPError as exc:
            raise classify_transport_error(self.provider, exc, url=url) from exc


def _json_or_error(provider: str, text: str, url: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ModelInfraError(
            f"{url} answered with something that is not JSON: {text[:200]!r}",
            provider=provider,
            kind="protocol",
        ) from exc


def response_error(provider: str, message: str, body: Any = "") -> ModelResponseError:
    return ModelResponseError(message, provider=provider, body=str(body)[:2000])
