"""Loopback model servers for the CLI-agent tests: they replay scripted replies and log every request.

``AnthropicLoopback`` speaks the Messages API (JSON and SSE) the way Claude Code calls it; ``OpenAILoopback``
speaks chat completions (JSON and SSE) for OpenAI-compatible agents. Each reply is one scripted step:
``{"tool": name, "input": {...}}`` for a tool call, ``{"text": "..."}`` for a final answer. Requests without
tools (a client's side calls: titles, quota checks) get a short text and do not consume the script.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Loopback:
    def __init__(self, script: list[dict[str, Any]], *, model: str = "loopback-model") -> None:
        self.script = list(script)
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._step = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                owner._send_json(self, 200, {"data": [{"id": owner.model, "object": "model"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                with owner._lock:
                    owner.requests.append({"path": self.path, "body": body})
                    owner.headers.append({k.lower(): v for k, v in self.headers.items()})
                owner._handle(self, body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def next_step(self, body: dict[str, Any]) -> dict[str, Any]:
        if not body.get("tools"):
            return {"text": "ok", "side": True}
        with self._lock:
            step = self.script[self._step] if self._step < len(self.script) else {"text": "(script ended)"}
            self._step += 1
            return step

    @property
    def steps_served(self) -> int:
        return self._step

    @staticmethod
    def _send_json(handler: BaseHTTPRequestHandler, code: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        handler.send_response(code)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    @staticmethod
    def _send_sse(handler: BaseHTTPRequestHandler, events: list[tuple[str | None, Any]]) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Connection", "close")
        handler.end_headers()
        for name, data in events:
            chunk = (
                f"event: {name}\n" if name else ""
            ) + f"data: {json.dumps(data) if not isinstance(data, str) else data}\n\n"
            handler.wfile.write(chunk.encode())
            handler.wfile.flush()
        handler.close_connection = True

    def _handle(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        raise NotImplementedError

    def __enter__(self) -> _Loopback:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def _prompt_tokens(body: dict[str, Any]) -> int:
    return max(1, len(json.dumps(body.get("messages", []))) // 4)


class AnthropicLoopback(_Loopback):
    """``POST /v1/messages`` (and ``/v1/messages/count_tokens``) replaying the script."""

    def _handle(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        if handler.path.startswith("/v1/messages/count_tokens"):
            self._send_json(handler, 200, {"input_tokens": _prompt_tokens(body)})
            return
        if not handler.path.startswith("/v1/messages"):
            self._send_json(
                handler, 404, {"type": "error", "error": {"type": "not_found_error", "message": handler.path}}
            )
            return
        step = self.next_step(body)
        n = len(self.requests)
        if "tool" in step:
            block: dict[str, Any] = {
                "type": "tool_use",
                "id": f"toolu_{n:03d}",
                "name": step["tool"],
                "input": step["input"],
            }
            stop = "tool_use"
        else:
            block = {"type": "text", "text": step["text"]}
            stop = "end_turn"
        usage_in, usage_out = _prompt_tokens(body), max(1, len(json.dumps(block)) // 4)
        message = {
            "id": f"msg_{n:03d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", self.model),
            "stop_reason": None,
            "stop_sequence": None,
        }
        if not body.get("stream"):
            self._send_json(
                handler,
                200,
                {
                    **message,
                    "content": [block],
                    "stop_reason": stop,
                    "usage": {"input_tokens": usage_in, "output_tokens": usage_out},
                },
            )
            return
        start = {**block, "input": {}} if block["type"] == "tool_use" else {"type": "text", "text": ""}
        delta = (
            {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            if block["type"] == "tool_use"
            else {"type": "text_delta", "text": block["text"]}
        )
        self._send_sse(
            handler,
            [
                (
                    "message_start",
                    {
                        "type": "message_start",
                        "message": {
                            **message,
                            "content": [],
                            "usage": {"input_tokens": usage_in, "output_tokens": 1},
                        },
                    },
                ),
                ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}),
                ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                (
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": stop, "stop_sequence": None},
                        "usage": {"output_tokens": usage_out},
                    },
                ),
                ("message_stop", {"type": "message_stop"}),
            ],
        )


class OpenAILoopback(_Loopback):
    """``POST /v1/chat/completions`` replaying the script (tool calls or plain text, JSON or SSE)."""

    def _handle(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        if not handler.path.rstrip("/").endswith("/chat/completions"):
            self._send_json(handler, 404, {"error": {"message": handler.path}})
            return
        step = self.next_step(body) if body.get("tools") else self._untooled_step()
        n = len(self.requests)
        if "tool" in step:
            message: dict[str, Any] = {
                "role": "assistant",
                "content": step.get("say"),
                "tool_calls": [
                    {
                        "id": f"call_{n:03d}",
                        "type": "function",
                        "function": {"name": step["tool"], "arguments": json.dumps(step["input"])},
                    }
                ],
            }
            finish = "tool_calls"
        else:
            message = {"role": "assistant", "content": step["text"]}
            finish = "stop"
        usage = {
            "prompt_tokens": _prompt_tokens(body),
            "completion_tokens": max(1, len(json.dumps(message)) // 4),
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        base = {"id": f"chatcmpl-{n:03d}", "created": 0, "model": body.get("model", self.model)}
        if not body.get("stream"):
            self._send_json(
                handler,
                200,
                {
                    **base,
                    "object": "chat.completion",
                    "usage": usage,
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                },
            )
            return
        delta = dict(message)
        if "tool_calls" in delta:
            delta["tool_calls"] = [{"index": 0, **tc} for tc in delta["tool_calls"]]
        chunk = {**base, "object": "chat.completion.chunk"}
        self._send_sse(
            handler,
            [
                (None, {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}),
                (None, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}),
                (None, {**chunk, "choices": [], "usage": usage}),
                (None, "[DONE]"),
            ],
        )

    def _untooled_step(self) -> dict[str, Any]:
        # agents that parse text (aider, mini-swe-agent) send no tools: every request consumes the script
        with self._lock:
            step = self.script[self._step] if self._step < len(self.script) else {"text": "(script ended)"}
            self._step += 1
            return step


class ResponsesLoopback(_Loopback):
    """``POST /v1/responses`` (OpenAI's Responses API, streamed) replaying the script, as Codex CLI calls it."""

    def _handle(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        if not handler.path.rstrip("/").endswith("/responses"):
            self._send_json(handler, 404, {"error": {"message": handler.path}})
            return
        step = self.next_step(body)
        n = len(self.requests)
        if "tool" in step:
            item: dict[str, Any] = {
                "type": "function_call",
                "id": f"fc_{n:03d}",
                "name": step["tool"],
                "arguments": json.dumps(step["input"]),
                "call_id": f"call_{n:03d}",
            }
        else:
            item = {
                "type": "message",
                "id": f"msg_{n:03d}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": step["text"]}],
            }
        usage = {
            "input_tokens": _prompt_tokens({"messages": body.get("input", [])}),
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": max(1, len(json.dumps(item)) // 4),
            "output_tokens_details": {"reasoning_tokens": 0},
        }
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
        rid = f"resp_{n:03d}"
        self._send_sse(
            handler,
            [
                ("response.created", {"type": "response.created", "response": {"id": rid}}),
                (
                    "response.output_item.done",
                    {"type": "response.output_item.done", "output_index": 0, "item": item},
                ),
                (
                    "response.completed",
                    {"type": "response.completed", "response": {"id": rid, "usage": usage}},
                ),
            ],
        )
