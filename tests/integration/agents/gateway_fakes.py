"""Upstreams for the gateway tests: scripted models, one that fails mid-stream, and a closed port."""

from __future__ import annotations

import json
import socket
from collections.abc import Sequence
from typing import Any

import httpx

from assay.models import BaseChatModel, Message, ModelInfraError, ModelOutput, StreamChunk, Tool
from assay.models._base import Emit, now
from assay.models.scripted import ScriptedModel

#: the headers Claude Code sends
HEADERS = {
    "anthropic-version": "2023-06-01",
    "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14",
    "x-api-key": "placeholder",
    "user-agent": "claude-cli/2.0.0 (external, cli)",
}
WEATHER_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def scripted(*replies: dict[str, Any]) -> ScriptedModel:
    return ScriptedModel({"replies": list(replies)})


def closed_port() -> int:
    """A loopback port nobody listens on (bound then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class BreaksMidStream(BaseChatModel):
    """Streams two pieces, then its backend drops (an outage after the answer began)."""

    provider = "breaks"

    def __init__(self) -> None:
        super().__init__("mid-stream", max_retries=0)

    async def _call(
        self,
        messages: Sequence[Message],
        tools: Sequence[Tool] | None,
        stream: bool,
        options: dict[str, Any],
        emit: Emit | None,
    ) -> ModelOutput:
        for piece in ("Hello ", "wor"):
            if emit is not None:
                emit(StreamChunk(text=piece, t=now()))
        raise ModelInfraError("connection dropped mid-answer", provider=self.provider, kind="connect")


def sse(response: httpx.Response) -> list[tuple[str, dict[str, Any]]]:
    """The (event name, data) pairs of an Anthropic SSE answer; each data's type is its event name."""
    events, name = [], None
    for line in response.iter_lines():
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: "):
            data = json.loads(line.removeprefix("data: "))
            assert data["type"] == name
            events.append((name, data))
    return events


class CloudStandIn:
    """A loopback stand-in for a cloud API (the only thing mocked): answers each POST with the next
    (status, JSON body) and records what it was sent."""

    def __init__(self, *replies: tuple[int, dict[str, Any]]) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.replies = list(replies)
        self.requests: list[tuple[str, dict[str, str], Any]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                owner.requests.append(
                    (self.path, {k.lower(): v for k, v in self.headers.items()}, json.loads(raw))
                )
                status, body = owner.replies.pop(0)
                payload = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> CloudStandIn:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
