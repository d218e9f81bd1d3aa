"""Hybrid recall: cosine over vectors, BM25 over FTS5, recency and confidence, in one score."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from assay.embed import embed_queries, relatedness
from assay.memory._clock import from_ts
from assay.memory._store import MemoryStore
from assay.memory._types import Recalled

__all__ = ["RecallWeights", "recall"]


@dataclass(frozen=True)
class RecallWeights:
    vector: float = 0.55
    fts: float = 0.25
    recency: float = 0.10
    confidence: float = 0.10
    half_life_days: float = 60.0
    #: a candidate is shown only if its text matches: relatedness at least this, or any FTS hit. Relatedness is
    #: the cosine on one scale for every embedder (``assay.embed.relatedness``: unrelated texts at 0); the
    #: vector weight above applies to it too
    min_vector: float = 0.25
    pool: int = 50


def _fts_norm(hits: list[tuple[int, float]]) -> dict[int, float]:
    if not hits:
        return {}
    best = min(r for _, r in hits)  # bm25 is negative; more negative is better
    return {i: (r / best if best < 0 else 1.0) for i, r in hits}


def recall(
    store: MemoryStore,
    query: str,
    *,
    k: int = 6,
    kinds: tuple[str, ...] = ("item",),
    weights: RecallWeights = RecallWeights(),
) -> list[Recalled]:
    """The ``k`` best current items (and/or past turns) for ``query``, best first."""
    now = store.now()
    qvec = embed_queries(store.embedder, [query])[0]
    out: list[Recalled] = []
    for kind in kinds:
        top = store.vector_top(kind, qvec, weights.pool)
        related = relatedness(store.embedder, np.array(list(top.values()), dtype=np.float64))
        vec = dict(zip(top, related.tolist(), strict=True))
        hits = (
            store.search_items_fts(query, weights.pool)
            if kind == "item"
            else store.search_turns_fts(query, weights.pool)
        )
        fts = _fts_norm(hits)
        pool = {i for i, s in vec.items() if s >= weights.min_vector} | set(fts)
        if not pool:
            continue
        rows = store.recall_rows(kind, sorted(pool))
        for rid, text, conf, when in rows:
            age_days = max(0.0, (now - when) / 86400.0)
            rec = math.exp(-math.log(2) * age_days / weights.half_life_days)
            v = max(0.0, vec.get(rid, 0.0))
            f = fts.get(rid, 0.0)
            score = weights.vector * v + weights.fts * f + weights.recency * rec + weights.confidence * conf
            out.append(
                Recalled(
                    "item" if kind == "item" else "turn", rid, text, score, v, f, rec, conf, from_ts(when)
                )
            )
    out.sort(key=lambda r: (-r.score, r.kind, r.id))
    return out[:k]
