"""The real ``claude`` binary (npm ``@anthropic-ai/claude-code``) through the harness, on a loopback Anthropic server."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cliagents_loopback import AnthropicLoopback

from assay.agents import Limits, Route, RunSpec, get_harness
from assay.agents._env import GATEWAY_PLACEHOLDER_KEY
from assay.agents.claude_code import find_claude
from assay.errors import ConfigError

pytestmark = pytest.mark.slow

try:
    find_claude()
except ConfigError as exc:  # .ci/run installs it; a checkout without it fails loudly rather than skipping
    pytest.fail(str(exc), pytrace=False)


def _route(srv: AnthropicLoopback) -> Route:
    return Route(model="loopback-model", anthropic_base_url=f"http://127.0.0.1:{srv.port}")


async def test_two_turns_edit_and_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-host-secret")  # must never reach the agent
    script = [
        {"tool": "Write", "input": {"file_path": str(tmp_path / "a.py"), "content": "x = 1\n"}},
        {
            "tool": "Bash",
            "input": {"command": "python3 a.py && env | grep -c host-secret", "description": "check"},
        },
        {"text": "wrote a.py"},
        {"tool": "Bash", "input": {"command": "cat a.py", "description": "show"}},
        {"text": "a.py sets x"},
    ]
    harness = get_harness("claude-code")
    try:
        with AnthropicLoopback(script) as srv:
            spec = RunSpec(workdir=tmp_path, route=_route(srv), limits=Limits(wall_clock_s=60, max_steps=8))
            one = await harness.run("write a.py", spec)
            assert one.error is None and one.infra_error is None and one.cut_off is None
            assert one.answer == "wrote a.py" and one.exit_code == 0
            assert one.answer_at == 2  # the real stream says where the first answer ended
            assert [(c.name, c.kind, c.status) for c in one.tool_record] == [
                ("Write", "write", "ok"),
                ("Bash", "shell", "ok"),
            ]
            # grep -c counted 0 lines with the host's key; Claude Code reads grep's exit 1 as "no matches"
            assert one.tool_record[1].result_summary == "[No matches found] 0"
            assert one.tool_record[1].exit_code is None
            assert one.edited_paths == ["a.py"]
            assert (tmp_path / "a.py").read_text() == "x = 1\n"
            assert one.usage.input_tokens > 0 and one.usage.cost_source == "api_equivalent"
            assert one.model_ran == "loopback-model" and one.session_id
            assert all(t.started_s is not None and t.ended_s is not None for t in one.tool_record)
            assert {h.get("x-api-key") for h in srv.headers} == {GATEWAY_PLACEHOLDER_KEY}

            spec.session_id = one.session_id
            two = await harness.run("what is in a.py?", spec)
            assert two.session_id == one.session_id and two.answer == "a.py sets x"
            assert [c.command for c in two.tool_record] == ["cat a.py"] and two.answer_at == 1
            # the resumed turn sent the whole conversation back: the first turn's answer is in it
            assert "wrote a.py" in str(srv.requests[-1]["body"]["messages"])
    finally:
        await harness.close()


async def test_wall_clock_kills_the_group_and_keeps_the_record(tmp_path: Path) -> None:
    script = [
        {"tool": "Write", "input": {"file_path": str(tmp_path / "b.txt"), "content": "b\n"}},
        {"tool": "Bash", "input": {"command": "sleep 61", "description": "stall", "timeout": 120000}},
        {"text": "never"},
    ]
    harness = get_harness("claude-code")
    try:
        with AnthropicLoopback(script) as srv:
            spec = RunSpec(workdir=tmp_path, route=_route(srv), limits=Limits(wall_clock_s=6))
            r = await harness.run("stall", spec)
        assert r.cut_off == "wall_clock" and r.elapsed_s < 20
        assert [(c.name, c.status) for c in r.tool_record] == [("Write", "ok"), ("Bash", "error")]
        assert r.edited_paths == ["b.txt"] and r.usage.input_tokens > 0
        assert shutil.which("pgrep") is None or not _sleepers()
    finally:
        await harness.close()


def _sleepers() -> bool:
    import subprocess

    return subprocess.run(["pgrep", "-f", "^sleep 61$"], capture_output=True).returncode == 0


async def test_fenced_run_reaches_only_its_route(tmp_path_factory: pytest.TempPathFactory) -> None:
    workdir, answers = tmp_path_factory.mktemp("work"), tmp_path_factory.mktemp("answers")
    (answers / "key.txt").write_text("the answer key")
    script = [
        {"tool": "Write", "input": {"file_path": str(workdir / "c.txt"), "content": "c\n"}},
        {"tool": "Bash", "input": {"command": f"cat {answers / 'key.txt'}", "description": "peek"}},
        {"text": "done"},
    ]
    harness = get_harness("claude-code")
    try:
        with AnthropicLoopback(script) as srv:
            spec = RunSpec(workdir=workdir, route=_route(srv), fence=True, limits=Limits(wall_clock_s=60))
            r = await harness.run("write c.txt", spec)
    finally:
        await harness.close()
    assert r.error is None and r.answer == "done", r
    assert (workdir / "c.txt").read_text() == "c\n" and r.edited_paths == ["c.txt"]
    peek = r.tool_record[1]
    assert peek.status == "error" and peek.exit_code == 1 and "No such file" in peek.result_summary
    assert "the answer key" not in peek.result_summary


async def test_token_cap_stops_it(tmp_path: Path) -> None:
    script = [{"tool": "Bash", "input": {"command": f"echo {i}", "description": "count"}} for i in range(6)]
    harness = get_harness("claude-code")
    try:
        with AnthropicLoopback(script) as srv:
            # each request carries Claude Code's ~1.7k-token prompt: the cap is passed on the second reply
            spec = RunSpec(
                workdir=tmp_path, route=_route(srv), limits=Limits(max_tokens=2500, wall_clock_s=60)
            )
            r = await harness.run("count", spec)
            served = srv.steps_served
    finally:
        await harness.close()
    assert r.cut_off == "tokens" and r.error is None
    assert 2 <= len(r.tool_record) <= 3 and served <= 3
    assert r.usage.input_tokens > 2500 - r.usage.output_tokens
