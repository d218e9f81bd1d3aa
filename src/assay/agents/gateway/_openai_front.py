"""The OpenAI chat-completions front: requests into ``assay.models`` calls, answers back into JSON and SSE."""

from __future__ import annotations

import json
import time
from typing import Any

from assay.agents.gateway._common import BadRequest, FrontCall, arguments_json, text_of
from assay.models import Message, ModelOutput, Tool, ToolCall
from assay.models.openai_compat import parse_arguments
from assay.runs import Usage

__all__ = ["OpenAIStream", "openai_error", "openai_response", "openai_usage", "parse_openai"]

#: request fields passed to the upstream as generation options (others, like ``user``, are not the model's)
_OPTIONS = (
    "temperature",
    "top_p",
    "top_k",
    "stop",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "response_format",
    "parallel_tool_calls",
)


def _tool_call(raw: Any, where: str) -> ToolCall:
    if not isinstance(raw, dict) or not isinstance(raw.get("function"), dict):
        raise BadRequest(f"{where}: a tool call needs a 'function' object")
    fn = raw["function"]
    args, text = parse_arguments(fn.get("arguments") or "")
    return ToolCall(
        id=str(raw.get("id") or ""), name=str(fn.get("name") or ""), arguments=args, raw_arguments=text
    )


def _message(raw: Any, i: int) -> Message:
    where = f"messages[{i}]"
    if not isinstance(raw, dict):
        raise BadRequest(f"{where}: a message is an object")
    role = raw.get("role")
    if role == "developer":
        role = "system"
    if role not in ("system", "user", "assistant", "tool"):
        raise BadRequest(f"{where}: unknown role {role!r}")
    calls = [_tool_call(tc, f"{where}.tool_calls[{j}]") for j, tc in enumerate(raw.get("tool_calls") or [])]
    if role == "tool" and not raw.get("tool_call_id"):
        raise BadRequest(f"{where}: a tool message needs 'tool_call_id'")
    return Message(
        role=role,
        content=text_of(raw.get("content"), f"{where}.content"),
        tool_calls=calls,
        tool_call_id=raw.get("tool_call_id"),
        name=raw.get("name"),
    )


def _tool(raw: Any, i: int) -> Tool:
    fn = raw.get("function") if isinstance(raw, dict) else None
    if not isinstance(fn, dict) or not fn.get("name"):
        raise BadRequest(f"tools[{i}]: a tool is {{'type': 'function', 'function': {{'name': ...}}}}")
    params = fn.get("parameters") or {"type": "object", "properties": {}}
    return Tool(name=str(fn["name"]), description=str(fn.get("description") or ""), parameters=params)


def _tool_choice(choice: Any) -> Any:
    """OpenAI's tool_choice in the neutral form providers take: auto | none | required | a tool's name."""
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name")
        if not name:
            raise BadRequest("tool_choice: an object names {'function': {'name': ...}}")
        return str(name)
    if choice not in ("auto", "none", "required"):
        raise BadRequest(f"tool_choice: {choice!r} is not auto, none, required or a function object")
    return choice


def parse_openai(body: Any) -> FrontCall:
    """A chat-completions request body as a :class:`FrontCall`."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    raw_messages = body.get("messages")
    if not isinstance(raw_messages, list) or not raw_messages:
        raise BadRequest("'messages' must be a non-empty list")
    if int(body.get("n") or 1) != 1:
        raise BadRequest("n > 1 is not supported by the gateway (ask once per answer)")
    options: dict[str, Any] = {k: body[k] for k in _OPTIONS if body.get(k) is not None}
    limit = body.get("max_completion_tokens") or body.get("max_tokens")
    if limit is not None:
        options["max_tokens"] = int(limit)
    if body.get("tool_choice") is not None:
        options["tool_choice"] = _tool_choice(body["tool_choice"])
    stream_options = body.get("stream_options") or {}
    return FrontCall(
        model_asked=body.get("model"),
        messages=[_message(m, i) for i, m in enumerate(raw_messages)],
        tools=[_tool(t, i) for i, t in enumerate(body.get("tools") or [])],
        options=options,
        stream=bool(body.get("stream")),
        include_usage=bool(stream_options.get("include_usage")),
    )


def openai_usage(usage: Usage) -> dict[str, Any]:
    prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": usage.output_tokens,
        "total_tokens": prompt + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_tokens},
    }


def _finish(out: ModelOutput) -> str:
    if out.tool_calls:
        return "tool_calls"
    return out.finish_reason if out.finish_reason in ("stop", "length", "content_filter") else "stop"


def _call_payload(call: ToolCall, index: int | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": arguments_json(call)},
    }
    if index is not None:
        d = {"index": index, **d}
    return d


def openai_response(out: ModelOutput, model: str, call_id: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": out.text or None}
    if out.tool_calls:
        message["tool_calls"] = [_call_payload(c) for c in out.tool_calls]
    elif not out.text:
        message["content"] = ""
    return {
        "id": call_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(out), "logprobs": None}],
        "usage": openai_usage(out.usage),
    }


def openai_error(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": code, "param": None}}


def _sse(data: dict[str, Any] | str) -> str:
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return f"data: {text}\n\n"


class OpenAIStream:
    """The ``chat.completion.chunk`` events of one streamed answer."""

    def __init__(self, model: str, call_id: str, include_usage: bool) -> None:
        self.model = model
        self.call_id = call_id
        self.include_usage = include_usage
        self.created = int(time.time())
        self._calls = 0

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> str:
        return _sse(
            {
                "id": self.call_id,
                "object": "chat.completion.chunk",
                "created": self.created,
                "model": self.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
            }
        )

    def start(self) -> str:
        return self._chunk({"role": "assistant", "content": ""})

    def text(self, piece: str) -> str:
        return self._chunk({"content": piece})

    def tool_call(self, call: ToolCall) -> str:
        index = self._calls
        self._calls += 1
        return self._chunk({"tool_calls": [_call_payload(call, index)]})

    def finish(self, out: ModelOutput) -> str:
        events = self._chunk({}, _finish(out))
        if self.include_usage:
            usage = {
                "id": self.call_id,
                "object": "chat.completion.chunk",
                "created": self.created,
                "model": self.model,
                "choices": [],
                "usage": openai_usage(out.usage),
            }
            events += _sse(usage)
        return events + _sse("[DONE]")

    def error(self, message: str, kind: str, code: str | None) -> str:
        return _sse(openai_error(message, kind, code)) + _sse("[DONE]")
