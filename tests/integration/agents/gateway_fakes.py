"""Upstreams for the gateway tests: scripted models, one that fails mid-stream, and a closed port."""

from __future__ import annotations

import json
import socket
from collections.abc import Sequence
from typing import Any

import httpx

from assay.models import BaseChatModel, Message, ModelInfraError, ModelOutput, StreamChunk, Tool
from assay.models._base import Emit, now
from assay.models._scripted import ScriptedModel

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
