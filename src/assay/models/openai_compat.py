"""The ``openai-compat`` provider: chat completions of any OpenAI-compatible server.

Works with llama.cpp's server, vLLM, Ollama, Lemonade and OpenAI itself. Model strings:

* ``openai-compat/MODEL@BASE_URL`` (e.g. ``openai-compat/qwen3@http://127.0.0.1:8080/v1``), or
  ``openai-compat/MODEL`` with ``base_url=`` or ``$ASSAY_OPENAI_BASE_URL``;
* ``openai/MODEL``: OpenAI itself; needs ``$OPENAI_API_KEY``.

The key comes from ``api_key=``, ``$ASSAY_OPENAI_API_KEY`` or ``$OPENAI_API_KEY`` (optional for a
local server).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from typing import Any

from assay.errors import ConfigError
from assay.models._base import BaseChatModel, Emit, now
from assay.models._errors import ModelInfraError
from assay.models._http import HttpBackend, response_error
from assay.models._types import Message, ModelOutput, StreamChunk, Timings, Tool, ToolCall
from assay.models.cost import is_loopback_url
from assay.models.server_tokens import server_tokenizer
from assay.runs import Usage

__all__ = ["OpenAICompatModel", "OpenAIModel", "parse_arguments", "tool_choice_payload"]

OPENAI_BASE_URL = "https://api.openai.com/v1"
BASE_URL_ENV = "ASSAY_OPENAI_BASE_URL"
KEY_ENVS = ("ASSAY_OPENAI_API_KEY", "OPENAI_API_KEY")
_KNOWN = (
    "max_tokens",
    "temperature",
    "top_p",
    "stop",
    "seed",
    "response_format",
    "presence_penalty",
    "frequency_penalty",
    "logit_bias",
    "n",
    "parallel_tool_calls",
    "user",
)


def finish_streamed_tool_calls(
    partial: dict[int, dict[str, Any]], chunks: list[StreamChunk], emit: Callable[[StreamChunk], None] | None
) -> list[ToolCall]:
    """Turn tool-call pieces gathered from a stream (index -> id, name, argument parts, time) into calls,
    appending one chunk per call (stamped when its last piece arrived) and handing each to ``emit``."""
    calls = []
    for index in sorted(partial):
        slot = partial[index]
        args, raw = parse_arguments("".join(slot["args"]))
        call = ToolCall(
            id=slot["id"] or f"call_{index}", name=slot["name"], arguments=args, raw_arguments=raw
        )
        calls.append(call)
        chunk = StreamChunk(text="", t=slot["t"], tool_call=call)
        chunks.append(chunk)
        if emit is not None:
            emit(chunk)
    return calls


def parse_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """Tool-call arguments as a dict, and the raw text when it was not a JSON object."""
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except ValueError:
        return {}, raw
    return (value, None) if isinstance(value, dict) else ({}, raw)


def tool_choice_payload(choice: Any) -> Any:
    """``"auto" | "none" | "required" | TOOL_NAME | dict`` as OpenAI wants it."""
    if choice is None or isinstance(choice, dict) or choice in ("auto", "none", "required"):
        return choice
    return {"type": "function", "function": {"name": str(choice)}}


def message_payload(m: Message) -> dict[str, Any]:
    d: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.tool_calls:
        d["tool_calls"] = [
            {
                "id": tc.id,
                "type": "function",
                "function": {"name": tc.name, "arguments": json.dumps(tc.arguments)},
            }
            for tc in m.tool_calls
        ]
        # "" rather than null: llama-cpp-python's server answers HTTP 500 to a null content (OpenAI takes both)
    if m.tool_call_id is not None:
        d["tool_call_id"] = m.tool_call_id
    if m.name is not None:
        d["name"] = m.name
    return d


def tool_payload(t: Tool) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
    }


def usage_from(data: dict[str, Any] | None) -> tuple[Usage, bool, float | None]:
    """(usage, whether tokens were reported, a cost the server reported) from an OpenAI ``usage`` object."""
    if not data:
        return Usage(calls=1), False, None
    prompt = int(data.get("prompt_tokens") or 0)
    completion = int(data.get("completion_tokens") or 0)
    details = data.get("prompt_tokens_details") or {}
    cached = int(details.get("cached_tokens") or 0)
    reported = data.get("cost")
    usage = Usage(
        input_tokens=max(0, prompt - cached), output_tokens=completion, cache_read_tokens=cached, calls=1
    )
    has_tokens = "prompt_tokens" in data or "completion_tokens" in data
    return usage, has_tokens, float(reported) if isinstance(reported, int | float) else None


class OpenAICompatModel(BaseChatModel):
    provider = "openai-compat"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        require_key: bool = False,
        timeout_s: float = 300.0,
        stream_usage: bool = True,
        **kw: Any,
    ) -> None:
        if "@" in model and base_url is None:
            model, _, base_url = model.partition("@")
        super().__init__(model, **kw)
        base_url = base_url or os.environ.get(BASE_URL_ENV)
        if not base_url:
            raise ConfigError(
                f"no server for {self.name}: write {self.provider}/MODEL@http://HOST:PORT/v1, "
                f"pass --base-url, or set {BASE_URL_ENV}"
            )
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(
                f"base URL must start with http:// or https://, got {base_url!r} ({BASE_URL_ENV})"
            )
        key = api_key or next((os.environ[e] for e in KEY_ENVS if os.environ.get(e)), None)
        if require_key and not key:
            raise ConfigError(
                f"{self.name} needs an API key: set {' or '.join(KEY_ENVS)} (or pass --api-key)"
            )
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self.base_url = base_url.rstrip("/")
        self.stream_usage = stream_usage
        self.http = HttpBackend(
            self.provider, self.base_url, headers, timeout_s=timeout_s, key_hint=" or ".join(KEY_ENVS)
        )

    @property
    def limiter_key(self) -> str:
        return f"{self.provider}@{self.base_url}"

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "base_url": self.base_url}

    async def preflight(self) -> None:
        """GET /models: checks the server answers and the key is accepted (no tokens spent)."""
        try:
            data = await self.http.get_json("models", timeout_s=10.0)
        except ModelInfraError as exc:
            hint = (
                f"check the URL ({BASE_URL_ENV} or MODEL@URL)"
                if exc.kind in ("connect", "dns", "timeout")
                else ""
            )
            if hint:
                exc.args = (f"{exc.args[0]}; {hint}",)
            raise
        ids = (
            [m.get("id") for m in (data.get("data") or []) if isinstance(m, dict)]
            if isinstance(data, dict)
            else []
        )
        if ids and not is_loopback_url(self.base_url) and self.model not in ids:
            raise ModelInfraError(
                f"model {self.model!r} not offered by {self.base_url} (it has {len(ids)} others)",
                provider=self.provider,
                kind="not_found",
            )

    def build_payload(
        self, messages: Sequence[Message], tools: Sequence[Tool] | None, stream: bool, options: dict[str, Any]
    ) -> dict[str, Any]:
        opts = dict(options)
        payload: dict[str, Any] = {"model": self.model, "messages": [message_payload(m) for m in messages]}
        if tools:
            payload["tools"] = [tool_payload(t) for t in tools]
        choice = opts.pop("tool_choice", None)
        if choice is not None:
            payload["tool_choice"] = tool_choice_payload(choice)
        extra = opts.pop("extra_body", None) or {}
        for key in _KNOWN:
            if opts.get(key) is not None:
                payload[key] = opts.pop(key)
        payload.update({k: v for k, v in opts.items() if v is not None})
        payload.update(extra)
        if stream:
            payload["stream"] = True
            if self.stream_usage:
                payload["stream_options"] = {"include_usage": True}
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
        data = await self.http.post_json("chat/completions", payload)
        timings.end = now()
        choices = data.get("choices") if isinstance(data, dict) else None
        if not choices:
            raise response_error(self.provider, "answer has no choices", data)
        msg = choices[0].get("message") or {}
        calls = []
        for i, tc in enumerate(msg.get("tool_calls") or []):
            fn = tc.get("function") or {}
            args, raw = parse_arguments(fn.get("arguments") or "")
            calls.append(
                ToolCall(
                    id=tc.get("id") or f"call_{i}", name=fn.get("name", ""), arguments=args, raw_arguments=raw
                )
            )
        usage, reported, cost = usage_from(data.get("usage"))
        out = ModelOutput(
            text=msg.get("content") or "",
            tool_calls=calls,
            finish_reason=choices[0].get("finish_reason"),
            usage=usage,
            timings=timings,
            model=data.get("model") or self.model,
            raw=data,
        )
        return self._priced(out, tokens_reported=reported, reported_cost=cost, base_url=self.base_url)

    async def _call_stream(self, payload: dict[str, Any], emit: Emit | None) -> ModelOutput:
        timings = Timings(request_start=now())
        text: list[str] = []
        chunks: list[StreamChunk] = []
        partial: dict[int, dict[str, Any]] = {}
        finish: str | None = None
        usage_data: dict[str, Any] | None = None
        model_name = ""
        async for event in self.http.post_sse("chat/completions", payload):
            t = now()
            if event.data.strip() == "[DONE]":
                break
            try:
                data = event.json()
            except ValueError as exc:
                raise ModelInfraError(
                    f"bad stream event {event.data[:200]!r}", provider=self.provider, kind="protocol"
                ) from exc
            if isinstance(data, dict) and "error" in data:
                raise response_error(self.provider, f"error in stream: {data['error']}", data)
            model_name = data.get("model") or model_name
            if data.get("usage"):
                usage_data = data["usage"]
            for choice in data.get("choices") or []:
                delta = choice.get("delta") or {}
                piece = delta.get("content")
                if piece:
                    if timings.first_token is None:
                        timings.first_token = t
                    timings.last_token = t
                    text.append(piece)
                    chunk = StreamChunk(text=piece, t=t)
                    chunks.append(chunk)
                    if emit is not None:
                        emit(chunk)
                for tc in delta.get("tool_calls") or []:
                    if timings.first_token is None:
                        timings.first_token = t
                    timings.last_token = t
                    slot = partial.setdefault(
                        int(tc.get("index", len(partial))), {"id": "", "name": "", "args": []}
                    )
                    slot["id"] = tc.get("id") or slot["id"]
                    fn = tc.get("function") or {}
                    slot["name"] = fn.get("name") or slot["name"]
                    if fn.get("arguments"):
                        slot["args"].append(fn["arguments"])
                    slot["t"] = t
                if choice.get("finish_reason"):
                    finish = choice["finish_reason"]
        timings.end = now()
        calls = finish_streamed_tool_calls(partial, chunks, emit)
        if usage_data is None:
            answer = "".join(text) + "".join(c.name + (c.raw_arguments or "") for c in calls)
            usage_data = await self._count_with_server_tokenizer(payload, answer)
        usage, reported, cost = usage_from(usage_data)
        out = ModelOutput(
            text="".join(text),
            tool_calls=calls,
            finish_reason=finish,
            usage=usage,
            timings=timings,
            chunks=chunks,
            model=model_name or self.model,
        )
        return self._priced(out, tokens_reported=reported, reported_cost=cost, base_url=self.base_url)

    async def _count_with_server_tokenizer(
        self, payload: dict[str, Any], answer: str
    ) -> dict[str, Any] | None:
        """Usage for a stream that reported none, counted by the server's own tokenizer where it has one
        (``assay.models.server_tokens``); None when it has not.

        The answer's count is what the model generated; the prompt's counts the messages' text only, not the
        few tokens the chat template adds around each message, so it is a slight undercount.
        """
        counter = server_tokenizer(self.base_url, self.model)
        prompt = "\n".join(
            str(m.get("content") or "") for m in payload.get("messages") or [] if isinstance(m, dict)
        )
        prompt_tokens = await counter.count(prompt)
        completion_tokens = await counter.count(answer)
        if prompt_tokens is None or completion_tokens is None:
            return None
        return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}


class OpenAIModel(OpenAICompatModel):
    """``openai/MODEL``: OpenAI itself (a key is required; ``$ASSAY_OPENAI_BASE_URL`` may point at a proxy)."""

    provider = "openai"

    def __init__(self, model: str, *, base_url: str | None = None, **kw: Any) -> None:
        kw.setdefault("require_key", True)
        if "@" not in model and not base_url:
            base_url = os.environ.get(BASE_URL_ENV) or OPENAI_BASE_URL
        super().__init__(model, base_url=base_url, **kw)
