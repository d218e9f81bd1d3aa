"""Loading tasks.json: the shipped file, and every malformed one refused naming its file and line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.evals.tasks._tasks_load import REQUIRED_SUITES, load_tasks

ROOT = Path(__file__).resolve().parents[4]
SHIPPED = ROOT / "eval" / "tasks" / "tasks.json"
EVERYDAY = {
    "explain_file", "code_review", "refactor", "bug_fix", "triage", "find_duplicate", "issue_to_fix",
    "draft_reply", "review_patch", "write_tests", "csv_report", "security_fix", "label_issues", "feature",
}  # fmt: skip


def test_shipped_tasks_load() -> None:
    tasks = load_tasks(SHIPPED)
    assert set(REQUIRED_SUITES) <= set(tasks.suites)
    core = [
        "explain-file",
        "bug-fix",
        "weekly-report",
        "env-config",
        "unrelated-failing",
        "warm-cache",
        "user-edits",
    ]
    adversarial = ["unrelated-failing", "warm-cache", "user-edits", "readme-vs-code", "test-not-installed",
                   "log-count", "hanging-test"]  # fmt: skip
    assert tasks.suites["core"] == core and tasks.suites["adversarial"] == adversarial
    # full: core, then the rest of adversarial, then refactor, code review, review a patch, write tests
    rest = ["refactor", "code-review", "review-patch", "write-tests"]
    assert tasks.suites["full"] == list(dict.fromkeys(core + adversarial)) + rest
    assert {t.id for t in tasks.tasks} == {i for ids in tasks.suites.values() for i in ids}  # none unused
    everyday = tasks.suite("everyday")
    assert len(everyday) == 14 and {t.category for t in everyday} == EVERYDAY
    for t in tasks.tasks:
        assert (t.expect is None) == (t.kind == "question")
        assert t.scope, f"{t.id}: no scope (after_answer needs one)"
    kinds = {s.kind for t in tasks.suite("adversarial") for s in t.setup}
    assert kinds == {"unrelated_failing_test", "warm_cache_test", "hanging_test", "big_log", "readme_contradiction",
                     "user_edits", "plant_test", "not_installed"}  # fmt: skip
    assert {s.kind for t in tasks.suite("core") for s in t.setup} >= {
        "unrelated_failing_test", "warm_cache_test", "user_edits"}  # the three traps  # fmt: skip


@pytest.fixture
def tasks_dir(tmp_path: Path) -> Path:
    """A copy of the shipped tasks folder (tasks.json rewritten per test)."""
    dest = tmp_path / "tasks"
    shutil.copytree(SHIPPED.parent, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def write(tasks_dir: Path, data: dict) -> Path:
    path = tasks_dir / "tasks.json"
    path.write_text(json.dumps(data, indent=2))
    return path


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), start=1) if needle in line)


def shipped() -> dict:
    return json.loads(SHIPPED.read_text())


def test_a_question_with_an_expect_block_is_refused(tasks_dir: Path) -> None:
    data = shipped()
    question = next(t for t in data["tasks"] if t["id"] == "explain-file")
    question["expect"] = {"tests_pass": True}
    path = write(tasks_dir, data)
    with pytest.raises(ConfigError, match="question task cannot have an 'expect' block") as err:
        load_tasks(path)
    assert err.value.path == str(path)
    assert err.value.line == line_of(path, '"id": "explain-file"') - 1  # the task's own opening line


def test_a_coding_task_without_expect_is_refused(tasks_dir: Path) -> None:
    data = shipped()
    del next(t for t in data["tasks"] if t["id"] == "bug-fix")["expect"]
    with pytest.raises(ConfigError, match="coding task needs an 'expect' block"):
        load_tasks(write(tasks_dir, data))


def test_an_unknown_field_names_its_line(tasks_dir: Path) -> None:
    data = shipped()
    next(t for t in data["tasks"] if t["id"] == "bug-fix")["expect"]["unchanged_files"] = ["x"]
    path = write(tasks_dir, data)
    with pytest.raises(ConfigError, match="unknown field 'unchanged_files'") as err:
        load_tasks(path)
    assert err.value.line == line_of(path, '"unchanged_files"')


def test_an_unknown_setup_kind(tasks_dir: Path) -> None:
    data = shipped()
    next(t for t in data["tasks"] if t["id"] == "bug-fix")["setup"].append({"kind": "flaky_network"})
    path = write(tasks_dir, data)
    with pytest.raises(ConfigError, match="setup") as err:
        load_tasks(path)
    assert err.value.line == line_of(path, '"flaky_network"')


def test_duplicate_id_and_unknown_suite_member(tasks_dir: Path) -> None:
    data = shipped()
    data["tasks"].append(dict(data["tasks"][0]))
    with pytest.raises(ConfigError, match="task id 'explain-file' is also used by task 1"):
        load_tasks(write(tasks_dir, data))
    data = shipped()
    data["suites"]["core"].append("no-such-task")
    path = write(tasks_dir, data)
    with pytest.raises(ConfigError, match="suite 'core' names unknown task 'no-such-task'") as err:
        load_tasks(path)
    assert err.value.line == line_of(path, '"core"')  # the suite's line (list items carry none)


def test_a_missing_suite_probe_or_planted_file(tasks_dir: Path) -> None:
    data = shipped()
    del data["suites"]["everyday"]
    with pytest.raises(ConfigError, match="suite 'everyday' is missing"):
        load_tasks(write(tasks_dir, data))
    (tasks_dir / "probes" / "lowercase_z.py").unlink()
    path = write(tasks_dir, shipped())
    with pytest.raises(ConfigError, match=r"probe probes/lowercase_z\.py does not exist") as err:
        load_tasks(path)
    assert err.value.line == line_of(path, '"lowercase_z.py"')
    shutil.copy(SHIPPED.parent / "probes" / "lowercase_z.py", tasks_dir / "probes")
    (tasks_dir / "planted" / "test_cli_limit_zero.py").unlink()
    with pytest.raises(ConfigError, match=r"planted file planted/test_cli_limit_zero\.py does not exist"):
        load_tasks(path)


def test_bad_json_and_a_question_without_wrong_answers(tasks_dir: Path) -> None:
    path = tasks_dir / "tasks.json"
    path.write_text('{"version": 1,\n "suites": {\n')
    with pytest.raises(ConfigError, match="invalid JSON") as err:
        load_tasks(path)
    assert err.value.path == str(path) and err.value.line is not None
    data = shipped()
    next(t for t in data["tasks"] if t["id"] == "draft-reply")["wrong_answers"] = ["one is not enough"]
    with pytest.raises(ConfigError, match="at least two wrong_answers"):
        load_tasks(write(tasks_dir, data))
    next(t for t in data["tasks"] if t["id"] == "draft-reply")["wrong_answers"] = []
    with pytest.raises(ConfigError, match="must_establish, reference_answer and wrong_answers"):
        load_tasks(write(tasks_dir, data))


def test_plant_test_needs_a_file(tasks_dir: Path) -> None:
    data = shipped()
    next(t for t in data["tasks"] if t["id"] == "bug-fix")["setup"] = [{"kind": "plant_test"}]
    with pytest.raises(ConfigError, match="plant_test setup needs 'file'"):
        load_tasks(write(tasks_dir, data))
