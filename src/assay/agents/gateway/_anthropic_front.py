"""The Anthropic Messages front: requests into ``assay.models`` calls, answers back into JSON and SSE events.

Speaks what Claude Code sends: a ``system`` string or list of text blocks, turns of text / tool_use /
tool_result blocks, custom tools with an ``input_schema``, and streams of message_start,
content_block_start/delta/stop (text_delta, input_json_delta), message_delta (stop reason, usage) and
message_stop. Thinking blocks the agent sends back are dropped (they were the model's own); provider-side
tools without an ``input_schema`` (web search, ...) are left out, since only the agent can run tools here.
Images and documents are refused with a 400 naming the block.

Passed on: max_tokens, temperature, top_p, top_k, stop_sequences, tool_choice. Not passed on, because they are
Anthropic's own and an arbitrary upstream has no such thing: ``thinking`` (the upstream answers without
extended thinking), ``metadata``, ``context_management``, ``cache_control`` marks (token counts are the
upstream's). ``tool_result.is_error`` becomes an ``[error] `` prefix on the tool message.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from assay.agents.gateway._common import BadRequest, FrontCall, arguments_json, text_of
from assay.models import Message, ModelOutput, Tool, ToolCall
from assay.runs import Usage

__all__ = [
    "AnthropicStream",
    "anthropic_error",
    "anthropic_response",
    "anthropic_usage",
    "count_text",
    "parse_anthropic",
]

_CHOICE = {"auto": "auto", "any": "required", "none": "none"}
_DROPPED_BLOCKS = ("thinking", "redacted_thinking")


def _system(raw: Any) -> str:
    return text_of(raw, "system", sep="\n\n")


def _tool_result(block: dict[str, Any], where: str) -> Message:
    if not block.get("tool_use_id"):
        raise BadRequest(f"{where}: a tool_result needs 'tool_use_id'")
    content = text_of(block.get("content"), f"{where}.content")
    if block.get("is_error"):
        content = f"[error] {content}"
    return Message("tool", content, tool_call_id=str(block["tool_use_id"]))


def _turn(raw: Any, i: int) -> list[Message]:
    where = f"messages[{i}]"
    if isinstance(raw, dict) and raw.get("role") == "system":
        # Claude Code puts mid-run instructions here for model names it does not know; the gateway's
        # system rewrite hands them on as user entries to backends that drop them
        return [Message("system", text_of(raw.get("content"), f"{where}.content"))]
    if not isinstance(raw, dict) or raw.get("role") not in ("user", "assistant"):
        raise BadRequest(f"{where}: a turn is {{'role': 'user' | 'assistant' | 'system', 'content': ...}}")
    role = raw["role"]
    content = raw.get("content")
    if isinstance(content, str):
        return [Message(role, content)]
    if not isinstance(content, list):
        raise BadRequest(f"{where}.content: a string or a list of blocks")
    results: list[Message] = []
    texts: list[str] = []
    calls: list[ToolCall] = []
    for j, block in enumerate(content):
        at = f"{where}.content[{j}]"
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        elif kind == "tool_result" and role == "user":
            results.append(_tool_result(block, at))
        elif kind == "tool_use" and role == "assistant":
            args = block.get("input") or {}
            if not isinstance(args, dict):
                raise BadRequest(f"{at}.input: a tool_use input is an object")
            calls.append(
                ToolCall(id=str(block.get("id") or ""), name=str(block.get("name") or ""), arguments=args)
            )
        elif kind in _DROPPED_BLOCKS and role == "assistant":
            continue
        else:
            raise BadRequest(f"{at}: a {role} block of type {kind!r} is not supported by the gateway")
    out = results
    if texts or calls or not results:
        out.append(Message(role, "\n".join(texts), tool_calls=calls))
    return out


def _tool(raw: Any, i: int) -> Tool | None:
    if not isinstance(raw, dict) or not raw.get("name"):
        raise BadRequest(f"tools[{i}]: a tool has a 'name'")
    if "input_schema" not in raw:
        return None  # a provider-side tool (web search, ...): nothing here could run it
    return Tool(
        name=str(raw["name"]), description=str(raw.get("description") or ""), parameters=raw["input_schema"]
    )


def _tool_choice(raw: Any) -> str | None:
    if raw is None:
        return None
    kind = raw.get("type") if isinstance(raw, dict) else None
    if kind == "tool":
        if not raw.get("name"):
            raise BadRequest("tool_choice: type 'tool' needs a 'name'")
        return str(raw["name"])
    if kind not in _CHOICE:
        raise BadRequest(f"tool_choice: type {kind!r} is not auto, any, tool or none")
    return _CHOICE[kind]


def parse_anthropic(body: Any) -> FrontCall:
    """A Messages-API request body as a :class:`FrontCall` (the system prompt becomes the leading entry)."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    turns = body.get("messages")
    if not isinstance(turns, list) or not turns:
        raise BadRequest("'messages' must be a non-empty list")
    messages: list[Message] = []
    system = _system(body.get("system"))
    if system:
        messages.append(Message("system", system))
    for i, turn in enumerate(turns):
        messages.extend(_turn(turn, i))
    tools = [t for i, raw in enumerate(body.get("tools") or []) if (t := _tool(raw, i)) is not None]
    options: dict[str, Any] = {
        k: body[k] for k in ("temperature", "top_p", "top_k") if body.get(k) is not None
    }
    if body.get("max_tokens") is not None:
        options["max_tokens"] = int(body["max_tokens"])
    if body.get("stop_sequences"):
        options["stop"] = list(body["stop_sequences"])
    choice = _tool_choice(body.get("tool_choice"))
    if choice is not None:
        options["tool_choice"] = choice
    return FrontCall(
        model_asked=body.get("model"),
        messages=messages,
        tools=tools,
        options=options,
        stream=bool(body.get("stream")),
    )


def count_text(call: FrontCall) -> str:
    """The text a token count of ``call`` covers: every message, tool call and tool schema."""
    parts = [m.content for m in call.messages]
    parts += [f"{c.name} {json.dumps(c.arguments)}" for m in call.messages for c in m.tool_calls]
    parts += [f"{t.name} {t.description} {json.dumps(t.parameters)}" for t in call.tools]
    return "\n".join(p for p in parts if p)


def anthropic_usage(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
    }


def _stop_reason(out: ModelOutput) -> str:
    if out.tool_calls:
        return "tool_use"
    return "max_tokens" if out.finish_reason == "length" else "end_turn"


def new_message_id() -> str:
    return f"msg_{uuid.uuid4().hex[:24]}"


def anthropic_response(out: ModelOutput, model: str, message_id: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if out.text or not out.tool_calls:
        content.append({"type": "text", "text": out.text})
    for call in out.tool_calls:
        content.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments})
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": _stop_reason(out),
        "stop_sequence": None,
        "usage": anthropic_usage(out.usage),
    }


def anthropic_error(message: str, kind: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _event(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps({'type': name, **data}, ensure_ascii=False)}\n\n"


class AnthropicStream:
    """The SSE events of one streamed answer, block by block."""

    def __init__(self, model: str, message_id: str) -> None:
        self.model = model
        self.message_id = message_id
        self._index = -1
        self._text_open = False

    def start(self) -> str:
        message = {
            "id": self.message_id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            # the upstream reports its counts when it ends: they come in message_delta
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }
        return _event("message_start", {"message": message}) + _event("ping", {})

    def _close_text(self) -> str:
        if not self._text_open:
            return ""
        self._text_open = False
        return _event("content_block_stop", {"index": self._index})

    def text(self, piece: str) -> str:
        events = ""
        if not self._text_open:
            self._index += 1
            self._text_open = True
            events = _event(
                "content_block_start", {"index": self._index, "content_block": {"type": "text", "text": ""}}
            )
        return events + _event(
            "content_block_delta", {"index": self._index, "delta": {"type": "text_delta", "text": piece}}
        )

    def tool_call(self, call: ToolCall) -> str:
        events = self._close_text()
        self._index += 1
        block = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": arguments_json(call)}
        return (
            events
            + _event("content_block_start", {"index": self._index, "content_block": block})
            + _event("content_block_delta", {"index": self._index, "delta": delta})
            + _event("content_block_stop", {"index": self._index})
        )

    def finish(self, out: ModelOutput) -> str:
        events = self._close_text()
        if self._index < 0:  # nothing was generated: still one (empty) text block, as the API does
            events += self.text("") + self._close_text()
        delta = {"stop_reason": _stop_reason(out), "stop_sequence": None}
        return (
            events
            + _event("message_delta", {"delta": delta, "usage": anthropic_usage(out.usage)})
            + _event("message_stop", {})
        )

    def error(self, message: str, kind: str) -> str:
        return _event("error", {"error": {"type": kind, "message": message}})
