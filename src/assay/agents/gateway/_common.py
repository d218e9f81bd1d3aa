"""What both fronts translate a request into, and the system-role rewrite applied before the upstream."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from assay.models import Message, Tool, ToolCall

__all__ = ["BadRequest", "FrontCall", "arguments_json", "rewrite_system", "text_of"]


class BadRequest(Exception):
    """The agent sent a request the gateway cannot translate (answered 400 in the front's error format)."""


@dataclass
class FrontCall:
    """One request of either front, in ``assay.models`` terms."""

    model_asked: str | None
    messages: list[Message]
    tools: list[Tool] = field(default_factory=list)
    #: generation options passed to ``ChatModel.generate`` (max_tokens, temperature, stop, tool_choice, ...)
    options: dict[str, Any] = field(default_factory=dict)
    stream: bool = False
    #: OpenAI front: ``stream_options.include_usage`` (a last chunk carrying the usage)
    include_usage: bool = False


def rewrite_system(messages: list[Message]) -> list[Message]:
    """System entries after the conversation started become user entries (their text unchanged).

    The leading system entries are kept: every chat template renders those. A system entry further down
    (an agent's mid-run instruction) is dropped or rejected by many llama.cpp chat templates, so it is
    handed to the model as a user entry instead.
    """
    out: list[Message] = []
    started = False
    for m in messages:
        if m.role != "system":
            started = True
            out.append(m)
        elif started:
            out.append(Message("user", m.content, name=m.name))
        else:
            out.append(m)
    return out


def text_of(content: Any, where: str, sep: str = "\n") -> str:
    """The text of a content value: a string, or a list of text parts joined by ``sep`` (any other part
    is refused)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise BadRequest(
            f"{where}: content must be a string or a list of parts, got {type(content).__name__}"
        )
    pieces = []
    for i, part in enumerate(content):
        if isinstance(part, str):
            pieces.append(part)
            continue
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ("text", "input_text", "output_text"):
            pieces.append(str(part.get("text") or ""))
        else:
            raise BadRequest(
                f"{where}[{i}]: content part of type {kind!r} is not supported by the gateway (text only)"
            )
    return sep.join(pieces)


def arguments_json(call: ToolCall) -> str:
    """A tool call's arguments as the JSON text the model wrote (the raw text when it was not an object)."""
    if call.raw_arguments is not None:
        return call.raw_arguments
    return json.dumps(call.arguments, ensure_ascii=False)
