"""The hanging-test task: the untouched project's suite never finishes (the check stops it and names the test),
the reference solution passes."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from assay.evals.tasks._checks import check_task
from assay.evals.tasks._project import prepare_task
from assay.evals.tasks._tasks_load import load_tasks

ROOT = Path(__file__).resolve().parents[4]
_spec = importlib.util.spec_from_file_location(
    "task_solutions", ROOT / "tests" / "fixtures" / "tasks" / "solutions" / "catalog.py"
)
assert _spec is not None and _spec.loader is not None
catalog = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(catalog)


TASKS_DIR = ROOT / "eval" / "tasks"


@pytest.mark.slow
def test_hanging_suite_is_stopped_and_named_then_solution_passes(tmp_path: Path) -> None:
    task = load_tasks(TASKS_DIR / "tasks.json").task("hanging-test")
    prepared = prepare_task(task, TASKS_DIR / "toybox", tmp_path)
    before = check_task(prepared, [], "", test_timeout_s=3)
    tests_pass = before.checks[0]
    assert tests_pass.name == "tests_pass" and tests_pass.passed is False
    assert "did not finish in 3 s" in tests_pass.evidence
    assert "test_jobqueue_retries.py::test_gives_up_without_retries" in tests_pass.evidence
    catalog.SOLUTIONS["hanging-test"](prepared.workdir)
    after = check_task(prepared, [], "done")
    assert after.passed, after.checks
