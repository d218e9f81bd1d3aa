"""Reference solutions of three core coding tasks (bug fix, issue to fix, shell injection): each fails its checks on the untouched project and passes
them once applied; every coding task of tasks.json has one."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]
_spec = importlib.util.spec_from_file_location(
    "task_solutions", ROOT / "tests" / "fixtures" / "tasks" / "solutions" / "catalog.py"
)
assert _spec is not None and _spec.loader is not None
catalog = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(catalog)


from assay.agents.fence import fence_available  # noqa: E402
from assay.evals.tasks._tasks_load import load_tasks  # noqa: E402


@pytest.mark.parametrize("task_id", ["bug-fix", "issue-to-fix", "shell-injection"])
def test_core_solution(task_id: str, tmp_path: Path) -> None:
    catalog.fails_then_passes(task_id, tmp_path)


def test_every_coding_task_has_a_solution() -> None:
    tasks = load_tasks(ROOT / "eval" / "tasks" / "tasks.json")
    assert {t.id for t in tasks.tasks if t.kind == "coding"} == set(catalog.SOLUTIONS)


def _probed_tasks() -> list[str]:
    tasks = load_tasks(ROOT / "eval" / "tasks" / "tasks.json")
    return [t.id for t in tasks.tasks if t.kind == "coding" and t.expect.probe]


@pytest.mark.skipif(fence_available() is not None, reason="bubblewrap cannot run here")
@pytest.mark.parametrize("task_id", ["bug-fix", "label-issues"])
def test_a_fenced_grader_passes_the_reference_solution(task_id: str, tmp_path: Path) -> None:
    # the fence is on by default: its probe imports _probe.py beside it, which the fence must let it see
    catalog.fails_then_passes(task_id, tmp_path, fence=True)


@pytest.mark.slow
@pytest.mark.skipif(fence_available() is not None, reason="bubblewrap cannot run here")
@pytest.mark.parametrize("task_id", _probed_tasks())
def test_every_probed_solution_passes_fenced(task_id: str, tmp_path: Path) -> None:
    catalog.fails_then_passes(task_id, tmp_path, fence=True)
