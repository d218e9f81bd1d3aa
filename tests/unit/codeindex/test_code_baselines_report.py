"""The whole-file BM25 baseline, and the report's rows for both baselines with semantic minus the best."""

from __future__ import annotations

from datetime import UTC, datetime

from assay.evals.retrieval._code import QUALITY, CodeRetrievalBenchmark
from assay.evals.retrieval._code_bm25 import bm25_rank_files, bm25_rank_symbols
from assay.evals.retrieval._code_report import baseline_deltas, report_lines
from assay.runs.records import Attempt, CaseSummary, MetricValue, Scorecard, Status, Summary

FILES = {
    "src/app/pager.py": "def find_pager_executable(env):\n    return shutil.which(env.get('PAGER'))\n",
    "src/app/termui.py": "def echo_via_pager(text):\n    pager = find_pager_executable(os.environ)\n",
    "src/app/colors.py": "def style(text, fg=None):\n    return f'\\x1b[{fg}m{text}'\n",
    "docs/index.rst": "Welcome. The pager shows long text.\n",
}


def test_bm25_ranks_the_file_defining_the_queried_identifiers_first() -> None:
    ranked = bm25_rank_files(FILES, "findPagerExecutable ignores the PAGER variable: which pager?")
    assert ranked[0] == "src/app/pager.py"
    assert "src/app/colors.py" not in ranked  # nothing of the query in it: not ranked at all


def test_bm25_splits_dotted_and_snake_names_and_reads_the_path() -> None:
    assert bm25_rank_files(FILES, "app.colors")[0] == "src/app/colors.py"  # only the path says colors
    assert bm25_rank_files(FILES, "echo via")[0] == "src/app/termui.py"  # parts of echo_via_pager
    assert bm25_rank_files(FILES, "the a of") == []  # stop words only: no ranking


def test_bm25_symbols_rank_by_their_best_chunk() -> None:
    chunks = [
        ("src/app/termui.py", "echo_via_pager", FILES["src/app/termui.py"]),
        ("src/app/pager.py", "find_pager_executable", FILES["src/app/pager.py"]),
        ("src/app/pager.py", "", "import shutil\n"),  # no symbol: never ranked
    ]
    assert bm25_rank_symbols(chunks, "shutil which PAGER") == [
        ("src/app/pager.py", "find_pager_executable"),
        ("src/app/termui.py", "echo_via_pager"),
    ]


def _mv(v: float) -> MetricValue:
    return MetricValue(value=v, n=10, kind="proportion")


def test_deltas_are_against_the_best_baseline_per_metric() -> None:
    m = {"mrr": 0.70, "grep_mrr": 0.35, "bm25_mrr": 0.60, "file_recall@5": 0.90}
    m |= {"grep_file_recall@5": 0.92, "bm25_file_recall@5": 0.85, "function_recall@5": 0.5}
    d = baseline_deltas(m, ["mrr", "file_recall@5", "function_recall@5"])
    assert d["mrr"][0] == "BM25 (whole files)" and abs(d["mrr"][1] - 0.10) < 1e-9
    assert d["file_recall@5"][0] == "git grep" and abs(d["file_recall@5"][1] + 0.02) < 1e-9
    assert "function_recall@5" not in d  # no baseline measured it


def test_report_shows_both_baseline_columns_and_the_delta() -> None:
    metrics = {
        "file_recall@5": _mv(0.944),
        "grep_file_recall@5": _mv(0.583),
        "bm25_file_recall@5": _mv(0.889),
    }
    metrics |= {"mrr": _mv(0.675), "grep_mrr": _mv(0.352), "bm25_mrr": _mv(0.527)}
    case = CaseSummary.model_construct(
        case_id="q:x",
        category="query",
        metrics={"file_recall@5": 1.0, "grep_file_recall@5": 0.0, "bm25_file_recall@5": 1.0, "mrr": 1.0},
    )
    # only what the section reads: the summary's metrics and the cases
    sc = Scorecard.model_construct(summary=Summary.model_construct(metrics=metrics), cases=[case])
    text = report_lines(sc, QUALITY, {})
    assert "| metric | semantic (hybrid) | git grep | BM25 (whole files) | semantic − best baseline |" in text
    assert "| file_recall@5 | 0.944 | 0.583 | 0.889 | +0.055 (vs BM25 (whole files)) |" in text
    assert "| mrr | 0.675 | 0.352 | 0.527 | +0.148 (vs BM25 (whole files)) |" in text
    assert "| x | 1.00 | 0.00 | 1.00 | 1.00 | - | - |" in text  # per query: semantic, grep, BM25


def test_bm25_wins_count_queries_where_bm25_beats_semantic() -> None:
    rows = [("q:a", 1.0, 0.0, 0.0), ("q:b", 0.0, 0.0, 1.0), ("q:c", 0.5, 1.0, 1.0)]
    attempts = [
        Attempt(
            case_id=cid,
            iteration=it,
            category="query",
            status=Status.PASS,
            metrics={"file_recall@5": s, "grep_file_recall@5": g, "bm25_file_recall@5": b},
            started_at=datetime.now(UTC),
        )
        for it in range(2)
        for cid, s, g, b in rows
    ]
    m = CodeRetrievalBenchmark({"component": "code"}).run_metrics(attempts)
    assert m["bm25_wins@5"].value == 2 and m["bm25_wins@5"].n == 3 and m["bm25_wins@5"].direction == "lower"
    assert m["semantic_wins@5"].value == 1 and m["grep_wins@5"].value == 1
