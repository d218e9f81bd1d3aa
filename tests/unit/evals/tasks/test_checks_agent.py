"""check_task on what the reference agent really did (its own tools, a scripted model choosing the calls) on
the shipped bug-fix task: a fix tested after the last edit is verified; an edit after the tests is not; a run
after the answer on something the request never touched fails the task."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from assay.agents import get_harness
from assay.agents._harness import RunSpec
from assay.agents.record import AgentResult
from assay.evals.tasks._checks import check_task
from assay.evals.tasks._project import PreparedTask, prepare_task
from assay.evals.tasks._tasks_load import load_tasks

ROOT = Path(__file__).resolve().parents[4]
TASKS_DIR = ROOT / "eval" / "tasks"
FIX = {
    "path": "toybox/timeparse.py",
    "old": 'if not text.endswith("Z"):',
    "new": 'if text[-1:] not in "Zz" or not text:',
}


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


async def agent(
    tmp_path: Path, prepared: PreparedTask, replies: list[dict[str, Any]], tag: str
) -> AgentResult:
    script = tmp_path / f"{tag}.yaml"
    script.write_text(yaml.safe_dump({"replies": replies}))
    harness = get_harness("reference", model=f"scripted/{script}")
    try:
        return await harness.run(prepared.task.prompt, RunSpec(workdir=prepared.workdir))
    finally:
        await harness.close()


def prepared_bug_fix(tmp_path: Path) -> PreparedTask:
    task = load_tasks(TASKS_DIR / "tasks.json").task("bug-fix")
    return prepare_task(task, TASKS_DIR / "toybox", tmp_path / "work")


async def test_a_tested_fix_passes_and_is_verified(tmp_path: Path) -> None:
    p = prepared_bug_fix(tmp_path)
    result = await agent(
        tmp_path, p, [call("edit_file", **FIX), call("run_tests"), {"text": "Fixed; 26 passed."}], "a"
    )
    assert [c.kind for c in result.tool_record] == ["edit", "test"]
    checks = check_task(p, result.tool_record, result.answer)
    assert checks.passed, checks.checks
    assert checks.verified is not None and checks.verified.passed is True


async def test_an_edit_after_the_tests_is_unverified(tmp_path: Path) -> None:
    p = prepared_bug_fix(tmp_path)
    replies = [
        call("edit_file", **FIX),
        call("run_tests"),
        call("edit_file", path="toybox/timeparse.py", old='FORMAT = "', new='# the format\nFORMAT = "'),
        {"text": "Fixed."},
    ]
    result = await agent(tmp_path, p, replies, "b")
    checks = check_task(p, result.tool_record, result.answer)
    assert checks.passed  # the project is right...
    assert (
        checks.verified is not None and checks.verified.passed is False
    )  # ...but the last edit was never tested
    assert "no pytest run after the last edit (call 3)" in checks.verified.evidence


async def test_a_run_after_the_answer_outside_the_request_fails(tmp_path: Path) -> None:
    p = prepared_bug_fix(tmp_path)
    first = await agent(tmp_path, p, [call("edit_file", **FIX), call("run_tests"), {"text": "Fixed."}], "c1")
    # the user says thanks; the agent goes on to tidy the README nobody asked about
    later = [call("edit_file", path="README.md", old="# toybox", new="# Toybox"), {"text": "Also tidied."}]
    second = await agent(tmp_path, p, later, "c2")
    record = first.tool_record + second.tool_record
    checks = check_task(p, record, first.answer, calls_before_answer=len(first.tool_record))
    assert [c.passed for c in checks.checks] == [True, True, True]
    assert not checks.passed and checks.failed_checks == ["after_answer"]
    assert "call 3" in checks.after_answer.evidence and "README.md" in checks.after_answer.evidence
