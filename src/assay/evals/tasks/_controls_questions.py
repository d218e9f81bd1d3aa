"""The question controls of ``assay eval tasks controls``: does a question pass on its points as it should?

For every question task of ``tasks.json``, its reference answer (labelled PASS) and each of its plausible wrong
answers (labelled FAIL) are judged as an agent's answer would be: the task's scope files, request, points,
reference and wrong answers, under the judge's own batching. A control's verdict is the one a run gives
(:func:`~assay.evals.tasks._judge_run.judged_verdict`: PASS when every point is established with a quote found
in the answer); an unjudged one is ``ERROR`` (a disagreement). Controls get neutral ids (``<task>-<k>``), their
order within a task rotated each repeat, so no place is a tell.

Measured with the judge package's statistics (one implementation): agreement with the labels (overall, on the
reference answers, on the wrong answers: a judge that passes everything is caught), Cohen's kappa with the
labels, and self-consistency over repeats. The judge passes at :data:`MIN_AGREEMENT` agreement (overall and
per label) and :data:`MIN_CONSISTENCY` self-consistency (with one repeat, consistency is not measured).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field

from assay.evals.tasks._judge import TasksJudge, TaskView, prompt_digest
from assay.evals.tasks._task import Task
from assay.judge import UNUSABLE, agreement, cohen_kappa, self_consistency
from assay.models import ChatModel, Usage

__all__ = [
    "MIN_AGREEMENT",
    "MIN_CONSISTENCY",
    "QuestionControl",
    "QuestionControlsResult",
    "question_controls",
    "question_order",
    "questions_table",
    "run_question_controls",
]

MIN_AGREEMENT = 0.90
MIN_CONSISTENCY = 0.90
PASS, FAIL = "PASS", "FAIL"


@dataclasses.dataclass
class QuestionControl:
    """One planted answer to a question task and the verdict it must get."""

    task_id: str
    #: "reference" or "wrong-<k>"
    role: str
    label: str
    view: TaskView


def question_controls(tasks: Sequence[Task], project: dict[str, str]) -> list[QuestionControl]:
    """The controls of every question task in ``tasks``: its reference answer, then each wrong answer."""
    from assay.evals.tasks._judge_run import scope_files

    out: list[QuestionControl] = []
    for task in tasks:
        if task.kind != "question":
            continue
        base = TaskView(
            task_id="",
            request=task.prompt,
            answer="",
            files=scope_files(task.scope, "", project),
            points=list(task.must_establish),
            reference_answer=str(task.reference_answer or ""),
            wrong_answers=list(task.wrong_answers),
        )
        answers = [("reference", PASS, str(task.reference_answer))]
        answers += [(f"wrong-{k}", FAIL, w) for k, w in enumerate(task.wrong_answers, start=1)]
        out += [
            QuestionControl(task.id, role, label, dataclasses.replace(base, answer=answer))
            for role, label, answer in answers
        ]
    return out


def question_order(controls: Sequence[QuestionControl], repeat: int) -> list[tuple[str, QuestionControl]]:
    """(neutral id, control) in the order judged in ``repeat``: grouped by task (its files shown once), the
    task's controls rotated by ``repeat``."""
    by_task: dict[str, list[QuestionControl]] = {}
    for c in controls:
        by_task.setdefault(c.task_id, []).append(c)
    out = []
    for task, group in by_task.items():
        k = repeat % len(group)
        out += [(f"{task}-{i + 1}", c) for i, c in enumerate([*group[k:], *group[:k]])]
    return out


class ControlJudging(BaseModel):
    task: str
    role: str
    label: str
    #: verdicts, one per repeat (PASS, FAIL or ERROR: unjudged)
    verdicts: list[str] = Field(default_factory=list)
    #: the points each repeat found established (with its quote found), as "2/3"
    points: list[str] = Field(default_factory=list)


class QuestionControlsResult(BaseModel):
    schema_version: int = 1
    judge_model: str
    prompt_digest: str
    repeats: int
    controls: list[ControlJudging] = Field(default_factory=list)
    agreement: float | None = None
    agreement_pass: float | None = None
    agreement_fail: float | None = None
    kappa: float | None = None
    #: None with one repeat (nothing to be consistent with)
    self_consistency: float | None = None
    unjudged: int = 0
    passed: bool = False
    min_agreement: float = MIN_AGREEMENT
    min_consistency: float = MIN_CONSISTENCY
    calls: int = 0
    batches: int = 0
    usage: Usage = Field(default_factory=Usage)
    #: the judge's answers, as written (what a weak judge did is read here)
    raw: list[str] = Field(default_factory=list)
    made_at: str = ""


def _fold(result: QuestionControlsResult) -> QuestionControlsResult:
    labels = [c.label for c in result.controls for _ in c.verdicts]
    verdicts = [v for c in result.controls for v in c.verdicts]
    result.agreement = agreement(labels, verdicts)
    for label, field in ((PASS, "agreement_pass"), (FAIL, "agreement_fail")):
        pairs = [(a, b) for a, b in zip(labels, verdicts, strict=True) if a == label]
        setattr(result, field, agreement([a for a, _ in pairs], [b for _, b in pairs]))
    result.kappa = cohen_kappa(labels, verdicts)[0] if labels else None
    result.self_consistency = (
        self_consistency([c.verdicts for c in result.controls]) if result.repeats > 1 else None
    )
    result.unjudged = verdicts.count(UNUSABLE)
    measures = [result.agreement, result.agreement_pass, result.agreement_fail]
    result.passed = all(m is not None and m >= MIN_AGREEMENT for m in measures) and (
        result.self_consistency is None or result.self_consistency >= MIN_CONSISTENCY
    )
    return result


async def run_question_controls(
    model: ChatModel,
    judge_model: str,
    controls: Sequence[QuestionControl],
    repeats: int = 1,
    *,
    constrained: bool = False,
    budget_chars: int | None = None,
    answer_chars: int | None = None,
) -> QuestionControlsResult:
    """Judge every control ``repeats`` times (the judge batching them as a run's questions) and fold the
    verdicts into agreement, kappa and self-consistency."""
    from assay.evals.tasks._judge_run import JUDGE_MAX_TOKENS

    judge = TasksJudge(
        model,
        options={"temperature": 0, "max_tokens": JUDGE_MAX_TOKENS},
        constrained=constrained,
        budget_chars=budget_chars,
        answer_chars=answer_chars,
    )
    result = QuestionControlsResult(judge_model=judge_model, prompt_digest=prompt_digest(), repeats=repeats)
    judged = {
        (c.task_id, c.role): ControlJudging(task=c.task_id, role=c.role, label=c.label) for c in controls
    }
    for r in range(repeats):
        order = question_order(controls, r)
        out = await judge.grade("", [dataclasses.replace(c.view, task_id=cid) for cid, c in order])
        result.calls += out.calls
        result.batches += out.batches
        result.usage = result.usage + out.usage
        result.raw += out.raw
        for cid, c in order:
            grade = out.grades[cid]
            row = judged[(c.task_id, c.role)]
            row.verdicts.append(UNUSABLE if not grade.judged else PASS if grade.points_ok else FAIL)
            held = sum(p.holds for p in grade.points or [])
            row.points.append(f"{held}/{len(c.view.points)}" if grade.judged else "-")
    result.controls = list(judged.values())
    result.made_at = datetime.now(UTC).isoformat()
    return _fold(result)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def questions_table(result: QuestionControlsResult) -> str:
    lines = [f"{'question':<16} {'answer':<10} {'label':<5} verdicts (points held)"]
    for c in result.controls:
        cells = " ".join(f"{v}({p})" for v, p in zip(c.verdicts, c.points, strict=True))
        lines.append(f"{c.task:<16} {c.role:<10} {c.label:<5} {cells}")
    verdict = "passes" if result.passed else "FAILS"
    kappa = "-" if result.kappa is None else f"{result.kappa:.2f}"
    lines.append(
        f"question controls: agreement {_pct(result.agreement)} (reference answers {_pct(result.agreement_pass)}, "
        f"wrong answers {_pct(result.agreement_fail)}), kappa {kappa}, self-consistency "
        f"{_pct(result.self_consistency)}, unjudged {result.unjudged}; the judge {verdict} at "
        f"{result.min_agreement:.0%}"
    )
    return "\n".join(lines)


def write_questions(result: QuestionControlsResult, out: Path) -> Path:
    from assay.runs.rundir import write_model

    out.mkdir(parents=True, exist_ok=True)
    return write_model(out / "questions.json", result)
