"""A deterministic hashing embedder: same vectors on every machine, no model, for ``pr`` suites."""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Sequence

import numpy as np

from assay.embed._protocol import check_texts

_TOKEN = re.compile(r"[A-Za-z0-9]+")


def _split_identifier(token: str) -> list[str]:
    """camelCase and snake_case parts, lower-cased."""
    parts = re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+", token)
    return [p.lower() for p in parts] if parts else [token.lower()]


class HashEmbedder:
    """Signed feature hashing of word unigrams, bigrams and character trigrams, L2-normalised."""

    name = "hash"
    max_tokens = 100_000

    def __init__(self, dim: int = 384, char_ngrams: int = 3) -> None:
        self.dim = dim
        self.char_ngrams = char_ngrams

    @property
    def id(self) -> str:
        return f"hash-v1:dim={self.dim}:char={self.char_ngrams}"

    def _features(self, text: str) -> list[tuple[str, float]]:
        words: list[str] = []
        for tok in _TOKEN.findall(text):
            words.extend(_split_identifier(tok))
        feats: list[tuple[str, float]] = [("w:" + w, 1.0) for w in words]
        feats += [("b:" + a + "_" + b, 0.7) for a, b in itertools.pairwise(words)]
        n = self.char_ngrams
        for w in words:
            padded = f"#{w}#"
            feats += [("c:" + padded[i : i + n], 0.35) for i in range(max(1, len(padded) - n + 1))]
        return feats

    def _vector(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dim, dtype=np.float32)
        for feat, weight in self._features(text):
            h = int.from_bytes(hashlib.blake2b(feat.encode(), digest_size=8).digest(), "little")
            sign = 1.0 if (h >> 63) & 1 else -1.0
            vec[h % self.dim] += sign * weight
        norm = float(np.linalg.norm(vec))
        return vec / norm if norm > 0 else vec

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        check_texts(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._vector(t) for t in texts]).astype(np.float32, copy=False)
