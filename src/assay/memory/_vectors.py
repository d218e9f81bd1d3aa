"""Vectors of live rows held in memory for cosine scoring (SQLite's ``vectors`` table is the record)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["VectorCache", "top_scores"]

#: a cache of at least this many rows scores a sparse query on the query's non-zero dimensions first
SPARSE_MIN_ROWS = 4096
#: a query is sparse when at most this share of its entries is non-zero (the hashing embedder's ~7%)
SPARSE_SHARE = 0.25
#: the unit roundoff of float32
_U32 = 2.0**-24


def top_scores(ids: np.ndarray, sims: np.ndarray, n: int) -> dict[int, float]:
    """The ``n`` best (id, cosine) pairs of a scoring (all of them when there are no more than ``n``); of rows
    tied at the cut, the lowest ids."""
    if not len(ids):
        return {}
    if len(ids) > n:
        cut = sims[np.argpartition(-sims, n - 1)[n - 1]]
        above = np.flatnonzero(sims > cut)
        tied = np.flatnonzero(sims == cut)
        pick = np.concatenate([above, tied[np.argsort(ids[tied], kind="stable")[: n - len(above)]]])
        ids, sims = ids[pick], sims[pick]
    return {int(i): float(s) for i, s in zip(ids, sims, strict=True)}


class VectorCache:
    """Vectors of live rows held in memory for fast cosine scoring; SQLite remains the record.

    Rows live in a buffer that doubles when full, so adding a vector never copies the whole matrix. A large
    cache asked for its best rows by a sparse query (:meth:`top`) also keeps its columns (a transposed copy).
    """

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.ids = np.zeros(64, dtype=np.int64)
        self.matrix = np.zeros((64, dim), dtype=np.float32)
        self.alive = np.zeros(64, dtype=bool)
        self.n = 0
        self.pos: dict[int, int] = {}
        #: the matrix's columns (dim x capacity), kept once a sparse query asks for the best rows of many
        self.cols: np.ndarray | None = None
        #: an upper bound of the rows' norms, and whether every row is finite (what :meth:`top`'s bound needs)
        self.max_norm = 0.0
        self.finite = True

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
        if self.cols is not None:
            cols = np.zeros((self.dim, cap), dtype=np.float32)
            cols[:, : self.n] = self.cols[:, : self.n]
            self.cols = cols

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
            if self.cols is not None:
                self.cols[:, p] = row
        if len(ids):
            vecs = np.asarray(vecs, dtype=np.float32)
            self.finite = self.finite and bool(np.isfinite(vecs).all())
            self.max_norm = max(self.max_norm, float(np.linalg.norm(vecs.astype(np.float64), axis=1).max()))

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

    def top(self, query: np.ndarray, n: int) -> dict[int, float]:
        """``top_scores(*self.scores(query), n)``, the same pairs to the bit, found faster for a sparse query.

        A sparse query against many rows is first scored on its non-zero dimensions only, from the columns
        (what the full product differs from by rounding alone); every row within twice the rounding bound of the
        ``n``-th best is then scored as :meth:`scores` scores it. Those hold the ``n`` best and every row tied
        with the ``n``-th, so the same rule picks the same rows. A dense query, a small cache or rows that are
        not all finite are scored in full.
        """
        picked = self._top_sparse(query, n)
        return top_scores(*self.scores(query), n) if picked is None else picked

    def _top_sparse(self, query: np.ndarray, n: int) -> dict[int, float] | None:
        q = np.asarray(query, dtype=np.float32)
        nz = np.flatnonzero(q)
        live = self.alive[: self.n]
        if (
            self.n < SPARSE_MIN_ROWS
            or not 0 < len(nz) <= SPARSE_SHARE * self.dim
            or not self.finite
            or not np.isfinite(q).all()
            or int(live.sum()) <= n
        ):
            return None
        if self.cols is None:
            self.cols = np.ascontiguousarray(self.matrix.T)
        cols = self.cols
        approx = cols[nz[0], : self.n] * q[nz[0]]
        for j in nz[1:]:
            approx += cols[j, : self.n] * q[j]
        approx[~live] = -np.inf
        # each product differs from the exact cosine by at most (dim + 1) * u * |q| * |row|; both sides: twice
        bound = 4.0 * (self.dim + 1) * _U32 * float(np.linalg.norm(q.astype(np.float64))) * self.max_norm
        if not bound < 1e30:
            return None
        kth = float(np.partition(approx, self.n - n)[self.n - n])
        cand = np.flatnonzero(approx >= kth - bound)
        exact = np.einsum("ij,j->i", self.matrix[cand], q)  # as scores() computes each row
        return top_scores(self.ids[cand], exact, n)
