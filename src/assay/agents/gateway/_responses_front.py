"""The OpenAI Responses front (``POST /v1/responses``, what Codex CLI speaks): requests into ``assay.models``
calls, answers back into a ``response`` object or its SSE events.

Input items translated: ``message`` (roles user, assistant, system, developer; text parts), ``function_call``
(joined to the assistant turn before it), ``function_call_output`` (a tool message); ``instructions`` is the
leading system message. ``reasoning`` items are the upstream's own earlier thoughts and carry nothing a chat
model takes back: they are left out. Tools: ``function`` tools are passed on; the kinds a chat model behind the
gateway cannot be offered (OpenAI's hosted ``web_search``, ``namespace`` groups, ``custom`` grammars, which
Codex CLI sends every call) are not passed upstream. Fields that steer OpenAI's own servers (``store``,
``include``, ``reasoning``, ``prompt_cache_key``, ``client_metadata``) have no upstream to reach.
``previous_response_id`` (server-kept state) is refused: the gateway keeps no conversations.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from assay.agents.gateway._common import BadRequest, FrontCall, arguments_json, text_of
from assay.models import Message, ModelOutput, Tool, ToolCall
from assay.models.openai_compat import parse_arguments
from assay.runs import Usage

__all__ = ["ResponsesStream", "new_response_id", "parse_responses", "responses_response"]

_OPTIONS = ("temperature", "top_p", "parallel_tool_calls", "seed")


def new_response_id() -> str:
    return f"resp_{uuid.uuid4().hex[:24]}"


def _item_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def _message(raw: dict[str, Any], where: str) -> Message:
    role = raw.get("role")
    if role == "developer":
        role = "system"
    if role not in ("system", "user", "assistant"):
        raise BadRequest(f"{where}: unknown role {role!r}")
    return Message(role=role, content=text_of(raw.get("content"), f"{where}.content"))


def _input(items: Any) -> list[Message]:
    if isinstance(items, str):
        return [Message("user", items)]
    if not isinstance(items, list) or not items:
        raise BadRequest("'input' must be a string or a non-empty list of items")
    out: list[Message] = []
    for i, raw in enumerate(items):
        where = f"input[{i}]"
        if not isinstance(raw, dict):
            raise BadRequest(f"{where}: an item is an object")
        kind = raw.get("type") or ("message" if "role" in raw else None)
        if kind == "message":
            out.append(_message(raw, where))
        elif kind == "function_call":
            args, text = parse_arguments(raw.get("arguments") or "")
            call = ToolCall(
                id=str(raw.get("call_id") or raw.get("id") or ""),
                name=str(raw.get("name") or ""),
                arguments=args,
                raw_arguments=text,
            )
            if out and out[-1].role == "assistant":
                out[-1].tool_calls.append(call)
            else:
                out.append(Message("assistant", "", tool_calls=[call]))
        elif kind == "function_call_output":
            if not raw.get("call_id"):
                raise BadRequest(f"{where}: a function_call_output needs 'call_id'")
            output = raw.get("output")
            text = output if isinstance(output, str) else text_of(output, f"{where}.output")
            out.append(Message("tool", text, tool_call_id=str(raw["call_id"])))
        elif kind == "reasoning":
            continue
        else:
            raise BadRequest(f"{where}: item type {kind!r} is not supported by the gateway")
    return out


def _tools(raw: Any) -> list[Tool]:
    tools = []
    for i, t in enumerate(raw or []):
        if not isinstance(t, dict):
            raise BadRequest(f"tools[{i}]: a tool is an object")
        if t.get("type") != "function":
            continue
        if not t.get("name"):
            raise BadRequest(f"tools[{i}]: a function tool needs 'name'")
        params = t.get("parameters") or {"type": "object", "properties": {}}
        tools.append(
            Tool(name=str(t["name"]), description=str(t.get("description") or ""), parameters=params)
        )
    return tools


def _tool_choice(choice: Any) -> Any:
    if isinstance(choice, dict):
        if choice.get("type") != "function" or not choice.get("name"):
            raise BadRequest("tool_choice: an object is {'type': 'function', 'name': ...}")
        return str(choice["name"])
    if choice not in ("auto", "none", "required"):
        raise BadRequest(f"tool_choice: {choice!r} is not auto, none, required or a function object")
    return choice


def parse_responses(body: Any) -> FrontCall:
    """A Responses request body as a :class:`FrontCall`."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    if body.get("previous_response_id"):
        raise BadRequest("previous_response_id: the gateway keeps no responses; send the whole input")
    messages = _input(body.get("input"))
    if body.get("instructions"):
        messages.insert(0, Message("system", text_of(body["instructions"], "instructions")))
    tools = _tools(body.get("tools"))
    options: dict[str, Any] = {k: body[k] for k in _OPTIONS if body.get(k) is not None}
    if body.get("max_output_tokens") is not None:
        options["max_tokens"] = int(body["max_output_tokens"])
    if body.get("tool_choice") is not None:
        options["tool_choice"] = _tool_choice(body["tool_choice"])
    return FrontCall(
        model_asked=body.get("model"),
        messages=messages,
        tools=tools,
        options=options,
        stream=bool(body.get("stream")),
    )


def responses_usage(usage: Usage) -> dict[str, Any]:
    prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": usage.cache_read_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + usage.output_tokens,
    }


def _message_item(item_id: str, text: str, status: str = "completed") -> dict[str, Any]:
    content = [{"type": "output_text", "text": text, "annotations": []}] if status == "completed" else []
    return {"type": "message", "id": item_id, "status": status, "role": "assistant", "content": content}


def _call_item(item_id: str, call: ToolCall) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": item_id,
        "call_id": call.id or _item_id("call"),
        "name": call.name,
        "arguments": arguments_json(call),
        "status": "completed",
    }


def _response(
    rid: str, model: str, created: int, output: list[dict[str, Any]], **more: Any
) -> dict[str, Any]:
    return {
        "id": rid,
        "object": "response",
        "created_at": created,
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
        **more,
    }


def responses_response(out: ModelOutput, model: str, rid: str) -> dict[str, Any]:
    output = [_message_item(_item_id("msg"), out.text)] if out.text or not out.tool_calls else []
    output += [_call_item(_item_id("fc"), c) for c in out.tool_calls]
    status = "incomplete" if out.finish_reason == "length" else "completed"
    return _response(rid, model, int(time.time()), output, status=status, usage=responses_usage(out.usage))


class ResponsesStream:
    """The SSE events of one streamed response: created, each output item added / its deltas / done, completed."""

    def __init__(self, model: str, rid: str) -> None:
        self.model, self.rid, self.created = model, rid, int(time.time())
        self.items: list[dict[str, Any]] = []
        self._seq = 0
        self._text: list[str] | None = None  # the message item being streamed, if one is open

    def _event(self, kind: str, **data: Any) -> str:
        payload = {"type": kind, "sequence_number": self._seq, **data}
        self._seq += 1
        return f"event: {kind}\ndata: {json.dumps(payload, ensure_ascii=False)}\n\n"

    def _close_text(self) -> str:
        if self._text is None:
            return ""
        item = _message_item(self.items[-1]["id"], "".join(self._text))
        self.items[-1], self._text = item, None
        index, part = len(self.items) - 1, item["content"][0]
        where = {"item_id": item["id"], "output_index": index, "content_index": 0}
        return (
            self._event("response.output_text.done", **where, text=part["text"])
            + self._event("response.content_part.done", **where, part=part)
            + self._event("response.output_item.done", output_index=index, item=item)
        )

    def start(self) -> str:
        resp = _response(self.rid, self.model, self.created, [], status="in_progress", usage=None)
        return self._event("response.created", response=resp) + self._event(
            "response.in_progress", response=resp
        )

    def text(self, piece: str) -> str:
        events = ""
        if self._text is None:
            self._text = []
            self.items.append(_message_item(_item_id("msg"), "", "in_progress"))
            index, item_id = len(self.items) - 1, self.items[-1]["id"]
            events += self._event("response.output_item.added", output_index=index, item=self.items[-1])
            part = {"type": "output_text", "text": "", "annotations": []}
            events += self._event(
                "response.content_part.added", item_id=item_id, output_index=index, content_index=0, part=part
            )
        self._text.append(piece)
        where = {"item_id": self.items[-1]["id"], "output_index": len(self.items) - 1, "content_index": 0}
        return events + self._event("response.output_text.delta", **where, delta=piece)

    def tool_call(self, call: ToolCall) -> str:
        events = self._close_text()
        item_id, index = _item_id("fc"), len(self.items)
        done = _call_item(item_id, call)
        self.items.append(done)
        added = {**done, "arguments": "", "status": "in_progress"}
        events += self._event("response.output_item.added", output_index=index, item=added)
        where = {"item_id": item_id, "output_index": index}
        events += self._event("response.function_call_arguments.delta", **where, delta=done["arguments"])
        events += self._event("response.function_call_arguments.done", **where, arguments=done["arguments"])
        return events + self._event("response.output_item.done", output_index=index, item=done)

    def finish(self, out: ModelOutput) -> str:
        events = self._close_text()
        status = "incomplete" if out.finish_reason == "length" else "completed"
        resp = _response(
            self.rid, self.model, self.created, self.items, status=status, usage=responses_usage(out.usage)
        )
        return events + self._event(f"response.{status}", response=resp)

    def error(self, message: str, kind: str, code: str | None) -> str:
        err = {"code": code or kind, "message": message}
        resp = _response(self.rid, self.model, self.created, self.items, status="failed", usage=None)
        resp["error"] = err
        return self._event("response.failed", response=resp)
