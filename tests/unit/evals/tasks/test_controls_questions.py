"""The question controls on the shipped question tasks with scripted judges: a judge that reads the points
passes them (every reference answer passes, every wrong answer fails); one that passes everything, or finds
nothing, fails on the right measure; a quote that is not in the answer never establishes a point."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from assay.cli._tasks import tasks_controls_command
from assay.evals.tasks._controls_questions import (
    QuestionControl,
    question_controls,
    question_order,
    questions_table,
    run_question_controls,
)
from assay.evals.tasks._judge import DIMENSIONS
from assay.evals.tasks._judge_run import read_project
from assay.evals.tasks._tasks_load import TOYBOX_DIR, default_tasks_dir, load_tasks
from assay.models.scripted import ScriptedModel

Mark = Callable[[QuestionControl], list[dict[str, Any]]]


@pytest.fixture(scope="module")
def controls() -> list[QuestionControl]:
    tasks_dir = default_tasks_dir()
    return question_controls(load_tasks(tasks_dir / "tasks.json").tasks, read_project(tasks_dir / TOYBOX_DIR))


def _faithful(c: QuestionControl) -> list[dict[str, Any]]:
    """Every point of a reference answer established (quoting it), none of a wrong answer's."""
    quote = c.view.answer[:60]
    return [{"established": c.role == "reference", "quote": quote if c.role == "reference" else ""}] * len(
        c.view.points
    )


def _lenient(c: QuestionControl) -> list[dict[str, Any]]:
    """Every point established, quoting the answer's own words, whatever it says."""
    return [{"established": True, "quote": c.view.answer[:60]}] * len(c.view.points)


def _invents(c: QuestionControl) -> list[dict[str, Any]]:
    """Every point established, quoting the reference answer: words a wrong answer never said."""
    return [{"established": True, "quote": c.view.reference_answer[:60]}] * len(c.view.points)


def _replies(controls: list[QuestionControl], mark: Mark, repeats: int) -> list[dict[str, Any]]:
    replies = []
    for r in range(repeats):
        entries = [
            {"task": cid, "points": mark(c), **dict.fromkeys(DIMENSIONS, 3)}
            for cid, c in question_order(controls, r)
        ]
        replies.append({"text": json.dumps({"tasks": entries})})
    return replies


def test_every_question_task_has_a_reference_and_two_wrong_answers(controls: list[QuestionControl]) -> None:
    by_task: dict[str, list[str]] = {}
    for c in controls:
        by_task.setdefault(c.task_id, []).append(c.label)
        assert c.view.points and c.view.files and c.view.reference_answer
    assert len(by_task) >= 7
    for labels in by_task.values():
        assert labels[0] == "PASS" and labels.count("FAIL") >= 2 and labels.count("PASS") == 1


def test_the_order_rotates_within_each_task_under_neutral_ids(controls: list[QuestionControl]) -> None:
    first, second = question_order(controls, 0), question_order(controls, 1)
    assert [cid for cid, _ in first] == [cid for cid, _ in second]
    assert [c.role for _, c in first] != [c.role for _, c in second]
    assert all(cid.rsplit("-", 1)[1].isdigit() for cid, _ in first)


async def test_a_judge_that_reads_the_points_passes(controls: list[QuestionControl]) -> None:
    model = ScriptedModel({"replies": _replies(controls, _faithful, 2)})
    result = await run_question_controls(model, "scripted", controls, 2)
    assert result.agreement == result.agreement_pass == result.agreement_fail == 1.0
    assert result.kappa == pytest.approx(1.0) and result.self_consistency == 1.0 and result.passed
    assert result.calls == 2 and result.unjudged == 0 and len(result.raw) == 2
    body = model.calls[0]["messages"][1].content
    assert all(c.view.reference_answer in body for c in controls)  # never cut
    assert "agreement 100%" in questions_table(result)


@pytest.mark.parametrize(("mark", "ok_pass", "ok_fail"), [(_lenient, 1.0, 0.0), (_invents, 1.0, 1.0)])
async def test_a_judge_that_passes_everything_fails_unless_its_quotes_are_invented(
    controls: list[QuestionControl], mark: Mark, ok_pass: float, ok_fail: float
) -> None:
    result = await run_question_controls(
        ScriptedModel({"replies": _replies(controls, mark, 1)}), "s", controls
    )
    assert result.agreement_pass == ok_pass and result.agreement_fail == ok_fail
    # an invented quote (the reference's words on a wrong answer) never establishes a point
    assert result.passed is (ok_fail == 1.0) and result.self_consistency is None


async def test_an_unusable_repeat_is_a_disagreement_and_not_consistent(
    controls: list[QuestionControl],
) -> None:
    good = _replies(controls, _faithful, 2)
    model = ScriptedModel({"replies": [good[0], *[{"text": "no idea"}] * 3]})
    result = await run_question_controls(model, "scripted", controls, 2)
    assert result.unjudged == len(controls) and result.agreement == 0.5
    assert result.self_consistency == 0.0 and not result.passed


def test_the_command_runs_the_question_controls_and_exits_by_them(
    controls: list[QuestionControl], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ASSAY_JUDGE_MODEL", raising=False)
    for mark, code in ((_faithful, 0), (_lenient, 2)):
        script = tmp_path / f"{mark.__name__}.yaml"
        script.write_text(yaml.safe_dump({"replies": _replies(controls, mark, 1)}))
        args = ["--judge-model", f"scripted/{script}", "--only", "questions", "--repeats", "1"]
        results = tmp_path / mark.__name__
        result = CliRunner().invoke(tasks_controls_command, [*args, "--results-dir", str(results)])
        assert result.exit_code == code, result.output
        assert "question controls: agreement" in result.output
        saved = json.loads(next(results.glob("controls-tasks-*/questions.json")).read_text())
        assert saved["passed"] is (code == 0) and len(saved["controls"]) == len(controls)
