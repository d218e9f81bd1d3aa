"""semantic_wins@5 / grep_wins@5 count queries, not attempts: the same run at 3 iterations counts the same."""

from __future__ import annotations

from datetime import UTC, datetime

from assay.evals.retrieval._code import CodeRetrievalBenchmark
from assay.runs.records import Attempt, Status


def _attempts(iterations: int) -> list[Attempt]:
    out = []
    for it in range(iterations):
        for qid, sem, grep in (("q/a", 1.0, 0.0), ("q/b", 0.0, 1.0), ("q/c", 1.0, 1.0)):
            out.append(
                Attempt(
                    case_id=qid,
                    iteration=it,
                    category="query",
                    status=Status.PASS,
                    metrics={"file_recall@5": sem, "grep_file_recall@5": grep},
                    started_at=datetime.now(UTC),
                )
            )
    return out


def test_wins_do_not_grow_with_iterations() -> None:
    bench = CodeRetrievalBenchmark({"component": "code"})
    one, three = bench.run_metrics(_attempts(1)), bench.run_metrics(_attempts(3))
    for m in (one, three):
        assert m["semantic_wins@5"].value == 1 and m["grep_wins@5"].value == 1
        assert m["semantic_wins@5"].n == 3 and m["semantic_wins@5"].kind == "count"
