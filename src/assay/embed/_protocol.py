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


def unrelated_cosine(embedder: Embedder) -> float:
    """The cosine between a query and an unrelated text under ``embedder``: ``embedder.unrelated_cosine`` where it
    declares one (E5's vectors all sit in a narrow cone, unrelated texts near 0.72), else 0 (MiniLM's and the
    hashing embedder's unrelated texts sit near 0)."""
    return float(getattr(embedder, "unrelated_cosine", 0.0))


def relatedness(embedder: Embedder, cosines: np.ndarray) -> np.ndarray:
    """``cosines`` under ``embedder`` on one scale for every embedder: unrelated texts at 0, the same text at 1.

    ``(cos - u) / (1 - u)``, ``u`` the embedder's :func:`unrelated_cosine`; the cosine itself where ``u`` is 0.
    An absolute threshold (memory's "does the text match at all" floor, its duplicate test) is set on this
    scale, so it means the same whichever embedder a store was built with.
    """
    u = unrelated_cosine(embedder)
    cos = np.asarray(cosines, dtype=np.float64)
    return cos if u == 0.0 else (cos - u) / (1.0 - u)


async def embed_async(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """``embedder.embed(texts)`` in a worker thread, so an event loop keeps serving while the CPU works."""
    return await asyncio.to_thread(embedder.embed, texts)
