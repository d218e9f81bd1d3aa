"""The scenario's world over MCP: the server (``python -m assay.agents.world``) serves the reference agent's
tools over stdio to the MCP SDK's client (the reference agent's own MCP hub), and the attempt's loopback HTTP
server to the scripted external agent run by the ``command`` harness (its record from the world's log) and as
Claude Code's ``claude`` binary (stream-json), with the same kinds; every run's calls are the world's; harnesses refuse a world they cannot serve."""

from __future__ import annotations

import dataclasses
import json
import secrets
from pathlib import Path

import pytest

from assay.agents import Route, RunSpec, get_harness
from assay.agents.fence import fence_available
from assay.agents.reference import ReferenceHarness
from assay.agents.world import World, WorldServer
from assay.agents.world.kinds import WORLD_SERVER
from assay.embed import get_embedder
from assay.errors import ConfigError
from assay.evals.agent._external import scripted_external_harness
from assay.models.scripted import ScriptedModel
from assay.rag import DocumentIndex

REPLIES = [
    {"tool_calls": [{"name": "query_documents", "arguments": {"query": "vacation days"}}]},
    {"tool_calls": [{"name": "run_shell", "arguments": {"command": "echo noted > note.txt"}}]},
    {"text": "You get 25 vacation days a year."},
]


def _world(tmp: Path) -> World:
    work = tmp / "work"
    work.mkdir()
    index = DocumentIndex(get_embedder("hash"), cache_dir=None)
    index.index_text("handbook.md", "Every employee gets 25 vacation days per year.", kind="markdown")
    key = secrets.token_bytes(32)
    index.save(tmp / "docs", key=key)
    (tmp / "docs.key").write_bytes(key)
    return World(workdir=work, documents=tmp / "docs", embedder="hash")


def _calls(result: object) -> list[tuple[str, str, str]]:
    return [(c.name, c.kind, c.status) for c in result.tool_record]  # type: ignore[attr-defined]


async def test_the_reference_agent_reaches_the_world_through_the_sdk_client_with_the_tools_kinds(
    tmp_path: Path,
) -> None:
    world = _world(tmp_path)
    model = ScriptedModel(
        [
            {"tool_calls": [{"name": f"{WORLD_SERVER}__{c['name']}", "arguments": c["arguments"]}]}
            if "tool_calls" in r
            else r
            for r in REPLIES
            for c in r.get("tool_calls") or [{}]
        ]
    )
    harness = ReferenceHarness(model=model, tools=["read_file"], mcp_servers={WORLD_SERVER: world.stdio()})
    try:
        result = await harness.run("How many vacation days?", RunSpec(workdir=world.workdir))
    finally:
        await harness.close()
    assert _calls(result) == [
        ("assay__query_documents", "documents", "ok"),
        ("assay__run_shell", "shell", "ok"),
    ]
    assert "25 vacation days per year" in result.tool_record[0].result_summary
    assert (world.workdir / "note.txt").read_text() == "noted\n"
    assert result.answer == "You get 25 vacation days a year."


@pytest.mark.parametrize(
    "fence",
    [False, pytest.param(True, marks=pytest.mark.skipif(fence_available() is not None, reason="no bwrap"))],
)
@pytest.mark.parametrize("name", ["command", "claude-code"])
async def test_the_scripted_external_agent_reaches_the_world_through_each_harness(
    tmp_path: Path, name: str, fence: bool
) -> None:
    stdio = _world(tmp_path)
    index = DocumentIndex.load(
        tmp_path / "docs", get_embedder("hash"), key=(tmp_path / "docs.key").read_bytes()
    )
    harness = scripted_external_harness(name, REPLIES, tmp_path / "agent")
    try:  # the attempt's own loopback HTTP server, as an eval serves it
        async with WorldServer(ReferenceHarness(documents=index), stdio.workdir) as server:
            world = dataclasses.replace(stdio, server=server)
            spec = RunSpec(
                workdir=world.workdir, world=world, fence=fence
            )  # fenced: the server's port relayed
            result = await harness.run("How many vacation days?", spec)
    finally:
        await harness.close()
    assert result.error is None and result.answer == "You get 25 vacation days a year."
    prefix = "" if name == "command" else "mcp__assay__"  # the world's own log, or Claude Code's names
    assert _calls(result) == [
        (f"{prefix}query_documents", "documents", "ok"),
        (f"{prefix}run_shell", "shell", "ok"),
    ]
    assert (world.workdir / "note.txt").read_text() == "noted\n"


async def test_a_command_template_asking_for_a_world_the_run_does_not_give_is_refused(tmp_path: Path) -> None:
    harness = get_harness("command", template="echo {mcp_config} {prompt}")
    assert harness.takes_world and not get_harness("command", template="echo {prompt}").takes_world
    with pytest.raises(ConfigError, match=r"\{mcp_config\}, and the run gives no world"):
        await harness.run("hi", RunSpec(workdir=tmp_path))


def test_codex_gets_the_world_server_on_its_command_line(tmp_path: Path) -> None:
    world = World(workdir=tmp_path)
    config = world.mcp_config(tmp_path / "mcp.json", prompt="hi")
    harness = get_harness("command", agent="codex")
    route = Route(model="m", openai_base_url="http://127.0.0.1:1/v1")
    argv = harness.argv("hi", RunSpec(workdir=tmp_path, world=world, route=route), tmp_path, "codex", config)
    server = json.loads(config.read_text())["mcpServers"][WORLD_SERVER]  # the name the kinds are read under
    at = argv.index(f"mcp_servers.assay.command={json.dumps(server['command'])}")
    assert argv[at - 1] == "-c" and argv[at + 2] == f"mcp_servers.assay.args={json.dumps(server['args'])}"
    assert argv[-1] == "hi"  # the prompt stays last


def test_claude_code_is_given_the_world_as_its_mcp_config(tmp_path: Path) -> None:

    spec = RunSpec(workdir=tmp_path, route=Route(model="m", anthropic_base_url="http://127.0.0.1:1"))
    config = World(workdir=tmp_path).mcp_config(tmp_path / "mcp.json")
    argv = get_harness("claude-code").argv("hi", spec, "claude", config)  # type: ignore[attr-defined]
    assert argv[argv.index("--mcp-config") + 1] == str(config) and "--strict-mcp-config" in argv
    assert "mcp__assay" in argv[argv.index("--allowedTools") + 1].split()


@pytest.mark.parametrize("name", ["command", "claude-code"])
async def test_the_step_cap_cuts_the_scripted_agent_off_through_each_harness(
    tmp_path: Path, name: str
) -> None:
    from assay.agents import Limits

    work = tmp_path / "work"
    work.mkdir()
    harness = scripted_external_harness(name, REPLIES, tmp_path / "agent")
    try:
        async with WorldServer(ReferenceHarness(), work) as server:
            spec = RunSpec(workdir=work, world=World(workdir=work, server=server), limits=Limits(max_steps=1))
            result = await harness.run("How many vacation days?", spec)
    finally:
        await harness.close()
    assert result.cut_off == "steps" and result.error is None, (result.cut_off, result.error)
    # one step ran: a call of a tool not offered here, a try (its kind kept), not a use, alike on both paths
    assert [(c.kind, c.status) for c in result.tool_record] == [("documents", "not_offered")]


def test_a_world_claude_code_could_not_connect_is_the_runs_error_not_a_tool_check_fail() -> None:
    from assay.agents.claude_code import parse_stream, world_not_connected

    def init(status: str) -> list[str]:
        return [
            json.dumps(
                {"type": "system", "subtype": "init", "mcp_servers": [{"name": "assay", "status": status}]}
            )
        ]

    assert world_not_connected(parse_stream(init("connected"), Path("/w"))) is None
    why = world_not_connected(parse_stream(init("failed"), Path("/w")))
    assert why is not None and "did not connect (failed)" in why
    assert world_not_connected(parse_stream([], Path("/w"))) is None  # no init event: other errors say so


_KEPT_ALIVE = """
import asyncio, json
from pathlib import Path
from assay.agents.world import WorldServer

class Tools:
    async def close(self):
        pass

async def main():
    async with WorldServer(Tools(), Path(".")) as server:
        url = server.run_url("hello")
        path = url.split("127.0.0.1:", 1)[1].split("/", 1)[1]
        reader, writer = await asyncio.open_connection("127.0.0.1", int(url.split(":")[2].split("/")[0]))
        body = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
        writer.write(f"POST /{path} HTTP/1.1\\r\\nContent-Length: {len(body)}\\r\\n\\r\\n".encode() + body)
        await writer.drain()
        print((await reader.readline()).decode().strip())
    # the client never closes its kept-alive connection, as an agent cut off mid-run does not

asyncio.run(main())
"""


def test_a_connection_left_open_when_the_run_ends_closes_without_a_traceback(tmp_path: Path) -> None:
    import subprocess
    import sys

    res = subprocess.run(
        [sys.executable, "-c", _KEPT_ALIVE], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "HTTP/1.1 202 Accepted"
    assert res.stderr == ""
