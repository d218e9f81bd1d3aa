"""Values passed to and returned from chat models."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from assay.runs import Usage

Role = Literal["system", "user", "assistant", "tool"]


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]
    #: the arguments as the model wrote them, kept only when they were not a JSON object
    raw_arguments: str | None = None


@dataclass
class Message:
    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None


@dataclass
class Tool:
    """A tool offered to the model: a name, a description and a JSON-schema for its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass
class StreamChunk:
    """A piece of a streamed answer with the ``time.perf_counter()`` it arrived at."""

    text: str
    t: float
    tool_call: ToolCall | None = None


@dataclass
class Timings:
    """``time.perf_counter()`` stamps of a call. ``first_token`` is None if nothing was generated."""

    request_start: float
    first_token: float | None = None
    last_token: float | None = None
    end: float | None = None

    @property
    def ttft_s(self) -> float | None:
        return None if self.first_token is None else self.first_token - self.request_start

    @property
    def e2e_s(self) -> float | None:
        end = self.end if self.end is not None else self.last_token
        return None if end is None else end - self.request_start


@dataclass
class ModelOutput:
    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    timings: Timings | None = None
    chunks: list[StreamChunk] = field(default_factory=list)
    model: str = ""
    raw: dict[str, Any] | None = None


@runtime_checkable
class ChatModel(Protocol):
    """Every chat provider implements this."""

    name: str

    async def generate(
        self,
        messages: Sequence[Message],
        tools: Sequence[Tool] | None = None,
        stream: bool = False,
        **options: Any,
    ) -> ModelOutput: ...

    def stream(
        self, messages: Sequence[Message], tools: Sequence[Tool] | None = None, **options: Any
    ) -> AsyncIterator[StreamChunk]: ...
