"""Ranking helpers shared by the search components (documents, code): rank and score fusion."""

from __future__ import annotations

from assay.ranking._fusion import (
    HYBRID_ALPHA,
    HYBRID_NORMALIZE,
    NORMALIZE,
    Normalize,
    convex,
    fusion_rule,
    hybrid_defaults,
    rrf,
)

__all__ = [
    "HYBRID_ALPHA",
    "HYBRID_NORMALIZE",
    "NORMALIZE",
    "Normalize",
    "convex",
    "fusion_rule",
    "hybrid_defaults",
    "rrf",
]
