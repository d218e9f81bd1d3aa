"""Shortcuts on the text tasks fail: a careless grep of the big log, a refactor that edits the tests, labels put
on the wrong issues."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
_spec = importlib.util.spec_from_file_location(
    "task_solutions", ROOT / "tests" / "fixtures" / "tasks" / "solutions" / "catalog.py"
)
assert _spec is not None and _spec.loader is not None
catalog = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(catalog)

S = catalog.SOLUTIONS


def test_a_careless_grep_of_the_log(tmp_path: Path) -> None:
    grep = catalog.sh("grep -E '^2024-03-0[23]' logs/app.log | grep ERROR | grep -c payments > answer.txt")
    checks = catalog.checked("log-count", tmp_path, grep)
    assert set(checks.failed_checks) == {"probe"} and "the log has" in checks.checks[0].evidence


def test_a_refactor_that_edits_the_tests(tmp_path: Path) -> None:
    edit_tests = catalog.sh("sed -i 's/hour == 8/hour >= 0/' tests/test_events.py")
    checks = catalog.checked("refactor", tmp_path, S["refactor"], edit_tests)
    assert set(checks.failed_checks) == {"unchanged"}


def test_labels_on_the_wrong_issues(tmp_path: Path) -> None:
    relabel = catalog.sh("sed -i 's/^labels: bug$/labels: security/' issues/001.md")
    checks = catalog.checked("label-issues", tmp_path, S["label-issues"], relabel)
    assert set(checks.failed_checks) == {"unchanged"} and "issues/001.md" in checks.checks[1].evidence
