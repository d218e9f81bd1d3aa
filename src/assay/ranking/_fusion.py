"""Fusing ranked lists: the one reciprocal-rank fusion and the one convex score fusion that search uses."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

#: how each channel's scores are put on one scale before the convex sum
Normalize = Literal["max", "minmax"]
NORMALIZE: tuple[Normalize, ...] = ("max", "minmax")

#: hybrid search's rule for a learned embedder (MiniLM, e5-small, any other): min-max each channel over the
#: candidates, then weigh dense 0.7 and BM25 0.3. Chosen on the ``dev`` queries of the man-pages set (541
#: queries; the best mean nDCG@10 of MiniLM and e5-small over normalisations max|minmax and alpha 0.3..0.8),
#: reported on its ``test`` queries (README, "The parts under test, as tools"). The old rule (max, 0.5) put
#: e5-small's hybrid below its own dense ranking: E5's cosines sit in a narrow band, so cosine/max was near 1
#: for every candidate and BM25 alone decided the order.
HYBRID_NORMALIZE: Normalize = "minmax"
HYBRID_ALPHA = 0.7
#: the hash embedder (the ``pr`` suites' deterministic stand-in) is a second lexical channel, not a learned
#: one: at 0.7 it outweighs BM25 (beir-mini hybrid 0.858 against BM25's 0.873), so it keeps the old rule
_LEXICAL_EMBEDDERS: dict[str, tuple[Normalize, float]] = {"hash": ("max", 0.5)}


def hybrid_defaults(embedder_name: str) -> tuple[Normalize, float]:
    """``(normalize, alpha)`` of hybrid search for the embedder named ``embedder_name``."""
    return _LEXICAL_EMBEDDERS.get(embedder_name, (HYBRID_NORMALIZE, HYBRID_ALPHA))


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
    return (scores - low) / (top - low) if top > low else np.full_like(scores, 1.0 if top > 0 else 0.0)


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
