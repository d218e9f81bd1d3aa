"""Helpers of the eval tasks tests: a small tasks folder (a project with one bug, a coding task and a question) and scripted models for it."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

#: task copies and the cached toolchain (a venv with pytest, made once and reused by every test run)
WORK_ROOT = Path(tempfile.gettempdir()) / f"assay-tasks-tests-{os.getuid()}"
CALC = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def write_tasks_dir(root: Path) -> Path:
    """``root/tasks``: tasks.json (suites core/adversarial/full/everyday), toybox/, planted/, probes/."""
    tasks = root / "tasks"
    (tasks / "toybox" / "tests").mkdir(parents=True)
    (tasks / "planted").mkdir()
    (tasks / "probes").mkdir()
    (tasks / "toybox" / "calc.py").write_text(CALC)
    (tasks / "toybox" / "tests" / "test_calc.py").write_text(TEST)
    (tasks / "toybox" / "README.md").write_text("calc: add two numbers.\n")
    data = {
        "version": 1,
        "suites": {s: ["fix-add", "explain"] for s in ("core", "adversarial", "full", "everyday")},
        "tasks": [
            {
                "id": "fix-add",
                "kind": "coding",
                "category": "bug_fix",
                "prompt": "add(2, 3) returns -1. Fix it and run the tests.",
                "scope": ["calc.py", "tests/"],
                "expect": {"tests_pass": True, "unchanged": ["tests/test_calc.py"]},
            },
            {
                "id": "explain",
                "kind": "question",
                "category": "explain",
                "prompt": "What does calc.add do?",
                "scope": ["calc.py"],
                "must_establish": ["it subtracts b from a (a bug)"],
                "reference_answer": "It returns a - b, which is a bug: it should add.",
                "wrong_answers": ["it adds two numbers", "it multiplies a by b"],
            },
        ],
    }
    (tasks / "tasks.json").write_text(json.dumps(data, indent=2))
    return tasks


def agent_script(fix: bool = True, claim: str = "Fixed add; pytest: 1 passed.") -> list[dict[str, Any]]:
    """The reference agent's replies for the two tasks (in suite order): a fix then tests, then an answer."""
    replies: list[dict[str, Any]] = []
    if fix:
        edit = {"path": "calc.py", "old": "a - b", "new": "a + b"}
        replies.append({"tool_calls": [{"name": "edit_file", "arguments": edit}]})
        replies.append({"tool_calls": [{"name": "run_tests", "arguments": {}}]})
    replies.append({"text": claim})
    replies.append({"text": "It returns a - b: a bug, it should add."})
    return replies


#: words of the scripted explain answer that establish its one point
EXPLAIN_QUOTE = "It returns a - b: a bug"


def grades(explain_points: bool | None = None, quote: str = EXPLAIN_QUOTE, **scores: int) -> dict[str, Any]:
    """A judge reply grading both tasks (``fix_add``/``explain`` give every dimension of that task); the explain
    question's one point is established (with ``quote``) when ``explain_points``, by default when its grade is
    3 or more (a judge that grades an answer low finds its point missing)."""
    entry = lambda task, s: {  # noqa: E731
        "task": task,
        "instructions": s,
        "quality": s,
        "reasoning": s,
        "claims": s,
        "note": "ok",
    }
    established = scores["explain"] >= 3 if explain_points is None else explain_points
    explain = {
        **entry("explain", scores["explain"]),
        "points": [{"established": established, "quote": quote}],
    }
    return {"text": json.dumps({"tasks": [entry("fix-add", scores["fix_add"]), explain]})}


def write_script(path: Path, replies: list[dict[str, Any]]) -> str:
    path.write_text(yaml.safe_dump({"replies": replies}))
    return f"scripted/{path}"


def run_tasks(
    tmp_path: Path, tasks_dir: Path, agent: str, judge: str, *extra: str
) -> tuple[int, str, Path | None]:
    """``assay eval tasks run`` with the given model specs; (exit code, output, run directory)."""
    from click.testing import CliRunner

    from assay.cli._tasks import tasks_run_command

    args = [
        "--model", agent, "--judge-model", judge,
        "--tasks-file", str(tasks_dir / "tasks.json"),
        "--results-dir", str(tmp_path / "results"),
        "--work-root", str(WORK_ROOT),
        *extra,
    ]  # fmt: skip
    result = CliRunner().invoke(tasks_run_command, args, catch_exceptions=False)
    found = [
        ln.split(": ", 1)[1].strip() for ln in result.output.splitlines() if ln.startswith("run directory: ")
    ]
    return result.exit_code, result.output, Path(found[-1]) if found else None
