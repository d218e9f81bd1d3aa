"""The tasks judge: batched calls over a pass of the suite, each task graded 1-5 on four fixed dimensions and,
for a question, point by point.

The judge reads the files in each task's scope as the project was given (``_judge_pack`` packs the tasks of a
pass into batches that fit the judge's prompt budget: a batch that does not fit is split, never shrunk), then
each task's request, the setup's changes, the agent's answer, the commands it ran and its diff, and the names of
the checks that ran in code (never their results, never whether a task passed). A question also shows the
points its answer must establish, its reference answer and the plausible wrong answers, never cut. It answers
one JSON object per batch::

    {"tasks": [{"task": "explain", "points": [{"established": true, "quote": "reads a JSON file"}],
                "instructions": 4, "quality": 3, "reasoning": 4, "claims": 5, "note": "..."}]}

A question passes when every point is established with a quote that really is in the answer (checked in
code); the four dimensions are its quality, not its pass rule. The call goes through
:class:`assay.judge.Judge` and its one retry rule: an unusable answer is sent back with what is wrong; after
the retries each task keeps the first usable grade it was given, and a task with none is *unjudged*: it fails,
it is never skipped. A refused request (context too long) leaves the batch's tasks unjudged; an outage
propagates (InfraError).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from assay.evals.tasks._judge_pack import QUOTE_CAP, FileShown, TaskShown, TaskView, pack
from assay.judge import DEFAULT_RETRIES, Judge, JudgeParseError, json_objects
from assay.judge import prompt_digest as digest_of
from assay.models import ChatModel, Message, Usage

__all__ = [
    "DIMENSIONS",
    "JUDGE_SCHEMA_VERSION",
    "QUALITY_FLOOR",
    "FileShown",
    "PointGrade",
    "TaskGrade",
    "TaskShown",
    "TaskView",
    "TasksJudge",
    "TasksJudgement",
    "answer_schema",
    "parse_grades",
    "project_text",
    "prompt_digest",
    "quoted_in",
]

#: 2: questions pass on their points (each with a quote); the record says what the judge was shown
JUDGE_SCHEMA_VERSION = 2
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
NOTE_CAP = 300
#: a shared project text (a suite of its own: realfix) is shown up to this many characters
PROJECT_CAP = 6000


class PointGrade(BaseModel):
    """One ``must_establish`` point as the judge read it, and whether its quote is in the answer."""

    point: str
    #: what the judge said
    established: bool
    quote: str = ""
    #: the quote found in the answer (whitespace, case and quote marks aside); None: not established, not checked
    quoted: bool | None = None

    @property
    def holds(self) -> bool:
        return self.established and self.quoted is True


class TaskGrade(BaseModel):
    task_id: str
    iteration: int = 0
    #: dimension -> 1..5; None: unjudged
    scores: dict[str, int] | None = None
    #: a question's points, in order (None: not a question, or unjudged)
    points: list[PointGrade] | None = None
    note: str = ""
    unjudged_reason: str | None = None
    shown: TaskShown | None = None

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

    @property
    def points_ok(self) -> bool:
        """A question's pass: judged, and every point established with a quote found in the answer."""
        return self.judged and self.points is not None and all(p.holds for p in self.points)

    def missed_points(self) -> list[str]:
        out = []
        for k, p in enumerate(self.points or [], start=1):
            if not p.established:
                out.append(f"point {k} not established ({p.point[:80]})")
            elif p.quoted is not True:
                out.append(f"point {k}: its quote is not in the answer ({p.quote[:80]!r})")
        return out


class TasksJudgement(BaseModel):
    """``judge.json`` of a run directory: every batched call and each attempt's grade (with what was shown)."""

    schema_version: int = JUDGE_SCHEMA_VERSION
    judge_model: str
    constrained: bool = False
    prompt_digest: str = ""
    calls: int = 0
    #: batched calls asked (one per batch; each retried on an unusable answer)
    batches: int = 0
    #: characters of prompt a batch is held to (None: no budget, one batch per pass)
    budget_chars: int | None = None
    usage: Usage = Field(default_factory=Usage)
    raw: list[str] = Field(default_factory=list)
    grades: list[TaskGrade] = Field(default_factory=list)
    #: "<case_id>#<iteration>" -> the judged attempt's started_at (a later attempt is not this grade's)
    attempts: dict[str, str] = Field(default_factory=dict)

    def grade_of(self, task_id: str, iteration: int) -> TaskGrade | None:
        return next((g for g in self.grades if g.task_id == task_id and g.iteration == iteration), None)


def _system_prompt() -> str:
    dims = "\n".join(f"- {name}: {meaning}" for name, meaning in DIMENSIONS.items())
    point = {"established": True, "quote": "<the answer's own words that establish it>"}
    example = {
        "tasks": [
            {
                "task": "<question task id>",
                "points": [point],
                **dict.fromkeys(DIMENSIONS, 3),
                "note": "<why>",
            },
            {"task": "<coding task id>", **dict.fromkeys(DIMENSIONS, 3), "note": "<why, in one sentence>"},
        ]
    }
    return (
        "You grade an AI coding agent's work on a small Python project. You are shown the files in the "
        "tasks' scope as the project was given, then for each task: the request, what the setup changed "
        "before the agent started, the agent's final answer, the commands it ran (with exit codes) and the "
        "diff it left. Some checks ran in code; you are told their names, not their results: judge the work "
        "yourself.\n"
        "A question task lists the points a correct answer must establish. For each point, in order, say "
        "whether the agent's answer establishes it (true or false) and copy the words of the answer that do, "
        f'exactly, at most {QUOTE_CAP} characters ("" when it does not). A point is established only when '
        "the answer states it; mentioning the topic is not enough, and an answer that says one of the "
        "plausible wrong answers does not establish the point it contradicts. Give points only for question "
        "tasks.\n"
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


def _cut(text: str, cap: int) -> str:
    text = text or ""
    return text if len(text) <= cap else text[:cap] + f"\n[... {len(text) - cap} more characters cut]"


def project_text(files: Mapping[str, str], cap: int = PROJECT_CAP) -> str:
    """A shared project text (every file's path, and as much of each as fits in ``cap``), for a suite whose
    tasks share one project (realfix); toybox tasks are shown their own scope files instead."""
    parts: list[str] = [f"files: {', '.join(sorted(files))}"]
    used = len(parts[0])
    for path in sorted(files):
        block = f"--- {path}\n{_cut(files[path], 1500)}"
        if used + len(block) > cap:
            parts.append(f"[... the other files are cut: {cap} characters shown]")
            break
        parts.append(block)
        used += len(block)
    return "\n".join(parts)


def answer_schema(views: Sequence[TaskView] | Sequence[str]) -> dict[str, Any]:
    """The JSON schema of an answer for a batch, for backends that hold decoding to one: one entry per task,
    in order, each naming its task (a held judge can neither skip a task nor grade one twice); a question's
    entry holds one point per ``must_establish`` point; no note (free text the embedded model broke JSON in)."""
    score = {"type": "integer", "enum": list(range(MIN_SCORE, MAX_SCORE + 1))}
    point = {
        "type": "object",
        "properties": {
            "established": {"type": "boolean"},
            "quote": {"type": "string", "maxLength": QUOTE_CAP},
        },
        "required": ["established", "quote"],
        "additionalProperties": False,
    }

    def entry(view: TaskView | str) -> dict[str, Any]:
        task = view if isinstance(view, str) else view.task_id
        n = 0 if isinstance(view, str) else len(view.points)
        props: dict[str, Any] = {"task": {"const": task}}
        if n:
            props["points"] = {"type": "array", "prefixItems": [point] * n, "items": False, "minItems": n,
                               "maxItems": n}  # fmt: skip
        props.update(dict.fromkeys(DIMENSIONS, score))
        return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}

    n = len(views)
    tasks = {"type": "array", "prefixItems": [entry(v) for v in views], "items": False}
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


_FOLD = str.maketrans({"`": "", '"': "", "'": "", "\u2018": "", "\u2019": "", "\u201c": "", "\u201d": ""})


def _fold(text: str) -> str:
    return " ".join(text.translate(_FOLD).lower().split())


def quoted_in(quote: str, answer: str) -> bool:
    """Whether ``quote`` is really in ``answer`` (whitespace, case and quote marks aside); a quote the judge
    shortened with "..." holds when each part is there, in order."""
    parts = [_fold(p) for p in re.split(r"\.\.\.|\u2026", quote)]
    parts = [p.strip(" .,;:") for p in parts]
    parts = [p for p in parts if p]
    if not parts:
        return False
    text, at = _fold(answer), 0
    for part in parts:
        found = text.find(part, at)
        if found < 0:
            return False
        at = found + len(part)
    return True


def _established(where: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "false", "no"):
        return value.strip().lower() in ("true", "yes")
    raise ValueError(f"{where}.established: {value!r} is not true or false")


def _points(task: str, raw: Any, view: TaskView) -> list[PointGrade]:
    n = len(view.points)
    if not isinstance(raw, list) or len(raw) != n:
        got = "none" if raw is None else (f"{len(raw)}" if isinstance(raw, list) else repr(raw)[:40])
        raise ValueError(f"task {task}: give {n} points (one per point, in order), got {got}")
    out = []
    for k, (point, item) in enumerate(zip(view.points, raw, strict=True), start=1):
        if not isinstance(item, dict):
            raise ValueError(f"task {task}.points[{k}] is not an object")
        established = _established(f"task {task}.points[{k}]", item.get("established"))
        quote = str(item.get("quote") or "")[: QUOTE_CAP * 2]
        quoted = quoted_in(quote, view.answer) if established else None
        out.append(PointGrade(point=point, established=established, quote=quote, quoted=quoted))
    return out


def parse_grades(
    text: str, views: Sequence[TaskView] | Sequence[str]
) -> tuple[dict[str, TaskGrade], list[str]]:
    """The usable grades in ``text`` by task id, and what is wrong with the rest (empty: all usable)."""
    by_id = {v if isinstance(v, str) else v.task_id: v for v in views}
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
        if task not in by_id:
            problems.append(f"tasks[{pos}]: unknown task {raw.get('task')!r}")
            continue
        if task in grades:
            problems.append(f"task {task} is graded twice")
            continue
        view = by_id[task]
        try:
            scores = {d: _score(f"task {task}.{d}", raw.get(d)) for d in DIMENSIONS}
            points = (
                _points(task, raw.get("points"), view)
                if isinstance(view, TaskView) and view.question
                else None
            )
        except ValueError as exc:
            problems.append(str(exc))
            continue
        note = str(raw.get("note") or "")[:NOTE_CAP]
        grades[task] = TaskGrade(task_id=task, scores=scores, points=points, note=note)
    missing = [t for t in by_id if t not in grades]
    if missing and not problems:
        problems.append(f"missing task(s) {', '.join(missing)}; grade every task")
    return grades, problems


@dataclass
class BatchOutcome:
    grades: dict[str, TaskGrade]
    raw: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    calls: int = 0
    batches: int = 0
    error: str | None = None


class TasksJudge:
    """Grades the tasks of a pass with ``model``: packed into batches that fit ``budget_chars`` (None: one
    batch), one call per batch (retried on an unusable answer)."""

    def __init__(
        self,
        model: ChatModel,
        retries: int = DEFAULT_RETRIES,
        *,
        options: Mapping[str, Any] | None = None,
        constrained: bool = False,
        budget_chars: int | None = None,
        answer_chars: int | None = None,
    ) -> None:
        self.judge = Judge(model, retries, options=options, constrained=constrained)
        self.budget_chars = budget_chars
        self.answer_chars = answer_chars

    async def grade(self, project: str, views: Sequence[TaskView]) -> BatchOutcome:
        out = BatchOutcome(grades={})
        errors: list[str] = []
        batches = pack(project, views, self.budget_chars, JUDGE_SYSTEM_PROMPT, self.answer_chars)
        for number, batch in enumerate(batches, start=1):
            one = await self._batch(batch.messages(JUDGE_SYSTEM_PROMPT), batch.views)
            out.raw += one.raw
            out.usage = out.usage + one.usage
            out.calls += one.calls
            out.batches += 1
            errors += [f"batch {number}: {one.error}"] if one.error else []
            for task, grade in one.grades.items():
                shown = batch.shown[task].model_copy(update={"batch": number})
                out.grades[task] = grade.model_copy(update={"shown": shown})
        out.error = "; ".join(errors) or None
        return out

    async def _batch(self, messages: list[Message], views: Sequence[TaskView]) -> BatchOutcome:
        ids = [v.task_id for v in views]
        kept: dict[str, TaskGrade] = {}

        def parse(text: str) -> dict[str, TaskGrade]:
            grades, problems = parse_grades(text, views)
            for task, grade in grades.items():
                kept.setdefault(task, grade)  # the first usable grade of each task stays
            if problems:
                raise JudgeParseError("; ".join(problems))
            return kept

        def retry(error: str) -> str:
            return (
                f"Your answer is not usable: {error}. Reply again with one JSON object grading every "
                f"task ({', '.join(ids)}), each dimension a whole number {MIN_SCORE}..{MAX_SCORE}, each "
                "question with its points."
            )

        outcome = await self.judge.ask(messages, parse, schema=answer_schema(views), retry=retry)
        out = BatchOutcome(
            grades=dict(kept), raw=outcome.raw, usage=outcome.usage, calls=outcome.calls, error=outcome.error
        )
        for task in ids:
            if task not in out.grades:
                why = f"no usable grade after {out.calls} call(s): {out.error or 'none given'}"
                out.grades[task] = TaskGrade(task_id=task, unjudged_reason=why)
        return out
