"""Ranking helpers shared by the search components (documents, code): rank fusion."""

from __future__ import annotations

from assay.ranking._fusion import rrf

__all__ = ["rrf"]
