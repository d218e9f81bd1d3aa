"""The server under test: an OpenAI-compatible URL, or the embedded model started (and stopped) by assay.

What the server really runs with is read back, not assumed:

- context size: llama.cpp ``/props`` (``default_generation_settings.n_ctx``), vLLM ``/v1/models``
  (``max_model_len``), or, for llama-cpp-python's server (which exposes neither), the window it names when
  a prompt of ``--ctx-size`` tokens is refused. A mismatch with ``--ctx-size`` is a ``ConfigError``.
- token counts: the server's ``usage`` when it reports it; else the server's own tokenizer endpoint
  (llama.cpp ``/tokenize``, vLLM ``/tokenize``, llama-cpp-python ``/extras/tokenize/count``); else the
  number of streamed text events. Which one was used is recorded per request.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from assay.errors import ConfigError, InfraError
from assay.evals.serving._client import StreamClient
from assay.models.server_tokens import ServerTokenizer

__all__ = ["CtxReading", "Target", "parse_model_spec", "read_context_size", "token_counter"]

_MAX_CTX = re.compile(r"maximum context length is (\d+)|exceed context window of (\d+)")


@dataclass
class Target:
    """Where requests go. ``spec`` is the --model value as given."""

    spec: str
    model: str
    base_url: str | None
    embedded: bool = False

    @property
    def label(self) -> str:
        return f"local/{self.model}" if self.embedded else f"openai-compat/{self.model}"


def parse_model_spec(spec: str | None) -> Target:
    """``openai-compat/NAME@URL`` or ``local/smollm2`` (also ``local``)."""
    if not spec:
        raise ConfigError("--model is required: openai-compat/NAME@URL or local/smollm2")
    spec = spec.strip()
    if spec in ("local", "local/smollm2", "local/default"):
        return Target(spec=spec, model="smollm2", base_url=None, embedded=True)
    if spec.startswith("local/"):
        raise ConfigError(f"--model {spec!r}: the embedded model is 'local/smollm2'")
    provider, _, rest = spec.partition("/")
    if provider not in ("openai-compat", "openai_compat", "openai") or "@" not in rest:
        raise ConfigError(
            f"--model {spec!r}: expected openai-compat/NAME@URL (e.g. openai-compat/qwen@http://127.0.0.1:8000/v1)"
            " or local/smollm2"
        )
    name, _, url = rest.partition("@")
    if not name or not url.startswith(("http://", "https://")):
        raise ConfigError(f"--model {spec!r}: expected openai-compat/NAME@URL with an http(s) URL")
    return Target(spec=spec, model=name, base_url=url)


@dataclass
class CtxReading:
    n_ctx: int | None
    source: str
    server_kind: str
    details: dict[str, Any] = field(default_factory=dict)


async def _models(client: StreamClient) -> list[dict[str, Any]]:
    status, body = await client.get_json("/v1/models")
    if status is None:
        raise InfraError(f"server at {client.host}:{client.port} is unreachable: {body}")
    if status != 200 or not isinstance(body, dict):
        return []
    return [m for m in body.get("data") or [] if isinstance(m, dict)]


async def read_context_size(client: StreamClient, model: str, expected: int | None) -> CtxReading:
    """The context size the server really runs with, and where it came from."""
    status, props = await client.get_json("/props")
    if status is None:
        raise InfraError(f"server at {client.host}:{client.port} is unreachable: {props}")
    if status == 200 and isinstance(props, dict):
        settings = props.get("default_generation_settings") or {}
        n_ctx = settings.get("n_ctx") or props.get("n_ctx")
        if isinstance(n_ctx, int):
            return CtxReading(n_ctx, "llama.cpp /props", "llama.cpp")
    models = await _models(client)
    entry = next((m for m in models if m.get("id") == model), models[0] if models else None)
    if entry is not None and isinstance(entry.get("max_model_len"), int):
        return CtxReading(entry["max_model_len"], "vLLM /v1/models max_model_len", "vllm")
    if entry is not None and entry.get("owned_by") == "me":
        # llama-cpp-python: no endpoint tells; a prompt as long as the expected window is refused with
        # the real window in the message (and refused before any evaluation)
        if expected is None:
            return CtxReading(
                None, "not exposed by llama-cpp-python (give --ctx-size to probe it)", "llama-cpp-python"
            )
        return await _probe_window(client, model, expected)
    return CtxReading(None, "not exposed by the server", "openai-compatible")


async def _probe_window(client: StreamClient, model: str, expected: int) -> CtxReading:
    words = expected + 8
    prompt = " hello" * words
    status, body = await client.post_json("/extras/tokenize/count", {"input": prompt, "model": model})
    count = body.get("count") if status == 200 and isinstance(body, dict) else None
    result = await client.request(
        "/v1/completions", {"model": model, "prompt": prompt, "max_tokens": 1, "temperature": 0}, timeout=300
    )
    message = str(result.body)
    match = _MAX_CTX.search(message)
    if match:
        n_ctx = int(match.group(1) or match.group(2))
        return CtxReading(
            n_ctx, "llama-cpp-python context-window refusal", "llama-cpp-python", {"probe_tokens": count}
        )
    if result.ok:
        return CtxReading(
            None,
            f"llama-cpp-python accepted a {count or words}-token prompt: its window is larger than that",
            "llama-cpp-python",
            {"probe_tokens": count, "larger_than": count or words},
        )
    return CtxReading(None, f"probe failed: {result.error}", "llama-cpp-python")


def check_context(reading: CtxReading, expected: int | None) -> None:
    """Raise ConfigError naming --ctx-size when the server runs with another window."""
    if expected is None:
        return
    larger = reading.details.get("larger_than")
    if larger is not None:
        raise ConfigError(
            f"--ctx-size {expected}: the server runs with a larger context window (it accepted a {larger}-token "
            f"prompt); restart it with {expected} or pass its real size"
        )
    if reading.n_ctx is not None and reading.n_ctx != expected:
        raise ConfigError(
            f"--ctx-size {expected}: the server runs with a context size of {reading.n_ctx} ({reading.source})"
        )


def api_key() -> str | None:
    """The key for openai-compat servers: $ASSAY_SERVING_API_KEY, else $OPENAI_API_KEY."""
    return os.environ.get("ASSAY_SERVING_API_KEY") or os.environ.get("OPENAI_API_KEY") or None


def token_counter(client: StreamClient, model: str) -> ServerTokenizer:
    """The server's own tokenizer over the benchmark's client (``assay.models.server_tokens``)."""
    return ServerTokenizer(client.post_json, model)
