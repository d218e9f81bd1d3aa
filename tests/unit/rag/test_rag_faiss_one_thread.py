"""One query is searched on one OpenMP thread: same hits as FAISS's own threads, and the setting put back."""

from __future__ import annotations

import faiss
import numpy as np

from assay.rag._index import _search_one_thread


def test_one_thread_search_gives_the_same_hits_and_restores_the_thread_count() -> None:
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((2000, 64)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = faiss.IndexFlatIP(64)
    index.add(vectors)
    query = vectors[7:8] + 0.01
    before = faiss.omp_get_max_threads()
    scores, ids = _search_one_thread(index, query, 20)
    assert faiss.omp_get_max_threads() == before
    want_scores, want_ids = index.search(query, 20)
    assert ids[0][0] == 7 and np.array_equal(ids, want_ids) and np.allclose(scores, want_scores)
