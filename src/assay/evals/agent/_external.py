"""The scenario's world for a harness that takes it (:func:`serve_world`), and pr through another harness:
the scripted external agent (:mod:`assay.agents.scripted_agent`) run by the
``command`` harness (a CLI reaching the scenario's tools over MCP, its record from the world's log) or by the
``claude-code`` harness (as its ``claude`` binary, printing Claude Code's stream-json)."""

from __future__ import annotations

import dataclasses
import json
import os
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


class _Scripted(Harness):
    """A harness on the scripted agent: its folder (the replies' cursor) writable under the fence too; for
    claude-code, a route, which it needs to start and the scripted agent never calls (pr is offline), leading
    nowhere."""

    takes_world = True

    def __init__(self, inner: Harness, folder: Path) -> None:
        super().__init__()
        self.inner, self.folder, self.name = inner, folder, inner.name  # type: ignore[misc]

    async def run(self, prompt: str, spec: RunSpec) -> AgentResult:
        spec = dataclasses.replace(spec, writable=[*spec.writable, self.folder])
        if spec.route is None and self.inner.name == "claude-code":
            # loopback port 9 (discard): nothing answers there, and the fence relays it like a gateway
            spec = dataclasses.replace(
                spec, route=Route(model="scripted", anthropic_base_url="http://127.0.0.1:9")
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
    # a copy of the program beside it (standard library only: it starts as fast as a bare interpreter), run by
    # the base interpreter: the fence shows the launcher's folder and that interpreter, not assay or its venv
    program = folder / "scripted_agent.py"
    program.write_text(Path(scripted_agent.__file__).read_text(encoding="utf-8"), encoding="utf-8")
    python = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
    launcher.write_text(
        "#!/bin/sh\n"
        f"exec {shlex.quote(python)} -I -S {shlex.quote(str(program))} "
        f'--script {shlex.quote(str(script))} "$@"\n',
        encoding="utf-8",
    )
    launcher.chmod(0o755)
    if name == "command":
        template = (
            f"{shlex.quote(str(launcher))} --mcp-config {{mcp_config}} --max-turns {{max_steps}} {{prompt}}"
        )
        return _Scripted(get_harness("command", template=template, parser="assay-world"), folder)
    return _Scripted(get_harness("claude-code", claude_bin=str(launcher)), folder)


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
