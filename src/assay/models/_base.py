"""The shared machinery of every provider: retries, adaptive concurrency, pricing and streaming.

A provider subclasses :class:`BaseChatModel` and implements one method, :meth:`BaseChatModel._call`,
that makes one attempt and hands each streamed piece to ``emit`` as it arrives. Everything else
(``generate``, ``stream``, retries on 429/5xx honouring ``Retry-After``, backing off the provider's
concurrency on rate limits, pricing from the rate card) lives here once.
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, ClassVar

from assay.models._errors import ModelInfraError
from assay.models._retry import RetryPolicy, get_limiter
from assay.models._types import Message, ModelOutput, StreamChunk, Tool
from assay.models.cost import price_usage

__all__ = ["BaseChatModel", "ChunkStream", "Emit"]

Emit = Callable[[StreamChunk], None]


class BaseChatModel(ABC):
    """Base of the built-in providers. ``name`` is the ``provider/model`` string."""

    provider: ClassVar[str] = ""
    #: concurrency a provider starts at unless the caller passes ``max_concurrency``
    default_concurrency: ClassVar[int] = 8

    def __init__(
        self,
        model: str,
        *,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        max_backoff_s: float = 30.0,
        max_concurrency: int | None = None,
        defaults: dict[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.name = f"{self.provider}/{model}"
        self.retry = RetryPolicy(max_retries=max_retries, backoff_s=backoff_s, max_backoff_s=max_backoff_s)
        self.max_concurrency = max_concurrency or self.default_concurrency
        #: generation options applied to every call unless the call overrides them
        self.defaults: dict[str, Any] = dict(defaults or {})
        self.retries_done = 0

    # -- what a provider implements ------------------------------------------------------------------
    @abstractmethod
    async def _call(
        self,
        messages: Sequence[Message],
        tools: Sequence[Tool] | None,
        stream: bool,
        options: dict[str, Any],
        emit: Emit | None,
    ) -> ModelOutput:
        """One attempt. Raise :class:`ModelInfraError` (retryable or not) or ``ModelResponseError``."""

    async def preflight(self) -> None:
        """One cheap check that the backend is reachable and the credentials work (raise otherwise)."""
        return None

    @property
    def limiter_key(self) -> str:
        return self.name

    def describe(self) -> dict[str, Any]:
        """What a run records about this model in its provenance."""
        return {"provider": self.provider, "model": self.model, "name": self.name}

    # -- the public protocol -------------------------------------------------------------------------
    async def generate(
        self,
        messages: Sequence[Message],
        tools: Sequence[Tool] | None = None,
        stream: bool = False,
        **options: Any,
    ) -> ModelOutput:
        """Answer ``messages``. With ``stream=True`` the output carries each chunk and its arrival time."""
        return await self._run(list(messages), tools, stream, options, None)

    def stream(
        self, messages: Sequence[Message], tools: Sequence[Tool] | None = None, **options: Any
    ) -> ChunkStream:
        """Iterate the answer's chunks as they arrive; ``.output`` holds the whole answer afterwards."""
        return ChunkStream(self, list(messages), tools, options)

    # -- the loop ------------------------------------------------------------------------------------
    async def _run(
        self,
        messages: list[Message],
        tools: Sequence[Tool] | None,
        stream: bool,
        options: dict[str, Any],
        emit: Emit | None,
    ) -> ModelOutput:
        merged = {**self.defaults, **options}
        limiter = get_limiter(self.limiter_key, self.max_concurrency)
        attempt = 0
        while True:
            emitted = False

            def _emit(chunk: StreamChunk) -> None:
                nonlocal emitted
                emitted = True
                if emit is not None:
                    emit(chunk)

            async with limiter.slot():
                try:
                    out = await self._call(messages, tools, stream, merged, _emit)
                except ModelInfraError as exc:
                    if exc.kind == "rate_limit":
                        limiter.on_rate_limit()
                    # a stream that already showed text to the caller cannot be replayed
                    if not exc.retryable or emitted or attempt >= self.retry.max_retries:
                        if exc.retryable and attempt > 0:
                            exc.args = (f"{exc.args[0]} (after {attempt} retries)",)
                        raise
                    delay = self.retry.delay(attempt, exc.retry_after)
                else:
                    limiter.on_success()
                    if not out.model:
                        out.model = self.model
                    return out
            attempt += 1
            self.retries_done += 1
            await asyncio.sleep(delay)

    def _priced(
        self,
        out: ModelOutput,
        *,
        tokens_reported: bool,
        reported_cost: float | None = None,
        base_url: str | None = None,
    ) -> ModelOutput:
        out.usage = price_usage(
            out.usage,
            provider=self.provider,
            model=self.model,
            reported_cost=reported_cost,
            tokens_reported=tokens_reported,
            base_url=base_url,
        )
        return out


class ChunkStream:
    """Async iterator over a streamed answer. After it is exhausted, ``output`` is the full answer."""

    def __init__(
        self,
        model: BaseChatModel,
        messages: list[Message],
        tools: Sequence[Tool] | None,
        options: dict[str, Any],
    ) -> None:
        self._model = model
        self._messages = messages
        self._tools = tools
        self._options = options
        self._queue: asyncio.Queue[StreamChunk | None] = asyncio.Queue()
        self._task: asyncio.Task[ModelOutput] | None = None
        self.output: ModelOutput | None = None
        self._gen: AsyncIterator[StreamChunk] | None = None

    def __aiter__(self) -> ChunkStream:
        return self

    async def __anext__(self) -> StreamChunk:
        if self._gen is None:
            self._gen = self._iterate()
        return await self._gen.__anext__()

    async def _iterate(self) -> AsyncIterator[StreamChunk]:
        queue = self._queue

        async def _produce() -> ModelOutput:
            try:
                return await self._model._run(
                    self._messages, self._tools, True, self._options, queue.put_nowait
                )
            finally:
                queue.put_nowait(None)

        self._task = asyncio.create_task(_produce())
        try:
            while True:
                chunk = await queue.get()
                if chunk is None:
                    break
                yield chunk
            self.output = await self._task
        finally:
            if not self._task.done():
                self._task.cancel()

    async def collect(self) -> ModelOutput:
        """Consume the stream and return the whole answer."""
        async for _ in self:
            pass
        assert self.output is not None
        return self.output


def now() -> float:
    """The clock every timing uses."""
    return time.perf_counter()
