"""The tasks judge's batched calls with the scripted provider: what it reads (each task's scope files, a
question's points, reference and wrong answers never cut), how batches are split to fit, how its answer is
parsed (points with quotes checked against the answer), and what happens to a task with no usable grade."""

from __future__ import annotations

import json
from typing import Any

import pytest

from assay.errors import InfraError
from assay.evals.tasks._judge import (
    DIMENSIONS,
    TaskGrade,
    TasksJudge,
    TaskView,
    answer_schema,
    parse_grades,
    project_text,
    quoted_in,
)
from assay.evals.tasks._judge import JUDGE_SYSTEM_PROMPT as SYSTEM
from assay.evals.tasks._judge_pack import pack
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
        TaskView(
            task_id="explain",
            request="What does add do?",
            answer="It subtracts: add returns a - b.",
            files={"calc.py": "def add(a, b):\n    return a - b\n"},
            points=["add returns a - b", "that is a bug"],
            reference_answer="add returns a - b where it should return a + b: a bug.",
            wrong_answers=["add adds two numbers"],
        ),
    ]


def _points(*marks: tuple[bool, str]) -> list[dict[str, Any]]:
    return [{"established": e, "quote": q} for e, q in marks]


def _entry(task: str, score: Any, points: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    if points is None and task == "explain":
        points = _points((True, "add returns a - b"), (False, ""))
    return {
        "task": task,
        **({"points": points} if points is not None else {}),
        **dict.fromkeys(DIMENSIONS, score),
        "note": "n",
    }


def _reply(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"text": json.dumps({"tasks": list(entries)})}


async def test_one_call_reads_the_project_once_then_every_task_and_never_a_verdict() -> None:
    model = ScriptedModel({"replies": [_reply(_entry("fix-add", 4), _entry("explain", 2))]})
    out = await TasksJudge(model).grade(PROJECT, _views())
    assert out.calls == 1 and len(model.calls) == 1
    user = model.calls[0]["messages"][1].content
    assert user.count("# The project as given") == 1 and user.count("def add(a, b)") == 2  # + explain's scope
    assert "--- calc.py (32 characters)" in user and "Its scope files (shown above): calc.py" in user
    assert "1. add returns a - b\n2. that is a bug" in user and "- add adds two numbers" in user
    assert user.index("## Task fix-add") < user.index("## Task explain")
    assert "planted tests/test_red.py" in user and "+    return a + b" in user
    assert "Checks that ran in code: tests_pass, unchanged, after_answer" in user
    for word in ("PASS", "FAIL", "passed the checks"):
        assert word not in user
    assert out.grades["fix-add"].scores == dict.fromkeys(DIMENSIONS, 4)
    assert out.grades["fix-add"].quality_ok and not out.grades["explain"].quality_ok
    explain = out.grades["explain"]
    assert explain.points is not None and [p.holds for p in explain.points] == [True, False]
    assert explain.shown is not None and explain.shown.files[0].model_dump() == {
        "path": "calc.py",
        "chars": 32,
        "shown": 32,
    }


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
    assert fmt["schema"] == answer_schema(_views())
    assert "points" not in items[0]["properties"]
    points = items[1]["properties"]["points"]
    assert points["minItems"] == points["maxItems"] == 2 and items[1]["required"][:2] == ["task", "points"]


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


def _big_views(n: int) -> list[TaskView]:
    return [
        TaskView(
            task_id=f"q{i}",
            request="r",
            answer="the answer " * 100,
            files={f"mod{i}.py": "x = 1\n" * 400, "shared.py": "y = 2\n" * 300},
            points=[f"point {i}.{k}" for k in range(3)],
            reference_answer=f"reference answer {i} " * 20,
            wrong_answers=[f"wrong {i}.{k}" for k in range(2)],
        )
        for i in range(n)
    ]


def test_a_budget_splits_the_batch_and_never_cuts_a_question() -> None:
    views = _big_views(6)
    batches = pack("", views, 12000, SYSTEM)
    assert len(batches) > 1 and [v.task_id for b in batches for v in b.views] == [v.task_id for v in views]
    for b in batches:
        body = b.body()
        assert b.size(SYSTEM) <= 12000
        assert "characters cut" not in body and body.count("--- shared.py") == 1
        for v in b.views:
            assert all(p in body for p in v.points) and v.reference_answer in body and v.answer in body
            assert all(w in body for w in v.wrong_answers)
            assert b.shown[v.task_id].cut == [] and all(f.shown == f.chars for f in b.shown[v.task_id].files)
    assert len(pack("", views, None, SYSTEM)) == 1


def test_the_answer_room_splits_a_batch_too() -> None:
    views = _big_views(4)
    assert len(pack("", views, 10**6, SYSTEM)) == 1
    assert [len(b.views) for b in pack("", views, 10**6, SYSTEM, answer_chars=1500)] == [2, 2]


def test_a_task_too_big_alone_leaves_out_its_last_files_first_and_says_so() -> None:
    view = _big_views(1)[0]
    view.files["tests/test_mod0.py"] = "assert True\n" * 200
    (batch,) = pack("", [view], 9000, SYSTEM)
    body, shown = batch.body(), batch.shown["q0"]
    assert all(p in body for p in view.points) and view.reference_answer in body and view.answer in body
    assert any("left out tests/test_mod0.py" in c for c in shown.cut)
    test_file = next(f for f in shown.files if f.path == "tests/test_mod0.py")
    assert test_file.shown == 0 and test_file.chars == 2400
    assert "mod0.py" in body


async def test_a_batch_per_split_each_grade_says_its_batch() -> None:
    views = _big_views(3)
    batches = pack("", views, 9000, SYSTEM)
    replies = []
    for b in batches:
        entries = [_entry(v.task_id, 4, _points(*[(True, "the answer")] * 3)) for v in b.views]
        replies.append(_reply(*entries))
    model = ScriptedModel({"replies": replies})
    out = await TasksJudge(model, budget_chars=9000).grade("", views)
    assert out.batches == len(batches) == len(model.calls) > 1
    assert [g.shown.batch for g in out.grades.values() if g.shown] == [
        n for n, b in enumerate(batches, start=1) for _ in b.views
    ]
    assert all(g.points_ok for g in out.grades.values())


@pytest.mark.parametrize(
    ("quote", "found"),
    [
        ("add returns a - b", True),
        ("ADD  returns\n`a - b`", True),
        ("It subtracts ... a - b", True),
        ("add returns a + b", False),
        ("a - b ... It subtracts", False),
        ("", False),
    ],
)
def test_a_quote_must_really_be_in_the_answer(quote: str, found: bool) -> None:
    assert quoted_in(quote, "It subtracts: add returns a - b.") is found


def test_a_point_established_with_a_quote_not_in_the_answer_does_not_hold() -> None:
    views = _views()
    text = json.dumps(
        {
            "tasks": [
                _entry("fix-add", 5),
                _entry("explain", 5, _points((True, "add returns a - b"), (True, "a bug"))),
            ]
        }
    )
    grades, problems = parse_grades(text, views)
    assert problems == []
    explain = grades["explain"]
    assert explain.points is not None and explain.points[1].established and explain.points[1].quoted is False
    assert not explain.points_ok and "point 2: its quote is not in the answer" in explain.missed_points()[0]


def test_a_question_without_its_points_is_unusable() -> None:
    text = json.dumps({"tasks": [_entry("fix-add", 5), _entry("explain", 5, _points((True, "x")))]})
    _, problems = parse_grades(text, _views())
    assert any("give 2 points" in p for p in problems), problems


def _question(details: dict[str, Any] | None = None) -> Any:
    from datetime import UTC, datetime

    from assay.runs.records import Attempt, Status

    held = {"kind": "question", "answer": "add returns a - b", "checks_passed": True, **(details or {})}
    return Attempt(case_id="q", status=Status.SKIPPED, started_at=datetime.now(UTC), details=held)


def _grade(scores: int, *holds: bool) -> TaskGrade:
    from assay.evals.tasks._judge import PointGrade

    points = [
        PointGrade(point=f"p{k}", established=h, quote="q", quoted=h or None) for k, h in enumerate(holds)
    ]
    return TaskGrade(task_id="q", scores=dict.fromkeys(DIMENSIONS, scores), points=points)


def test_a_question_passes_on_its_points_not_its_quality() -> None:
    from assay.evals.tasks._judge_run import judged_verdict
    from assay.runs.records import Status

    assert (
        judged_verdict(_question(), _grade(1, True, True)).status is Status.PASS
    )  # low quality, every point
    missed = judged_verdict(_question(), _grade(5, True, False))  # top quality, a point missing
    assert missed.status is Status.FAIL and missed.details["reason"].startswith("point 2 not established")
    assert missed.details["grade"]["points"][1]["established"] is False


def test_a_question_passes_only_when_its_code_checks_held() -> None:
    from assay.evals.tasks._judge_run import _question_verdict
    from assay.runs.records import Status

    good = _grade(5, True)
    assert _question_verdict(_question(), good).status is Status.PASS
    broke = {"checks_passed": False, "reason": "after_answer: call 3 outside the request"}
    assert _question_verdict(_question(broke), good).status is Status.FAIL
    unjudged = _question_verdict(_question(), TaskGrade(task_id="q", unjudged_reason="no grade"))
    assert unjudged.status is Status.FAIL and unjudged.details["reason"] == "unjudged: no grade"
