"""Fusing ranked lists: the one reciprocal-rank fusion that document and code search share."""

from __future__ import annotations

from collections.abc import Sequence


def rrf(
    rankings: Sequence[Sequence[int]], k: int = 60, weights: Sequence[float] | None = None
) -> dict[int, float]:
    """Reciprocal-rank fusion: ``sum(w / (k + rank))`` over the rankings an item is in (ranks from 1)."""
    fused: dict[int, float] = {}
    for i, ranking in enumerate(rankings):
        w = 1.0 if weights is None else weights[i]
        for rank, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + w / (k + rank)
    return fused
