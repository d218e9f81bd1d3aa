"""Ranking helpers shared by the search components (documents, code): rank and score fusion."""

from __future__ import annotations

from assay.ranking._fusion import NORMALIZE, Normalize, convex, fusion_rule, rrf

__all__ = ["NORMALIZE", "Normalize", "convex", "fusion_rule", "rrf"]
