"""The three rankers side by side (BM25 alone, dense alone, hybrid) and the fusion verdict.

Hybrid fusion earns its place only if it is at least as good as the better of its two channels on the
same corpus and queries. :func:`fusion_verdict` is the one place that rule is decided; the BEIR rows and
the scale tiers both report it. Its tolerance is the gate's paired rule for per-item proportions
(:func:`assay.stats.tolerance.paired_proportion_tolerance`, one-sided 5%) over the per-query nDCG@10 of
hybrid and the better channel: a shortfall that one or two queries flipping could give is reported, never
failed; every shortfall beyond it is.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from assay.evals.retrieval._rag_score import ndcg_at_k
from assay.rag import DocumentIndex
from assay.stats.tolerance import paired_proportion_tolerance

__all__ = [
    "FUSION_ALPHA",
    "RANKERS",
    "FusionVerdict",
    "doc_rankings",
    "fusion_tolerance",
    "fusion_verdict",
    "mean_ndcg",
    "ranker_ndcg",
]

#: one-sided level of the fusion verdict's query-sampling tolerance
FUSION_ALPHA = 0.05

#: the rankers compared, in the order reports list them
RANKERS = ("bm25", "dense", "hybrid")
#: chunks read per query to build a document ranking of ``_DOC_DEPTH`` documents
_CHUNK_DEPTH = 300
_DOC_DEPTH = 100


def doc_rankings(index: DocumentIndex, query: str) -> dict[str, list[str]]:
    """Per ranker, the documents in the order of their best chunk (first 100), as BEIR scores them."""
    out: dict[str, list[str]] = {}
    for mode in RANKERS:
        hits = index.search(query, k=_CHUNK_DEPTH, mode=mode, dedupe=False)  # type: ignore[arg-type]
        out[mode] = list(dict.fromkeys(h.doc_id for h in hits))[:_DOC_DEPTH]
    return out


def ranker_ndcg(
    index: DocumentIndex, queries: Sequence[tuple[str, Mapping[str, int]]], k: int = 10
) -> dict[str, list[float]]:
    """Per ranker, nDCG@k of every ``(query, qrels)`` pair, in order."""
    out: dict[str, list[float]] = {m: [] for m in RANKERS}
    for text, qrels in queries:
        for mode, ranking in doc_rankings(index, text).items():
            out[mode].append(ndcg_at_k(ranking, qrels, k))
    return out


@dataclass(frozen=True)
class FusionVerdict:
    """Whether hybrid reached the better channel (within ``tolerance``, the query-sampling noise of the
    per-query differences); ``worse``/``better`` count queries against that channel."""

    ok: bool
    hybrid: float
    best: str
    best_value: float
    worse: int | None = None
    better: int | None = None
    tolerance: float = 0.0

    @property
    def margin(self) -> float:
        return self.hybrid - self.best_value

    def text(self) -> str:
        within = self.ok and self.margin < 0
        head = (
            f"hybrid nDCG@10 {self.hybrid:.4f} {'>=' if self.margin >= 0 else '<'} {self.best} alone "
            f"{self.best_value:.4f} ({self.margin:+.4f}"
            + (f", within the query noise {self.tolerance:.4f})" if within else ")")
        )
        if self.worse is not None and self.better is not None:
            head += f"; hybrid worse on {_queries(self.worse)}, better on {self.better}"
        return head + ("" if self.ok else ": FUSION BELOW ITS BETTER CHANNEL")


def _queries(n: int) -> str:
    return f"{n} query" if n == 1 else f"{n} queries"


def fusion_tolerance(per_query: Mapping[str, Sequence[float]], best: str) -> float:
    """How far below ``best`` hybrid's mean nDCG@10 may fall by query sampling alone (0 with no queries)."""
    hybrid, channel = list(per_query["hybrid"]), list(per_query[best])
    if not hybrid:
        return 0.0
    return paired_proportion_tolerance(channel, hybrid, FUSION_ALPHA)


def fusion_verdict(
    ndcg: Mapping[str, float],
    per_query: Mapping[str, Sequence[float]] | None = None,
    tolerance: float | None = None,
) -> FusionVerdict:
    """Hybrid must not be below the better of BM25 and dense (means of nDCG@10 over the same queries) by
    more than the query-sampling tolerance (:func:`fusion_tolerance` of ``per_query``, or ``tolerance`` as
    recorded from it; 0 when neither is known, so the rule is then strict). Any shortfall is stated.
    ``per_query`` (ranker -> nDCG per query) also adds how many queries hybrid lost and won.
    """
    best = max(("bm25", "dense"), key=lambda m: (ndcg[m], m == "bm25"))
    worse = better = None
    if per_query is not None:
        pairs = list(zip(per_query["hybrid"], per_query[best], strict=True))
        worse = sum(1 for h, b in pairs if h < b)
        better = sum(1 for h, b in pairs if h > b)
        tolerance = fusion_tolerance(per_query, best)
    tol = float(tolerance or 0.0)
    ok = ndcg["hybrid"] >= ndcg[best] - tol - 1e-12
    return FusionVerdict(ok, ndcg["hybrid"], best, ndcg[best], worse, better, tol)


def mean_ndcg(per_query: Mapping[str, Sequence[float]]) -> dict[str, float]:
    """Per ranker, the mean of its per-query values (0 with no queries)."""
    return {m: statistics.fmean(v) if v else 0.0 for m, v in per_query.items()}
