"""Real Claude Code given the scenario's world over MCP (``--mcp-config``): on a scripted upstream it starts the
world server, calls ``mcp__assay__query_documents`` and ``mcp__assay__run_shell``, and the record shows them
with their kinds and the world's answers."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from assay.agents import Limits, RunSpec, get_harness
from assay.agents.claude_code import find_claude
from assay.agents.gateway import Gateway
from assay.agents.world import World
from assay.embed import get_embedder
from assay.errors import ConfigError
from assay.models.scripted import ScriptedModel
from assay.rag import DocumentIndex

pytestmark = pytest.mark.slow

try:
    find_claude()
except ConfigError as exc:  # .ci/run installs it; a checkout without it fails loudly rather than skipping
    pytest.fail(str(exc), pytrace=False)


async def test_claude_code_calls_the_worlds_tools_over_mcp(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    index = DocumentIndex(get_embedder("hash"), cache_dir=None)
    index.index_text("handbook.md", "Every employee gets 25 vacation days per year.", kind="markdown")
    key = secrets.token_bytes(32)
    index.save(tmp_path / "docs", key=key)
    (tmp_path / "docs.key").write_bytes(key)
    world = World(workdir=work, documents=tmp_path / "docs", embedder="hash")
    script = {
        "replies": [
            {
                "tool_calls": [
                    {"name": "mcp__assay__query_documents", "arguments": {"query": "vacation days"}}
                ]
            },
            {
                "tool_calls": [
                    {"name": "mcp__assay__run_shell", "arguments": {"command": "echo ok > seen.txt"}}
                ]
            },
            {"text": "You get 25 vacation days a year."},
        ]
    }
    harness = get_harness("claude-code")
    try:
        with Gateway(ScriptedModel(script)) as gw:
            spec = RunSpec(
                workdir=work,
                route=gw.route("claude-sonnet-4-5", run=gw.new_run_id()),
                limits=Limits(wall_clock_s=90),
                world=world,
            )
            r = await harness.run("How many vacation days do I get?", spec)
    finally:
        await harness.close()
    assert r.error is None and r.infra_error is None, (r.error, r.infra_error)
    got = [(c.name, c.kind, c.status) for c in r.tool_record]
    assert got == [
        ("mcp__assay__query_documents", "documents", "ok"),
        ("mcp__assay__run_shell", "shell", "ok"),
    ]
    assert "25 vacation days per year" in r.tool_record[0].result_summary
    assert (work / "seen.txt").read_text() == "ok\n"
    assert r.answer == "You get 25 vacation days a year."
