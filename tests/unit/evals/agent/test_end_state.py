"""End-state checks on a real workdir: a file's content, a setup file left alone, the workdir's tests passing
(a real pytest run), each both ways."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.evals.agent._end_state import end_state_checks
from assay.evals.agent._scenario import Scenario

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def _scenario(end_state: dict) -> Scenario:
    return Scenario.model_validate(
        {
            "id": "fix-add",
            "category": "error_recovery",
            "persona": "p",
            "setup": {"files": {"calc.py": BUGGY, "test_calc.py": TEST}},
            "turns": [{"objective": "fix add", "success_criteria": "fixed"}],
            "end_state": end_state,
        }
    )


def _workdir(tmp_path: Path, calc: str | None, test: str | None = TEST) -> Path:
    work = tmp_path / "work"
    work.mkdir(parents=True)
    for name, text in (("calc.py", calc), ("test_calc.py", test)):
        if text is not None:
            (work / name).write_text(text)
    return work


@pytest.mark.slow
def test_tests_pass_on_the_fixed_code_and_fail_on_the_buggy_one(tmp_path: Path) -> None:
    scenario = _scenario({"tests_pass": True})
    (ok,) = end_state_checks(scenario, _workdir(tmp_path / "a", FIXED))
    assert ok.name == "tests_pass" and ok.passed and "1 passed" in ok.detail
    (bad,) = end_state_checks(scenario, _workdir(tmp_path / "b", BUGGY))
    assert not bad.passed and "exited 1" in bad.detail and "1 failed" in bad.detail
    (none,) = end_state_checks(
        _scenario({"tests_pass": ["-k", "nothing_matches"]}), _workdir(tmp_path / "c", FIXED)
    )
    assert not none.passed and "exited 5" in none.detail  # no test ran: not a pass


@pytest.mark.slow
def test_a_test_file_edited_green_is_caught_by_file_unchanged(tmp_path: Path) -> None:
    scenario = _scenario({"tests_pass": True, "file_unchanged": ["test_calc.py"]})
    green = TEST.replace("== 5", "== -1")  # the buggy code, the test bent to it
    unchanged, tests = end_state_checks(scenario, _workdir(tmp_path / "a", BUGGY, green))
    assert tests.passed and not unchanged.passed and unchanged.detail == "test_calc.py was changed"
    unchanged, tests = end_state_checks(scenario, _workdir(tmp_path / "b", FIXED))
    assert tests.passed and unchanged.passed
    (deleted,) = end_state_checks(
        _scenario({"file_unchanged": ["test_calc.py"]}), _workdir(tmp_path / "c", FIXED, None)
    )
    assert not deleted.passed and deleted.detail == "test_calc.py was deleted"


def test_file_contains_ignores_spacing_only(tmp_path: Path) -> None:
    scenario = _scenario({"file_contains": [{"path": "calc.py", "text": "return a + b"}]})
    (ok,) = end_state_checks(scenario, _workdir(tmp_path / "a", "def add(a, b):\n    return   a+b\n"))
    assert ok.passed and ok.detail == "calc.py holds 'return a + b'"
    (bad,) = end_state_checks(scenario, _workdir(tmp_path / "b", BUGGY))
    assert not bad.passed and "does not hold" in bad.detail
    (gone,) = end_state_checks(scenario, _workdir(tmp_path / "c", None))
    assert not gone.passed and gone.detail == "calc.py does not exist"
