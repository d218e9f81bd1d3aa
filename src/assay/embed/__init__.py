"""Embedders: the local ONNX default, a deterministic hashing embedder, and OpenAI-compatible servers.

Pick one by spec with :func:`get_embedder` (``"local"``, ``"e5-small"``, ``"hash"``, ``"hash:DIM"``,
``"local:PATH.onnx"``, ``"openai-compat/NAME@URL"``); embed search queries with :func:`embed_queries`; wrap any embedder in :class:`CachedEmbedder` for a memory LRU and a disk cache.
"""

from __future__ import annotations

from assay.embed._cache import CachedEmbedder, CacheStats, default_cache_dir
from assay.embed._e5 import E5SmallEmbedder
from assay.embed._hash import HashEmbedder
from assay.embed._local import LocalEmbedder
from assay.embed._openai import OpenAICompatEmbedder
from assay.embed._protocol import Embedder, embed_async, embed_queries, relatedness, unrelated_cosine
from assay.embed._registry import DEFAULT_EMBEDDER, EMBEDDER_SPECS, get_embedder, register_embedder

__all__ = [
    "DEFAULT_EMBEDDER",
    "EMBEDDER_SPECS",
    "CacheStats",
    "CachedEmbedder",
    "E5SmallEmbedder",
    "Embedder",
    "HashEmbedder",
    "LocalEmbedder",
    "OpenAICompatEmbedder",
    "default_cache_dir",
    "embed_async",
    "embed_queries",
    "get_embedder",
    "register_embedder",
    "relatedness",
    "unrelated_cosine",
]
