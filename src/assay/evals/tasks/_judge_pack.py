"""The tasks judge's batches: a pass's tasks packed into calls that fit the judge's prompt budget.

Each batch shows, once, the files in its tasks' scope (as the project was given), then each task. Tasks are
added to a batch in order while the batch fits ``budget_chars`` (and, with ``answer_chars``, while the answer
it asks for fits the judge's answer room); a task that does not fit starts the next batch: a batch is split,
never shrunk. Only a task too big to fit even alone is cut, in this order, each step named in its
:class:`TaskShown`: its scope files from the last (the tests beside the files first), the diff, commands and
setup changes shorter, then the files it keeps shorter. A question's points, reference answer and wrong
answers, and the agent's answer up to :data:`ANSWER_CAP`, are never cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from assay.models import Message

__all__ = ["ANSWER_CAP", "QUOTE_CAP", "Batch", "FileShown", "TaskShown", "TaskView", "pack", "render_task"]

#: characters of a quote the judge gives for a point (held so by the schema)
QUOTE_CAP = 160

#: characters of each part of a task shown to the judge (the rest is cut with a note)
ANSWER_CAP = 4000
REQUEST_CAP = 2000
DIFF_CAP = 2000
#: characters of a reference answer's diff (an upstream fix) shown next to the agent's
REFERENCE_CAP = 2500
RECORD_CAP = 900
SETUP_CAP = 600
#: a scope file longer than this is shown from its start (never the case in the toybox: its longest is 1.9 kB)
FILE_CAP = 12000
_MIN_PART = 120
#: the shares of a part kept, tried in turn, when a task alone is over the budget
_SHARES = (0.75, 0.5, 0.35, 0.25, 0.15, 0.1, 0.05, 0.0)


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
    #: the files in the task's scope as the project was given (path -> text), most needed first: those the
    #: task names, those the diff touches, the tests beside them (a batch too big drops from the end)
    files: dict[str, str] = field(default_factory=dict)
    #: a question: the points a correct answer must establish, its reference answer, plausible wrong answers
    points: list[str] = field(default_factory=list)
    reference_answer: str = ""
    wrong_answers: list[str] = field(default_factory=list)

    @property
    def question(self) -> bool:
        return bool(self.points)


class FileShown(BaseModel):
    path: str
    #: characters of the file, and how many of them the judge was shown (0: left out)
    chars: int
    shown: int


class TaskShown(BaseModel):
    """What the judge was shown of one task: its batch, its scope files and what was cut to fit."""

    batch: int = 0
    files: list[FileShown] = Field(default_factory=list)
    #: what was cut or left out so the task fitted alone in a batch (empty: shown whole)
    cut: list[str] = Field(default_factory=list)
    prompt_chars: int = 0


def _cut(text: str, cap: int) -> str:
    text = text or ""
    return text if len(text) <= cap else text[:cap] + f"\n[... {len(text) - cap} more characters cut]"


def render_task(view: TaskView, scale: float = 1.0) -> str:
    """One task's block; ``scale`` shortens the diff, commands, setup changes and reference diff (never the
    question's points, reference answer, wrong answers or the agent's answer)."""

    def cap(n: int) -> int:
        return max(int(n * scale), _MIN_PART)

    record = "\n".join(view.record) if view.record else "(no commands run)"
    files = ", ".join(view.files) if view.files else "(none in the project as given)"
    parts = [
        f"## Task {view.task_id}",
        f"Its scope files (shown above): {files}",
        f"Request:\n{_cut(view.request, REQUEST_CAP)}",
        f"Setup changes before the agent started:\n{_cut(view.setup_changes, cap(SETUP_CAP)) or '(none)'}",
        f"Checks that ran in code: {', '.join(view.checks_ran) or '(none)'}",
    ]
    if view.question:
        points = "\n".join(f"{k}. {p}" for k, p in enumerate(view.points, start=1))
        wrong = "\n".join(f"- {w}" for w in view.wrong_answers) or "(none)"
        parts += [
            f"A question: grade the answer against these {len(view.points)} points, in order.\n"
            f"Points a correct answer must establish:\n{points}",
            f"Reference answer (one correct answer, not the only wording):\n{view.reference_answer}",
            f"Plausible wrong answers (an answer saying these is wrong on that point):\n{wrong}",
        ]
    parts += [
        f"Agent's answer:\n{_cut(view.answer, ANSWER_CAP) or '(empty)'}",
        f"Commands the agent ran:\n{_cut(record, cap(RECORD_CAP))}",
        f"Diff:\n{_cut(view.diff, cap(DIFF_CAP)) or '(no changes)'}",
    ]
    if view.reference:
        parts.append(f"Reference diff ({view.reference_note}):\n{_cut(view.reference, cap(REFERENCE_CAP))}")
    return "\n".join(parts)


def _file_block(path: str, text: str, shown: str) -> str:
    note = "" if len(shown) == len(text) else f", the first {len(shown)} shown"
    return f"--- {path} ({len(text)} characters{note})\n{shown}"


@dataclass
class Batch:
    """One call's tasks, the scope files it shows (path -> the text shown) and what each task was shown."""

    project: str
    views: list[TaskView]
    files: dict[str, str] = field(default_factory=dict)
    scale: float = 1.0
    shown: dict[str, TaskShown] = field(default_factory=dict)

    def body(self) -> str:
        parts = [f"# The project as given\n{self.project}"] if self.project else []
        originals = {p: t for v in self.views for p, t in v.files.items()}
        if self.files:
            blocks = [_file_block(p, originals.get(p, t), t) for p, t in self.files.items()]
            parts.append("# The files in these tasks' scope, as the project was given\n" + "\n".join(blocks))
        parts += [render_task(v, self.scale) for v in self.views]
        ids = ", ".join(v.task_id for v in self.views)
        return "\n\n".join(parts) + f"\n\nGrade every task: {ids}. Reply with the JSON object only."

    def messages(self, system: str) -> list[Message]:
        return [Message("system", system), Message("user", self.body())]

    def size(self, system: str) -> int:
        return len(system) + len(self.body())


def _answer_room(view: TaskView) -> int:
    """About how many characters the judge writes for ``view`` (its dimensions, its points with quotes)."""
    return 110 + len(view.points) * (45 + QUOTE_CAP)


def _union(views: Sequence[TaskView]) -> dict[str, str]:
    out: dict[str, str] = {}
    for v in views:
        for path, text in v.files.items():
            out.setdefault(path, _cut_file(text, FILE_CAP))
    return out


def _cut_file(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[:cap]


def _record(batch: Batch, system: str, cut: dict[str, list[str]] | None = None) -> Batch:
    size = batch.size(system)
    for v in batch.views:
        files = [
            FileShown(path=p, chars=len(t), shown=len(batch.files.get(p, ""))) for p, t in v.files.items()
        ]
        notes = (cut or {}).get(v.task_id, [])
        batch.shown[v.task_id] = TaskShown(files=files, cut=notes, prompt_chars=size)
    return batch


def _alone(project: str, view: TaskView, system: str, budget: int) -> Batch:
    """``view`` in a batch of its own, cut (in the module's order) until it fits ``budget`` or nothing more
    may be cut."""
    batch = Batch(project=project, views=[view], files=_union([view]))
    notes: list[str] = []
    if len(batch.files) < len(view.files) or any(len(batch.files[p]) < len(t) for p, t in view.files.items()):
        notes.append(f"files over {FILE_CAP} characters shown from their start")
    for path in reversed(list(view.files)[1:]):
        if batch.size(system) <= budget:
            break
        del batch.files[path]
        notes.append(f"left out {path} ({len(view.files[path])} characters)")
    for share in _SHARES:
        if batch.size(system) <= budget:
            break
        batch.scale = share
    if batch.scale < 1.0:
        notes.append(f"diff, commands and setup changes cut to {batch.scale:.0%} of their caps")
    kept = dict(batch.files)
    for share in _SHARES:
        if batch.size(system) <= budget:
            break
        batch.files = {p: t[: int(len(t) * share)] for p, t in kept.items()}
    cut_files = [p for p, t in batch.files.items() if len(t) < len(kept[p])]
    if cut_files:
        notes.append("cut short: " + ", ".join(cut_files))
    if batch.size(system) > budget:
        notes.append(
            f"still over the budget ({batch.size(system)} > {budget} characters): the points, reference "
            "answer and the agent's answer are never cut"
        )
    return _record(batch, system, {view.task_id: notes})


def pack(
    project: str,
    views: Sequence[TaskView],
    budget: int | None,
    system: str,
    answer_chars: int | None = None,
) -> list[Batch]:
    """The batches of a pass under the judge's ``system`` prompt, in order (see the module docstring);
    ``budget`` None: one batch."""
    if budget is None:
        return (
            [_record(Batch(project=project, views=list(views), files=_union(views)), system)] if views else []
        )
    batches: list[Batch] = []
    current: list[TaskView] = []

    def fits(members: list[TaskView]) -> bool:
        room = answer_chars is None or sum(_answer_room(v) for v in members) <= answer_chars
        return room and Batch(project=project, views=members, files=_union(members)).size(system) <= budget

    def close() -> None:
        if current:
            batches.append(
                _record(Batch(project=project, views=list(current), files=_union(current)), system)
            )
            current.clear()

    for view in views:
        if fits([*current, view]):
            current.append(view)
            continue
        close()
        if fits([view]):
            current.append(view)
        else:
            batches.append(_alone(project, view, system, budget))
    close()
    return batches
