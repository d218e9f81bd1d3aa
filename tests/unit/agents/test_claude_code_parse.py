"""The stream-json parser on real recorded Claude Code runs (tests/fixtures/agents/record_claude_code.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assay.agents import Route, RunSpec
from assay.agents.claude_code import INSTALL_HINT, ClaudeCodeHarness, find_claude, parse_stream
from assay.errors import ConfigError

FIXTURES = Path(__file__).parents[2] / "fixtures" / "agents"
WD = Path("/WORKDIR")


def _lines(name: str) -> list[str]:
    return (FIXTURES / f"claude_code_{name}.jsonl").read_text().splitlines()


def test_turn1_tool_record_exact() -> None:
    p = parse_stream(_lines("turn1"), WD)
    got = [(c.name, c.kind, c.status, c.edited_paths, c.command, c.exit_code) for c in p.tool_record]
    assert got == [
        ("Write", "write", "ok", ["notes.txt"], None, None),
        ("Read", "read", "ok", [], None, None),
        ("Edit", "edit", "ok", ["notes.txt"], None, None),
        ("Bash", "shell", "ok", [], "cat notes.txt", 0),
        ("Bash", "shell", "error", [], "exit 3", 3),
        ("Glob", "list", "ok", [], None, None),
        ("Grep", "search", "ok", [], None, None),
        ("Edit", "edit", "error", [], None, None),  # the file did not exist: nothing was edited
    ]
    assert p.tool_record[3].result_summary == "alpha\ngamma"
    assert p.tool_record[2].arguments["new_string"] == "gamma"
    assert "File does not exist" in p.tool_record[7].result_summary
    assert p.answer == "Done: notes.txt now says alpha and gamma."
    assert p.model_ran == "loopback-model"
    assert p.steps == 9 and p.result is not None and p.bad_lines == 0


def test_turn1_usage_is_api_equivalent_cost() -> None:
    p = parse_stream(_lines("turn1"), WD)
    assert p.result is not None
    assert p.usage.input_tokens == p.result["usage"]["input_tokens"] > 0
    assert p.usage.output_tokens == p.result["usage"]["output_tokens"] > 0
    assert p.usage.cost_usd == pytest.approx(p.result["total_cost_usd"])
    assert p.usage.cost_source == "api_equivalent"
    assert p.usage.calls == 9


def test_transcript_pairs_calls_with_results() -> None:
    p = parse_stream(_lines("turn1"), WD)
    roles = [e.role for e in p.transcript]
    assert roles == ["assistant", "tool"] * 8 + ["assistant"]
    first_call = p.transcript[0].tool_calls[0]
    assert p.transcript[1].tool_call_id == first_call["id"]


def test_turn2_keeps_the_session() -> None:
    one, two = parse_stream(_lines("turn1"), WD), parse_stream(_lines("turn2"), WD)
    assert one.session_id and two.session_id == one.session_id
    assert [c.command for c in two.tool_record] == ["ls"]
    assert two.tool_record[0].result_summary == "notes.txt"
    assert two.answer == "Second turn: the workdir holds notes.txt."


def test_max_turns_is_a_steps_cut_off() -> None:
    lines = _lines("max_turns")
    harness = ClaudeCodeHarness()
    r = harness._result(parse_stream(lines, WD), 1, 1.0, False, False, "")
    assert r.cut_off == "steps" and r.error is None
    assert [c.command for c in r.tool_record] == ["echo step0", "echo step1"]


def test_cut_short_stream_keeps_calls_and_counts_tokens() -> None:
    lines = _lines("turn1")
    # as if the wall clock stopped it after the fourth call was sent (no result event, no tool result)
    cut = next(i for i, line in enumerate(lines) if '"toolu_004"' in line) + 1
    harness = ClaudeCodeHarness()
    r = harness._result(parse_stream(lines[:cut], WD), None, 5.0, True, False, "")
    assert r.cut_off == "wall_clock"
    assert [c.name for c in r.tool_record] == ["Write", "Read", "Edit", "Bash"]
    assert r.tool_record[-1].status == "error" and "stopped" in r.tool_record[-1].result_summary
    assert r.edited_paths == ["notes.txt"]
    assert r.usage.input_tokens > 0 and r.usage.cost_usd is None and r.usage.cost_source == "harness_counts"


def test_garbage_lines_are_counted_not_fatal() -> None:
    p = parse_stream(["not json", "[1]", *_lines("turn2")], WD)
    assert p.bad_lines == 2 and p.answer.startswith("Second turn")


def test_no_result_event_is_an_error() -> None:
    r = ClaudeCodeHarness()._result(parse_stream([], WD), 1, 0.1, False, False, "boom: bad flag\n")
    assert r.error == "claude-code exited 1 without a result event: boom: bad flag"


def test_argv_carries_limits_model_and_session(tmp_path: Path) -> None:
    spec = RunSpec(
        workdir=tmp_path, route=Route(model="m1", anthropic_base_url="http://127.0.0.1:9"), session_id="s-1"
    )
    argv = ClaudeCodeHarness().argv("hi", spec, "claude")
    assert argv[:6] == ["claude", "-p", "hi", "--output-format", "stream-json", "--verbose"]
    joined = " ".join(argv)
    assert "--model m1" in joined and "--resume s-1" in joined and "--max-turns 50" in joined


def test_bad_setups_are_config_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="anthropic_base_url"):
        ClaudeCodeHarness().argv("hi", RunSpec(workdir=tmp_path), "claude")
    with pytest.raises(ConfigError, match="unknown option"):
        ClaudeCodeHarness(colour="red")
    monkeypatch.setenv("ASSAY_CLAUDE_BIN", str(tmp_path / "nope"))
    with pytest.raises(ConfigError, match="ASSAY_CLAUDE_BIN"):
        find_claude()
    monkeypatch.delenv("ASSAY_CLAUDE_BIN")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr("assay.agents.claude_code.npm_prefixes", lambda: [tmp_path])
    with pytest.raises(ConfigError, match=re.escape(INSTALL_HINT)):
        find_claude()
