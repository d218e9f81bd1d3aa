"""Scale tiers: BEIR parsing, --scale-tiers validation, the three rankers with the fusion verdict, speed fields."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.embed import get_embedder
from assay.errors import ConfigError
from assay.evals.retrieval import RetrievalBenchmark
from assay.evals.retrieval._rag import RagRetrievalBenchmark, default_eval_dir
from assay.evals.retrieval._rag_data import load_beir, load_dataset, verify_labels
from assay.evals.retrieval._rag_fusion import RANKERS, fusion_verdict, mean_ndcg, ranker_ndcg
from assay.evals.retrieval._rag_scale import (
    beir_corpus,
    labelled_corpus,
    make_distractors,
    measure_tier,
    parse_tiers,
    render_scale,
    tier_verdict,
)
from assay.exec import RunOptions, run_benchmark
from assay.rag import DocumentIndex
from assay.runs import read_journal

EVAL = default_eval_dir()


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")


def _write_beir(root: Path) -> Path:
    """A BEIR folder as the archives lay it out: titles, a header row, graded and zero qrels, two splits."""
    root.mkdir(parents=True)
    docs = [
        {"_id": "d1", "title": "Tides", "text": "Spring tides at Brannock rise 4.2 metres."},
        {"_id": "d2", "title": "", "text": "Neap tides are the smallest of the month."},
        {"_id": "d3", "title": "Ferries", "text": "The Sellen ferry carries 300 passengers."},
        {"_id": "d4", "title": "Lanterns", "text": "Lighthouse lanterns were lit with paraffin."},
    ]
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    queries = [{"_id": "q1", "text": "how high do spring tides rise"}, {"_id": "q2", "text": "ferry size"},
               {"_id": "q3", "text": "a training query"}]  # fmt: skip
    (root / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries) + "\n\n")
    (root / "qrels").mkdir()
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t1\nq2\td3\t1\nq2\td4\t0\n"
    )
    (root / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\nq3\td4\t1\n")
    return root


def test_the_beir_parser_reads_corpus_queries_and_graded_qrels(tmp_path: Path) -> None:
    root = _write_beir(tmp_path / "beir")
    beir = load_beir(root)
    assert beir.split == "test"  # test is preferred over train
    assert beir.corpus["d1"] == ("Tides", "Spring tides at Brannock rise 4.2 metres.")
    assert beir.corpus["d2"] == ("", "Neap tides are the smallest of the month.")
    assert beir.queries["q2"] == "ferry size" and len(beir.queries) == 3
    assert beir.qrels == {"q1": {"d1": 2, "d2": 1}, "q2": {"d3": 1, "d4": 0}}
    assert load_beir(root, "train").qrels == {"q3": {"d4": 1}}
    with pytest.raises(ConfigError, match=r"no qrels/dev\.tsv"):
        load_beir(root, "dev")
    (root / "qrels" / "test.tsv").write_text("q1\td1\tvery\n")
    with pytest.raises(ConfigError, match=r"test\.tsv:1: score 'very' is not a number"):
        load_beir(root)
    # a tier's BEIR corpus puts the judged documents first (grade 0 is not relevant), then corpus order
    (root / "qrels" / "test.tsv").write_text("q2\td3\t1\nq2\td4\t0\nq1\td2\t1\n")
    corpus = beir_corpus("tiny", load_beir(root))
    assert [d for d, _ in corpus.texts] == ["d2", "d3", "d1", "d4"]
    assert corpus.texts[2][1] == "Tides\n\nSpring tides at Brannock rise 4.2 metres."


def test_scale_tiers_5000_and_10000_are_accepted_and_bad_tiers_refused() -> None:
    bench = RagRetrievalBenchmark({"scale_tiers": "5000,10000"})
    cases = [c.id for c in bench.load_suite("pr").cases if c.category == "scale"]
    assert cases == ["scale/5000", "scale/10000"]
    assert parse_tiers("10, 100,1000") == [10, 100, 1000]
    for bad, why in (("ten", "comma-separated"), ("0", "between 1 and"), ("100001", "between 1 and"),
                     ("-5", "between 1 and"), ("5000,5000", "repeated")):  # fmt: skip
        with pytest.raises(ConfigError, match=rf"--scale-tiers '{bad}': .*{why}"):
            RagRetrievalBenchmark({"scale_tiers": bad}).load_suite("pr")


def test_the_cli_names_the_flag_of_a_bad_tier(capsys: pytest.CaptureFixture[str]) -> None:
    from assay.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["eval", "retrieval", "--component", "rag", "--scale-tiers", "5000,x"])
    assert exc.value.code == 1 and "error: --scale-tiers '5000,x': expected" in capsys.readouterr().err


def _labelled():
    data = load_dataset(EVAL / "pr" / "dataset.json")
    verify_labels(data)
    return labelled_corpus(data)


def test_a_tier_reports_three_rankers_the_fusion_verdict_and_real_speed_figures(tmp_path: Path) -> None:
    metrics, details = measure_tier(120, _labelled(), get_embedder("hash"), tmp_path / "work")
    p = "scale@120/"
    ndcg = {m: metrics[f"{p}{m}_ndcg@10"] for m in RANKERS}
    assert all(0.3 < x <= 1.0 for x in ndcg.values()), ndcg  # every ranker finds the labelled documents
    assert metrics[p + "documents"] == 120 and metrics[p + "generated_documents"] == 112
    assert metrics[p + "queries"] == 51 and metrics[p + "chunks"] > 120
    # timings and memory are measured, not filled in: the parts add up and the sizes are plausible
    assert 0 < metrics[p + "embed_s"] < metrics[p + "index_s"] < metrics[p + "wall_s"]
    assert 0 < metrics[p + "chunks_per_s"] < metrics[p + "embedder_chunks_per_s"]
    assert metrics[p + "chunks_per_s"] == pytest.approx(metrics[p + "chunks"] / metrics[p + "index_s"])
    assert 50 < metrics[p + "peak_rss_mb"] < 64_000 and metrics[p + "index_mb"] > 0
    assert 0 < metrics[p + "sdk_p50_ms"] <= metrics[p + "sdk_p95_ms"]
    assert details["corpus_text"] == "8 labelled documents + 112 generated distractors; 51 queries"
    verdict = fusion_verdict(ndcg)
    assert verdict.ok == (ndcg["hybrid"] >= max(ndcg["bm25"], ndcg["dense"]))
    assert details["fusion"].startswith(verdict.text().split(";")[0])
    report = "\n".join(render_scale(metrics, {"scale/120": str(details["corpus_text"])}))
    assert "- tier 120: 8 labelled documents + 112 generated distractors; 51 queries" in report
    row = next(x for x in report.splitlines() if x.startswith("| 120 | 51 |"))
    assert f"{ndcg['bm25']:.4f} | {ndcg['dense']:.4f} | {ndcg['hybrid']:.4f}" in row
    assert row.endswith("| ok |") == verdict.ok


def test_the_fusion_verdict_catches_a_fusion_below_its_better_channel(tmp_path: Path) -> None:
    corpus = _labelled()
    paths = [p for p, _ in corpus.files] + make_distractors(tmp_path / "d", 60)
    queries = [(q.text, q.qrels) for q in corpus.queries]
    idx = DocumentIndex(get_embedder("hash"), cache_dir=None)
    idx.index_documents(paths, [i for _, i in corpus.files] + [p.stem for p in paths[len(corpus.files) :]])
    results = {}
    # alpha 1 fuses away BM25 (hybrid = dense); alpha 0 fuses away dense (hybrid = BM25)
    for alpha in (1.0, 0.0):
        idx.alpha = alpha
        per_query = ranker_ndcg(idx, queries)
        results[alpha] = fusion_verdict(mean_ndcg(per_query), per_query)
    broken, quiet = results[1.0], results[0.0]
    assert broken.ok is False and broken.best == "bm25" and broken.margin < 0 and broken.worse > 0
    assert (
        "FUSION BELOW ITS BETTER CHANNEL" in broken.text()
        and f"worse on {broken.worse} quer" in broken.text()
    )
    assert quiet.ok is True and quiet.margin == 0 and quiet.worse == 0 and "BELOW" not in quiet.text()
    # a scale tier carrying a fusion below its better channel fails, naming it; a fast one above passes
    base = {"scale@9/sdk_p95_ms": 3.0, "scale@9/query_embed_p50_ms": 1.0, "scale@9/bm25_ndcg@10": 0.80,
            "scale@9/dense_ndcg@10": 0.70}  # fmt: skip
    passed, rule = tier_verdict(9, {**base, "scale@9/hybrid_ndcg@10": 0.79})
    assert passed is False and "hybrid nDCG@10 0.7900 < bm25 alone 0.8000 (-0.0100)" in rule
    assert tier_verdict(9, {**base, "scale@9/hybrid_ndcg@10": 0.80}) == (
        True,
        "search p95 beyond the query embedding <= 50 ms (measured 2.0 ms); "
        "hybrid nDCG@10 0.8000 >= bm25 alone 0.8000 (+0.0000)",
    )


def test_tiers_run_on_the_runs_beir_corpus_and_say_which(tmp_path: Path) -> None:
    result = run_benchmark(
        RetrievalBenchmark,
        {"component": "rag", "dataset": f"beir:{EVAL / 'beir-mini'}", "scale_tiers": "12,50"},
        RunOptions(out=tmp_path / "run", command_line=["test"]),
    )
    m = result.scorecard.summary.metrics
    assert m["scale@12/documents"].value == 12 and m["scale@12/generated_documents"].value == 0
    assert m["scale@50/documents"].value == 50 and m["scale@50/generated_documents"].value == 10
    assert 0 < m["scale@12/queries"].value <= m["scale@50/queries"].value == 24
    report = (result.run_dir / "report.md").read_text()
    assert "- tier 12: 12 documents of BEIR corpus 'beir'; " in report
    assert "- tier 50: 40 documents of BEIR corpus 'beir' + 10 generated distractors; 24 queries" in report
    assert "Fusion: hybrid nDCG@10 " in report and "| bm25 only |" in report
    rules = {a.case_id: a.details["rule"] for a in read_journal(result.run_dir / "results.jsonl")
             if a.case_id.startswith("scale/")}  # fmt: skip
    assert set(rules) == {"scale/12", "scale/50"} and all("hybrid nDCG@10" in r for r in rules.values())


def test_the_fusion_verdict_stays_quiet_on_one_query_and_catches_a_shortfall_over_many() -> None:
    # 51 queries, the better channel (BM25) at 0.9 each: hybrid losing 0.35 on ONE query is query noise
    # (the shortfall the 1,000-document hashing tier showed: 0.007), losing 0.05 on every query is not
    bm25, dense = [0.9] * 51, [0.6] * 51
    one_query = {"bm25": bm25, "dense": dense, "hybrid": [0.55] + [0.9] * 50}
    everywhere = {"bm25": bm25, "dense": dense, "hybrid": [0.85] * 51}
    quiet = fusion_verdict(mean_ndcg(one_query), one_query)
    assert quiet.ok and quiet.margin == pytest.approx(-0.35 / 51) and quiet.worse == 1
    assert 0 < -quiet.margin <= quiet.tolerance and "within the query noise" in quiet.text()
    caught = fusion_verdict(mean_ndcg(everywhere), everywhere)
    assert not caught.ok and caught.worse == 51 and "FUSION BELOW ITS BETTER CHANNEL" in caught.text()
    # the tier re-reads the recorded tolerance: the same verdict from the metrics alone
    base = {"scale@9/sdk_p95_ms": 3.0, "scale@9/query_embed_p50_ms": 1.0}
    for per_query, verdict in ((one_query, quiet), (everywhere, caught)):
        recorded = {f"scale@9/{m}_ndcg@10": x for m, x in mean_ndcg(per_query).items()}
        recorded["scale@9/fusion_tolerance"] = verdict.tolerance
        assert tier_verdict(9, {**base, **recorded})[0] is verdict.ok
