"""check_task on what the reference agent really did (its own tools, a scripted model choosing the calls) on
the shipped bug-fix task: a fix tested after the last edit is verified; an edit after the tests is not. Where
the first answer ended is the harness's record: the reference agent's loop ends at it (measured, nothing
after); Claude Code's stream can go on after it (a call outside the request fails the task); a harness that
cannot tell leaves after_answer not measured (never passed, and not a failure of the task)."""

from __future__ import annotations

import json
import sys
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
    assert result.answer_at == 2  # the reference agent records where its first answer ended
    checks = check_task(p, result.tool_record, result.answer, calls_before_answer=result.answer_at)
    assert checks.passed, checks.checks
    assert checks.verified is not None and checks.verified.passed is True
    assert checks.after_answer.passed is True and "ended the run" in checks.after_answer.evidence


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


def _claude_stream(root: str, *calls: tuple[str, dict[str, Any], bool]) -> list[str]:
    """Claude Code stream-json: the fix and a test run, an answer ending the turn, then (a Stop hook sent it
    back) ``calls`` (name, input, unused) and the result event; file paths under ``root``."""
    lines = [json.dumps({"type": "system", "subtype": "init", "model": "m", "session_id": "s"})]

    def use(i: int, name: str, args: dict[str, Any], text: str = "") -> None:
        content = ([{"type": "text", "text": text}] if text else []) + [
            {"type": "tool_use", "id": f"t{i}", "name": name, "input": args}
        ]
        lines.append(json.dumps({"type": "assistant", "message": {"id": f"m{i}", "content": content}}))
        result = {"tool_use_id": f"t{i}", "type": "tool_result", "content": "ok", "is_error": False}
        lines.append(json.dumps({"type": "user", "message": {"role": "user", "content": [result]}}))

    edit = {"file_path": root + FIX["path"], "old_string": FIX["old"], "new_string": FIX["new"]}
    use(0, "Edit", edit, text="Let me fix the parser.")
    use(1, "Bash", {"command": "python -m pytest -q"})
    answer = {"id": "m-answer", "content": [{"type": "text", "text": "Fixed: a lowercase z is accepted."}]}
    lines.append(json.dumps({"type": "assistant", "message": answer}))
    lines.append(json.dumps({"type": "user", "message": {"role": "user", "content": "Stop hook: go on"}}))
    for i, (name, args, _) in enumerate(calls, start=2):
        use(i, name, args)
    lines.append(json.dumps({"type": "result", "subtype": "success", "result": "Fixed.", "num_turns": 5}))
    return lines


async def test_claude_code_going_on_after_its_answer_outside_the_request_fails(tmp_path: Path) -> None:
    from assay.agents.claude_code import parse_stream

    p = prepared_bug_fix(tmp_path)
    (p.workdir / FIX["path"]).write_text(
        (p.workdir / FIX["path"]).read_text().replace(FIX["old"], FIX["new"])
    )  # what the stream's Edit did
    root = f"{p.workdir}/"
    readme = {"file_path": root + "README.md", "old_string": "# toybox", "new_string": "# Toybox"}
    for late, ok in (
        ([("Edit", readme, False)], False),
        ([("Read", {"file_path": root + FIX["path"]}, False)], True),
    ):
        parsed = parse_stream(_claude_stream(root, *late), p.workdir)
        assert parsed.answer_at == 2
        checks = check_task(p, parsed.tool_record, parsed.answer, calls_before_answer=parsed.answer_at)
        assert [c.passed for c in checks.checks] == [True, True, True]
        assert checks.after_answer.passed is ok and checks.passed is ok
        if not ok:
            assert checks.failed_checks == ["after_answer"] and "README.md" in checks.after_answer.evidence


async def test_a_harness_that_cannot_tell_leaves_after_answer_not_measured(tmp_path: Path) -> None:
    p = prepared_bug_fix(tmp_path)
    agent_py = tmp_path / "agent.py"
    agent_py.write_text(
        "import pathlib\n"
        f"f = pathlib.Path({FIX['path']!r})\n"
        f"f.write_text(f.read_text().replace({FIX['old']!r}, {FIX['new']!r}))\n"
        "print('Fixed the parser.')\n"
    )
    harness = get_harness("command", template=f"{sys.executable} {agent_py}")
    try:
        result = await harness.run(p.task.prompt, RunSpec(workdir=p.workdir))
    finally:
        await harness.close()
    assert result.answer.strip() == "Fixed the parser." and result.answer_at is None
    checks = check_task(
        p,
        result.tool_record,
        result.answer,
        calls_before_answer=result.answer_at,
        harness="the command harness",
    )
    assert (
        checks.after_answer.passed is None
        and "command harness does not record" in checks.after_answer.evidence
    )
    assert checks.passed and checks.not_measured == ["after_answer"] and checks.failed_checks == []
    from assay.evals.tasks._run_adapter import checks_details

    details = checks_details(checks)
    assert details["checks_passed"] is True and details["not_measured"] == ["after_answer"]
    assert details["reason"] == ""
