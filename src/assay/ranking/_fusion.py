"""Fusing ranked lists: the one reciprocal-rank fusion and the one convex score fusion that search uses."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

#: how each channel's scores are put on one scale before the convex sum
Normalize = Literal["max", "minmax"]
NORMALIZE: tuple[Normalize, ...] = ("max", "minmax")


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


def _scale(scores: np.ndarray, normalize: Normalize) -> np.ndarray:
    if not scores.size:
        return scores
    top = float(scores.max())
    if normalize == "max":
        return scores / top if top > 0 else scores
    low = float(scores.min())
    return (scores - low) / (top - low) if top > low else np.ones_like(scores) * (1.0 if top > 0 else 0.0)


def convex(dense: np.ndarray, lexical: np.ndarray, alpha: float, normalize: Normalize = "max") -> np.ndarray:
    """``alpha * dense' + (1 - alpha) * lexical'`` over one candidate list, each channel rescaled first.

    ``max`` divides by the channel's best score (0 stays 0). ``minmax`` maps the channel's worst candidate
    to 0 and its best to 1, so an embedder whose cosines all sit in a narrow band (E5's 0.75 to 0.9)
    weighs as much as BM25 instead of adding a near-constant.
    """
    if normalize not in NORMALIZE:
        raise ValueError(f"normalize must be one of {', '.join(NORMALIZE)}, got {normalize!r}")
    return alpha * _scale(np.asarray(dense, dtype=np.float64), normalize) + (1 - alpha) * _scale(
        np.asarray(lexical, dtype=np.float64), normalize
    )


def fusion_rule(fusion: str, alpha: float, normalize: Normalize, rrf_k: int) -> str:
    """The one name of a hybrid fusion setting (``convex/minmax/alpha=0.5``, ``rrf/k=60``), recorded in a run's
    subject settings: two runs whose rules differ are not compared (:mod:`assay.gate.comparison`)."""
    return f"rrf/k={rrf_k}" if fusion == "rrf" else f"convex/{normalize}/alpha={alpha:g}"
