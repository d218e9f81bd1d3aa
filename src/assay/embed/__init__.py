"""Embedders: the local ONNX default, a deterministic hashing embedder, and OpenAI-compatible servers."""

from __future__ import annotations

from assay.embed._hash import HashEmbedder
from assay.embed._protocol import Embedder

__all__ = ["Embedder", "HashEmbedder"]
