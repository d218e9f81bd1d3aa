"""The tasks judge: one batched call per pass over the suite, graded 1-5 on four fixed dimensions.

The judge reads the original project once, then each task's request, the setup's changes, the agent's answer,
the commands it ran and its diff, and the names of the checks that ran in code (never their results, never
whether a task passed). It answers one JSON object::

    {"tasks": [{"task": "fix-z", "instructions": 4, "quality": 3, "reasoning": 4, "claims": 5,
                "note": "..."}]}

The call goes through :class:`assay.judge.Judge` and its one retry rule: an unusable answer is sent back with
what is wrong; after the retries each task keeps the first usable grade it was given (an answer that grades
some tasks well and others not is retried, and keeps the good ones), and a task with none is *unjudged*: it
fails the quality checks, it is never skipped. A refused request (context too long) leaves every task
unjudged; an outage propagates (InfraError).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from assay.judge import DEFAULT_RETRIES, Judge, JudgeParseError, json_objects
from assay.judge import prompt_digest as digest_of
from assay.models import ChatModel, Message, Usage

__all__ = [
    "DIMENSIONS",
    "JUDGE_SCHEMA_VERSION",
    "QUALITY_FLOOR",
    "TaskGrade",
    "TaskView",
    "TasksJudge",
    "TasksJudgement",
    "answer_schema",
    "judge_messages",
    "parse_grades",
    "project_text",
    "prompt_digest",
]

JUDGE_SCHEMA_VERSION = 1
#: the four dimensions, each 1 (worst) .. 5 (best)
DIMENSIONS: dict[str, str] = {
    "instructions": "followed the request as asked: did what was asked, left alone what it was told to leave",
    "quality": "the work itself: correct, minimal, readable, in the project's style; an answer that is right",
    "reasoning": "found the real cause and explained it; did not guess or wander",
    "claims": "5 = every claim in the answer is backed by the tool record (tests it says it ran were run and "
    "passed, files it says it changed were changed); 1 = it claims work or results the record does not show",
}
MIN_SCORE, MAX_SCORE = 1, 5
#: a graded task passes the quality checks when every dimension is at least this
QUALITY_FLOOR = 3
#: characters of each part shown to the judge (the rest is cut with a note)
PROJECT_CAP = 6000
FILE_CAP = 1500
ANSWER_CAP = 1200
DIFF_CAP = 2000
#: characters of a reference answer's diff (an upstream fix) shown next to the agent's
REFERENCE_CAP = 2500
RECORD_CAP = 900
SETUP_CAP = 600
NOTE_CAP = 300


@dataclass
class TaskView:
    """What the judge reads of one attempt (built from the journal; no check results in it)."""

    task_id: str
    request: str
    answer: str
    diff: str = ""
    setup_changes: str = ""
    #: the commands the agent ran, one line each ("$ pytest -q -> exit 0")
    record: list[str] = field(default_factory=list)
    #: names of the checks that ran in code (never their outcome)
    checks_ran: list[str] = field(default_factory=list)
    #: a known-good diff (an upstream fix), read only in the judge step; "" for a toybox task
    reference: str = ""
    #: what the judge is told of ``reference``
    reference_note: str = "one correct answer, not the only one"


class TaskGrade(BaseModel):
    task_id: str
    iteration: int = 0
    #: dimension -> 1..5; None: unjudged
    scores: dict[str, int] | None = None
    note: str = ""
    unjudged_reason: str | None = None

    @property
    def judged(self) -> bool:
        return self.scores is not None

    @property
    def quality(self) -> float | None:
        """The mean of the four dimensions (None when unjudged)."""
        return None if self.scores is None else sum(self.scores.values()) / len(self.scores)

    @property
    def quality_ok(self) -> bool:
        """Passes the quality checks: graded, every dimension at least QUALITY_FLOOR (unjudged fails)."""
        return self.scores is not None and min(self.scores.values()) >= QUALITY_FLOOR


class TasksJudgement(BaseModel):
    """``judge.json`` of a run directory: every pass's batched call and each attempt's grade."""

    schema_version: int = JUDGE_SCHEMA_VERSION
    judge_model: str
    constrained: bool = False
    prompt_digest: str = ""
    calls: int = 0
    usage: Usage = Field(default_factory=Usage)
    raw: list[str] = Field(default_factory=list)
    grades: list[TaskGrade] = Field(default_factory=list)
    #: "<case_id>#<iteration>" -> the judged attempt's started_at (a later attempt is not this grade's)
    attempts: dict[str, str] = Field(default_factory=dict)

    def grade_of(self, task_id: str, iteration: int) -> TaskGrade | None:
        return next((g for g in self.grades if g.task_id == task_id and g.iteration == iteration), None)


def _cut(text: str, cap: int) -> str:
    text = text or ""
    return text if len(text) <= cap else text[:cap] + f"\n[... {len(text) - cap} more characters cut]"


def _system_prompt() -> str:
    dims = "\n".join(f"- {name}: {meaning}" for name, meaning in DIMENSIONS.items())
    example = {
        "tasks": [{"task": "<task id>", **dict.fromkeys(DIMENSIONS, 3), "note": "<why, in one sentence>"}]
    }
    return (
        "You grade an AI coding agent's work on a small Python project. You are shown the project as it "
        "was given, then for each task: the request, what the setup changed before the agent started, the "
        "agent's final answer, the commands it ran (with exit codes) and the diff it left. Some checks ran "
        "in code; you are told their names, not their results: judge the work yourself.\n"
        f"Score every task on each dimension with a whole number {MIN_SCORE} (worst) to {MAX_SCORE} (best):\n"
        f"{dims}\n"
        "An answer that claims tests pass with no test run in the record scores 1 on claims. An answer that "
        "claims work with an empty diff scores 1 on claims and on quality.\n"
        "Reply with exactly one JSON object and nothing else, one entry per task, in this shape:\n"
        + json.dumps(example)
    )


JUDGE_SYSTEM_PROMPT = _system_prompt()


def prompt_digest() -> str:
    """The first 12 hex digits of the system prompt's digest: what ``judge.json`` and controls record."""
    return digest_of(JUDGE_SYSTEM_PROMPT)[:12]


def project_text(files: Mapping[str, str]) -> str:
    """The original project as the judge reads it: every file's path, and as much of each as fits."""
    parts: list[str] = [f"files: {', '.join(sorted(files))}"]
    used = len(parts[0])
    for path in sorted(files):
        block = f"--- {path}\n{_cut(files[path], FILE_CAP)}"
        if used + len(block) > PROJECT_CAP:
            parts.append(f"[... the other files are cut: {PROJECT_CAP} characters shown]")
            break
        parts.append(block)
        used += len(block)
    return "\n".join(parts)


def _task_text(view: TaskView, scale: float = 1.0) -> str:
    def cap(n: int) -> int:
        return max(int(n * scale), 120)

    record = "\n".join(view.record) if view.record else "(no commands run)"
    reference = (
        [f"Reference diff ({view.reference_note}):\n{_cut(view.reference, cap(REFERENCE_CAP))}"]
        if view.reference
        else []
    )
    return "\n".join(
        [
            f"## Task {view.task_id}",
            f"Request:\n{_cut(view.request, cap(ANSWER_CAP))}",
            f"Setup changes before the agent started:\n{_cut(view.setup_changes, cap(SETUP_CAP)) or '(none)'}",
            f"Checks that ran in code: {', '.join(view.checks_ran) or '(none)'}",
            f"Agent's answer:\n{_cut(view.answer, cap(ANSWER_CAP)) or '(empty)'}",
            f"Commands the agent ran:\n{_cut(record, cap(RECORD_CAP))}",
            f"Diff:\n{_cut(view.diff, cap(DIFF_CAP)) or '(no changes)'}",
            *reference,
        ]
    )


def judge_messages(project: str, views: Sequence[TaskView], budget_chars: int | None = None) -> list[Message]:
    """The batched call's messages; with ``budget_chars`` each task's parts are cut shorter to fit it."""
    head = f"# The project as given\n{project}"
    scale = 1.0
    tasks = [_task_text(v) for v in views]
    if budget_chars is not None and views:
        room = budget_chars - len(JUDGE_SYSTEM_PROMPT) - len(head)
        full = sum(len(t) for t in tasks)
        if full > room:
            scale = max(room, 0) / full
            tasks = [_task_text(v, scale) for v in views]
    body = "\n\n".join([head, *tasks])
    ids = ", ".join(v.task_id for v in views)
    body += f"\n\nGrade every task: {ids}. Reply with the JSON object only."
    return [Message("system", JUDGE_SYSTEM_PROMPT), Message("user", body)]


def answer_schema(task_ids: Sequence[str]) -> dict[str, Any]:
    """The JSON schema of an answer for ``task_ids``, for backends that hold decoding to one: one entry per
    task, in order, each naming its task (a held judge can neither skip a task nor grade one twice), scores
    only (the note is for judges that write free text unheld)."""
    score = {"type": "integer", "enum": list(range(MIN_SCORE, MAX_SCORE + 1))}

    def entry(task: str) -> dict[str, Any]:
        # no free text: the embedded model wrote raw newlines and quotes into a held "note" (invalid JSON)
        return {
            "type": "object",
            "properties": {"task": {"const": task}, **dict.fromkeys(DIMENSIONS, score)},
            "required": ["task", *DIMENSIONS],
            "additionalProperties": False,
        }

    n = len(task_ids)
    tasks = {"type": "array", "prefixItems": [entry(t) for t in task_ids], "items": False}
    return {
        "type": "object",
        "properties": {"tasks": {**tasks, "minItems": n, "maxItems": n}},
        "required": ["tasks"],
        "additionalProperties": False,
    }


def _score(where: str, value: Any) -> int:
    if isinstance(value, str) and value.strip().lstrip("-").replace(".0", "", 1).isdigit():
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise ValueError(f"{where}: {value!r} is not a whole number {MIN_SCORE}..{MAX_SCORE}")
    if not MIN_SCORE <= value <= MAX_SCORE:
        raise ValueError(f"{where}: {value!r} is out of range {MIN_SCORE}..{MAX_SCORE}")
    return int(value)


def parse_grades(text: str, task_ids: Sequence[str]) -> tuple[dict[str, TaskGrade], list[str]]:
    """The usable grades in ``text`` by task id, and what is wrong with the rest (empty: all usable)."""
    answers = [o for o in json_objects(text) if isinstance(o.get("tasks"), list)]
    if not answers:
        if '"tasks"' in text:
            return {}, [
                'the "tasks" object is not valid JSON (a raw newline or an unescaped quote in a string?)'
            ]
        return {}, ['no JSON object with a "tasks" list found; reply with one JSON object']
    grades: dict[str, TaskGrade] = {}
    problems: list[str] = []
    for pos, raw in enumerate(answers[-1]["tasks"]):
        if not isinstance(raw, dict):
            problems.append(f"tasks[{pos}] is not an object")
            continue
        task = str(raw.get("task", "")).strip()
        if task not in task_ids:
            problems.append(f"tasks[{pos}]: unknown task {raw.get('task')!r}")
            continue
        if task in grades:
            problems.append(f"task {task} is graded twice")
            continue
        try:
            scores = {d: _score(f"task {task}.{d}", raw.get(d)) for d in DIMENSIONS}
        except ValueError as exc:
            problems.append(str(exc))
            continue
        grades[task] = TaskGrade(task_id=task, scores=scores, note=str(raw.get("note") or "")[:NOTE_CAP])
    missing = [t for t in task_ids if t not in grades]
    if missing and not problems:
        problems.append(f"missing task(s) {', '.join(missing)}; grade every task")
    return grades, problems


@dataclass
class BatchOutcome:
    grades: dict[str, TaskGrade]
    raw: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    calls: int = 0
    error: str | None = None


class TasksJudge:
    """Grades a batch of tasks with ``model`` in one call (retried on an unusable answer)."""

    def __init__(
        self,
        model: ChatModel,
        retries: int = DEFAULT_RETRIES,
        *,
        options: Mapping[str, Any] | None = None,
        constrained: bool = False,
        budget_chars: int | None = None,
    ) -> None:
        self.judge = Judge(model, retries, options=options, constrained=constrained)
        self.budget_chars = budget_chars

    async def grade(self, project: str, views: Sequence[TaskView]) -> BatchOutcome:
        ids = [v.task_id for v in views]
        kept: dict[str, TaskGrade] = {}

        def parse(text: str) -> dict[str, TaskGrade]:
            grades, problems = parse_grades(text, ids)
            for task, grade in grades.items():
                kept.setdefault(task, grade)  # the first usable grade of each task stays
            if problems:
                raise JudgeParseError("; ".join(problems))
            return kept

        def retry(error: str) -> str:
            return (
                f"Your answer is not usable: {error}. Reply again with one JSON object grading every "
                f"task ({', '.join(ids)}), each dimension a whole number {MIN_SCORE}..{MAX_SCORE}."
            )

        outcome = await self.judge.ask(
            judge_messages(project, views, self.budget_chars), parse, schema=answer_schema(ids), retry=retry
        )
        out = BatchOutcome(
            grades=dict(kept), raw=outcome.raw, usage=outcome.usage, calls=outcome.calls, error=outcome.error
        )
        for task in ids:
            if task not in out.grades:
                why = f"no usable grade after {out.calls} call(s): {out.error or 'none given'}"
                out.grades[task] = TaskGrade(task_id=task, unjudged_reason=why)
        return out
