"""A small BM25 index over identifiers, path parts and docstrings/comments of code chunks."""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["LexicalIndex", "code_tokens"]

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "of",
        "to",
        "in",
        "is",
        "it",
        "and",
        "or",
        "for",
        "on",
        "with",
        "as",
        "be",
        "this",
        "that",
        "by",
        "are",
        "not",
        "from",
        "at",
        "if",
        "def",
        "self",
        "return",
        "none",
        "true",
        "false",
        "class",
        "import",
        "else",
        "elif",
        "none",
        "cls",
    ]
)


def code_tokens(text: str) -> list[str]:
    """Lower-cased identifiers plus their snake/camel parts (``get_help_record`` -> itself, get, help, record)."""
    out: list[str] = []
    for word in _WORD.findall(text):
        low = word.lower()
        parts = [p.lower() for p in _PARTS.findall(word)]
        if low not in _STOP and len(low) > 1:
            out.append(low)
        if len(parts) > 1:
            out.extend(p for p in parts if p not in _STOP and len(p) > 1)
    return out


class LexicalIndex:
    """Okapi BM25 (k1=1.2, b=0.75) over token lists; deterministic and rebuilt from the chunk table on load."""

    def __init__(self, docs: Sequence[Sequence[str]], *, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self.n_docs = len(docs)
        self.lengths = np.array([len(d) for d in docs], dtype=np.float32)
        self.avg_len = float(self.lengths.mean()) if self.n_docs else 0.0
        postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i, doc in enumerate(docs):
            for term, tf in Counter(doc).items():
                postings[term].append((i, tf))
        self._postings: dict[str, tuple[np.ndarray, np.ndarray]] = {
            t: (np.array([p[0] for p in ps], dtype=np.int64), np.array([p[1] for p in ps], dtype=np.float32))
            for t, ps in postings.items()
        }

    def idf(self, term: str) -> float:
        df = len(self._postings[term][0]) if term in self._postings else 0
        return math.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5))

    def scores(self, query: Sequence[str] | Mapping[str, float]) -> np.ndarray:
        """BM25 of every document; ``query`` is a token list or a weight per term (a weighted query)."""
        scores = np.zeros(self.n_docs, dtype=np.float32)
        if not self.n_docs:
            return scores
        norm = self.k1 * (1.0 - self.b + self.b * self.lengths / max(self.avg_len, 1e-9))
        weights = query if isinstance(query, Mapping) else Counter(query)
        for term, qtf in weights.items():
            if term not in self._postings:
                continue
            ids, tf = self._postings[term]
            scores[ids] += qtf * self.idf(term) * tf * (self.k1 + 1.0) / (tf + norm[ids])
        return scores

    def top(self, query: Sequence[str] | Mapping[str, float], k: int) -> list[tuple[int, float]]:
        """The ``k`` best documents with a positive score, best first (ties broken by position)."""
        s = self.scores(query)
        nz = np.flatnonzero(s > 0)
        if nz.size == 0:
            return []
        order = nz[np.lexsort((nz, -s[nz]))][:k]
        return [(int(i), float(s[i])) for i in order]
