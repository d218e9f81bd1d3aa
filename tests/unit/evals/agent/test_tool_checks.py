"""Tool checks by kind, whatever harness made the calls, and not measured where the record cannot show them."""

from __future__ import annotations

import json
from pathlib import Path

from assay.agents import ToolCallRecord
from assay.agents.claude_code import parse_stream
from assay.evals.agent._record import ConversationTurn, Message
from assay.evals.agent._scenario import Scenario
from assay.evals.agent.checks import call_kinds, check_tools, run_checks

SCENARIO = Scenario.model_validate(
    {
        "id": "docs",
        "category": "document_qa",
        "persona": "An employee.",
        "expected_tools": ["kind:documents"],
        "forbidden_tools": ["kind:shell", "kind:edit"],
        "turns": [{"objective": "Leave days.", "ground_truth": {"facts": ["25 days"]}}],
    }
)


def _turn(answer: str, *calls: ToolCallRecord, level: str = "full", index: int = 1) -> ConversationTurn:
    return ConversationTurn(
        index=index,
        objective="o",
        messages=[
            Message(role="user", text="How many leave days?"),
            Message(role="assistant", text=answer, tool_calls=list(calls), record_level=level),  # type: ignore[arg-type]
        ],
    )


def _claude_calls(*uses: tuple[str, dict]) -> list[ToolCallRecord]:
    """The tool record Claude Code's stream-json gives for these tool uses (the harness's own parser)."""
    content = [{"type": "tool_use", "id": f"t{i}", "name": n, "input": a} for i, (n, a) in enumerate(uses)]
    line = json.dumps({"type": "assistant", "message": {"id": "m1", "content": content}})
    return parse_stream([line], Path("/w")).tool_record


def test_an_answer_only_record_leaves_tool_checks_not_measured_never_passed_or_failed() -> None:
    measured, unknown = check_tools(SCENARIO, [_turn("You get 25 days.", level="answer_only")])
    assert measured == []
    assert [(n.name, n.detail.split(": ")[0]) for n in unknown] == [
        ("expected_tool", "kind:documents"),
        ("forbidden_tool", "kind:shell"),
        ("forbidden_tool", "kind:edit"),
    ]
    assert "turn 1 recorded the answer only" in unknown[0].detail
    # the answer's own checks are still made
    assert [
        (c.name, c.passed) for c in run_checks(SCENARIO, [_turn("You get 25 days.", level="answer_only")])
    ] == [("fact", True)]


def test_a_call_the_record_shows_settles_a_check_even_when_another_turn_is_answer_only() -> None:
    shell = ToolCallRecord(name="Bash", kind="shell", arguments={"command": "ls"})
    docs = ToolCallRecord(name="query_documents", kind="documents")
    turns = [_turn("25 days", docs, shell), _turn("ok", level="answer_only", index=2)]
    measured, unknown = check_tools(SCENARIO, turns)
    assert [(c.name, c.passed) for c in measured] == [
        ("expected_tool", True),
        ("forbidden_tool", False),
    ]
    assert [n.detail.split(": ")[0] for n in unknown] == ["kind:edit"]  # never seen, and turn 2 is blind


def test_a_full_record_measures_every_tool_check_both_ways() -> None:
    measured, unknown = check_tools(SCENARIO, [_turn("25 days")])
    assert unknown == []
    assert [(c.name, c.passed) for c in measured] == [
        ("expected_tool", False),
        ("forbidden_tool", True),
        ("forbidden_tool", True),
    ]


def test_claude_codes_tool_names_map_to_the_kinds_the_checks_name() -> None:
    calls = _claude_calls(
        ("mcp__assay__query_documents", {"query": "leave"}),
        ("mcp__assay__remember", {"content": "x"}),
        ("Edit", {"file_path": "/w/a.py", "old_string": "a", "new_string": "b"}),
        ("Bash", {"command": "python -m pytest -q tests"}),
        ("mcp__other__thing", {}),
    )
    assert [c.kind for c in calls] == ["documents", "memory", "edit", "shell", "mcp"]
    turn = _turn("25 days", *calls)
    scenario = SCENARIO.model_copy(update={"expected_tools": ["kind:documents", "remember", "kind:test"]})
    measured, unknown = check_tools(scenario, [turn])
    assert unknown == []
    assert [(c.name, c.passed) for c in measured] == [
        ("expected_tool", True),  # mcp__assay__query_documents is the documents kind
        ("expected_tool", True),  # a world tool named alike under every harness
        ("expected_tool", True),  # a command running pytest is a test run
        ("forbidden_tool", False),  # Bash is a shell
        ("forbidden_tool", False),  # Edit is an edit
    ]


def test_a_test_run_is_a_shell_command_and_a_plain_command_is_no_test_run() -> None:
    assert call_kinds(ToolCallRecord(name="run_tests", kind="test")) == {"test", "shell"}
    ls = ToolCallRecord(
        name="run_shell", kind="shell", arguments={"command": "ls pytest_notes"}, command="ls"
    )
    assert call_kinds(ls) == {"shell"}


def test_reading_the_documents_given_as_files_is_the_documents_kind_only_when_they_were_given() -> None:
    read = ToolCallRecord(name="Read", kind="read", arguments={"file_path": "/w/documents/handbook.md"})
    grep = ToolCallRecord(name="Bash", kind="shell", arguments={"command": "grep -ri leave documents"})
    other = ToolCallRecord(name="Read", kind="read", arguments={"file_path": "/w/my-documents.txt"})
    assert "documents" in call_kinds(read, True) and "documents" in call_kinds(grep, True)
    assert "documents" not in call_kinds(other, True)
    assert "documents" not in call_kinds(read, False)  # a folder of that name the scenario itself wrote
    measured, _ = check_tools(SCENARIO, [_turn("25 days", read)], documents_as_files=True)
    assert measured[0].passed
