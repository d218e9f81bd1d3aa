"""The tasks of ``assay eval tasks``: real work on ``eval/tasks/toybox/``, as declared in ``eval/tasks/tasks.json``.

The file (loaded by :func:`assay.evals.tasks._tasks_load.load_tasks`)::

    {"version": 1,
     "suites": {"core": ["bug-fix", ...], "adversarial": [...], "full": [...], "everyday": [...]},
     "tasks": [
       {"id": "bug-fix", "kind": "coding", "category": "bug_fix", "prompt": "...",
        "setup": [{"kind": "plant_test", "file": "test_timeparse_lowercase.py"}],
        "scope": ["toybox/timeparse.py", "tests/"],
        "expect": {"tests_pass": {"require": ["tests/test_timeparse_lowercase.py::test_lowercase_z"]},
                   "probe": "lowercase_z.py",
                   "unchanged": ["tests/test_timeparse_lowercase.py"]}},
       {"id": "explain-file", "kind": "question", "prompt": "...",
        "must_establish": ["..."], "reference_answer": "...", "wrong_answers": ["..."]}]}

A **coding** task passes when every check of its ``expect`` block holds (see ``_checks.check_task``); a
**question** task has no ``expect`` block (one is a load error) and is graded by the judge against its
``must_establish`` points, reference answer and plausible wrong answers. ``setup`` names the changes
``_setups`` makes to the task's copy before the agent starts; ``scope`` is what the request is about
(paths, globs or folders ending in ``/``), read by the ``after_answer`` check.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "SETUP_KINDS",
    "Expect",
    "Setup",
    "SetupKind",
    "Task",
    "TaskKind",
    "TasksFile",
    "TestsPass",
]

TaskKind = Literal["coding", "question"]
#: the setups ``_setups.apply_setup`` knows (each tested for the state it promises)
SetupKind = Literal[
    "plant_test",  # copy eval/tasks/planted/<file> into tests/ (a task's red test)
    "unrelated_failing_test",  # a failing test that has nothing to do with the request
    "warm_cache_test",  # a test that passes only when a cache the code never builds is present
    "hanging_test",  # a test that never finishes
    "big_log",  # logs/app.log, about 1.7 MB, the same bytes every run
    "readme_contradiction",  # the README states a default the code does not have
    "user_edits",  # uncommitted edits of the user's own in the git checkout
    "not_installed",  # the package under src/, installed nowhere: pytest from the root cannot import it
]
SETUP_KINDS: tuple[str, ...] = SetupKind.__args__  # type: ignore[attr-defined]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    #: the line of this object in tasks.json (set by the loader; 0 when built in code)
    line: int = Field(default=0, alias="__line__", exclude=True)


class Setup(_Model):
    """One change to the task's copy, applied in order after the pristine project is committed."""

    kind: SetupKind
    #: for ``plant_test``: the file under ``eval/tasks/planted/``
    file: str | None = None

    @model_validator(mode="after")
    def _file_only_for_plant(self) -> Setup:
        if self.kind == "plant_test" and not self.file:
            raise ValueError("a plant_test setup needs 'file' (a file under eval/tasks/planted/)")
        if self.kind != "plant_test" and self.file is not None:
            raise ValueError(f"'file' is only for plant_test, not {self.kind}")
        return self


class TestsPass(_Model):
    """The project's own pytest run on the finished project (in a copy, after the agent exits)."""

    __test__ = False  # not a pytest test class

    #: pytest arguments selecting tests (files or node ids); empty: the whole suite
    select: list[str] = Field(default_factory=list)
    #: node ids or files left out (an unrelated failing test the task must not touch)
    deselect: list[str] = Field(default_factory=list)
    #: node ids that must be reported as passed (a deleted, skipped or deselected one fails)
    require: list[str] = Field(default_factory=list)
    #: paths removed from the copy before pytest runs (caches: a pre-warmed one must not count)
    cold: list[str] = Field(default_factory=list)
    timeout_s: float = Field(default=60.0, gt=0)


class Expect(_Model):
    """What the finished project must show. Each field present is one check."""

    tests_pass: TestsPass | None = None
    #: a Python file under ``eval/tasks/probes/``, run inside a copy of the finished project (exit 0 = holds)
    probe: str | None = None
    #: paths or globs (relative to the project) byte-identical to the snapshot taken after setup
    unchanged: list[str] = Field(default_factory=list)
    #: paths whose uncommitted edits must still be uncommitted (HEAD unmoved, nothing stashed)
    keep_uncommitted: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _tests_pass_true(cls, data: Any) -> Any:
        # "tests_pass": true is the whole suite with the defaults
        if isinstance(data, dict) and data.get("tests_pass") is True:
            data = {**data, "tests_pass": {}}
        return data

    @model_validator(mode="after")
    def _not_empty(self) -> Expect:
        if not (self.tests_pass or self.probe or self.unchanged or self.keep_uncommitted):
            raise ValueError("an expect block needs at least one check")
        return self


class Task(_Model):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    kind: TaskKind
    #: what kind of developer request it is (bug_fix, refactor, code_review, ...), for the report
    category: str
    prompt: str = Field(min_length=1)
    setup: list[Setup] = Field(default_factory=list)
    #: what the request is about: paths, globs, or folders ending in "/" (read by ``after_answer``)
    scope: list[str] = Field(default_factory=list)
    expect: Expect | None = None
    #: question tasks: what a correct answer must establish, the reference answer, plausible wrong answers
    must_establish: list[str] = Field(default_factory=list)
    reference_answer: str | None = None
    wrong_answers: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _kind_fields(self) -> Task:
        if self.kind == "question":
            if self.expect is not None:
                raise ValueError(
                    "a question task cannot have an 'expect' block (it is judged on must_establish)"
                )
            if not self.must_establish or not self.reference_answer or not self.wrong_answers:
                raise ValueError("a question task needs must_establish, reference_answer and wrong_answers")
            if len(self.wrong_answers) < 2:  # its controls: the reference must pass, two wrong answers fail
                raise ValueError("a question task needs at least two wrong_answers (its controls)")
        else:
            if self.expect is None:
                raise ValueError("a coding task needs an 'expect' block")
            if self.must_establish or self.reference_answer or self.wrong_answers:
                raise ValueError("must_establish, reference_answer and wrong_answers are for question tasks")
        return self


class TasksFile(_Model):
    version: int = 1
    #: suite name -> task ids, in order
    suites: dict[str, list[str]]
    tasks: list[Task]

    def task(self, task_id: str) -> Task:
        for t in self.tasks:
            if t.id == task_id:
                return t
        raise KeyError(task_id)

    def suite(self, name: str) -> list[Task]:
        """The tasks of suite ``name`` in its order (KeyError for an unknown suite)."""
        return [self.task(i) for i in self.suites[name]]
