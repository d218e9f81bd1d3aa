"""A lean streaming HTTP/1.1 client for OpenAI-compatible servers, built for measuring.

Generic HTTP stacks spend more time per request than a fast server does, which would make the client the
bottleneck of a load test. This client is an ``asyncio.Protocol`` per connection: bytes are stamped with
``time.perf_counter()`` in ``data_received`` (the moment the event loop sees them), parsed in place
(chunked, content-length or close-delimited bodies; server-sent events) and connections are kept alive
and reused. One process sustains well over 500 streamed requests per second (``benchmarks/client_overhead.py``).
"""

from __future__ import annotations

import asyncio
import json
import ssl
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from assay.errors import ConfigError

__all__ = ["StreamClient", "StreamResult"]

_perf = time.perf_counter


@dataclass
class StreamResult:
    """What one request returned, with client-side ``perf_counter`` stamps."""

    start: float
    end: float | None = None
    #: stamps of the server-sent events that carried generated text (content or reasoning)
    token_times: list[float] = field(default_factory=list)
    text: str = ""
    usage: dict[str, Any] | None = None
    finish_reason: str | None = None
    http_status: int | None = None
    error: str | None = None
    timed_out: bool = False
    body: Any = None

    @property
    def ok(self) -> bool:
        return self.error is None and not self.timed_out and self.http_status == 200


class _Exchange:
    """Parser state of one response; fed raw bytes with the time they arrived."""

    __slots__ = (
        "body_mode",
        "buf",
        "chunk_left",
        "done",
        "future",
        "headers_done",
        "keep_alive",
        "length_left",
        "parts",
        "raw_body",
        "result",
        "sse",
        "sse_buf",
        "trailer",
    )

    def __init__(self, result: StreamResult, future: asyncio.Future[None]) -> None:
        self.result = result
        self.future = future
        self.buf = bytearray()
        self.headers_done = False
        self.body_mode = "close"
        self.chunk_left = -1
        self.length_left = 0
        self.trailer = False
        self.sse = False
        self.sse_buf = bytearray()
        self.raw_body = bytearray()
        self.parts: list[str] = []
        self.keep_alive = True
        self.done = False

    # -- bytes in -------------------------------------------------------------------------------------
    def feed(self, data: bytes, t: float) -> None:
        self.buf += data
        if not self.headers_done:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            self._parse_headers(bytes(self.buf[:end]))
            del self.buf[: end + 4]
        if self.body_mode == "chunked":
            self._feed_chunked(t)
        elif self.body_mode == "length":
            take = min(self.length_left, len(self.buf))
            self._body(bytes(self.buf[:take]), t)
            del self.buf[:take]
            self.length_left -= take
            if self.length_left == 0:
                self._finish(t)
        else:
            self._body(bytes(self.buf), t)
            self.buf.clear()

    def _parse_headers(self, head: bytes) -> None:
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        self.result.http_status = int(parts[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip().lower()
        self.headers_done = True
        if "chunked" in headers.get("transfer-encoding", ""):
            self.body_mode = "chunked"
        elif "content-length" in headers:
            self.body_mode = "length"
            self.length_left = int(headers["content-length"])
        else:
            self.body_mode = "close"
            self.keep_alive = False
        if headers.get("connection") == "close" or lines[0].startswith("HTTP/1.0"):
            self.keep_alive = False
        self.sse = headers.get("content-type", "").startswith("text/event-stream")
        if self.body_mode == "length" and self.length_left == 0:
            self._finish(_perf())

    def _feed_chunked(self, t: float) -> None:
        # walk the buffer with an index and hand the body over once per read: one call, not one per chunk
        buf = self.buf
        pos, n = 0, len(buf)
        parts: list[bytes] = []
        finished = False
        while not finished:
            if self.trailer:
                end = buf.find(b"\r\n", pos)
                if end < 0:
                    break
                finished = end == pos
                pos = end + 2
                continue
            if self.chunk_left < 0:
                end = buf.find(b"\r\n", pos)
                if end < 0:
                    break
                size = int(bytes(buf[pos:end]).split(b";", 1)[0], 16)
                pos = end + 2
                if size == 0:
                    self.trailer = True
                    continue
                self.chunk_left = size
            avail = n - pos
            if avail < self.chunk_left + 2:
                if avail > self.chunk_left:
                    break
                # hand over what we have of this chunk now: its arrival time is what we measure
                if avail:
                    parts.append(bytes(buf[pos:n]))
                    self.chunk_left -= avail
                    pos = n
                break
            parts.append(bytes(buf[pos : pos + self.chunk_left]))
            pos += self.chunk_left + 2
            self.chunk_left = -1
        del buf[:pos]
        if parts:
            self._body(parts[0] if len(parts) == 1 else b"".join(parts), t)
        if finished:
            self._finish(t)

    def _body(self, data: bytes, t: float) -> None:
        if not data:
            return
        if not self.sse:
            self.raw_body += data
            return
        self.sse_buf += data
        if b"\n" not in data:
            return
        lines = self.sse_buf.split(b"\n")
        self.sse_buf = lines.pop()  # the unfinished line, if any
        for line in lines:
            if line.startswith(b"data:"):
                self._event(bytes(line[5:]).strip(), t)

    def _event(self, payload: bytes, t: float) -> None:
        if payload == b"[DONE]" or not payload:
            return
        try:
            event = json.loads(payload.decode("utf-8", "replace"))
        except ValueError:
            self.result.error = f"unparseable event: {payload[:120]!r}"
            return
        if not isinstance(event, dict):
            return
        if event.get("error"):
            self.result.error = f"stream error: {json.dumps(event['error'])[:300]}"
            return
        usage = event.get("usage")
        if usage:
            self.result.usage = usage
        for choice in event.get("choices") or ():
            delta = choice.get("delta")
            piece = None
            if delta is not None:
                piece = delta.get("content") or delta.get("reasoning_content") or delta.get("reasoning")
            elif "text" in choice:
                piece = choice.get("text")
            if piece:
                self.parts.append(piece)
                self.result.token_times.append(t)
            if choice.get("finish_reason"):
                self.result.finish_reason = choice["finish_reason"]

    # -- end ----------------------------------------------------------------------------------------
    def _finish(self, t: float) -> None:
        if self.done:
            return
        self.done = True
        result = self.result
        result.end = t
        result.text = "".join(self.parts)
        if self.raw_body:
            try:
                result.body = json.loads(self.raw_body)
            except ValueError:
                result.body = self.raw_body.decode("utf-8", "replace")
        if not self.sse and isinstance(result.body, dict) and result.http_status == 200:
            _absorb_json(result, t)
        if result.http_status != 200 and result.error is None:
            result.error = f"HTTP {result.http_status}: {str(result.body)[:300]}"
        if not self.future.done():
            self.future.set_result(None)

    def lost(self, exc: Exception | None) -> None:
        if self.done:
            return
        if self.headers_done and self.body_mode == "close" and exc is None:
            self._finish(_perf())
            return
        self.done = True
        self.result.error = f"connection lost: {exc or 'closed by server'}"
        if not self.future.done():
            self.future.set_result(None)


def _absorb_json(result: StreamResult, t: float) -> None:
    """A non-streamed answer: one 'token' time at the end, text and usage from the body."""
    body = result.body
    if body.get("usage"):
        result.usage = body["usage"]
    choices = body.get("choices") or [{}]
    choice = choices[0]
    message = choice.get("message") or {}
    result.text = message.get("content") or choice.get("text") or ""
    result.finish_reason = choice.get("finish_reason")
    if result.text:
        result.token_times.append(t)


class _Conn(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.exchange: _Exchange | None = None
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        t = _perf()
        ex = self.exchange
        if ex is None:
            self.close()
            return
        try:
            ex.feed(data, t)
        except Exception as exc:  # a malformed response: fail this request, drop the connection
            ex.result.error = f"bad response: {type(exc).__name__}: {exc}"
            ex.done = True
            if not ex.future.done():
                ex.future.set_result(None)
            self.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.exchange is not None:
            self.exchange.lost(exc)

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


class StreamClient:
    """Send OpenAI-style JSON requests to one base URL over kept-alive connections.

    ``request`` never raises for a failed request: the failure is in the returned ``StreamResult``.
    """

    def __init__(self, base_url: str, *, api_key: str | None = None, connect_timeout: float = 10.0) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"--model: {base_url!r} is not an http(s) URL")
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.ssl: ssl.SSLContext | None = ssl.create_default_context() if parts.scheme == "https" else None
        self.prefix = parts.path.rstrip("/")
        if self.prefix.endswith("/v1"):
            self.prefix = self.prefix[:-3]
        host_header = self.host if parts.port is None else f"{self.host}:{self.port}"
        self._head = f"Host: {host_header}\r\nUser-Agent: assay-serving\r\nAccept: */*\r\n"
        if api_key:
            self._head += f"Authorization: Bearer {api_key}\r\n"
        self.connect_timeout = connect_timeout
        self._idle: list[_Conn] = []
        self._open: set[_Conn] = set()

    async def _acquire(self, reuse: bool = True) -> tuple[_Conn, bool]:
        """A connection, and whether it was reused from the pool."""
        while reuse and self._idle:
            conn = self._idle.pop()
            if not conn.closed:
                return conn, True
            self._open.discard(conn)
        loop = asyncio.get_running_loop()
        _, conn = await asyncio.wait_for(
            loop.create_connection(_Conn, self.host, self.port, ssl=self.ssl), self.connect_timeout
        )
        self._open.add(conn)
        return conn, False

    async def request(
        self,
        path: str,
        body: dict[str, Any] | None = None,
        *,
        method: str = "POST",
        timeout: float | None = None,
    ) -> StreamResult:
        """Send one request; ``start`` is stamped just before the connection is taken from the pool."""
        payload = b"" if body is None else json.dumps(body, separators=(",", ":")).encode()
        head = f"{method} {self.prefix}{path} HTTP/1.1\r\n{self._head}"
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
        data = (head + "\r\n").encode() + payload
        result = StreamResult(start=_perf())
        deadline = None if timeout is None else result.start + timeout
        for attempt in (1, 2):
            try:
                conn, reused = await self._acquire(reuse=attempt == 1)
            except (TimeoutError, OSError) as exc:
                result.error = f"connect failed: {type(exc).__name__}: {exc}"
                result.end = _perf()
                return result
            exchange = await self._exchange(conn, data, result, deadline)
            # a kept-alive connection the server had already closed: the request never reached it
            if (
                reused
                and attempt == 1
                and not exchange.headers_done
                and result.error
                and not result.timed_out
            ):
                result.error = None
                continue
            break
        return result

    async def _exchange(
        self, conn: _Conn, data: bytes, result: StreamResult, deadline: float | None
    ) -> _Exchange:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        exchange = _Exchange(result, future)
        conn.exchange = exchange
        assert conn.transport is not None
        conn.transport.write(data)
        try:
            if deadline is None:
                await future
            else:
                await asyncio.wait_for(future, max(0.0, deadline - _perf()))
        except TimeoutError:
            result.timed_out = True
            result.end = _perf()
            conn.close()
            self._open.discard(conn)
            return exchange
        except asyncio.CancelledError:
            conn.close()
            self._open.discard(conn)
            raise
        conn.exchange = None
        if exchange.keep_alive and not conn.closed and result.error is None:
            self._idle.append(conn)
        else:
            conn.close()
            self._open.discard(conn)
        return exchange

    async def get_json(self, path: str, timeout: float = 10.0) -> tuple[int | None, Any]:
        """GET a JSON document; returns (status, body) or (None, error text) when unreachable."""
        result = await self.request(path, None, method="GET", timeout=timeout)
        if result.http_status is None:
            return None, result.error or "timed out"
        return result.http_status, result.body

    async def post_json(
        self, path: str, body: dict[str, Any], timeout: float = 60.0
    ) -> tuple[int | None, Any]:
        result = await self.request(path, body, timeout=timeout)
        if result.http_status is None:
            return None, result.error or "timed out"
        return result.http_status, result.body

    async def aclose(self) -> None:
        for conn in list(self._open) + self._idle:
            conn.close()
        self._open.clear()
        self._idle.clear()
        await asyncio.sleep(0)

    async def __aenter__(self) -> StreamClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
