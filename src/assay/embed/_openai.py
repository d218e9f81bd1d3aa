"""Embeddings from an OpenAI-compatible server's ``/v1/embeddings`` (llama.cpp, Ollama, vLLM, Lemonade).

Failures the subject cannot cause (connection refused, DNS, timeouts, 401/403, 404 for an unknown model, 429
and 5xx after retries, answers of the wrong shape) raise :class:`~assay.errors.InfraError`. Retries back off
exponentially and honour ``Retry-After``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from assay.errors import ConfigError, InfraError

__all__ = ["API_KEY_ENV", "OpenAICompatEmbedder"]

#: Env vars read for the API key, in order. Local servers need none.
API_KEY_ENV = ("ASSAY_EMBED_API_KEY", "OPENAI_API_KEY")

_RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


class OpenAICompatEmbedder:
    """``POST {base_url}/embeddings`` with ``{"model": name, "input": [...]}``; vectors are L2-normalised.

    ``dim`` is learnt from the first answer when not given (``dim`` then makes one small call). ``id`` names
    the model and the server, so an index built against one server refuses to be searched through another.
    """

    def __init__(
        self,
        model: str,
        base_url: str,
        *,
        api_key: str | None = None,
        dim: int | None = None,
        max_tokens: int = 512,
        batch_size: int = 64,
        timeout_s: float = 60.0,
        retries: int = 3,
        backoff_s: float = 0.5,
        transport: Any = None,
    ) -> None:
        if not model:
            raise ConfigError("openai-compat embedder needs a model name: openai-compat/NAME@URL")
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"openai-compat embedder URL must start with http(s)://, got {base_url!r}")
        if batch_size < 1:
            raise ConfigError(f"batch_size must be at least 1, got {batch_size}")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.name = f"openai-compat/{model}"
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        self._dim = dim
        self._api_key = api_key if api_key is not None else self._key_from_env()
        self._transport = transport
        self._client: Any = None

    @staticmethod
    def _key_from_env() -> str | None:
        for var in API_KEY_ENV:
            if os.environ.get(var):
                return os.environ[var]
        return None

    @property
    def id(self) -> str:
        return f"openai-compat:{self.model}@{self.base_url}"

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    @property
    def url(self) -> str:
        return f"{self.base_url}/embeddings"

    def _http(self) -> Any:
        if self._client is None:
            import httpx

            headers = {"Content-Type": "application/json"}
            if self._api_key:
                headers["Authorization"] = f"Bearer {self._api_key}"
            self._client = httpx.Client(timeout=self.timeout_s, headers=headers, transport=self._transport)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _post(self, texts: list[str]) -> list[list[float]]:
        import httpx

        payload = {"model": self.model, "input": texts, "encoding_format": "float"}
        last = ""
        for attempt in range(self.retries + 1):
            wait = self.backoff_s * (2**attempt)
            try:
                resp = self._http().post(self.url, json=payload)
            except (httpx.TransportError, OSError) as exc:
                # Connection refused / DNS / reset: a dead server does not come back within a retry.
                if isinstance(exc, httpx.TimeoutException) and attempt < self.retries:
                    last = f"timed out after {self.timeout_s:g}s"
                    time.sleep(wait)
                    continue
                raise InfraError(
                    f"embedding server {self.url} unreachable: {type(exc).__name__}: {exc}"
                ) from exc
            if resp.status_code == 200:
                return self._parse(resp, len(texts))
            body = resp.text[:300].replace("\n", " ")
            if resp.status_code in (401, 403):
                raise InfraError(
                    f"embedding server {self.url} rejected the credentials (HTTP {resp.status_code}); "
                    f"set {' or '.join(API_KEY_ENV)}: {body}"
                )
            if resp.status_code == 404:
                raise InfraError(
                    f"embedding server {self.url}: HTTP 404 (no embeddings endpoint or unknown model "
                    f"{self.model!r}): {body}"
                )
            if resp.status_code in _RETRY_STATUS and attempt < self.retries:
                last = f"HTTP {resp.status_code}: {body}"
                time.sleep(_retry_after(resp.headers.get("retry-after")) or wait)
                continue
            raise InfraError(f"embedding server {self.url} answered HTTP {resp.status_code}: {body}")
        raise InfraError(f"embedding server {self.url} failed after {self.retries + 1} tries: {last}")

    def _parse(self, resp: Any, n: int) -> list[list[float]]:
        try:
            data = resp.json()["data"]
            rows = sorted(data, key=lambda d: d.get("index", 0))
            vectors = [r["embedding"] for r in rows]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise InfraError(f"embedding server {self.url} sent an answer without data[].embedding") from exc
        if len(vectors) != n:
            raise InfraError(f"embedding server {self.url} returned {len(vectors)} vectors for {n} texts")
        return vectors

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        chunks: list[np.ndarray] = []
        for start in range(0, len(texts), self.batch_size):
            batch = [str(t) for t in texts[start : start + self.batch_size]]
            try:
                arr = np.asarray(self._post(batch), dtype=np.float32)
            except ValueError as exc:  # ragged rows
                raise InfraError(f"embedding server {self.url} returned ragged vectors") from exc
            if arr.ndim != 2 or arr.shape[1] == 0:
                raise InfraError(f"embedding server {self.url} returned vectors of shape {arr.shape}")
            if self._dim is not None and arr.shape[1] != self._dim:
                raise InfraError(
                    f"embedding server {self.url} returned {arr.shape[1]}-d vectors, expected {self._dim}"
                )
            self._dim = int(arr.shape[1])
            chunks.append(arr)
        out = np.concatenate(chunks, axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
