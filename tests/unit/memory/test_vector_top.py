"""The sparse shortcut of VectorCache.top gives exactly what the full scoring gives, and is really taken."""

from __future__ import annotations

import numpy as np

from assay.embed import HashEmbedder
from assay.memory._vectors import SPARSE_MIN_ROWS, VectorCache, top_scores


def _sparse(rng: np.random.Generator, rows: int, dim: int, nnz: int) -> np.ndarray:
    out = np.zeros((rows, dim), dtype=np.float32)
    for r in range(rows):
        out[r, rng.choice(dim, nnz, replace=False)] = rng.standard_normal(nnz)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def _full(cache: VectorCache, q: np.ndarray, n: int) -> dict[int, float]:
    return top_scores(*cache.scores(q), n)


def test_sparse_queries_get_the_full_scorings_pairs_to_the_bit() -> None:
    rng = np.random.default_rng(1)
    dim, rows = 64, SPARSE_MIN_ROWS + 500
    cache = VectorCache(dim)
    cache.add(list(range(1000, 1000 + rows)), _sparse(rng, rows, dim, 8))
    cache.remove(range(1000, 1300))  # dead rows are never picked
    taken = 0
    for i in range(60):
        q = _sparse(rng, 1, dim, 6)[0]
        n = (1, 6, 50)[i % 3]
        fast = cache._top_sparse(q, n)
        taken += fast is not None
        assert cache.top(q, n) == _full(cache, q, n)
        if fast is not None:
            assert fast == _full(cache, q, n) and not set(fast) & set(range(1000, 1300))
        if i == 30:  # rows added and replaced after the columns were built are seen
            cache.add([5, 1500], _sparse(rng, 2, dim, 8))
    assert taken >= 50


def test_rows_tied_at_the_cut_are_picked_by_lowest_id_on_both_paths() -> None:
    rng = np.random.default_rng(2)
    dim = 64
    rows = _sparse(rng, SPARSE_MIN_ROWS, dim, 8)
    rows[:3] = rows[3]  # four identical rows: the best ones for a query along them
    cache = VectorCache(dim)
    cache.add(list(range(len(rows))), rows)
    q = rows[3].copy()
    for n in (2, 4, 5):
        fast = cache._top_sparse(q, n)
        assert fast is not None and fast == _full(cache, q, n)
    assert set(cache.top(q, 2)) == {0, 1}
    assert set(top_scores(np.array([9, 4, 7, 1]), np.array([0.5, 0.9, 0.5, 0.5], dtype=np.float32), 3)) == {
        4,
        1,
        7,
    }
    dense = rng.standard_normal(dim).astype(np.float32)
    assert cache._top_sparse(dense, 5) is None and cache.top(dense, 5) == _full(cache, dense, 5)


def test_hash_embedder_queries_over_a_small_cache_are_unchanged() -> None:
    emb = HashEmbedder()
    texts = [f"User's favorite thing number {i} is item {i * 7}" for i in range(300)]
    cache = VectorCache(emb.dim)
    cache.add(list(range(300)), emb.embed(texts))
    q = emb.embed(["what is my favorite thing?"])[0]
    assert cache._top_sparse(q, 50) is None  # below SPARSE_MIN_ROWS: the plain scoring
    assert cache.top(q, 50) == _full(cache, q, 50)
