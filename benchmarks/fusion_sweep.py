"""How hybrid search's fusion rule was chosen (issue 38): nDCG@10 of each rule on the man-pages set.

    python benchmarks/fusion_sweep.py                      # MiniLM and e5-small, dev and test (~10 min each)
    python benchmarks/fusion_sweep.py --embedders local --splits dev

For each embedder the set's 1,098 pages are indexed once; every query of each split is then ranked by BM25
alone, dense alone, reciprocal-rank fusion, and the convex fusion under both normalisations
(``assay.ranking.convex``: ``max`` and ``minmax``) at alpha 0.3 to 0.8. The rule in
``assay.ranking.HYBRID_NORMALIZE``/``HYBRID_ALPHA`` is the one with the best mean over the embedders on
``dev``; ``test`` is reported, never tuned on. Query vectors are computed once per query.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from build_man_pages import build as build_man_pages  # noqa: E402

from assay.embed import Embedder, embed_queries, get_embedder  # noqa: E402
from assay.evals.retrieval._rag_data import load_beir  # noqa: E402
from assay.evals.retrieval._rag_score import ndcg_at_k  # noqa: E402
from assay.rag import DocumentIndex  # noqa: E402

ALPHAS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


class _QueryMemo:
    """``inner`` with each query's vector computed once (the sweep ranks every query many times)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.name, self.dim, self.max_tokens = inner, inner.name, inner.dim, inner.max_tokens
        self._seen: dict[tuple[str, ...], np.ndarray] = {}

    @property
    def id(self) -> str:
        return self.inner.id

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        key = tuple(texts)
        if key not in self._seen:
            self._seen[key] = embed_queries(self.inner, texts)
        return self._seen[key]


def sweep(spec: str, folder: Path, splits: Sequence[str]) -> dict[str, dict[str, float]]:
    idx = DocumentIndex(_QueryMemo(get_embedder(spec)), cache_dir=None)
    idx.index_texts([(d, text) for d, (_, text) in load_beir(folder, splits[0]).corpus.items()])

    def ranking(query: str, mode: str) -> list[str]:
        hits = idx.search(query, k=300, mode=mode, dedupe=False)  # type: ignore[arg-type]
        return list(dict.fromkeys(h.doc_id for h in hits))[:100]

    rules = [("rrf", 0.0)] + [(n, a) for n in ("max", "minmax") for a in ALPHAS]
    out: dict[str, dict[str, float]] = {}
    for split in splits:
        beir = load_beir(folder, split)
        per: dict[str, list[float]] = {}
        for qid in sorted(beir.qrels):
            query, qrels = beir.queries[qid], beir.qrels[qid]
            for mode in ("bm25", "dense"):
                per.setdefault(mode, []).append(ndcg_at_k(ranking(query, mode), qrels, 10))
            for norm, alpha in rules:
                idx.fusion = "rrf" if norm == "rrf" else "convex"
                if norm != "rrf":
                    idx.normalize, idx.alpha = norm, alpha  # type: ignore[assignment]
                name = "rrf" if norm == "rrf" else f"{norm}@{alpha:g}"
                per.setdefault(name, []).append(ndcg_at_k(ranking(query, "hybrid"), qrels, 10))
        out[split] = {name: statistics.fmean(v) for name, v in per.items()}
        print(f"{spec} {split} ({len(beir.qrels)} queries): {out[split]}", file=sys.stderr, flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--embedders", default="local,e5-small")
    ap.add_argument("--splits", default="dev,test")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    folder, splits = build_man_pages(), args.splits.split(",")
    results = {spec: sweep(spec, folder, splits) for spec in args.embedders.split(",")}
    for split in splits:
        names = list(next(iter(results.values()))[split])
        print(f"\n{split}: nDCG@10 | " + " | ".join(results) + " | mean")
        for name in names:
            vals = [results[s][split][name] for s in results]
            print(f"{name} | " + " | ".join(f"{v:.4f}" for v in vals) + f" | {statistics.fmean(vals):.4f}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
