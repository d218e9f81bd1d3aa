"""Embeddings from an OpenAI-compatible server's ``/v1/embeddings`` (llama.cpp, Ollama, vLLM, Lemonade).

Failures the subject cannot cause (connection refused, DNS, timeouts, 401/403, 404 for an unknown model, 429
and 5xx after retries, answers of the wrong shape) raise :class:`~assay.errors.InfraError`. Retries back off
exponentially and honour ``Retry-After``.

A server that answers with token-level vectors (a model without a pooling layer) has them mean-pooled, and is
sent one text per request from then on: llama-cpp-python's server garbles every input after the first of such
a multi-input request.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from assay.embed._protocol import check_texts
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
        self._one_per_request = False

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

    def _post(self, texts: list[str]) -> tuple[list[np.ndarray], bool]:
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
                    f"embedding server {self.url}: HTTP 404 (unknown model {self.model!r}, or the URL is "
                    f"not the API base ending in /v1): {body}"
                )
            if resp.status_code in _RETRY_STATUS and attempt < self.retries:
                last = f"HTTP {resp.status_code}: {body}"
                time.sleep(_retry_after(resp.headers.get("retry-after")) or wait)
                continue
            raise InfraError(f"embedding server {self.url} answered HTTP {resp.status_code}: {body}")
        raise InfraError(f"embedding server {self.url} failed after {self.retries + 1} tries: {last}")

    def _parse(self, resp: Any, n: int) -> tuple[list[np.ndarray], bool]:
        """The answer's vectors in input order, and whether the server sent token-level vectors."""
        try:
            data = resp.json()["data"]
            rows = sorted(data, key=lambda d: d.get("index", 0))
            raw = [r["embedding"] for r in rows]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise InfraError(f"embedding server {self.url} sent an answer without data[].embedding") from exc
        if len(raw) != n:
            raise InfraError(f"embedding server {self.url} returned {len(raw)} vectors for {n} texts")
        vectors = []
        token_level = False
        for item in raw:
            try:
                vec = np.asarray(item, dtype=np.float32)
            except (ValueError, TypeError) as exc:
                raise InfraError(f"embedding server {self.url} returned a malformed vector") from exc
            if vec.ndim == 2 and vec.shape[0] > 0:
                # Token-level vectors (llama-cpp-python's server for a model without a pooling layer,
                # llama.cpp with --pooling none): mean-pool them into one, as sentence embedders do.
                vec = vec.mean(axis=0)
                token_level = True
            if vec.ndim != 1 or vec.shape[0] == 0 or not np.all(np.isfinite(vec)):
                raise InfraError(f"embedding server {self.url} returned a vector of shape {vec.shape}")
            vectors.append(vec)
        return vectors, token_level

    def _embed_batch(self, batch: list[str]) -> list[np.ndarray]:
        if self._one_per_request and len(batch) > 1:
            return [row for text in batch for row in self._embed_batch([text])]
        rows, token_level = self._post(batch)
        if token_level:
            # llama-cpp-python's server (0.3.x) returns wrong token vectors for every input after the first
            # of a multi-input request to a model without a pooling layer (measured: cosine 0.06 against the
            # same text sent alone). Such a server gets one text per request from now on.
            self._one_per_request = True
            if len(batch) > 1:
                return [row for text in batch for row in self._embed_batch([text])]
        return rows

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        check_texts(texts)
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        chunks: list[np.ndarray] = []
        batches = [list(texts[s : s + self.batch_size]) for s in range(0, len(texts), self.batch_size)]
        if self._dim is None and len(batches[0]) > 1:
            # First contact: one text alone tells the dim and whether the server pools, before a large
            # batch of token-level answers (megabytes of JSON each) would be asked for and thrown away.
            first = batches[0]
            batches[0:1] = [first[:1], first[1:]]
        for batch in batches:
            rows = self._embed_batch(batch)
            if len({r.shape[0] for r in rows}) != 1:
                raise InfraError(f"embedding server {self.url} returned vectors of different lengths")
            arr = np.stack(rows)
            if self._dim is not None and arr.shape[1] != self._dim:
                raise InfraError(
                    f"embedding server {self.url} returned {arr.shape[1]}-d vectors, expected {self._dim}"
                )
            self._dim = int(arr.shape[1])
            chunks.append(arr)
        out = np.concatenate(chunks, axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
