"""The Codex CLI ``exec --json`` parser on a real recorded run (tests/fixtures/agents/record_codex.py)."""

from __future__ import annotations

import json
from pathlib import Path

from assay.agents.transcripts import TranscriptInput, parse_codex_json

FIXTURE = Path(__file__).parents[2] / "fixtures" / "agents" / "codex_exec.jsonl"


def _parse(lines: list[str]):
    inp = TranscriptInput(
        stdout=lines, stderr="", workdir=Path("/WORKDIR"), output_dir=Path("/OUT"), exit_code=0, started_at=0
    )
    return parse_codex_json(inp)


def test_recorded_run_exact() -> None:
    p = _parse(FIXTURE.read_text().splitlines())
    got = [(c.name, c.kind, c.command, c.exit_code, c.status, c.result_summary) for c in p.tool_record]
    assert got == [
        ("command_execution", "shell", "/bin/bash -lc \"printf 'one\\\\n' > notes.txt\"", 0, "ok", ""),
        ("command_execution", "shell", "/bin/bash -lc 'cat notes.txt; exit 3'", 3, "error", "one"),
    ]
    assert p.answer == "notes.txt holds one line." and p.error is None
    assert p.session_id == "01a23177-7829-7b91-b4a0-ffd5d5e2f6a4"
    assert p.usage.input_tokens == 16062 and p.usage.output_tokens == 110 and p.usage.calls == 1
    assert p.usage.cost_usd is None and p.usage.cost_source == "harness_counts"
    assert [e.role for e in p.transcript] == ["tool", "tool", "assistant"]


def test_cut_short_keeps_the_started_call() -> None:
    lines = FIXTURE.read_text().splitlines()
    cut = next(i for i, line in enumerate(lines) if '"item.started"' in line and "exit 3" in line) + 1
    p = _parse(lines[:cut])
    assert [(c.exit_code, c.status) for c in p.tool_record] == [(0, "ok"), (None, "error")]
    assert p.tool_record[1].result_summary == "no result: the agent was stopped"
    assert p.usage.calls == 0 and p.answer == ""


def test_file_changes_and_failures() -> None:
    events = [
        {
            "type": "item.completed",
            "item": {
                "id": "a",
                "type": "file_change",
                "status": "completed",
                "changes": [{"path": "/WORKDIR/src/x.py", "kind": "update"}],
            },
        },
        {
            "type": "item.completed",
            "item": {
                "id": "b",
                "type": "file_change",
                "status": "failed",
                "changes": [{"path": "/WORKDIR/y.py", "kind": "add"}],
            },
        },
        {"type": "turn.failed", "error": {"message": "stream disconnected"}},
    ]
    p = _parse([json.dumps(e) for e in events] + ["not json"])
    assert [(c.kind, c.status, c.edited_paths) for c in p.tool_record] == [
        ("edit", "ok", ["src/x.py"]),
        ("edit", "error", []),
    ]
    assert p.error == "codex: stream disconnected"
