"""The embedder protocol every index and store uses."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors.

    ``id`` is stable across processes and machines for the same weights and settings; indexes record it
    and refuse to be searched with an embedder of another id.
    """

    name: str
    dim: int
    max_tokens: int

    @property
    def id(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def check_texts(texts: Sequence[str]) -> None:
    """Raise TypeError unless ``texts`` is a sequence of ``str`` (one bare string is a common slip)."""
    if isinstance(texts, str | bytes):
        raise TypeError("embed() takes a sequence of texts, not one string")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"embed(): text {i} is {type(text).__name__}, not str")


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Vectors of search queries: ``embedder.embed_queries`` where the model embeds a query differently from a
    text to be found (E5's ``"query: "`` prefix), else ``embedder.embed``."""
    fn = getattr(embedder, "embed_queries", None)
    return fn(texts) if fn is not None else embedder.embed(texts)


async def embed_async(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """``embedder.embed(texts)`` in a worker thread, so an event loop keeps serving while the CPU works."""
    return await asyncio.to_thread(embedder.embed, texts)
