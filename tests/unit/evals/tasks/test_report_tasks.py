"""The one place a tasks run's counts are made: passed, verified, unverified changes, judged, quality."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from assay.evals.tasks._judge import DIMENSIONS, TaskGrade, TasksJudgement
from assay.evals.tasks._report import summarize, summary_metrics
from assay.runs.records import Attempt, Status

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _att(case: str, status: Status, it: int = 0, **details: Any) -> Attempt:
    return Attempt(case_id=case, iteration=it, status=status, started_at=T0, elapsed_s=2.0, details=details)


def _judgement(*grades: tuple[str, int | None]) -> TasksJudgement:
    j = TasksJudgement(judge_model="m")
    for case, score in grades:
        scores = None if score is None else dict.fromkeys(DIMENSIONS, score)
        j.grades.append(TaskGrade(task_id=case, scores=scores, unjudged_reason=None if scores else "x"))
        j.attempts[f"{case}#0"] = T0.isoformat()
    return j


def test_counts_over_the_attempts_and_the_grades() -> None:
    attempts = [
        _att("fix", Status.PASS, kind="coding", verified=True, edited=True),
        _att("claim", Status.FAIL, kind="coding", verified=False, edited=True),  # an unverified change
        _att("idle", Status.FAIL, kind="coding", verified=False, edited=False),  # nothing changed
        _att("ask", Status.PASS, kind="question"),
        _att("down", Status.INFRA_ERROR, kind="coding"),
        _att("later", Status.SKIPPED, kind="question"),  # waiting for the judge: not measured yet
    ]
    s = summarize(attempts, _judgement(("fix", 5), ("claim", 2), ("idle", None), ("ask", 4)), iterations=1)
    assert (s.measured, s.passed, s.not_measured) == (4, 2, 2)
    assert (s.coding, s.verified, s.unverified) == (3, 1, 1)
    assert (s.judged, s.unjudged, s.quality_ok) == (3, 1, 2)  # unjudged counts, and fails quality
    assert s.quality_mean == round((5 + 2 + 4) / 3, 4)
    m = summary_metrics(s, judged=True)
    assert m["quality_failed"].value == 2 and m["unverified"].value == 1


def test_a_grade_of_an_earlier_attempt_is_not_this_attempts() -> None:
    rerun = _att("fix", Status.PASS, kind="coding", verified=True, edited=True)
    rerun = rerun.model_copy(update={"started_at": datetime(2026, 1, 2, tzinfo=UTC)})  # resumed later
    s = summarize([rerun], _judgement(("fix", 5)), iterations=1)
    assert s.judged == 0 and s.unjudged == 1


def test_before_the_judge_there_is_no_quality_and_per_pass_values() -> None:
    attempts = [_att("c", Status.FAIL, it=i, kind="coding", verified=False, edited=True) for i in range(2)]
    s = summarize(attempts, None, iterations=2)
    m = summary_metrics(s, judged=False)
    assert set(m) == {"unverified"} and m["unverified"].value == 1.0  # 2 over 2 passes of the suite
