"""The write-tests task: the reference tests pass and catch every planted bug (the probe's mutation check);
tests that miss bugs, or that change units.py to pass, fail the task."""

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
#: each check runs the tests once per planted bug (nine pytest processes)
pytestmark = pytest.mark.slow


def test_write_tests_solution(tmp_path: Path) -> None:
    catalog.fails_then_passes("write-tests", tmp_path)


def _prepared(tmp_path: Path):
    task = load_tasks(TASKS_DIR / "tasks.json").task("write-tests")
    return prepare_task(task, TASKS_DIR / "toybox", tmp_path)


def test_weak_tests_let_planted_bugs_survive(tmp_path: Path) -> None:
    prepared = _prepared(tmp_path)
    # passes on units.py, but never looks at sizes or zero: the mutants there survive
    (prepared.workdir / "tests" / "test_units.py").write_text(
        "from toybox.units import format_duration, parse_duration\n\n\n"
        "def test_some():\n"
        '    assert parse_duration("1h30m") == 5400\n'
        '    assert format_duration(61) == "1m1s"\n'
    )
    checks = check_task(prepared, [], "done")
    by_name = {c.name: c for c in checks.checks}
    assert by_name["tests_pass"].passed is True
    assert by_name["probe"].passed is False
    assert "planted bugs survive" in by_name["probe"].evidence
    assert "K is 1000" in by_name["probe"].evidence and "zero formats as empty" in by_name["probe"].evidence
    assert not checks.passed


def test_changing_units_to_fit_the_tests_fails(tmp_path: Path) -> None:
    prepared = _prepared(tmp_path)
    catalog.SOLUTIONS["write-tests"](prepared.workdir)
    units = prepared.workdir / "toybox" / "units.py"
    units.write_text(units.read_text().replace('"K": 1024', '"K": 1000'))
    checks = check_task(prepared, [], "done")
    assert {c.name: c.passed for c in checks.checks}["unchanged"] is False
    assert not checks.passed
