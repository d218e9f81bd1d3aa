"""The tasks judge's batched call with the scripted provider: what it reads, how its answer is parsed, and
what happens to a task with no usable grade."""

from __future__ import annotations

import json
from typing import Any

import pytest

from assay.errors import InfraError
from assay.evals.tasks._judge import (
    DIMENSIONS,
    TasksJudge,
    TaskView,
    answer_schema,
    judge_messages,
    parse_grades,
    project_text,
)
from assay.models.scripted import ScriptedModel

PROJECT = project_text(
    {"calc.py": "def add(a, b):\n    return a - b\n", "tests/test_calc.py": "def test(): ..."}
)


def _views() -> list[TaskView]:
    return [
        TaskView(
            task_id="fix-add",
            request="Fix add",
            answer="Fixed; 1 passed",
            diff="-    return a - b\n+    return a + b",
            setup_changes="planted tests/test_red.py",
            record=["$ pytest -q -> exit 0 (passed 1)"],
            checks_ran=["tests_pass", "unchanged", "after_answer"],
        ),
        TaskView(task_id="explain", request="What does add do?", answer="It subtracts."),
    ]


def _entry(task: str, score: Any) -> dict[str, Any]:
    return {"task": task, **dict.fromkeys(DIMENSIONS, score), "note": "n"}


def _reply(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"text": json.dumps({"tasks": list(entries)})}


async def test_one_call_reads_the_project_once_then_every_task_and_never_a_verdict() -> None:
    model = ScriptedModel({"replies": [_reply(_entry("fix-add", 4), _entry("explain", 2))]})
    out = await TasksJudge(model).grade(PROJECT, _views())
    assert out.calls == 1 and len(model.calls) == 1
    user = model.calls[0]["messages"][1].content
    assert user.count("# The project as given") == 1 and user.count("def add(a, b)") == 1
    assert user.index("## Task fix-add") < user.index("## Task explain")
    assert "planted tests/test_red.py" in user and "+    return a + b" in user
    assert "Checks that ran in code: tests_pass, unchanged, after_answer" in user
    for word in ("PASS", "FAIL", "passed the checks"):
        assert word not in user
    assert out.grades["fix-add"].scores == dict.fromkeys(DIMENSIONS, 4)
    assert out.grades["fix-add"].quality_ok and not out.grades["explain"].quality_ok


async def test_an_unusable_answer_is_sent_back_and_a_later_usable_one_kept() -> None:
    model = ScriptedModel(
        {"replies": [{"text": "Both look fine!"}, _reply(_entry("fix-add", 5), _entry("explain", 3))]}
    )
    out = await TasksJudge(model).grade(PROJECT, _views())
    assert out.calls == 2 and out.error is None
    retry = model.calls[1]["messages"][-1].content
    assert "not usable" in retry and "no JSON object" in retry
    assert out.grades["explain"].scores == dict.fromkeys(DIMENSIONS, 3)


async def test_a_task_with_no_usable_grade_is_unjudged_and_fails_the_quality_checks() -> None:
    bad = _reply(_entry("fix-add", 4), _entry("explain", 9))  # 9 is out of range
    model = ScriptedModel({"replies": [bad, bad, bad]})
    out = await TasksJudge(model, retries=2).grade(PROJECT, _views())
    assert out.calls == 3
    assert out.grades["fix-add"].judged and out.grades["fix-add"].quality == 4
    explain = out.grades["explain"]
    assert not explain.judged and explain.quality is None and not explain.quality_ok
    assert "out of range" in (explain.unjudged_reason or "")


async def test_a_refused_request_leaves_every_task_unjudged_and_an_outage_raises() -> None:
    refused = ScriptedModel({"replies": [{"error": "subject"}]})
    out = await TasksJudge(refused).grade(PROJECT, _views())
    assert out.calls == 0 and all(not g.judged for g in out.grades.values())
    assert "refused" in (out.grades["fix-add"].unjudged_reason or "")
    down = ScriptedModel({"replies": [{"error": "connect"}]})
    with pytest.raises(InfraError):
        await TasksJudge(down).grade(PROJECT, _views())


async def test_constrained_decoding_holds_each_position_to_its_task() -> None:
    model = ScriptedModel({"replies": [_reply(_entry("fix-add", 3), _entry("explain", 3))]})
    await TasksJudge(model, constrained=True).grade(PROJECT, _views())
    fmt = model.calls[0]["options"]["response_format"]
    items = fmt["schema"]["properties"]["tasks"]["prefixItems"]
    assert [i["properties"]["task"]["const"] for i in items] == ["fix-add", "explain"]
    assert fmt["schema"] == answer_schema(["fix-add", "explain"])


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ({"tasks": [_entry("fix-add", 3), _entry("fix-add", 3)]}, "graded twice"),
        ({"tasks": [_entry("other", 3)]}, "unknown task"),
        ({"tasks": [_entry("fix-add", 2.5)]}, "not a whole number"),
        ({"tasks": [_entry("fix-add", 3)]}, "missing task(s) explain"),
        ('{"tasks": [{"task": "fix-add", "note": "a\nb"}]}', "not valid JSON"),
    ],
)
def test_parse_names_what_is_wrong(answer: dict[str, Any] | str, problem: str) -> None:
    text = answer if isinstance(answer, str) else json.dumps(answer)
    _, problems = parse_grades(text, ["fix-add", "explain"])
    assert any(problem in p for p in problems), problems


def test_parse_tolerates_prose_fences_and_numbers_as_text() -> None:
    entry = {**_entry("fix-add", "4"), "claims": 2.0}
    text = "Here you go:\n```json\n" + json.dumps({"tasks": [entry]}) + "\n```"
    grades, problems = parse_grades(text, ["fix-add"])
    assert problems == [] and grades["fix-add"].scores == {**dict.fromkeys(DIMENSIONS, 4), "claims": 2}


def test_a_budget_cuts_each_task_shorter_to_fit() -> None:
    views = [TaskView(task_id=f"t{i}", request="r", answer="a" * 5000, diff="d" * 5000) for i in range(6)]
    full = judge_messages(PROJECT, views)[1].content
    cut = judge_messages(PROJECT, views, budget_chars=12000)[1].content
    assert len(full) > 20000 and len(cut) < 12000
    assert all(f"## Task t{i}" in cut for i in range(6)) and "characters cut" in cut


def test_a_question_passes_on_its_grade_only_when_its_code_checks_held() -> None:
    from datetime import UTC, datetime

    from assay.evals.tasks._judge import TaskGrade
    from assay.evals.tasks._judge_run import _question_verdict
    from assay.runs.records import Attempt, Status

    good = TaskGrade(task_id="q", scores=dict.fromkeys(DIMENSIONS, 5))
    held = {"kind": "question", "answer": "a", "checks_passed": True}
    att = Attempt(case_id="q", status=Status.SKIPPED, started_at=datetime.now(UTC), details=held)
    assert _question_verdict(att, good).status is Status.PASS
    broke = {**held, "checks_passed": False, "reason": "after_answer: call 3 outside the request"}
    assert _question_verdict(att.model_copy(update={"details": broke}), good).status is Status.FAIL
    unjudged = _question_verdict(att, TaskGrade(task_id="q", unjudged_reason="no grade"))
    assert unjudged.status is Status.FAIL and unjudged.details["reason"] == "unjudged: no grade"
