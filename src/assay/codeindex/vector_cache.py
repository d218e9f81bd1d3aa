"""The code index's vector cache: the one store of :mod:`assay.embed.vector_store`, under its old import path."""

from __future__ import annotations

from assay.embed.vector_store import (
    ENV_VAR,
    CacheCounts,
    VectorCache,
    embedder_identity,
    resolve_cache_dir,
)

__all__ = ["ENV_VAR", "CacheCounts", "VectorCache", "embedder_identity", "resolve_cache_dir"]
