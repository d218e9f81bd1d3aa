"""The ``anthropic`` provider: Anthropic's Messages API with tools and streaming.

``anthropic/MODEL`` (e.g. ``anthropic/claude-sonnet-4-5``); the key comes from ``api_key=`` or
``$ANTHROPIC_API_KEY``; ``base_url=`` or ``$ASSAY_ANTHROPIC_BASE_URL`` points it at a proxy.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from assay.errors import ConfigError
from assay.models._base import BaseChatModel, Emit, now
from assay.models._errors import ModelInfraError
from assay.models._http import HttpBackend, response_error
from assay.models._types import Message, ModelOutput, StreamChunk, Timings, Tool, ToolCall
from assay.models.openai_compat import parse_arguments
from assay.runs import Usage

__all__ = ["AnthropicModel", "messages_payload"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
BASE_URL_ENV = "ASSAY_ANTHROPIC_BASE_URL"
KEY_ENV = "ANTHROPIC_API_KEY"
API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 1024
_STOP = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls"}
_OPTIONS = ("temperature", "top_p", "top_k", "metadata", "thinking", "service_tier")


def messages_payload(messages: Sequence[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """(system prompt, Messages-API turns): tool results become user turns, same-role turns merge."""
    system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content) or None
    turns: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            continue
        role = "assistant" if m.role == "assistant" else "user"
        blocks: list[dict[str, Any]] = []
        if m.role == "tool":
            blocks.append({"type": "tool_result", "tool_use_id": m.tool_call_id or "", "content": m.content})
        else:
            if m.content:
                blocks.append({"type": "text", "text": m.content})
            for tc in m.tool_calls:
                blocks.append({"type": "tool_use", "id": tc.id, "name": tc.name, "input": tc.arguments})
        if not blocks:
            blocks.append({"type": "text", "text": ""})
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    # a single plain text block is sent as a string, as most clients do
    for turn in turns:
        content = turn["content"]
        if len(content) == 1 and content[0]["type"] == "text":
            turn["content"] = content[0]["text"]
    return system, turns


def _tool_choice(choice: Any) -> dict[str, Any] | None:
    if choice is None or isinstance(choice, dict):
        return choice
    mapping = {
        "auto": {"type": "auto"},
        "required": {"type": "any"},
        "any": {"type": "any"},
        "none": {"type": "none"},
    }
    return mapping.get(choice, {"type": "tool", "name": str(choice)})


def _usage(data: dict[str, Any] | None) -> tuple[Usage, bool]:
    if not data:
        return Usage(calls=1), False
    usage = Usage(
        input_tokens=int(data.get("input_tokens") or 0),
        output_tokens=int(data.get("output_tokens") or 0),
        cache_read_tokens=int(data.get("cache_read_input_tokens") or 0),
        cache_write_tokens=int(data.get("cache_creation_input_tokens") or 0),
        calls=1,
    )
    return usage, ("input_tokens" in data or "output_tokens" in data)


class AnthropicModel(BaseChatModel):
    provider = "anthropic"
    default_concurrency = 4

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout_s: float = 600.0,
        **kw: Any,
    ) -> None:
        super().__init__(model, **kw)
        key = api_key or os.environ.get(KEY_ENV)
        if not key:
            raise ConfigError(f"{self.name} needs an API key: set {KEY_ENV} (or pass --api-key)")
        self.base_url = (base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL).rstrip("/")
        headers = {"x-api-key": key, "anthropic-version": API_VERSION, "content-type": "application/json"}
        self.http = HttpBackend(self.provider, self.base_url, headers, timeout_s=timeout_s, key_hint=KEY_ENV)

    @property
    def limiter_key(self) -> str:
        return f"{self.provider}@{self.base_url}"

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "base_url": self.base_url}

    async def preflight(self) -> None:
        """GET /v1/models?limit=1: checks reachability and the key without spending tokens."""
        try:
            await self.http.get_json("v1/models?limit=1", timeout_s=10.0)
        except ModelInfraError as exc:
            if exc.kind in ("connect", "dns", "timeout"):
                exc.args = (f"{exc.args[0]}; check {BASE_URL_ENV}",)
            raise

    def build_payload(
        self, messages: Sequence[Message], tools: Sequence[Tool] | None, stream: bool, options: dict[str, Any]
    ) -> dict[str, Any]:
        opts = dict(options)
        system, turns = messages_payload(messages)
        payload: dict[str, Any] = {
            "model": self.model,
            "max_tokens": opts.pop("max_tokens", None) or DEFAULT_MAX_TOKENS,
            "messages": turns,
        }
        if system:
            payload["system"] = system
        if tools:
            payload["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools
            ]
        choice = _tool_choice(opts.pop("tool_choice", None))
        if choice is not None:
            payload["tool_choice"] = choice
        stop = opts.pop("stop", None)
        if stop:
            payload["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
        opts.pop("seed", None)  # the Messages API has no seed; ignoring it keeps suites portable
        extra = opts.pop("extra_body", None) or {}
        for key in _OPTIONS:
            if opts.get(key) is not None:
                payload[key] = opts.pop(key)
        unknown = sorted(k for k, v in opts.items() if v is not None)
        if unknown:
            raise ConfigError(f"anthropic provider does not take option(s) {', '.join(unknown)}")
        payload.update(extra)
        if stream:
            payload["stream"] = True
        return payload

    async def _call(
        self,
        messages: Sequence[Message],
        tools: Sequence[Tool] | None,
        stream: bool,
        options: dict[str, Any],
        emit: Emit | None,
    ) -> ModelOutput:
        payload = self.build_payload(messages, tools, stream, options)
        if stream:
            return await self._call_stream(payload, emit)
        timings = Timings(request_start=now())
        data = await self.http.post_json("v1/messages", payload)
        timings.end = now()
        if not isinstance(data, dict) or data.get("type") != "message":
            raise response_error(self.provider, "answer is not a message", data)
        text, calls = [], []
        for block in data.get("content") or []:
            if block.get("type") == "text":
                text.append(block.get("text", ""))
            elif block.get("type") == "tool_use":
                calls.append(
                    ToolCall(id=block["id"], name=block["name"], arguments=dict(block.get("input") or {}))
                )
        usage, reported = _usage(data.get("usage"))
        out = ModelOutput(
            text="".join(text),
            tool_calls=calls,
            finish_reason=_STOP.get(data.get("stop_reason") or "", data.get("stop_reason")),
            usage=usage,
            timings=timings,
            model=data.get("model") or self.model,
            raw=data,
        )
        return self._priced(out, tokens_reported=reported)

    async def _call_stream(self, payload: dict[str, Any], emit: Emit | None) -> ModelOutput:
        timings = Timings(request_start=now())
        chunks: list[StreamChunk] = []
        text: list[str] = []
        blocks: dict[int, dict[str, Any]] = {}
        usage_data: dict[str, Any] = {}
        stop_reason: str | None = None
        model_name = ""
        async for event in self.http.post_sse("v1/messages", payload):
            t = now()
            try:
                data = event.json()
            except ValueError as exc:
                raise ModelInfraError(
                    f"bad stream event {event.data[:200]!r}", provider=self.provider, kind="protocol"
                ) from exc
            kind = data.get("type") or event.event
            if kind == "message_start":
                message = data.get("message") or {}
                model_name = message.get("model") or model_name
                usage_data.update(message.get("usage") or {})
            elif kind == "content_block_start":
                block = dict(data.get("content_block") or {})
                block["partial"] = []
                blocks[int(data.get("index", len(blocks)))] = block
            elif kind == "content_block_delta":
                delta = data.get("delta") or {}
                block = blocks.setdefault(int(data.get("index", 0)), {"type": "text", "partial": []})
                if delta.get("type") == "text_delta" and delta.get("text"):
                    timings.first_token = timings.first_token or t
                    timings.last_token = t
                    chunk = StreamChunk(text=delta["text"], t=t)
                    chunks.append(chunk)
                    text.append(chunk.text)
                    if emit is not None:
                        emit(chunk)
                elif delta.get("type") == "input_json_delta":
                    timings.first_token = timings.first_token or t
                    timings.last_token = t
                    block["partial"].append(delta.get("partial_json", ""))
                    block["t"] = t
            elif kind == "message_delta":
                stop_reason = (data.get("delta") or {}).get("stop_reason") or stop_reason
                usage_data.update({k: v for k, v in (data.get("usage") or {}).items() if v is not None})
            elif kind == "error":
                err = data.get("error") or {}
                etype = err.get("type", "")
                if etype in ("overloaded_error", "api_error"):
                    raise ModelInfraError(
                        f"stream failed: {err.get('message', etype)} ({etype})",
                        provider=self.provider,
                        kind="server",
                        retryable=True,
                    )
                if etype == "rate_limit_error":
                    raise ModelInfraError(
                        f"rate limited: {err.get('message', etype)}",
                        provider=self.provider,
                        kind="rate_limit",
                        retryable=True,
                    )
                raise response_error(
                    self.provider, f"stream failed: {err.get('message', etype)} ({etype})", data
                )
            elif kind == "message_stop":
                break
        timings.end = now()
        calls = []
        for index in sorted(blocks):
            block = blocks[index]
            if block.get("type") != "tool_use":
                continue
            raw_json = "".join(block["partial"])
            args, raw = parse_arguments(raw_json) if raw_json else (dict(block.get("input") or {}), None)
            call = ToolCall(
                id=block.get("id", f"toolu_{index}"),
                name=block.get("name", ""),
                arguments=args,
                raw_arguments=raw,
            )
            calls.append(call)
            chunk = StreamChunk(text="", t=block.get("t", timings.end), tool_call=call)
            chunks.append(chunk)
            if emit is not None:
                emit(chunk)
        usage, reported = _usage(usage_data)
        out = ModelOutput(
            text="".join(text),
            tool_calls=calls,
            finish_reason=_STOP.get(stop_reason or "", stop_reason),
            usage=usage,
            timings=timings,
            chunks=chunks,
            model=model_name or self.model,
        )
        return self._priced(out, tokens_reported=reported)
