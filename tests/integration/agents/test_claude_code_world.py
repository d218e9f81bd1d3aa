"""Real Claude Code given the scenario's world over MCP (``--mcp-config``), over loopback HTTP (the attempt's own
server) and over stdio (the server it starts): on a scripted upstream it calls ``mcp__assay__query_documents``
and ``mcp__assay__run_shell``, and the record shows them with their kinds and the world's answers."""

from __future__ import annotations

import dataclasses
import secrets
from pathlib import Path

import pytest

from assay.agents import AgentResult, Harness, Limits, RunSpec, get_harness
from assay.agents.claude_code import find_claude
from assay.agents.gateway import Gateway
from assay.agents.reference import ReferenceHarness
from assay.agents.world import World, WorldServer
from assay.embed import get_embedder
from assay.errors import ConfigError
from assay.models.scripted import ScriptedModel
from assay.rag import DocumentIndex

pytestmark = pytest.mark.slow

try:
    find_claude()
except ConfigError as exc:  # .ci/run installs it; a checkout without it fails loudly rather than skipping
    pytest.fail(str(exc), pytrace=False)


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_claude_code_calls_the_worlds_tools_over_mcp(tmp_path: Path, transport: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    index = DocumentIndex(get_embedder("hash"), cache_dir=None)
    index.index_text("handbook.md", "Every employee gets 25 vacation days per year.", kind="markdown")
    key = secrets.token_bytes(32)
    index.save(tmp_path / "docs", key=key)
    (tmp_path / "docs.key").write_bytes(key)
    stdio = World(workdir=work, documents=tmp_path / "docs", embedder="hash")
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
    tools = ReferenceHarness(documents=index)
    try:
        async with WorldServer(tools, work) as server:
            world = dataclasses.replace(stdio, server=server) if transport == "http" else stdio
            r = await _run(harness, script, world)
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


async def _run(harness: Harness, script: dict, world: World) -> AgentResult:
    with Gateway(ScriptedModel(script)) as gw:
        spec = RunSpec(
            workdir=world.workdir,
            route=gw.route("claude-sonnet-4-5", run=gw.new_run_id()),
            limits=Limits(wall_clock_s=90),
            world=world,
        )
        return await harness.run("How many vacation days do I get?", spec)
