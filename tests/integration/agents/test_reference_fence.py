"""The reference agent's commands: no provider key in their environment; the shell check is best effort (a
built-up path gets past it), and with RunSpec.fence the real bubblewrap is the boundary that holds."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from assay.agents import RunSpec
from assay.agents.fence import fence_available
from assay.agents.reference import ReferenceHarness
from assay.models.scripted import ScriptedModel

SECRET = "the answer key: 42"
# builds '..' at run time, so the text of the command never shows it
SNEAKY_READ = "D=$(printf '%s%s' . .); cat $D/answers/key.txt"
SNEAKY_WRITE = "D=$(printf '%s%s' . .); echo planted > $D/answers/planted.txt"


@pytest.fixture
def task(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("inside\n")
    answers = tmp_path / "answers"
    answers.mkdir()
    (answers / "key.txt").write_text(SECRET)
    return work


def _shell(*commands: str) -> ScriptedModel:
    replies: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "run_shell", "arguments": {"command": c}}]} for c in commands
    ]
    return ScriptedModel([*replies, {"text": "done"}])


async def test_no_provider_key_reaches_a_command(task: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-not-for-agents-123")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-not-for-agents-456")
    model = _shell("env")
    result = await ReferenceHarness(model=model).run("go", RunSpec(workdir=task, env={"TASK_FLAG": "on"}))
    shown = next(e.content for e in result.transcript if e.role == "tool")
    assert "TASK_FLAG=on" in shown and f"HOME={task.resolve()}" in shown
    assert "not-for-agents" not in shown and "ANTHROPIC_API_KEY" not in shown


async def test_the_shell_check_is_best_effort_unfenced(task: Path) -> None:
    result = await ReferenceHarness(model=_shell(SNEAKY_READ)).run("go", RunSpec(workdir=task))
    assert result.tool_record[0].status == "ok"
    assert SECRET in next(e.content for e in result.transcript if e.role == "tool")


async def test_fenced_commands_cannot_reach_outside_the_workdir(task: Path) -> None:
    assert fence_available() is None, fence_available()  # not a skip: a machine without bwrap fails here
    model = _shell(SNEAKY_READ, SNEAKY_WRITE, "cat notes.txt && echo more >> notes.txt && echo $HOME")
    result = await ReferenceHarness(model=model).run("go", RunSpec(workdir=task, fence=True))
    read, write, inside = result.tool_record
    shown = [e.content for e in result.transcript if e.role == "tool"]
    assert read.status == "error" and read.exit_code not in (0, None) and SECRET not in shown[0]
    assert "No such file or directory" in shown[0]
    assert write.status == "error" and not (task.parent / "answers" / "planted.txt").exists()
    assert inside.status == "ok" and inside.result_summary == f"exit 0: inside {task.resolve()}"
    assert (task / "notes.txt").read_text() == "inside\nmore\n" and inside.edited_paths == ["notes.txt"]


async def test_fenced_tests_run_on_the_toolchain_given(task: Path) -> None:
    (task / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    model = ScriptedModel([{"tool_calls": [{"name": "run_tests", "arguments": {}}]}] * 2 + [{"text": "done"}])
    bare = await ReferenceHarness(model=model).run("go", RunSpec(workdir=task, fence=True))
    assert bare.tool_record[0].status == "error"  # the host venv is not inside the fence unless given
    assert "No such file or directory" in bare.tool_record[0].result_summary
    model.reset()
    given = ReferenceHarness(model=model, toolchain=[sys.prefix])
    result = await given.run("go", RunSpec(workdir=task, fence=True))
    assert result.tool_record[0].status == "ok" and result.tool_record[0].test_counts == {
        "passed": 1,
        "failed": 0,
    }
