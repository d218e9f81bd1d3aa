"""BEIR-format datasets: loading, the standard IR metrics (cross-checked with trec_eval) and fusion."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from assay.embed import get_embedder
from assay.errors import ConfigError
from assay.evals.retrieval import RetrievalBenchmark
from assay.evals.retrieval._rag import default_eval_dir
from assay.evals.retrieval._rag_data import load_beir
from assay.evals.retrieval._rag_score import mrr_at_k, ndcg_at_k, recall_at_k
from assay.exec import RunOptions, run_benchmark
from assay.rag import DocumentIndex

MINI = default_eval_dir() / "beir-mini"


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")


def _index(spec: str) -> tuple[DocumentIndex, object]:
    beir = load_beir(MINI)
    idx = DocumentIndex(get_embedder(spec), cache_dir=None)
    idx.index_texts([(d, f"{t}\n\n{x}") for d, (t, x) in beir.corpus.items()])
    return idx, beir


def _rankings(idx: DocumentIndex, beir, mode: str) -> dict[str, list[str]]:
    out = {}
    for qid in beir.qrels:
        hits = idx.search(beir.queries[qid], k=300, mode=mode, dedupe=False)
        out[qid] = list(dict.fromkeys(h.doc_id for h in hits))[:100]
    return out


def test_metrics_match_trec_eval() -> None:
    import pytrec_eval  # pytrec-eval-terrier, in the 'test' extra

    idx, beir = _index("hash")
    qrels = {q: dict(r) for q, r in beir.qrels.items()}
    for mode in ("hybrid", "dense", "bm25"):
        ranks = _rankings(idx, beir, mode)
        run = {q: {d: float(1000 - i) for i, d in enumerate(r)} for q, r in ranks.items()}
        run10 = {q: {d: float(1000 - i) for i, d in enumerate(r[:10])} for q, r in ranks.items()}
        full = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100"}).evaluate(run)
        top10 = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run10)
        for q, r in ranks.items():
            assert ndcg_at_k(r, qrels[q], 10) == pytest.approx(full[q]["ndcg_cut_10"], abs=1e-6), (mode, q)
            assert recall_at_k(r, qrels[q], 100) == pytest.approx(full[q]["recall_100"], abs=1e-6), (mode, q)
            assert mrr_at_k(r, qrels[q], 10) == pytest.approx(top10[q]["recip_rank"], abs=1e-6), (mode, q)


@pytest.mark.parametrize("spec", ["hash", "local"])
def test_hybrid_at_least_as_good_as_the_better_single_ranker(spec: str) -> None:
    idx, beir = _index(spec)
    ndcg = {
        mode: statistics.fmean(ndcg_at_k(r, beir.qrels[q], 10) for q, r in _rankings(idx, beir, mode).items())
        for mode in ("hybrid", "dense", "bm25")
    }
    assert ndcg["hybrid"] >= max(ndcg["dense"], ndcg["bm25"]), ndcg
    assert ndcg["bm25"] > 0.5 and ndcg["dense"] > 0.5  # both rankers carry signal on this set


def test_beir_dataset_through_the_benchmark(tmp_path: Path) -> None:
    result = run_benchmark(
        RetrievalBenchmark,
        {"component": "rag", "dataset": f"beir:{MINI}"},
        RunOptions(out=tmp_path / "run", command_line=["test"]),
    )
    m = result.scorecard.summary.metrics
    assert result.exit_code == 0 and result.scorecard.suite == "pr-beir"
    assert len(result.scorecard.cases) == 24
    for name in ("ndcg@10", "recall@100", "mrr@10", "dense_ndcg@10", "bm25_ndcg@10"):
        assert 0.0 <= m[name].value <= 1.0
    assert m["ndcg@10"].gated and m["ndcg@10"].value >= max(m["dense_ndcg@10"].value, m["bm25_ndcg@10"].value)
    assert "### BEIR metrics" in (result.run_dir / "report.md").read_text()


def test_broken_beir_folders_are_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"missing corpus\.jsonl"):
        load_beir(tmp_path)
    (tmp_path / "corpus.jsonl").write_text('{"_id": "d1", "text": "x"}\nnot json\n')
    (tmp_path / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n')
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    with pytest.raises(ConfigError, match=r"corpus\.jsonl:2: invalid JSON"):
        load_beir(tmp_path)
    (tmp_path / "corpus.jsonl").write_text('{"_id": "d1", "text": "x"}\n')
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td9\t1\n")
    with pytest.raises(ConfigError, match=r"test\.tsv:2: unknown corpus id 'd9'"):
        load_beir(tmp_path)
