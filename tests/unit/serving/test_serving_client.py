"""The lean client's HTTP/SSE parsing, fed byte by byte and against real sockets."""

from __future__ import annotations

import asyncio
import json

import pytest

from assay.errors import ConfigError
from assay.evals.serving import StreamClient
from assay.evals.serving._client import StreamResult, _Exchange


def _sse(*events: dict | str) -> bytes:
    out = b""
    for ev in events:
        out += b"data: " + (ev.encode() if isinstance(ev, str) else json.dumps(ev).encode()) + b"\n\n"
    return out


def _chunked(body: bytes, size: int) -> bytes:
    out = b""
    for i in range(0, len(body), size):
        part = body[i : i + size]
        out += b"%x\r\n%s\r\n" % (len(part), part)
    return out + b"0\r\n\r\n"


def _feed(raw: bytes, step: int) -> tuple[StreamResult, _Exchange]:
    loop = asyncio.new_event_loop()
    try:
        result = StreamResult(start=0.0)
        ex = _Exchange(result, loop.create_future())
        for i in range(0, len(raw), step):
            ex.feed(raw[i : i + step], t=float(i))
        return result, ex
    finally:
        loop.close()


BODY = _sse(
    {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]},
    {"choices": [{"index": 0, "delta": {"content": "Hel"}}]},
    {"choices": [{"index": 0, "delta": {"content": "lo"}}]},
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    {"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 2}},
    "[DONE]",
)
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


@pytest.mark.parametrize("step", [1, 3, 17, 10_000])
@pytest.mark.parametrize("chunk", [5, 64, 10_000])
def test_chunked_sse_parsed_whatever_the_split(step: int, chunk: int) -> None:
    result, ex = _feed(HEAD + _chunked(BODY, chunk), step)
    assert ex.done and result.ok
    assert result.text == "Hello"
    assert len(result.token_times) == 2  # the role-only event is not a token
    assert result.usage == {"prompt_tokens": 7, "completion_tokens": 2}
    assert result.finish_reason == "stop"
    assert ex.keep_alive


def test_token_stamp_is_when_its_bytes_arrived() -> None:
    raw = HEAD + _chunked(BODY, 10_000)
    first_line_end = raw.index(b"\n", raw.index(b"Hel")) + 1
    result, _ = _feed(raw, first_line_end)  # the first token's line completes in the first feed (t=0)
    assert result.token_times[0] == 0.0 and result.token_times[1] > 0


def test_json_answer_with_content_length() -> None:
    doc = {
        "choices": [{"message": {"content": "hi there"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2},
    }
    body = json.dumps(doc).encode()
    raw = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
        len(body),
        body,
    )
    result, ex = _feed(raw, 7)
    assert ex.done and result.ok and result.text == "hi there" and result.usage["completion_tokens"] == 2


def test_http_error_and_stream_error_are_failures() -> None:
    body = b'{"error": {"message": "overloaded"}}'
    raw = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    result, _ = _feed(raw, 1000)
    assert not result.ok and "HTTP 503" in (result.error or "") and "overloaded" in result.error
    result, _ = _feed(HEAD + _chunked(_sse({"error": {"message": "kv cache full"}}, "[DONE]"), 100), 1000)
    assert not result.ok and "kv cache full" in (result.error or "")


def test_bad_url_names_the_flag() -> None:
    with pytest.raises(ConfigError, match="--model"):
        StreamClient("ftp://example")


async def test_connection_refused_is_recorded_not_raised() -> None:
    from assay.models._server import free_port

    client = StreamClient(f"http://127.0.0.1:{free_port()}")
    result = await client.request("/v1/chat/completions", {"messages": []})
    assert not result.ok and result.error.startswith("connect failed")


async def test_timeout_and_close_delimited_body() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        req = await reader.readuntil(b"\r\n\r\n")
        if b"/slow" in req:
            await asyncio.sleep(5)
        else:
            writer.write(b"HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + BODY)
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = StreamClient(f"http://127.0.0.1:{port}")
    result = await client.request("/slow", {}, timeout=0.2)
    assert result.timed_out and not result.ok
    result = await client.request("/fast", {}, timeout=5)
    assert result.ok and result.text == "Hello"
    await client.aclose()
    server.close()


async def test_connections_are_reused(stub_factory) -> None:
    stub = stub_factory(tokens=4)
    client = StreamClient(stub.base_url)
    for _ in range(5):
        assert (await client.request("/v1/chat/completions", {"messages": [], "stream": True})).ok
    assert len(client._open) == 1
    await client.aclose()


async def test_a_pooled_connection_the_server_dropped_is_retried_once_on_a_fresh_one() -> None:
    served = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal served
        # answer one request per connection; the next request on it is dropped unanswered
        await reader.readuntil(b"\r\n\r\n")
        await reader.readexactly(2)
        served += 1
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
        await writer.drain()
        await reader.readuntil(b"\r\n\r\n")
        writer.close()

    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    client = StreamClient(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}")
    first = await client.request("/x", {})
    second = await client.request("/x", {})
    assert first.ok and second.ok and served == 2
    await client.aclose()
    server.close()
