"""BM25 over chunks (bm25s) and reciprocal-rank fusion with the dense ranking."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from assay.errors import MissingDependencyError

__all__ = ["STOPWORDS", "Bm25", "keywords", "terms"]

_WORD = re.compile(r"[A-Za-z]+|\d+(?:[.,]\d+)*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+(?:[.,]\d+)*")

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most my
    myself no nor not now of off on once only or other our ours ourselves out over own same she should so
    some such than that the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom why will with would you your yours
    yourself yourselves s t don""".split()  # noqa: SIM905
)


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("es") and word[-3] in "sxz":
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def terms(text: str) -> list[str]:
    """Lower-cased, stop-word-free, lightly stemmed terms; identifiers are also split into their parts."""
    out: list[str] = []
    for raw in _WORD.findall(text):
        low = raw.lower()
        if low not in STOPWORDS:
            out.append(_stem(low))
        parts = _CAMEL.findall(raw)
        if len(parts) > 1:
            out.extend(_stem(p.lower()) for p in parts if p.lower() not in STOPWORDS)
    return out


def keywords(text: str) -> list[str]:
    """Distinct content words of a query, in order (for keyword boosts and query variants)."""
    seen: dict[str, None] = {}
    for raw in _WORD.findall(text):
        low = raw.lower()
        if low not in STOPWORDS and (len(low) > 2 or low.isdigit()):
            seen.setdefault(low, None)
    return list(seen)


class Bm25:
    """A bm25s index over a list of texts; scores every text for a query."""

    def __init__(self, texts: Sequence[str]) -> None:
        try:
            import bm25s
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise MissingDependencyError("bm25s", "rag") from exc
        self.size = len(texts)
        self._retriever = bm25s.BM25()
        if texts:
            corpus = [terms(t) or ["\u2205"] for t in texts]
            self._retriever.index(corpus, show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        if not self.size:
            return np.zeros(0, dtype=np.float32)
        q = terms(query)
        if not q:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self._retriever.get_scores(q), dtype=np.float32)
