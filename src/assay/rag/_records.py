"""What the document index holds and returns: its documents, what indexing did, ranked hits.

Also ``RankedIndex``, what answering reads from an index: below both ``_index`` (which builds it) and
``_query`` (which answers from it), so neither imports the other's module for its types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

from assay.rag._chunk import Chunk

if TYPE_CHECKING:
    import numpy as np

__all__ = ["DocumentInfo", "IndexResult", "RankedIndex", "SearchHit", "SearchMode", "embedding_text"]

SearchMode = Literal["hybrid", "dense", "bm25"]


@dataclass
class DocumentInfo:
    doc_id: str
    path: str | None
    sha256: str
    kind: str
    title: str
    n_chunks: int
    degraded: bool = False
    warnings: list[str] = field(default_factory=list)
    seq: int = 0
    ocr_pages: list[int] = field(default_factory=list)
    image_pages: list[int] = field(default_factory=list)


@dataclass
class IndexResult:
    """What indexing one document did. ``cache`` is hit, miss, off, or ``rebuilt:<why>`` for a bad entry."""

    doc_id: str
    status: Literal["indexed", "replaced", "unchanged"]
    n_chunks: int
    cache: str = "off"
    degraded: bool = False
    warnings: list[str] = field(default_factory=list)
    evicted: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: pages read by OCR, and mostly-image pages whose content is missing (OCR off or it read nothing)
    ocr_pages: list[int] = field(default_factory=list)
    image_pages: list[int] = field(default_factory=list)


@dataclass
class SearchHit:
    chunk: Chunk
    score: float
    rank: int
    title: str = ""
    dense_rank: int | None = None
    bm25_rank: int | None = None

    @property
    def doc_id(self) -> str:
        return self.chunk.doc_id


def embedding_text(title: str, chunk: Chunk) -> str:
    """What is embedded (and BM25-indexed) for a chunk: its document title and heading, then its text."""
    head = " > ".join(x for x in (title, chunk.heading) if x)
    return f"{head}\n{chunk.text}" if head else chunk.text


class RankedIndex(Protocol):
    """The searches and chunk lookups an answer makes of an index (``DocumentIndex`` is one)."""

    rrf_k: int

    def search(
        self, query: str, k: int = ..., mode: SearchMode = ..., *, dedupe: bool = ...
    ) -> list[SearchHit]: ...

    def dense_ranking(
        self, query: str, n: int, vector: np.ndarray | None = ...
    ) -> tuple[list[int], list[float]]: ...

    def bm25_ranking(
        self, query: str, n: int, scores: np.ndarray | None = ...
    ) -> tuple[list[int], list[float]]: ...

    def chunk_at(self, position: int) -> tuple[Chunk, str]: ...

    def chunk_text_key(self, position: int) -> bytes: ...
