"""What a code search returns (``SearchHit``) and what it reads from an index (``SearchableIndex``).

Below both ``_index`` (which builds and holds the index) and ``_search`` (which ranks it), so neither
imports the other's module for its types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from assay.codeindex.store import ChunkRecord, FileRecord

__all__ = ["Level", "SearchHit", "SearchableIndex"]

Level = Literal["chunk", "symbol", "file"]


@dataclass(frozen=True)
class SearchHit:
    rank: int
    score: float
    path: str
    symbol: str
    kind: str
    start_line: int
    end_line: int
    text: str


class SearchableIndex(Protocol):
    """The state of a code index that ranking reads (``CodeIndex`` is one)."""

    chunks: list[ChunkRecord]
    files: dict[str, FileRecord]
    generation: int

    def dense_ranking(self, query: str, depth: int = ...) -> list[int]:
        """Chunk rows by cosine similarity to ``query``'s embedding, best first."""
        ...
