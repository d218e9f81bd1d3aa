"""The mini-swe-agent trajectory parser on a real recorded run (tests/fixtures/agents/record_mini_swe_agent.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.agents.transcripts import TranscriptInput, get_parser, parse_mini_swe_agent, parser_names
from assay.errors import ConfigError

FIXTURE = Path(__file__).parents[2] / "fixtures" / "agents" / "mini_swe_agent_trajectory.json"


def _parse(tmp_path: Path, data: dict | str | None) -> object:
    if data is not None:
        (tmp_path / "trajectory.json").write_text(data if isinstance(data, str) else json.dumps(data))
    inp = TranscriptInput(
        stdout=[], stderr="", workdir=Path("/WORKDIR"), output_dir=tmp_path, exit_code=0, started_at=0
    )
    return parse_mini_swe_agent(inp)


def test_recorded_run_tool_record_exact(tmp_path: Path) -> None:
    p = _parse(tmp_path, json.loads(FIXTURE.read_text()))
    got = [(c.name, c.kind, c.command, c.exit_code, c.status) for c in p.tool_record]
    assert got == [
        ("bash", "shell", "printf 'one\\n' > notes.txt", 0, "ok"),
        ("bash", "shell", "cat notes.txt; exit 2", 2, "error"),
        ("submit", "other", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", None, "ok"),
    ]
    assert p.tool_record[1].result_summary == "one"
    assert all(
        c.started_s is not None and c.ended_s is not None and c.ended_s >= c.started_s for c in p.tool_record
    )
    assert p.answer == "Done." and p.error is None and p.cut_off is None
    assert p.model_ran == "loopback-model" and p.steps == 3
    assert p.usage.calls == 3 and p.usage.input_tokens > 0 and p.usage.output_tokens > 0
    assert p.usage.cost_usd is None and p.usage.cost_source == "harness_counts"
    assert [e.role for e in p.transcript] == ["system", "user"] + ["assistant", "tool"] * 3


def test_partial_trajectory_keeps_finished_calls(tmp_path: Path) -> None:
    data = json.loads(FIXTURE.read_text())
    data["messages"] = data["messages"][:5]  # killed while the second call ran: saved after step one
    p = _parse(tmp_path, data)
    got = [(c.command, c.status, c.result_summary) for c in p.tool_record]
    assert got == [
        ("printf 'one\\n' > notes.txt", "ok", ""),
        ("cat notes.txt; exit 2", "error", "no output: the agent was stopped"),
    ]
    assert p.error is None and p.answer == "I will write the notes." and p.steps == 2


def test_limits_exceeded_is_a_steps_cut_off(tmp_path: Path) -> None:
    data = json.loads(FIXTURE.read_text())
    data["messages"][-1]["extra"] = {"exit_status": "LimitsExceeded", "submission": ""}
    assert _parse(tmp_path, data).cut_off == "steps"


def test_missing_or_broken_trajectory_is_an_error(tmp_path: Path) -> None:
    assert _parse(tmp_path, None).error == "mini-swe-agent wrote no trajectory at trajectory.json"
    assert _parse(tmp_path, "{not json").error.startswith("mini-swe-agent trajectory unreadable")


def test_registry() -> None:
    assert "mini-swe-agent" in parser_names()
    with pytest.raises(ConfigError, match="parser='nope': unknown"):
        get_parser("nope")
