"""Reference solutions of the other everyday coding tasks (weekly CSV report, label two issues,
refactor, config from the environment): fail on the untouched project, pass once applied."""

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


@pytest.mark.parametrize("task_id", ["weekly-report", "label-issues", "refactor", "env-config"])
def test_everyday_solution(task_id: str, tmp_path: Path) -> None:
    catalog.fails_then_passes(task_id, tmp_path)
