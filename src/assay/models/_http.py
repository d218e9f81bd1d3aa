"""HTTP plumbing shared by the HTTP providers: one client per event loop, SSE parsing, error mapping.

A server this process runs itself on loopback (the agents' model gateway) can register its ASGI app with
:func:`serve_in_process`; a JSON call to it then goes to the app on the caller's own event loop, with no socket
and no other thread to wake (two threads of one process hand the GIL back and forth on every call, and on a busy
machine each hand-over waits for a scheduler slice). Streamed calls still go over the socket, so each piece
arrives when it is sent.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import ssl
import weakref
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import httpx

from assay.models._errors import (
    ModelInfraError,
    ModelResponseError,
    classify_http_error,
    classify_transport_error,
)

__all__ = ["HttpBackend", "SseEvent", "iter_sse", "serve_in_process", "ssl_context"]

#: ASGI apps this process serves, by origin (``http://127.0.0.1:PORT``)
_IN_PROCESS: dict[str, Any] = {}


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def serve_in_process(origin: str, app: Any | None) -> None:
    """Register ``app`` as what this process serves at ``origin`` (``http://127.0.0.1:PORT``); None withdraws
    it. From then on a JSON call of an :class:`HttpBackend` under that origin runs the app in the caller's
    event loop (the same request and answer, no socket)."""
    if app is None:
        _IN_PROCESS.pop(_origin(origin), None)
    else:
        _IN_PROCESS[_origin(origin)] = app


def ssl_context() -> ssl.SSLContext:
    """The certificate store every client of this process verifies with: loading it costs ~20 ms of CPU,
    so it is loaded once (again only if ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` change), not once per client."""
    return _ssl_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _ssl_context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    return httpx.create_ssl_context()  # reads the same two variables


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
        self._origin = _origin(self.base_url)
        #: per loop, the in-process app its client was made for, and that client
        self._local: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[Any, httpx.AsyncClient]] = (
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
                verify=ssl_context(),
            )
            self._clients[loop] = client
        return client

    def json_client(self) -> httpx.AsyncClient:
        """The client of a JSON call: the in-process app's while this process serves the base URL's origin
        (:func:`serve_in_process`), else :meth:`client`."""
        app = _IN_PROCESS.get(self._origin)
        if app is None:
            return self.client()
        loop = asyncio.get_running_loop()
        held = self._local.get(loop)
        if held is None or held[0] is not app or held[1].is_closed:
            # an error inside the app is its 500 answer, as a server's would be
            transport = httpx.ASGITransport(app, raise_app_exceptions=False)
            client = httpx.AsyncClient(
                headers=self.headers, timeout=self.timeout, transport=transport, trust_env=False
            )
            held = self._local[loop] = (app, client)
        return held[1]

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        client = self._clients.pop(loop, None)
        if client is not None:
            await client.aclose()
        held = self._local.pop(loop, None)
        if held is not None:
            await held[1].aclose()

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
            response = await self.json_client().get(url, timeout=timeout_s or self.timeout)
        except httpx.HTTPError as exc:
            raise classify_transport_error(self.provider, exc, url=url) from exc
        if response.status_code >= 400:
            self._raise_for(response, response.text)
        return _json_or_error(self.provider, response.text, url)

    async def post_json(self, path: str, payload: dict[str, Any]) -> Any:
        url = self.url(path)
        try:
            response = await self.json_client().post(url, json=payload)
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
