"""The committed expectations of eval tasks (eval/tasks/expectations/) are what `assay eval tasks propose` wrote
from real runs, and still fit the suites: each file loads with its measured_on, is named for its model and
suite, comes from at least three runs, and its per-task results name exactly the suite's tasks and add up to
the runs' measured passes (a suite changed without measuring again, or one part of the file edited by hand,
fails here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.evals.tasks._expect import expectations_path, load_tasks_expectations
from assay.evals.tasks._tasks_load import load_tasks

ROOT = Path(__file__).resolve().parents[4]
EXPECTATIONS = ROOT / "eval" / "tasks" / "expectations"
FILES = sorted(EXPECTATIONS.glob("*.json"))


def test_the_embedded_models_core_file_is_committed() -> None:
    assert EXPECTATIONS / "local_smollm2.core.json" in FILES


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_a_committed_file_is_a_proposal_from_real_runs(path: Path) -> None:
    exp, measured_on = load_tasks_expectations(path)
    assert exp.benchmark == "tasks"
    assert expectations_path(exp.model, exp.suite, EXPECTATIONS) == path
    runs = len(exp.measured)
    assert runs >= 3 and len(measured_on) == runs
    assert {m["run_id"] for m in measured_on} == {m.run_id for m in exp.measured}
    assert all(m["commit"] != "unknown" and m["machine"] != "unknown" for m in measured_on)
    tasks = json.loads(path.read_text(encoding="utf-8"))["tasks"]
    suite = [t.id for t in load_tasks(ROOT / "eval" / "tasks" / "tasks.json").suite(exp.suite)]
    assert sorted(tasks) == sorted(suite), "the suite changed: measure it again and propose"
    assert all(t["attempts"] == runs for t in tasks.values())  # every task measured in every run
    passed = [m.values["passed"] for m in exp.measured]
    assert sum(t["passed"] for t in tasks.values()) == round(sum(passed))
    assert exp.limits["min_passed"] <= min(passed)
