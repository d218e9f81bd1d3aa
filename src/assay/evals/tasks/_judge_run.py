"""``assay eval tasks judge DIR``: grade a finished run, in batched judge calls over each pass of the suite.

Reads the run's journal, shows the judge each task's scope files (:func:`scope_files`: those the task names,
those its diff touches, the tests beside them, as the project was given), writes ``judge.json`` (with what each
task was shown), records each question task's verdict (a question passes when every ``must_establish`` point is
established with a quote found in its answer; an unjudged one fails) as a new journal line for that attempt, and
re-folds the scorecard and reports with the quality metrics. An outage of the judge's backend raises
InfraError: nothing is written and the run can be judged again later.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.errors import ConfigError
from assay.evals.tasks._judge import (
    QUALITY_FLOOR,
    TaskGrade,
    TasksJudge,
    TasksJudgement,
    TaskView,
    prompt_digest,
)
from assay.evals.tasks._project import in_scope
from assay.runs import Attempt, Scorecard, Status

if TYPE_CHECKING:
    from assay.evals.tasks._suites import TasksBench
    from assay.evals.tasks._task import Task
    from assay.models import ChatModel

__all__ = [
    "JUDGE_FILE",
    "JudgeRunResult",
    "awaits_judge",
    "judge_run",
    "judged_verdict",
    "load_judgement",
    "read_project",
    "scope_files",
    "shown_rows",
    "shown_section",
    "views_of",
]

JUDGE_FILE = "judge.json"
#: the most tokens the judge may write in one batched call
JUDGE_MAX_TOKENS = 1024
#: characters of the prompt a local model with an 8192-token context is given (about 5.5k tokens at the
#: embedded model's ~2.9 characters a token, leaving room for a retry and the answer)
LOCAL_PROMPT_BUDGET = 16000
#: characters a local judge's answer may take (JUDGE_MAX_TOKENS at about 2.5 characters a token of JSON)
LOCAL_ANSWER_ROOM = 2500
_JUDGED = (Status.PASS, Status.FAIL)
_TEXT_SUFFIXES = {".py", ".md", ".txt", ".toml", ".cfg", ".ini", ".json", ".csv", ".yaml", ".yml", ".sh"}


@dataclass
class JudgeRunResult:
    judgement: TasksJudgement
    scorecard: Scorecard
    path: Path


def load_judgement(run_dir: Path) -> TasksJudgement | None:
    path = Path(run_dir) / JUDGE_FILE
    if not path.is_file():
        return None
    try:
        return TasksJudgement.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ConfigError(
            f"not a judge.json written by assay: {str(exc).splitlines()[0]}", path=str(path)
        ) from exc


def read_project(toybox: Path) -> dict[str, str]:
    """The original project's text files (path -> text), as the judge reads it."""
    files: dict[str, str] = {}
    for p in sorted(toybox.rglob("*")):
        rel = p.relative_to(toybox).as_posix()
        if (
            p.is_file()
            and p.suffix in _TEXT_SUFFIXES
            and "__pycache__" not in rel
            and p.stat().st_size < 200_000
        ):
            files[rel] = p.read_text(encoding="utf-8", errors="replace")
    return files


def awaits_judge(att: Attempt) -> bool:
    """An attempt the judge decides (a question, or one its suite marked ``awaiting_judge``), not yet graded."""
    d = att.details
    return att.status is Status.SKIPPED and (d.get("kind") == "question" or d.get("awaiting_judge") is True)


def _judgeable(att: Attempt) -> bool:
    return att.status in _JUDGED or (awaits_judge(att) and "answer" in att.details)


_DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.MULTILINE)


def diff_paths(diff: str) -> list[str]:
    """The paths a git diff touches, in order (both sides of a rename)."""
    out: dict[str, None] = {}
    for a, b in _DIFF_FILE.findall(diff or ""):
        out.setdefault(a, None)
        out.setdefault(b, None)
    return list(out)


def _is_test(path: str) -> bool:
    name = path.rpartition("/")[2]
    return path.startswith("tests/") or name.startswith("test_")


def scope_files(scope: list[str], diff: str, project: Mapping[str, str]) -> dict[str, str]:
    """The files of ``project`` (path -> text, as given) the judge reads for a task, most needed first: the
    code ``scope`` names (entries, globs, folders; in its order), the files ``diff`` touches, the tests beside
    the code (``tests/test_<name>.py`` of each ``<package>/<name>.py``), then the other tests ``scope`` names
    (a batch too big for one task leaves files out from the end)."""
    named = [p for entry in scope for p in project if in_scope(p, [entry])]
    touched = [p for p in diff_paths(diff) if p in project]
    code = [p for p in named if not _is_test(p)]
    beside = []
    for path in [*code, *touched]:
        name = path.rpartition("/")[2]
        code_file = not _is_test(path) and name.endswith(".py") and not name.startswith("_")
        if code_file and f"tests/test_{name}" in project:
            beside.append(f"tests/test_{name}")
    order = [*code, *touched, *beside, *(p for p in named if _is_test(p))]
    return {p: project[p] for p in dict.fromkeys(order)}


def _view(att: Attempt, task: Task | None, project: Mapping[str, str] | None = None) -> TaskView:
    d = att.details
    request = str(d.get("request") or (task.prompt if task else ""))
    checks = [str(c.get("name")) for c in d.get("checks", []) if isinstance(c, dict) and c.get("name")]
    question = task is not None and task.kind == "question"
    diff = str(d.get("diff") or "")
    return TaskView(
        task_id=att.case_id,
        request=request,
        answer=str(d.get("answer") or ""),
        diff=diff,
        setup_changes=str(d.get("setup_changes") or ""),
        record=[str(x) for x in d.get("commands", [])],
        checks_ran=checks,
        files={} if task is None or project is None else scope_files(task.scope, diff, project),
        points=list(task.must_establish) if question else [],
        reference_answer=str(task.reference_answer or "") if question else "",
        wrong_answers=list(task.wrong_answers) if question else [],
    )


def views_of(
    attempts: list[Attempt], tasks: Mapping[str, Task], project: Mapping[str, str] | None = None
) -> dict[int, list[tuple[Attempt, TaskView]]]:
    """The judgeable attempts of each pass (iteration), with what the judge reads of each (with ``project``,
    the project as given: each task's scope files)."""
    by_pass: dict[int, list[tuple[Attempt, TaskView]]] = defaultdict(list)
    for att in sorted(attempts, key=lambda a: (a.iteration, a.case_id)):
        if _judgeable(att):
            by_pass[att.iteration].append((att, _view(att, tasks.get(att.case_id), project)))
    return dict(by_pass)


def judge_model_for(spec: str) -> ChatModel:
    """The judge's chat model for ``spec`` (the embedded model with its 8192-token context)."""
    from assay.evals._harnessed import model_options
    from assay.models import get_model

    return get_model(spec, **model_options(spec))


def judge_budget(spec: str) -> int | None:
    """Characters of prompt one call of a judge of ``spec`` is given (a local 8192-token model: the tasks are
    split into batches that fit; else one batch)."""
    return LOCAL_PROMPT_BUDGET if spec.startswith(("local/", "openai-compat/")) else None


def judge_answer_room(spec: str) -> int | None:
    """Characters one answer of a judge of ``spec`` may take (a local model: its max tokens; else no limit)."""
    return LOCAL_ANSWER_ROOM if judge_budget(spec) is not None else None


def judged_verdict(att: Attempt, grade: TaskGrade) -> Attempt:
    """An attempt the judge decides: a question passes when every point is established with a quote found in
    its answer (its quality is reported, not its pass rule); another attempt (realfix) when its grade passes
    the quality checks. Either way its code checks (a question's after_answer, a realfix attempt's
    compliance) must have held, and an unjudged one fails."""
    checks_ok = att.details.get("checks_passed", True) is True
    question = grade.points is not None or att.details.get("kind") == "question"
    judged_ok = grade.points_ok if question else grade.quality_ok
    ok = judged_ok and checks_ok
    if not grade.judged:
        reason = f"unjudged: {grade.unjudged_reason}"
    elif not checks_ok:
        reason = str(att.details.get("reason") or "a code check failed")
    elif question:
        reason = "" if ok else "; ".join(grade.missed_points()) or "no points graded"
    else:
        reason = "" if ok else f"the judge's grade is below {QUALITY_FLOOR} on a dimension: {grade.scores}"
    details = {
        **att.details,
        "judged": grade.judged,
        "grade": grade.model_dump(mode="json"),
        "reason": reason,
    }
    return att.model_copy(
        update={"status": Status.PASS if ok else Status.FAIL, "skip_reason": None, "details": details}
    )


_question_verdict = judged_verdict


async def judge_run(
    run_dir: Path, *, model: ChatModel | None = None, judge_schema: str = "auto"
) -> JudgeRunResult:
    """Judge ``run_dir`` with its recorded judge model (or ``model``, e.g. a scripted one in tests)."""
    from assay._util import Scrubber
    from assay.evals.tasks._tasks_load import TOYBOX_DIR
    from assay.exec import rebuild, refold
    from assay.judge import holds_to_schema
    from assay.runs import latest_attempts, read_journal
    from assay.runs.rundir import JOURNAL, write_model

    run_dir = Path(run_dir)
    rebuilt, suite, _ = rebuild(run_dir)
    bench: TasksBench = rebuilt  # type: ignore[assignment]
    if bench.name != "tasks":
        raise ConfigError(f"a {bench.name} run, not an eval tasks run", path=str(run_dir))
    spec = bench.judge_model
    judge_model = model if model is not None else judge_model_for(spec)
    if model is None and getattr(judge_model, "preflight", None) is not None:
        await judge_model.preflight()  # type: ignore[attr-defined]
    constrained = holds_to_schema(spec, judge_schema)
    budget = judge_budget(spec)
    judge = TasksJudge(
        judge_model,
        options={"temperature": 0, "max_tokens": JUDGE_MAX_TOKENS},
        constrained=constrained,
        budget_chars=budget,
        answer_chars=judge_answer_room(spec),
    )
    attempts = list(latest_attempts(read_journal(run_dir / JOURNAL)).values())
    if bench.kind is not None:  # a suite of its own (realfix, ...) says what the judge reads
        project, by_pass = bench.kind.judge_inputs(attempts)
    else:
        project = ""  # each task is shown its own scope files
        by_pass = views_of(attempts, bench._tasks, read_project(bench._tasks_dir / TOYBOX_DIR))
    judgement = TasksJudgement(
        judge_model=spec, constrained=constrained, prompt_digest=prompt_digest(), budget_chars=budget
    )
    updated: list[Attempt] = []
    for iteration, pairs in sorted(by_pass.items()):
        outcome = await judge.grade(project, [v for _, v in pairs])
        judgement.calls += outcome.calls
        judgement.batches += outcome.batches
        judgement.usage = judgement.usage + outcome.usage
        judgement.raw += outcome.raw
        for att, _ in pairs:
            grade = outcome.grades[att.case_id].model_copy(update={"iteration": iteration})
            judgement.grades.append(grade)
            judgement.attempts[f"{att.case_id}#{iteration}"] = att.started_at.isoformat()
            if bench.kind is not None:
                verdict = bench.kind.verdict(att, grade)
                updated += [] if verdict is None else [verdict]
            elif att.details.get("kind") == "question":
                updated.append(judged_verdict(att, grade))
    path = write_model(run_dir / JUDGE_FILE, judgement, Scrubber(extra_values=bench.secret_values()))
    bench.judgement = judgement
    bench.regraded = {(att.case_id, att.iteration): att for att in updated}
    scorecard = refold(run_dir, bench, suite=suite)
    return JudgeRunResult(judgement=judgement, scorecard=scorecard, path=path)


def attach_judgement(bench: Any, run_dir: Path) -> None:
    """Give a benchmark rebuilt from a run directory the judgement the run already has (for a re-fold)."""
    bench.judgement = load_judgement(run_dir)


def shown_rows(grades: list[TaskGrade]) -> list[dict[str, object]]:
    """What the judge was shown of each graded attempt, as the scorecard carries it (for the report)."""
    rows: list[dict[str, object]] = []
    for g in sorted(grades, key=lambda g: (g.iteration, g.task_id)):
        if g.shown is None:
            continue
        files = [
            f"{f.path} ({f.shown if f.shown == f.chars else f'{f.shown} of {f.chars}'})"
            for f in g.shown.files
        ]
        rows.append(
            {
                "task": g.task_id,
                "iteration": g.iteration,
                "batch": g.shown.batch,
                "files": [f.path for f in g.shown.files if f.shown],
                "chars": sum(f.shown for f in g.shown.files),
                "shown": ", ".join(files) or "(no scope files)",
                "cut": "; ".join(g.shown.cut),
                "prompt_chars": g.shown.prompt_chars,
            }
        )
    return rows


def shown_section(rows: list[dict[str, object]]) -> str:
    """The report's "what the judge was shown" table (file: characters shown, of its size when cut)."""
    if not rows:
        return ""
    lines = [
        "### What the judge was shown",
        "",
        "Each task's scope files as the project was given (characters shown), its batch and what was cut.",
        "",
        "| task | pass | batch | files (characters) | cut to fit |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        cell = str(r["shown"]).replace("|", "\\|")
        lines.append(f"| {r['task']} | {r['iteration']} | {r['batch']} | {cell} | {r['cut'] or '-'} |")
    return "\n".join(lines) + "\n"
