"""Suites of ``assay eval tasks`` that are not toybox tasks (``realfix``, ``swebench``): one class per kind.

:data:`SUITE_KINDS` names each such suite's class (``module:Class``, imported when the suite is asked for).
:class:`~assay.evals.tasks._run.TasksBenchmark` hands such a suite its loading, its setup and teardown (after
the shared ones: work root, gateway), each attempt, and the judge step's inputs and verdicts; everything else
(options, the gateway route, caps, journal, scorecard, judge call) stays the benchmark's.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from assay.errors import ConfigError

if TYPE_CHECKING:
    from assay.agents import Limits
    from assay.evals.tasks._judge import TaskGrade, TasksJudgement, TaskView
    from assay.evals.tasks._task import Task
    from assay.exec import AttemptContext, Case, Outcome, Suite
    from assay.runs import Attempt, Scorecard

__all__ = ["KIND_OPTIONS", "SUITE_KINDS", "JudgeInputs", "TasksBench", "TasksSuiteKind", "suite_kind"]

#: suite name -> the ``module:Class`` of its :class:`TasksSuiteKind`
SUITE_KINDS: dict[str, str] = {
    "realfix": "assay.evals.tasks._realfix:RealfixSuite",
    "swebench": "assay.evals.tasks._swebench:SwebenchSuite",
}
#: options only some suite kinds read (each kind lists its own in ``own_options``; elsewhere one is refused)
KIND_OPTIONS: tuple[str, ...] = (
    "repo_url",
    *("instances", "sample", "seed", "dataset", "offline", "repo_source", "repo_specs", "grader"),
    *("no_evaluate", "keep_images"),
)

#: what the judge step reads: the project text, and each pass's (attempt, view) pairs
JudgeInputs = tuple[str, Mapping[int, list[tuple["Attempt", "TaskView"]]]]


class TasksBench(Protocol):
    """What a suite kind and the judge step read of the tasks benchmark (``TasksBenchmark`` is one; typed by
    this protocol, they import nothing of it)."""

    name: str
    options: dict[str, Any]
    kind: TasksSuiteKind | None
    judgement: TasksJudgement | None
    regraded: dict[tuple[str, int], Attempt]
    _gateway: Any
    _work_root: Path | None
    _tasks_dir: Path
    _tasks: dict[str, Task]

    @property
    def model(self) -> str: ...

    @property
    def harness_name(self) -> str: ...

    @property
    def judge_model(self) -> str: ...

    def limits(self) -> Limits: ...

    def _harness_options(self) -> dict[str, Any]: ...


class TasksSuiteKind:
    """One kind of non-toybox suite. Subclasses implement :meth:`load` and :meth:`run_case`."""

    #: what the scorecard's subject config says of the agent's toolchain
    toolchain: tuple[str, ...] = ()
    #: the options of :data:`KIND_OPTIONS` this kind reads
    own_options: tuple[str, ...] = ()

    def __init__(self, bench: TasksBench) -> None:
        self.bench = bench

    def load(self, suite: str) -> Suite:
        raise NotImplementedError

    async def setup(self, run_dir: Path) -> None:
        """After the benchmark's own setup (work root, gateway)."""

    async def teardown(self) -> None:
        """Before the benchmark's own teardown."""

    async def run_case(self, case: Case, ctx: AttemptContext) -> Outcome:
        raise NotImplementedError

    def judge_inputs(self, attempts: list[Attempt]) -> JudgeInputs:
        """What the judge reads (only called in the judge step, after every agent exited)."""
        raise ConfigError(f"suite {type(self).__name__} has no judge step")

    def verdict(self, att: Attempt, grade: TaskGrade) -> Attempt | None:
        """The judged attempt's new journal record, or None when the grade decides nothing."""
        return None

    def subject_extra(self) -> dict[str, Any]:
        return {}

    def scorecard_extra(self, attempts: list[Attempt]) -> dict[str, Any]:
        """What the scorecard keeps for this kind's report section (beside the tasks summary)."""
        return {}

    def report_section(self, scorecard: Scorecard) -> str:
        """This kind's section of ``report.md`` (after the tasks summary)."""
        return ""


def suite_kind(suite: str, bench: TasksBench) -> TasksSuiteKind | None:
    """The kind of ``suite`` bound to ``bench`` (None for a toybox suite); a kind's option given to a suite
    that does not read it is a ConfigError naming the flag."""
    spec = SUITE_KINDS.get(suite)
    kind: TasksSuiteKind | None = None
    if spec is not None:
        module, _, name = spec.partition(":")
        kind = getattr(importlib.import_module(module), name)(bench)
    own = kind.own_options if kind is not None else ()
    for option in KIND_OPTIONS:
        if bench.options.get(option) not in (None, "", False, ()) and option not in own:
            users = [s for s in SUITE_KINDS if option in _own_options(s)]
            flag = "--" + option.replace("_", "-")
            raise ConfigError(f"{flag} applies to --suite {' or '.join(users) or '(none)'}, not {suite}")
    return kind


def _own_options(suite: str) -> tuple[str, ...]:
    module, _, name = SUITE_KINDS[suite].partition(":")
    return tuple(getattr(importlib.import_module(module), name).own_options)
