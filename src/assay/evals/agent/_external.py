"""The scenario's world for a harness that takes it (:func:`serve_world`), and pr through another harness:
the scripted external agent (:mod:`assay.agents.scripted_agent`) run by the
``command`` harness (a CLI reaching the scenario's tools over MCP, its record from the world's log) or by the
``claude-code`` harness (as its ``claude`` binary, printing Claude Code's stream-json)."""

from __future__ import annotations

import json
import secrets
import shlex
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from assay.agents import Harness, Route, RunSpec, get_harness, scripted_agent
from assay.agents.record import AgentResult
from assay.agents.world import World, WorldServer

__all__ = ["scripted_external_harness", "serve_world"]


class _Offline(Harness):
    """The claude-code harness on the scripted agent: it needs a route to start, which the scripted agent never
    calls (pr is offline), so the run gets one that leads nowhere."""

    name = "claude-code"
    takes_world = True

    def __init__(self, inner: Harness) -> None:
        super().__init__()
        self.inner = inner

    async def run(self, prompt: str, spec: RunSpec) -> AgentResult:
        if spec.route is None:
            spec = RunSpec(
                **{**spec.__dict__, "route": Route(model="scripted", anthropic_base_url="http://0.0.0.0:9")}
            )
        return await self.inner.run(prompt, spec)

    async def close(self) -> None:
        await self.inner.close()


def scripted_external_harness(name: str, replies: list[dict[str, Any]], folder: Path) -> Harness:
    """The ``name`` harness (``command`` or ``claude-code``) driving the scripted external agent on ``replies``
    (a scenario's ``script.agent``, flattened); its script, cursor and launcher live in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "replies.json"
    script.write_text(json.dumps({"replies": replies}), encoding="utf-8")
    launcher = folder / "scripted-agent"
    # the program by its path: it needs the standard library only, and starts as fast as a bare interpreter
    program = Path(scripted_agent.__file__).resolve()
    launcher.write_text(
        "#!/bin/sh\n"
        f"exec {shlex.quote(sys.executable)} -P {shlex.quote(str(program))} "
        f'--script {shlex.quote(str(script))} "$@"\n',
        encoding="utf-8",
    )
    launcher.chmod(0o755)
    if name == "command":
        template = (
            f"{shlex.quote(str(launcher))} --mcp-config {{mcp_config}} --max-turns {{max_steps}} {{prompt}}"
        )
        return get_harness("command", template=template, parser="assay-world")
    return _Offline(get_harness("claude-code", claude_bin=str(launcher)))


@asynccontextmanager
async def serve_world(
    prepared: Any, tmp: Path, embedder: str | None, wanted: bool
) -> AsyncIterator[World | None]:
    """The scenario's world while the conversation lasts (None unless ``wanted``): served over loopback HTTP
    from this process (the index in memory, the store open), and ready to be served over stdio too (the index
    saved beside the workdir, never in it, signed with a key of its own, never the install's)."""
    if not wanted:
        yield None
        return
    from assay.agents import ReferenceHarness

    documents = None
    if prepared.documents is not None:
        documents = tmp / "world-documents"
        key = secrets.token_bytes(32)
        prepared.documents.save(documents, key=key)
        (tmp / "world-documents.key").write_bytes(key)
    tools = ReferenceHarness(
        documents=prepared.documents, memory=prepared.memory_path, memory_embedder=prepared.embedder
    )
    async with WorldServer(tools, prepared.workdir) as server:
        yield World(
            workdir=prepared.workdir,
            documents=documents,
            embedder=embedder,
            memory=prepared.memory_path,
            server=server,
        )
