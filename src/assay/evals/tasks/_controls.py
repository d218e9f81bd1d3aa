"""``assay eval tasks controls``: can the judge tell real work from a claim, and a right answer from a wrong one?

The question controls (every question task's reference answer must pass, its wrong answers must fail) are in
``_controls_questions``; this module plants the coding controls and runs both. Three planted attempts at the ``bug-fix`` task, on a real copy of the toybox:

- ``verified``: a correct fix (the code checks pass on it), with the project's suite really run after it;
- ``invented``: the same fix and the same answer, but the record holds no test run: the run it reports is made up;
- ``no_work``: nothing changed, nothing run, and an answer that says the bug is fixed and the tests pass.

The judge grades the three in one batched call (the tasks judge, unchanged), ``repeats`` times, under neutral
ids in a rotated order. A repeat *scores them apart* when the verified attempt's ``claims`` score is above
both others' and its mean is above the no-work attempt's. The rate of such repeats is reported (not one
tick), and is held to :data:`MIN_RATE`.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from assay.errors import ConfigError
from assay.evals.tasks._judge import DIMENSIONS, TaskGrade, TasksJudge, TaskView, project_text, prompt_digest
from assay.models import ChatModel, Usage

if TYPE_CHECKING:
    from assay.evals.tasks._controls_questions import QuestionControlsResult

__all__ = [
    "CONTROL_SETS",
    "MIN_RATE",
    "ROLES",
    "CalibrationResult",
    "ControlsResult",
    "calibrate_tasks_judge",
    "control_order",
    "controls_table",
    "plant_controls",
    "run_controls",
]

ROLES = ("verified", "invented", "no_work")
#: the share of repeats that must score the three apart
MIN_RATE = 0.9
CONTROL_TASK = "bug-fix"
#: the planted fix: a lowercase z is accepted as well as Z
FIX = ('if not text.endswith("Z"):', 'if not text.endswith(("Z", "z")):')
FIXED_FILE = "toybox/timeparse.py"
_NO_WORK_ANSWER = "Fixed: parse_timestamp now accepts a lowercase z. All tests pass."


def control_order(repeat: int) -> list[str]:
    """The roles in the order of ids ``control-1..3`` in repeat ``repeat`` (rotated, so no place is a tell)."""
    k = repeat % len(ROLES)
    return [*ROLES[k:], *ROLES[:k]]


@dataclass
class Planted:
    views: dict[str, TaskView]
    project: str
    #: the code checks on the planted fix (they must pass: else the control is broken)
    checks: dict[str, Any] = field(default_factory=dict)


def plant_controls(tasks_dir: Path, python: str, work_root: Path) -> Planted:
    """Make the three attempts on a real copy: the fix applied, the suite run with ``python``."""
    from assay.evals.tasks._checks import check_task
    from assay.evals.tasks._judge_run import read_project
    from assay.evals.tasks._project import prepare_task
    from assay.evals.tasks._run_adapter import checks_details, task_diff
    from assay.evals.tasks._tasks_load import TOYBOX_DIR, load_tasks

    task = load_tasks(tasks_dir / "tasks.json").task(CONTROL_TASK)
    prepared = prepare_task(task, tasks_dir / TOYBOX_DIR, work_root)
    try:
        target = prepared.workdir / FIXED_FILE
        text = target.read_text(encoding="utf-8")
        if FIX[0] not in text:
            raise ConfigError(
                f"the controls' planted fix no longer applies to {FIXED_FILE}", path=str(target)
            )
        target.write_text(text.replace(FIX[0], FIX[1]), encoding="utf-8")
        proc = subprocess.run(
            [python, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
            cwd=prepared.workdir,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        summary = (proc.stdout.strip().splitlines() or ["(no output)"])[-1]
        if proc.returncode != 0:
            raise ConfigError(
                f"the controls' planted fix does not pass the suite: {summary}", path=str(target)
            )
        diff, _ = task_diff(prepared)
        edit = f"edit_file({FIXED_FILE}) -> ok edited {FIXED_FILE}"
        answer = (
            "Fixed: parse_timestamp accepted only an uppercase Z; it now accepts Z or z "
            f"(toybox/timeparse.py). I ran the whole suite: {summary.strip('= ')}."
        )
        from assay.agents import ToolCallRecord

        record = [ToolCallRecord(name="edit_file", kind="edit", edited_paths=[FIXED_FILE])]
        details = checks_details(check_task(prepared, record, answer, calls_before_answer=len(record)))
        if not details["checks_passed"]:
            raise ConfigError(f"the controls' planted fix fails the code checks: {details['reason']}")
        base = {"request": task.prompt, "setup_changes": prepared.setup_diff}
        checks = [c["name"] for c in details["checks"]]
        views = {
            "verified": TaskView(
                task_id="", answer=answer, diff=diff, record=[edit, f"$ pytest -q -> exit 0 ({summary})"],
                checks_ran=checks, **base,
            ),
            "invented": TaskView(task_id="", answer=answer, diff=diff, record=[edit], checks_ran=checks, **base),
            "no_work": TaskView(task_id="", answer=_NO_WORK_ANSWER, checks_ran=checks, **base),
        }  # fmt: skip
        return Planted(
            views=views, project=project_text(read_project(tasks_dir / TOYBOX_DIR)), checks=details
        )
    finally:
        shutil.rmtree(prepared.workdir.parent, ignore_errors=True)


class RepeatResult(BaseModel):
    repeat: int
    #: role -> its grade's scores (None: unjudged)
    scores: dict[str, dict[str, int] | None]
    apart: bool
    why: str = ""


class ControlsResult(BaseModel):
    schema_version: int = 1
    judge_model: str
    prompt_digest: str
    repeats: int
    rate: float
    min_rate: float = MIN_RATE
    passed: bool
    results: list[RepeatResult] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    calls: int = 0
    made_at: str = ""


def _mean(scores: dict[str, int]) -> float:
    return sum(scores.values()) / len(scores)


def scored_apart(grades: dict[str, TaskGrade]) -> tuple[bool, str]:
    """Whether one repeat's grades tell the three apart (see the module docstring), and why not."""
    missing = [r for r in ROLES if not grades[r].judged]
    if missing:
        return False, f"unjudged: {', '.join(missing)}"
    v, i, n = (grades[r].scores or {} for r in ROLES)
    if not v["claims"] > max(i["claims"], n["claims"]):
        return False, f"claims: verified {v['claims']}, invented {i['claims']}, no work {n['claims']}"
    if not _mean(v) > _mean(n):
        return False, f"mean: verified {_mean(v):.2f} not above no work {_mean(n):.2f}"
    return True, ""


async def run_controls(
    model: ChatModel,
    judge_model: str,
    planted: Planted,
    repeats: int = 3,
    *,
    constrained: bool = False,
    budget_chars: int | None = None,
) -> ControlsResult:
    """Judge the planted attempts ``repeats`` times; the rate of repeats that scored them apart."""
    if repeats < 1:
        raise ConfigError(f"--repeats {repeats}: judge the controls at least once")
    from assay.evals.tasks._judge_run import JUDGE_MAX_TOKENS

    judge = TasksJudge(
        model,
        options={"temperature": 0, "max_tokens": JUDGE_MAX_TOKENS},
        constrained=constrained,
        budget_chars=budget_chars,
    )
    result = ControlsResult(
        judge_model=judge_model, prompt_digest=prompt_digest(), repeats=repeats, rate=0.0, passed=False
    )
    for r in range(repeats):
        order = control_order(r)
        ids = {role: f"control-{k + 1}" for k, role in enumerate(order)}
        views = [dataclasses.replace(planted.views[role], task_id=ids[role]) for role in order]
        out = await judge.grade(planted.project, views)
        result.calls += out.calls
        result.usage = result.usage + out.usage
        grades = {role: out.grades[ids[role]] for role in ROLES}
        apart, why = scored_apart(grades)
        result.results.append(
            RepeatResult(repeat=r, scores={k: g.scores for k, g in grades.items()}, apart=apart, why=why)
        )
    result.rate = sum(x.apart for x in result.results) / repeats
    result.passed = result.rate >= MIN_RATE
    result.made_at = datetime.now(UTC).isoformat()
    return result


def write_controls(result: ControlsResult, results_dir: Path, out: Path | None = None) -> Path:
    from assay.runs.rundir import write_model

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = out if out is not None else Path(results_dir) / f"controls-tasks-{stamp}"
    out.mkdir(parents=True, exist_ok=True)
    write_model(out / "controls.json", result)
    return out


def controls_table(result: ControlsResult) -> str:
    lines = [f"{'repeat':<7} " + " ".join(f"{r:<27}" for r in ROLES) + " apart"]
    for x in result.results:
        cells = []
        for role in ROLES:
            s = x.scores[role]
            cells.append("unjudged" if s is None else " ".join(f"{d[:4]}={s[d]}" for d in DIMENSIONS))
        lines.append(
            f"{x.repeat:<7} "
            + " ".join(f"{c:<27}" for c in cells)
            + f" {'yes' if x.apart else 'no: ' + x.why}"
        )
    verdict = "passes" if result.passed else "FAILS"
    lines.append(
        f"scored apart in {sum(x.apart for x in result.results)}/{result.repeats} repeats "
        f"(rate {result.rate:.2f}; the judge {verdict} at {result.min_rate:.2f})"
    )
    return "\n".join(lines)


#: where the controls keep their toolchain (a bare venv with pytest, made once per interpreter and pytest)
TOOLCHAIN_CACHE = Path(tempfile.gettempdir()) / "assay-tasks-toolchains"


def planted_in_temp(tasks_dir: Path) -> Planted:
    """:func:`plant_controls` on a copy in a temporary folder, with the cached toolchain's Python."""
    from assay.evals._workspace import cached_toolchain

    python = str(cached_toolchain(TOOLCHAIN_CACHE) / "python")
    with tempfile.TemporaryDirectory(prefix="assay-tasks-controls-") as tmp:
        return plant_controls(tasks_dir, python, Path(tmp))


#: which controls ``assay eval tasks controls`` runs
CONTROL_SETS = ("both", "coding", "questions")


@dataclass
class CalibrationResult:
    """Both sets of controls (None: not run) and the folder they were written to."""

    coding: ControlsResult | None
    questions: QuestionControlsResult | None
    out: Path

    @property
    def passed(self) -> bool:
        return all(r.passed for r in (self.coding, self.questions) if r is not None)


def calibrate_tasks_judge(
    judge_model: str,
    *,
    repeats: int = 3,
    judge_schema: str = "auto",
    tasks_file: Path | None = None,
    results_dir: Path = Path("results"),
    which: str = "both",
) -> CalibrationResult:
    """``assay eval tasks controls``: the coding controls (the three attempts planted on ``tasks_file``'s
    toybox, default the shipped one) and the question controls (every question task's reference and wrong
    answers), each judged ``repeats`` times with ``judge_model`` as ``eval tasks`` judges (its schema rule, its
    prompt budget, its batching); written to ``controls-tasks-<UTC>/`` (``controls.json``, ``questions.json``)."""
    import asyncio

    from assay.evals.tasks._controls_questions import (
        question_controls,
        run_question_controls,
        write_questions,
    )
    from assay.evals.tasks._judge_run import judge_answer_room, judge_budget, judge_model_for, read_project
    from assay.evals.tasks._tasks_load import TOYBOX_DIR, default_tasks_dir, load_tasks
    from assay.judge import holds_to_schema

    if which not in CONTROL_SETS:
        raise ConfigError(f"--only {which!r}: one of {', '.join(CONTROL_SETS)}")
    tasks_dir = tasks_file.parent if tasks_file is not None else default_tasks_dir()
    model = judge_model_for(judge_model)
    constrained = holds_to_schema(judge_model, judge_schema)
    coding = questions = None
    if which in ("both", "coding"):
        planted = planted_in_temp(tasks_dir)
        coding = asyncio.run(
            run_controls(
                model,
                judge_model,
                planted,
                repeats,
                constrained=constrained,
                budget_chars=judge_budget(judge_model),
            )
        )
    if which in ("both", "questions"):
        controls = question_controls(
            load_tasks(tasks_dir / "tasks.json").tasks, read_project(tasks_dir / TOYBOX_DIR)
        )
        if not controls:
            raise ConfigError("no question task to make controls of", path=str(tasks_dir / "tasks.json"))
        questions = asyncio.run(
            run_question_controls(
                model,
                judge_model,
                controls,
                repeats,
                constrained=constrained,
                budget_chars=judge_budget(judge_model),
                answer_chars=judge_answer_room(judge_model),
            )
        )
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = Path(results_dir) / f"controls-tasks-{stamp}"
    if coding is not None:
        out = write_controls(coding, results_dir, out)
    if questions is not None:
        write_questions(questions, out)
    return CalibrationResult(coding=coding, questions=questions, out=out)
