"""The one retry rule, as the tasks and sessions judges use it: both go through ``assay.judge.Judge``.

A parse failure then a good answer gives the answer (two calls, the failure sent back); ``1 + DEFAULT_RETRIES``
failures give no grade (unjudged / ERROR, never a zero); a refused request is not retried.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from assay.evals.sessions._judge import SessionsJudge, grade_messages
from assay.evals.tasks._judge import DIMENSIONS, TasksJudge, TaskView, project_text
from assay.judge import DEFAULT_RETRIES, Judge
from assay.models import ChatModel
from assay.models.scripted import ScriptedModel

GARBAGE = {"text": "Looks good to me."}
Grade = Callable[[ChatModel], Awaitable[tuple[Any, int, str | None]]]


async def _tasks(model: ChatModel) -> tuple[Any, int, str | None]:
    views = [TaskView(task_id="fix-add", request="Fix add", answer="Fixed.")]
    out = await TasksJudge(model).grade(project_text({"calc.py": "x = 1\n"}), views)
    grade = out.grades["fix-add"]
    return grade.scores, out.calls, grade.unjudged_reason


async def _sessions(model: ChatModel) -> tuple[Any, int, str | None]:
    messages = grade_messages("Why?", [], "Because.", "Because.", [])
    out = await SessionsJudge(model).grade(messages)
    return out.score, out.calls, out.error


GOOD = {
    "tasks": {"text": json.dumps({"tasks": [{"task": "fix-add", **dict.fromkeys(DIMENSIONS, 4)}]})},
    "sessions": {"text": json.dumps({"reason": "same", "claims_unseen_work": False, "score": 5})},
}
ANSWER = {"tasks": dict.fromkeys(DIMENSIONS, 4), "sessions": 5}
GRADERS: dict[str, Grade] = {"tasks": _tasks, "sessions": _sessions}


@pytest.mark.parametrize("bench", ["tasks", "sessions"])
async def test_a_parse_failure_then_a_good_answer_is_the_grade(bench: str) -> None:
    model = ScriptedModel([GARBAGE, GOOD[bench]])
    answer, calls, error = await GRADERS[bench](model)
    assert answer == ANSWER[bench] and calls == 2 and error is None
    resent = model.calls[1]["messages"]
    assert resent[-2].role == "assistant" and resent[-2].content == GARBAGE["text"]
    assert resent[-1].role == "user" and "not usable" in resent[-1].content


@pytest.mark.parametrize("bench", ["tasks", "sessions"])
async def test_failures_up_to_the_retries_leave_it_ungraded(bench: str) -> None:
    tries = 1 + DEFAULT_RETRIES
    model = ScriptedModel([GARBAGE] * tries + [GOOD[bench]])
    answer, calls, error = await GRADERS[bench](model)
    assert answer is None and calls == tries and len(model.calls) == tries
    assert error is not None and error.startswith(f"no usable grade after {tries} call(s): ")


@pytest.mark.parametrize("bench", ["tasks", "sessions"])
async def test_a_refused_request_is_not_retried(bench: str) -> None:
    model = ScriptedModel([{"error": "subject", "message": "context too long"}, GOOD[bench]])
    answer, calls, error = await GRADERS[bench](model)
    assert answer is None and calls == 0 and len(model.calls) == 1
    assert error is not None and "the judge model refused the request" in error


@pytest.mark.parametrize("bench", ["tasks", "sessions"])
def test_each_holds_the_shared_judge(bench: str) -> None:
    model = ScriptedModel([GOOD[bench]])
    judge = TasksJudge(model) if bench == "tasks" else SessionsJudge(model)
    assert isinstance(judge.judge, Judge) and judge.judge.retries == DEFAULT_RETRIES
