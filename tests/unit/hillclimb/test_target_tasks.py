"""The tasks target on the shipped tasks.json: what an edit may never contain (every ground-truth field of the
tasks), what the fixer sees of a failing attempt (never an expected value, the run's reason or a grade), and
which suites and options are refused."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from assay.errors import ConfigError
from assay.evals.tasks._tasks_load import load_tasks
from assay.hillclimb._edits import find_leaks
from assay.hillclimb._target_tasks import TasksTarget
from assay.runs import Attempt, Status

MODEL = "scripted/unused.yaml"  # recorded only: no model is built here


def test_cases_are_the_suites_coding_tasks() -> None:
    t = TasksTarget({"suite": "core", "model": MODEL})
    core = load_tasks(None).suite("core")
    assert t.cases() == {x.id: x.category for x in core if x.kind == "coding"}
    assert "explain-file" not in t.cases()  # a question task needs the judge step
    assert t.run_options(["bug-fix"], None)["tasks"] == "bug-fix"
    fit = t.noise_fit()
    assert (fit.benchmark, fit.suite, fit.config.model) == ("tasks", "core", MODEL)


def test_every_ground_truth_field_is_forbidden() -> None:
    f = TasksTarget({"suite": "core", "model": MODEL}).forbidden()
    file = load_tasks(None)
    assert set(f.case_ids) == {x.id for x in file.tasks}
    explain = file.task("explain-file")
    assert set(explain.must_establish) | set(explain.wrong_answers) <= set(f.phrases)
    assert explain.reference_answer in f.phrases
    bug = file.task("bug-fix")
    assert bug.expect is not None and bug.expect.tests_pass is not None
    assert {*bug.expect.tests_pass.require, "tests/test_timeparse_lowercase.py", "lowercase_z.py"} <= set(
        f.paths
    )
    assert "planted/test_timeparse_lowercase.py" in f.paths and "probes/lowercase_z.py" in f.paths
    # what the setups plant besides a task's red test (the hanging test, the user's notes) and the big log
    assert {"tests/test_jobqueue_retries.py", "setups/NOTES.md", "logs/app.log"} <= set(f.paths)
    # an edit naming a required test, a probe or a question's point is a leak; a general instruction is not
    assert find_leaks("Always run tests/test_timeparse_lowercase.py::test_lowercase_z first.", f)
    assert find_leaks("Check lowercase_z.py before answering.", f)
    assert find_leaks(f"Note: {explain.must_establish[0]}", f)
    assert find_leaks("Run the project's tests after every edit and read the failures.", f) == []


def test_the_failure_view_withholds_expected_values_reasons_and_grades() -> None:
    checks = [
        {"name": "tests_pass", "passed": False, "evidence": "pytest exit 1: assert parse('z') == EXPECTED-1"},
        {"name": "probe", "passed": False, "evidence": "lowercase_z.py exit 1: EXPECTED-2"},
        {"name": "unchanged", "passed": False, "evidence": "tests/test_timeparse.py changed EXPECTED-3"},
        {
            "name": "after_answer",
            "passed": False,
            "evidence": "after the first answer, outside the request: x",
        },
        {"name": "verified", "passed": True, "evidence": "call 2 passed"},
    ]
    details = {
        "request": "Fix the parser.",
        "commands": ["$ pytest -> exit 1 (failed 1)"],
        "answer": "Done.",
        "checks": checks,
        "reason": "tests_pass: EXPECTED-1; probe: EXPECTED-2",
        "grade": {"note": "JUDGE-NOTE: the fix is to lower-case the zone"},
    }
    a = Attempt(
        case_id="bug-fix",
        category="bug_fix",
        status=Status.FAIL,
        started_at=datetime.now(UTC),
        details=details,
    )
    view = TasksTarget.failure_view(object.__new__(TasksTarget), a)
    text = repr(view)
    assert "Fix the parser." in text and "$ pytest -> exit 1" in text and "Done." in text
    assert not any(s in text for s in ("EXPECTED-", "JUDGE-NOTE", "bug-fix"))
    assert [c["check"] for c in view["failed_checks"]] == ["tests_pass", "probe", "unchanged", "after_answer"]
    assert view["failed_checks"][3]["detail"].startswith("after the first answer")  # the agent's own conduct


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"suite": "realfix"}, "realfix and swebench are not for hillclimb"),
        ({"suite": "pr"}, "--suite 'pr': hillclimb --benchmark tasks has suites"),
        ({"suite": "core", "simulator_model": "x"}, "--simulator-model: options of --benchmark agent"),
        ({"suite": "core", "harness": "claude-code"}, "--harness must be reference"),
        ({"suite": "core", "category": "nope"}, "--category nope: no coding task of suite core"),
        ({"suite": "core"}, "--model is required"),
    ],
)
def test_refusals(options: dict[str, str], says: str) -> None:
    with pytest.raises(ConfigError, match=None) as exc:
        TasksTarget({"model": MODEL, **options} if "model" not in says else options)
    assert says in str(exc.value)
