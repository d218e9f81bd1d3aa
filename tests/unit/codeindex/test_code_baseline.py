"""The committed code-search baseline is what `--save-baseline` writes from a real `pr` run.

Regenerate it (never edit it by hand):
    rm -rf tests/fixtures/baselines/retrieval-code-pr
    assay eval retrieval --component code --suite pr --iterations 3 \
        --results-dir /tmp/code-baseline --save-baseline tests/fixtures/baselines/retrieval-code-pr
"""

from __future__ import annotations

from pathlib import Path

from assay.evals.retrieval._code import CodeRetrievalBenchmark
from assay.runs.records import RunMeta, Scorecard

BASELINE = Path(__file__).resolve().parents[2] / "fixtures" / "baselines" / "retrieval-code-pr"


def _load() -> tuple[Scorecard, RunMeta]:
    sc = Scorecard.model_validate_json((BASELINE / "scorecard.json").read_text())
    return sc, RunMeta.model_validate_json((BASELINE / "meta.json").read_text())


def test_baseline_holds_only_what_save_baseline_writes() -> None:
    assert sorted(p.name for p in BASELINE.iterdir()) == ["meta.json", "scorecard.json"]


def test_baseline_is_a_repeated_real_pr_run_of_the_current_suite() -> None:
    sc, meta = _load()
    assert sc.benchmark == meta.benchmark == "retrieval-code" and sc.suite == meta.suite == "pr"
    assert sc.complete and sc.iterations == meta.iterations >= 2
    assert meta.command_line[:3] == ["assay", "eval", "retrieval"] and "--save-baseline" in meta.command_line
    assert meta.options["run"]["iterations"] == meta.iterations and "benchmark" in meta.options
    assert meta.options["benchmark"].get("component") == "code"
    assert sc.config.embedder is not None and sc.config.embedder.startswith("all-MiniLM-L6-v2")
    # the suite it measured is the one a `pr` run loads today (same content hash)
    suite = CodeRetrievalBenchmark({"component": "code"}).load_suite("pr")
    assert sc.suite_version == suite.version
    assert {c.case_id for c in sc.cases} == set(suite.case_ids())


def test_baseline_shows_graded_queries_and_semantic_beating_both_baselines() -> None:
    sc, _ = _load()
    assert {c.category for c in sc.cases} == {"query", "incremental", "robustness"}
    queries = [c for c in sc.cases if c.category == "query"]
    assert all(c.measured == sc.iterations for c in queries)
    m = sc.summary.metrics
    for name in ("file_recall@5", "mrr"):  # ahead of git grep and of whole-file BM25
        assert m[name].value > max(m[f"grep_{name}"].value, m[f"bm25_{name}"].value), name
    assert m["file_recall@5"].value >= m["bm25_file_recall@5"].value + 0.05  # the goal on small repos
    assert m["file_recall@5"].gated and not m["grep_file_recall@5"].gated and not m["bm25_mrr"].gated
