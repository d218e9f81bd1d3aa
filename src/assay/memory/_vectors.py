"""Vectors of live rows held in memory for cosine scoring (SQLite's ``vectors`` table is the record)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["VectorCache"]


class VectorCache:
    """Vectors of live rows held in memory for fast cosine scoring; SQLite remains the record.

    Rows live in a buffer that doubles when full, so adding a vector never copies the whole matrix.
    """

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.ids = np.zeros(64, dtype=np.int64)
        self.matrix = np.zeros((64, dim), dtype=np.float32)
        self.alive = np.zeros(64, dtype=bool)
        self.n = 0
        self.pos: dict[int, int] = {}

    def _grow(self, need: int) -> None:
        cap = len(self.ids)
        if need <= cap:
            return
        while cap < need:
            cap *= 2
        for name in ("ids", "matrix", "alive"):
            old = getattr(self, name)
            new = np.zeros((cap, *old.shape[1:]), dtype=old.dtype)
            new[: self.n] = old[: self.n]
            setattr(self, name, new)

    def add(self, ids: Sequence[int], vecs: np.ndarray) -> None:
        self._grow(self.n + len(ids))
        for i, row in zip(ids, vecs, strict=True):
            p = self.pos.get(int(i))
            if p is None:
                p = self.n
                self.n += 1
                self.pos[int(i)] = p
                self.ids[p] = i
            self.matrix[p] = row
            self.alive[p] = True

    def scores_many(self, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ids, cosine matrix live x queries) for a block of queries at once."""
        if not self.n:
            return np.zeros(0, dtype=np.int64), np.zeros((0, len(queries)), dtype=np.float32)
        live = self.alive[: self.n]
        sims = np.einsum("ij,kj->ik", self.matrix[: self.n], queries.astype(np.float32, copy=False))
        return self.ids[: self.n][live], sims[live]

    def remove(self, ids: Iterable[int]) -> None:
        for i in ids:
            p = self.pos.get(int(i))
            if p is not None:
                self.alive[p] = False

    def scores(self, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ids, cosine) of every live vector."""
        if not self.n:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        # einsum, not BLAS: one thread, and no thread pool spinning against other work on a busy machine
        sims = np.einsum("ij,j->i", self.matrix[: self.n], query.astype(np.float32, copy=False))
        live = self.alive[: self.n]
        return self.ids[: self.n][live], sims[live]
