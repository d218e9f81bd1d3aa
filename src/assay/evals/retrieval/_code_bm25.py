"""The second baseline code search is held against: plain BM25 (bm25s) over whole files.

Each file is one document, its path followed by its text, tokenized code-aware (``code_tokens``:
identifiers kept whole and also split at snake_case, camelCase and dots); the query is the issue text,
tokenized the same way, every token counting as often as it occurs. No embeddings, no weighting of the
query: the simplest strong baseline. Symbols are ranked the same way over the index's symbol chunks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from assay.codeindex import code_tokens
from assay.errors import MissingDependencyError

__all__ = ["bm25_rank", "bm25_rank_files", "bm25_rank_symbols"]

_EMPTY = "\u2205"  # bm25s wants at least one token per document


def bm25_rank(docs: list[str], query: str) -> list[int]:
    """Indexes of ``docs`` with a positive BM25 score for ``query``, best first (ties by position)."""
    try:
        import bm25s
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingDependencyError("bm25s", "code") from exc
    q = code_tokens(query)
    if not docs or not q:
        return []
    retriever = bm25s.BM25()
    retriever.index([code_tokens(d) or [_EMPTY] for d in docs], show_progress=False)
    scores = np.asarray(retriever.get_scores(q), dtype=np.float64)
    nz = np.flatnonzero(scores > 0)
    return [int(i) for i in nz[np.lexsort((nz, -scores[nz]))]]


def bm25_rank_files(texts: Mapping[str, str], query: str) -> list[str]:
    """Paths ranked by BM25 of ``path + text`` against the issue text ``query``."""
    paths = sorted(texts)
    return [paths[i] for i in bm25_rank([f"{p}\n{texts[p]}" for p in paths], query)]


def bm25_rank_symbols(chunks: Iterable[tuple[str, str, str]], query: str) -> list[tuple[str, str]]:
    """(path, symbol) ranked by their best chunk's BM25 (``symbol + text``), chunks without a symbol left out."""
    keyed = [(p, s, t) for p, s, t in chunks if s]
    order = bm25_rank([f"{s}\n{t}" for _, s, t in keyed], query)
    out: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for i in order:
        key = (keyed[i][0], keyed[i][1])
        if key not in seen:
            seen.add(key)
            out.append(key)
    return out
